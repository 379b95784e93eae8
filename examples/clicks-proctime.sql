-- Processing-time windows: clicks counted per 10 seconds of the TaskManager's
-- clock (PROCTIME()), with no watermark and nothing ever late.
-- Run: sluice sql -f examples/clicks-proctime.sql

CREATE TEMPORARY TABLE clicks (
    user_id INT,
    url     STRING,
    pt      AS PROCTIME()
) WITH (
    'connector' = 'datagen', 'rows-per-second' = '20',
    'fields.user_id.min' = '1', 'fields.user_id.max' = '5', 'fields.url.length' = '8'
);

CREATE TEMPORARY TABLE out_counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), user_id INT, cnt BIGINT)
  WITH ('connector' = 'print');

INSERT INTO out_counts
SELECT window_start, window_end, user_id, COUNT(*) AS cnt
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(pt), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, user_id;
