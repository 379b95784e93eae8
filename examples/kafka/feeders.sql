-- Feeders: datagen -> topics orders and payments, both INSERTs as one job.
-- Needs tables.sql in the same session (or file) first.

CREATE TABLE orders_src (
    order_id  INT,
    user_id   INT,
    amount    INT
) WITH (
    'connector' = 'datagen',
    'rows-per-second' = '5',
    'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1', 'fields.order_id.end' = '1000000',
    'fields.user_id.min' = '1', 'fields.user_id.max' = '100',
    'fields.amount.min' = '1', 'fields.amount.max' = '500'
);

CREATE TABLE payments_src (
    order_id  INT,
    `method`  STRING
) WITH (
    'connector' = 'datagen',
    'rows-per-second' = '5',
    'fields.order_id.kind' = 'sequence', 'fields.order_id.start' = '1', 'fields.order_id.end' = '1000000',
    'fields.method.length' = '6'
);

EXECUTE STATEMENT SET BEGIN
  INSERT INTO orders SELECT order_id, user_id, amount, CURRENT_TIMESTAMP FROM orders_src;
  INSERT INTO payments SELECT order_id, `method`, CURRENT_TIMESTAMP FROM payments_src;
END;
