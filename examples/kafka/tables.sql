-- The stand's Kafka tables (run first in a `sluice sql` session; see README.md).
-- Brokers at 127.0.0.1:9092: change 'properties.bootstrap.servers' for another.

CREATE TABLE orders (
    order_id  INT,
    user_id   INT,
    amount    INT,
    ts        TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
    'connector' = 'kafka', 'topic' = 'orders',
    'properties.bootstrap.servers' = '127.0.0.1:9092',
    'properties.group.id' = 'sluice-orders',
    'scan.startup.mode' = 'earliest-offset',
    'format' = 'json'
);

CREATE TABLE payments (
    order_id  INT,
    `method`  STRING,
    ts        TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
    'connector' = 'kafka', 'topic' = 'payments',
    'properties.bootstrap.servers' = '127.0.0.1:9092',
    'properties.group.id' = 'sluice-payments',
    'scan.startup.mode' = 'earliest-offset',
    'format' = 'json'
);
