/*
 * format_json.h -- the one JSON row encoder, shared by the Kafka formats
 * (kafka_common.c: json and debezium-json), the file sink (file.c) and the
 * collect sink (collect.c).
 *
 * Two shapes of row, each written one way:
 *   - Flink's json format (Kafka, the file sink): an object keyed by column
 *     name. NULL is null; numbers and booleans are bare (DOUBLE as Java's
 *     Double.toString, NaN and +-Infinity quoted as Jackson writes them,
 *     JSON having none); STRING is an escaped JSON string; BYTES base64 in a
 *     string; TIMESTAMP Flink's SQL text in a string ("2026-01-01
 *     00:00:00.02", lib/text.h SL_TS_SQL).
 *   - The SQL client's row (the collect sink): ["+I","1","Bob",null], the
 *     kind and then every value as the text the client shows (TIMESTAMP
 *     "2026-01-01 00:00:00.020", SL_TS_SPACE), NULL as null.
 *
 * The decoder of the json format is kf_decode (kafka_common.c), which the
 * Kafka source and the file source (and through it the lookup join) share.
 *
 * Every encoder appends to a growable buffer that the caller reuses record
 * after record: once it has grown to the largest record, encoding allocates
 * nothing and makes no system call. The buffer is lib's sl_buf (sl_buf is
 * its name in kafka_common.h), the string escaper lib's sl_json_escape
 * (RFC 8259's short forms \b \f \n \r \t), base64 lib's sl_base64_encode.
 */
#ifndef SL_FORMAT_JSON_H
#define SL_FORMAT_JSON_H

#include "kafka_common.h"

/* v (of type t) as Flink's json format writes a value, appended to out. */
void sl_fmt_json_value(sl_buf *out, const sl_value *v, sl_type t);
/* The same for any type: DATE "2026-01-01", TIME "10:00:01.5", TIMESTAMP(p)
 * "2026-01-01 00:00:00.123456", DECIMAL, TINYINT, SMALLINT, FLOAT as
 * numbers, ARRAY as an array, MAP and MULTISET as an object (keys as their
 * text, a NULL key as null), ROW as an object by field name. */
void sl_fmt_json_value_dt(sl_buf *out, const sl_value *v, const sl_dtype *dt);

/* The codec's columns of row as the members of a json-format object,
 * "name":value separated by commas, without the braces (callers add their
 * own members: the file sink's "op"). Columns past row->n are left out.
 * The codec's json options apply (kf_json_opts; a codec whose options were
 * never read writes a NULL MAP key as null); SL_ERR with why ("column 'm':
 * a MAP<...> has a NULL key ...") when json.map-null-key.mode is FAIL and
 * a MAP holds a NULL key. */
int sl_fmt_json_fields(sl_buf *out, const kf_codec *c, const sl_row *row, char *why,
                       size_t whylen);

/* row (of schema s) as the SQL client's JSON array, kind first, then each
 * value's text, without a line end; when the row has non-null ARRAY, MAP,
 * MULTISET, ROW or TIMESTAMP_LTZ values, a last element {"json": {"<column
 * index>": v}} holds them as JSON (the json format's encoding with ISO-8601
 * timestamps, a TIMESTAMP_LTZ the UTC instant with 'Z', MAP keys as their
 * text), for the SQL gateway's JSON rows. inst: the same row with its
 * TIMESTAMP_LTZ columns as instants where row shows them as local times
 * (NULL: row itself); the JSON is written from it, so that it is exact also
 * in the hour a daylight-saving change repeats. */
void sl_fmt_json_client_row(sl_buf *out, const sl_row *row, const sl_row *inst,
                            const sl_schema *s);

#endif
