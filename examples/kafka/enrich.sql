-- orders + payments -> orders-enriched, exactly-once (a transaction per
-- subtask per checkpoint, committed when the checkpoint completes: the
-- cluster must checkpoint, e.g. execution.checkpointing.interval: 10 s).
-- Needs tables.sql.
--
-- The stand's enrichment: each order with the method of its payment made
-- within one minute of it, an interval join whose state the interval bounds.

CREATE TABLE enriched (
    order_id  INT,
    user_id   INT,
    amount    INT,
    `method`  STRING
) WITH (
    'connector' = 'kafka', 'topic' = 'orders-enriched',
    'properties.bootstrap.servers' = '127.0.0.1:9092',
    'format' = 'json',
    'sink.delivery-guarantee' = 'exactly-once',
    'sink.transactional-id-prefix' = 'enriched-tx',
    'properties.transaction.timeout.ms' = '900000'
);

INSERT INTO enriched
SELECT o.order_id, o.user_id, o.amount, p.`method`
FROM orders o
JOIN payments p
  ON o.order_id = p.order_id
 AND p.ts BETWEEN o.ts - INTERVAL '1' MINUTE AND o.ts + INTERVAL '1' MINUTE;
