-- q10: log the bids with their day and minute (Flink's q10 writes them to a
-- partitioned filesystem table; here the sink is a blackhole).
CREATE TABLE nexmark_q10 (
    auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), extra STRING,
    dt STRING, hm STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q10
SELECT auction, bidder, price, `dateTime`, extra,
       DATE_FORMAT(`dateTime`, 'yyyy-MM-dd'), DATE_FORMAT(`dateTime`, 'HH:mm')
FROM bid;
