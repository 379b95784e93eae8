-- q11: user sessions, bids per bidder per session (gap 10 s).
CREATE TABLE nexmark_q11 (
    bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q11
SELECT bidder, COUNT(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
