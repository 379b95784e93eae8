-- User-defined C functions from SQL (docs/UDF.md). Build the object first:
--   cc -O2 -fPIC -shared -Icore -Ilib -o /tmp/words.so examples/udf/words.c
-- then: sluice sql -f examples/udf/words.sql
CREATE FUNCTION shout AS 'shout' LANGUAGE C USING JAR '/tmp/words.so';
CREATE FUNCTION words AS 'words' USING JAR '/tmp/words.so';

CREATE TABLE lines (id BIGINT, line STRING) WITH (
  'connector' = 'datagen', 'number-of-rows' = '20', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '20', 'fields.line.length' = '12');
CREATE TABLE `out` (id BIGINT, word STRING, pos INT) WITH ('connector' = 'print');

INSERT INTO `out`
SELECT id, shout(w), p FROM lines CROSS JOIN LATERAL TABLE(words(line)) AS t(w, p);
