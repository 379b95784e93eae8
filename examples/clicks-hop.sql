-- examples/clicks-hop.json as SQL: clicks in the last 10 seconds, every 5
-- seconds (sliding windows), watermark 5 s behind.
-- Run: sluice sql -f examples/clicks-hop.sql

CREATE TEMPORARY TABLE clicks (
    user_id    INT,
    event_time AS CAST(CURRENT_TIMESTAMP - INTERVAL '0.001' SECOND * CAST(RAND() * 10000 AS INT) AS TIMESTAMP(3)),
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'datagen', 'rows-per-second' = '20',
    'fields.user_id.min' = '1', 'fields.user_id.max' = '5'
);

CREATE TEMPORARY TABLE out_counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), cnt BIGINT)
  WITH ('connector' = 'print');

INSERT INTO out_counts
SELECT window_start, window_end, COUNT(*) AS cnt
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(event_time), INTERVAL '5' SECOND, INTERVAL '10' SECOND))
GROUP BY window_start, window_end;
