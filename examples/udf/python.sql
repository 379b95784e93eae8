-- A Python function feeding a C aggregate function (docs/UDF.md). Build the object first:
--   cc -O2 -fPIC -shared -Icore -Ilib -o /tmp/words.so examples/udf/words.c
-- then, from the top of the tree: sluice sql -f examples/udf/python.sql
CREATE FUNCTION vowels AS 'textfns.vowels' LANGUAGE PYTHON USING JAR 'examples/udf/textfns.py';
CREATE FUNCTION mean_len AS 'mean_len' LANGUAGE C USING JAR '/tmp/words.so';

CREATE TABLE lines (id BIGINT, line STRING) WITH (
  'connector' = 'datagen', 'number-of-rows' = '20', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '20', 'fields.line.length' = '12');
CREATE TABLE `out` (k BIGINT, vowels_per_line DOUBLE) WITH ('connector' = 'print');

INSERT INTO `out`
SELECT id % 3 AS k, mean_len(vowels(line)) FROM lines GROUP BY id % 3;
