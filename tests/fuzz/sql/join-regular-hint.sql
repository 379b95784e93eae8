CREATE TABLE orders (
  order_id INT, user_id INT, amount INT,
  ts AS TO_TIMESTAMP_LTZ(1700000000000 + order_id * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1', 'fields.order_id.end' = '100',
  'fields.user_id.min' = '1', 'fields.user_id.max' = '100', 'fields.amount.min' = '1', 'fields.amount.max' = '500');
CREATE TABLE payments (
  pay_id INT, order_id AS pay_id % 100 + 1, `method` STRING,
  ts AS TO_TIMESTAMP_LTZ(1700000000000 + pay_id * 1000, 3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen', 'fields.pay_id.kind' = 'sequence', 'fields.pay_id.start' = '1', 'fields.pay_id.end' = '100', 'fields.method.length' = '4');
CREATE TABLE enriched (order_id INT, user_id INT, amount INT, `method` STRING) WITH ('connector' = 'print');
EXPLAIN INSERT INTO enriched
SELECT /*+ STATE_TTL('o' = '1d', 'p' = '12 h') */ o.order_id, o.user_id, o.amount, p.`method`
FROM orders o JOIN payments p ON o.order_id = p.order_id;
EXPLAIN INSERT INTO enriched
SELECT /*+ STATE_TTL('o' = '1d') */ o.order_id, o.user_id, o.amount, p.`method`
FROM orders o JOIN payments p ON o.order_id = p.order_id;
EXPLAIN INSERT INTO enriched
SELECT /*+ STATE_TTL('x' = '1d') */ o.order_id, o.user_id, o.amount, p.`method`
FROM orders o JOIN payments p ON o.order_id = p.order_id;
EXPLAIN INSERT INTO enriched SELECT o.order_id, o.user_id, o.amount, p.`method` FROM orders o LEFT JOIN payments FOR SYSTEM_TIME AS OF o.ts AS p ON o.order_id = p.order_id;
