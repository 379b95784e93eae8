-- The nexmark source as one flat table (Sluice's SQL has no ROW type yet:
-- Flink's nexmark DDL nests the person, auction and bid fields in three
-- ROW columns; here they are columns prefixed by the event kind, NULL on the
-- other kinds' rows). event_type: 0 person, 1 auction, 2 bid.
CREATE TABLE nexmark (
    event_type INT,
    `dateTime` TIMESTAMP(3),
    person_id BIGINT, person_name STRING, person_emailAddress STRING,
    person_creditCard STRING, person_city STRING, person_state STRING, person_extra STRING,
    auction_id BIGINT, auction_itemName STRING, auction_description STRING,
    auction_initialBid BIGINT, auction_reserve BIGINT, auction_expires TIMESTAMP(3),
    auction_seller BIGINT, auction_category BIGINT, auction_extra STRING,
    bid_auction BIGINT, bid_bidder BIGINT, bid_price BIGINT, bid_channel STRING,
    bid_url STRING, bid_extra STRING,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '${RATE}',
    'events.num' = '${EVENTS}'
);

CREATE VIEW person AS
SELECT person_id AS id, person_name AS name, person_emailAddress AS emailAddress,
       person_creditCard AS creditCard, person_city AS city, person_state AS state,
       `dateTime`, person_extra AS extra
FROM nexmark WHERE event_type = 0;

CREATE VIEW auction AS
SELECT auction_id AS id, auction_itemName AS itemName, auction_description AS description,
       auction_initialBid AS initialBid, auction_reserve AS reserve, `dateTime`,
       auction_expires AS expires, auction_seller AS seller, auction_category AS category,
       auction_extra AS extra
FROM nexmark WHERE event_type = 1;

CREATE VIEW bid AS
SELECT bid_auction AS auction, bid_bidder AS bidder, bid_price AS price,
       bid_channel AS channel, bid_url AS url, `dateTime`, bid_extra AS extra
FROM nexmark WHERE event_type = 2;
