-- q13: bounded side input join, each bid with a value looked up by
-- auction % 10000 in a side table (a processing-time lookup join).
CREATE TABLE side_input (
    `key` BIGINT, `value` STRING
) WITH ('connector' = 'filesystem', 'path' = '${DIR}/side_input', 'format' = 'csv');

CREATE TABLE nexmark_q13 (
    auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), `value` STRING
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q13
SELECT B.auction, B.bidder, B.price, B.`dateTime`, S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 10000) = S.`key`;
