-- Flink's MATCH_RECOGNIZE example: the periods in which a stock's price
-- fell and then rose again, over the ticker of Flink's documentation
-- (examples/ticker.csv). Only the connectors differ from Flink's text.
-- Expected output (docs/SQL.md, "MATCH_RECOGNIZE"), on the TaskManager's stdout:
--   +I[ACME, 2011-04-01T10:00:04, 2011-04-01T10:00:07, 2011-04-01T10:00:08]
-- Run from the repository root: sluice sql -f examples/stock-ticker.sql

CREATE TEMPORARY TABLE Ticker (
    symbol  STRING,
    rowtime TIMESTAMP(3),
    price   INT,
    tax     INT,
    WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'examples/ticker.csv', 'format' = 'csv');

CREATE TEMPORARY TABLE price_drops (
    symbol        STRING,
    start_tstamp  TIMESTAMP(3),
    bottom_tstamp TIMESTAMP(3),
    end_tstamp    TIMESTAMP(3)
) WITH ('connector' = 'print');

INSERT INTO price_drops
SELECT *
FROM Ticker
    MATCH_RECOGNIZE (
        PARTITION BY symbol
        ORDER BY rowtime
        MEASURES
            START_ROW.rowtime AS start_tstamp,
            LAST(PRICE_DOWN.rowtime) AS bottom_tstamp,
            LAST(PRICE_UP.rowtime) AS end_tstamp
        ONE ROW PER MATCH
        AFTER MATCH SKIP TO LAST PRICE_UP
        PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
        DEFINE
            PRICE_DOWN AS
                (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price < START_ROW.price) OR
                    PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
            PRICE_UP AS
                PRICE_UP.price > LAST(PRICE_DOWN.price, 1)
    ) MR;
