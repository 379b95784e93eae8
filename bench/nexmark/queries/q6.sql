-- q6: average selling price per seller over its last 10 closed auctions
-- (an OVER window over a changelog; Flink cannot run it either).
CREATE TABLE nexmark_q6 (seller BIGINT, avg_price BIGINT) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q6
SELECT Q.seller, AVG(Q.final) OVER (PARTITION BY Q.seller ORDER BY Q.`dateTime`
                                    ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
FROM (
    SELECT MAX(B.price) AS final, A.seller, B.`dateTime`
    FROM auction AS A JOIN bid AS B ON A.id = B.auction
    WHERE B.`dateTime` BETWEEN A.`dateTime` AND A.expires
    GROUP BY A.id, A.seller
) AS Q;
