-- q12: processing-time windows, bids per bidder per 10 s of wall-clock time.
CREATE TABLE nexmark_q12 (
    bidder BIGINT, bid_count BIGINT, starttime TIMESTAMP(3), endtime TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q12
SELECT bidder, COUNT(*) AS bid_count, window_start, window_end
FROM TABLE(TUMBLE(TABLE bid_proctime, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
