-- Writes the events of nexmark_table.sql into three directories of JSON
-- lines (Flink's json format), one per kind, that both engines then read
-- with their filesystem connector. ${DIR}, ${EVENTS}, ${RATE} are filled in
-- by run.py.
CREATE TABLE person_files (
    id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING,
    state STRING, `dateTime` TIMESTAMP(3), extra STRING
) WITH ('connector' = 'filesystem', 'path' = '${DIR}/person', 'format' = 'json');

CREATE TABLE auction_files (
    id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT,
    `dateTime` TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT,
    extra STRING
) WITH ('connector' = 'filesystem', 'path' = '${DIR}/auction', 'format' = 'json');

CREATE TABLE bid_files (
    auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
    `dateTime` TIMESTAMP(3), extra STRING
) WITH ('connector' = 'filesystem', 'path' = '${DIR}/bid', 'format' = 'json');

SET 'pipeline.name' = 'nexmark generate';
SET 'parallelism.default' = '2';

EXECUTE STATEMENT SET BEGIN
INSERT INTO person_files SELECT * FROM person;
INSERT INTO auction_files SELECT * FROM auction;
INSERT INTO bid_files SELECT * FROM bid;
END;
