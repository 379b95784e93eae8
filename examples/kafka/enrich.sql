-- orders -> orders-enriched, exactly-once (a transaction per subtask per
-- checkpoint, committed when the checkpoint completes: the cluster must
-- checkpoint, e.g. execution.checkpointing.interval: 10 s). Needs tables.sql.
--
-- The stand enriches each order with its payment's method through an
-- interval join (p.ts BETWEEN o.ts - INTERVAL '1' MINUTE AND o.ts + INTERVAL
-- '1' MINUTE); until Sluice's SQL has that join, this copies the orders,
-- which exercises the same operations: stop with a savepoint mid-stream,
-- restore at parallelism 4, nothing lost or repeated in the topic.

CREATE TABLE enriched (
    order_id  INT,
    user_id   INT,
    amount    INT
) WITH (
    'connector' = 'kafka', 'topic' = 'orders-enriched',
    'properties.bootstrap.servers' = '127.0.0.1:9092',
    'format' = 'json',
    'sink.delivery-guarantee' = 'exactly-once',
    'sink.transactional-id-prefix' = 'enriched-tx',
    'properties.transaction.timeout.ms' = '900000'
);

INSERT INTO enriched SELECT order_id, user_id, amount FROM orders;
