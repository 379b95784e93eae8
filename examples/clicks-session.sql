-- examples/clicks-session.json as SQL: click sessions per user that close
-- after 5 seconds without a click, watermark 5 s behind.
-- Run: sluice sql -f examples/clicks-session.sql

CREATE TEMPORARY TABLE clicks (
    user_id    INT,
    event_time AS CAST(CURRENT_TIMESTAMP - INTERVAL '0.001' SECOND * CAST(RAND() * 10000 AS INT) AS TIMESTAMP(3)),
    WATERMARK FOR event_time AS event_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'datagen', 'rows-per-second' = '1',
    'fields.user_id.min' = '1', 'fields.user_id.max' = '5'
);

CREATE TEMPORARY TABLE out_sessions (window_start TIMESTAMP(3), window_end TIMESTAMP(3),
                                     user_id INT, cnt BIGINT)
  WITH ('connector' = 'print');

INSERT INTO out_sessions
SELECT window_start, window_end, user_id, COUNT(*) AS cnt
FROM TABLE(SESSION(TABLE clicks PARTITION BY user_id, DESCRIPTOR(event_time), INTERVAL '5' SECOND))
GROUP BY window_start, window_end, user_id;
