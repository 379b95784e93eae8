-- The seed's demo (examples/clicks-tumble.json as SQL): clicks with an
-- event time spread 0..10 s into the past, a watermark 5 s behind, and
-- 10-second tumbling windows counted into a print table.
-- Run: sluice sql -f examples/clicks-tumble.sql

CREATE TEMPORARY TABLE clicks (
    user_id    INT,
    url        STRING,
    event_time AS CAST(CURRENT_TIMESTAMP - INTERVAL '0.001' SECOND * CAST(RAND() * 10000 AS INT) AS TIMESTAMP(3)),
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'datagen', 'rows-per-second' = '20',
    'fields.user_id.min' = '1', 'fields.user_id.max' = '5', 'fields.url.length' = '8'
);

CREATE TEMPORARY TABLE out_counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), cnt BIGINT)
  WITH ('connector' = 'print');

INSERT INTO out_counts
SELECT window_start, window_end, COUNT(*) AS cnt
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(event_time), INTERVAL '10' SECOND))
GROUP BY window_start, window_end;
