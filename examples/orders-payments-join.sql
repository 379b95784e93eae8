-- The seed's 02-sql-ops demo on datagen feeders: enrich each order with the
-- method of its payment made within one minute of it (an interval join, whose
-- state the interval bounds). Drop the `AND p.ts BETWEEN ...` line to get a
-- regular join: the submission then warns that its state grows without bound,
-- and the job page shows its stateKeys / stateSizeBytes climbing.
--
--   sluice sql -f examples/orders-payments-join.sql

CREATE TABLE orders (
    order_id INT,
    user_id  INT,
    amount   INT,
    ts       AS CURRENT_TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
    'connector' = 'datagen',
    'rows-per-second' = '5',
    'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1', 'fields.order_id.end' = '1000000',
    'fields.user_id.min' = '1', 'fields.user_id.max' = '100',
    'fields.amount.min' = '1', 'fields.amount.max' = '500'
);

CREATE TABLE payments (
    order_id INT,
    `method` STRING,
    ts       AS CURRENT_TIMESTAMP,
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
    'connector' = 'datagen',
    'rows-per-second' = '5',
    'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1', 'fields.order_id.end' = '1000000',
    'fields.method.length' = '6'
);

CREATE TABLE enriched (order_id INT, user_id INT, amount INT, `method` STRING)
WITH ('connector' = 'print');

INSERT INTO enriched
SELECT o.order_id, o.user_id, o.amount, p.`method`
FROM orders o
JOIN payments p
  ON o.order_id = p.order_id
 AND p.ts BETWEEN o.ts - INTERVAL '1' MINUTE AND o.ts + INTERVAL '1' MINUTE;
