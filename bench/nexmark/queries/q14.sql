-- q14: calculation. Flink's q14 counts the 'c's of extra with a Java UDF;
-- here the same count is CHAR_LENGTH(extra) - CHAR_LENGTH(REPLACE(extra, 'c', '')).
CREATE TABLE nexmark_q14 (
    auction BIGINT, bidder BIGINT, price DOUBLE, bidTimeType STRING, `dateTime` TIMESTAMP(3),
    extra STRING, c_counts BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q14
SELECT auction, bidder, 0.908 * price AS price,
       CASE
           WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
           WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
           ELSE 'otherTime'
       END AS bidTimeType,
       `dateTime`, extra,
       CAST(CHAR_LENGTH(extra) - CHAR_LENGTH(REPLACE(extra, 'c', '')) AS BIGINT) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
