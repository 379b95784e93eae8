-- The event files as the queries' tables, the same DDL on Sluice and Flink.
-- ${DIR} is filled in by run.py.
CREATE TABLE person (
    id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING,
    state STRING, `dateTime` TIMESTAMP(3), extra STRING,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'filesystem', 'path' = '${DIR}/person', 'format' = 'json');

CREATE TABLE auction (
    id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT,
    `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT,
    extra STRING,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'filesystem', 'path' = '${DIR}/auction', 'format' = 'json');

CREATE TABLE bid (
    auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
    `dateTime` TIMESTAMP(3), extra STRING,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH ('connector' = 'filesystem', 'path' = '${DIR}/bid', 'format' = 'json');

CREATE TABLE bid_proctime (
    auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
    `dateTime` TIMESTAMP(3), extra STRING, p_time AS PROCTIME()
) WITH ('connector' = 'filesystem', 'path' = '${DIR}/bid', 'format' = 'json');
