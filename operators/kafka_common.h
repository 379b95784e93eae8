/*
 * kafka_common.h -- what the Kafka source (kafka_source.c) and sink
 * (kafka_sink.c) share: the librdkafka configuration built from a vertex's
 * `properties.*` options, and the record formats json, csv and raw.
 *
 * A codec maps the physical columns of a row (the ones the format carries,
 * in schema order) to and from one record value or key. Decoding writes into
 * a caller's value array; strings point into the record or into the codec
 * buffer given (valid until the next decode). Encoding appends to a growable
 * buffer that is reused record after record, so neither allocates per record
 * once the buffers have grown to the largest record seen.
 */
#ifndef SL_KAFKA_COMMON_H
#define SL_KAFKA_COMMON_H

#include <librdkafka/rdkafka.h>
#include <string.h>

#include "buf.h"
#include "jobgraph.h"
#include "operator.h"

typedef enum { KF_JSON = 0, KF_CSV, KF_RAW, KF_DEBEZIUM, KF_AVRO, KF_AVRO_CONFLUENT } kf_format;

/* avro / avro-confluent: the schema and registry options (format_avro.h). */
struct sl_avro_fmt;

/* What one debezium-json record is: a row added (op c or r: +I), an update
 * (op u: -U of the before image, +U of the after), a delete (op d: -D). */
typedef enum { KF_CHANGE_INSERT = 0, KF_CHANGE_UPDATE, KF_CHANGE_DELETE } kf_change;

/* The codecs' reusable buffers are lib's sl_buf (buf.h); these names stay
 * for the unit tests written against them. */
typedef sl_buf kf_buf;
static inline void kf_buf_reserve(sl_buf *b, size_t extra) { sl_buf_reserve(b, extra); }
static inline void kf_buf_free(sl_buf *b) { sl_buf_free(b); }

/* Append p[0..n) (p may be NULL when n is 0) or one character. */
static inline void kf_buf_put(kf_buf *b, const char *p, size_t n) { sl_buf_put(b, p, n); }
static inline void kf_buf_putc(kf_buf *b, char c) { sl_buf_putc(b, c); }

/* Flink's json format options (kf_json_opts_read). */
typedef enum { KF_MAPNULL_FAIL = 0, KF_MAPNULL_DROP, KF_MAPNULL_LITERAL } kf_mapnull;
typedef struct kf_json_opts {
    bool ts_iso;          /* json.timestamp-format.standard = ISO-8601: 'T' between date and time */
    bool dec_plain;       /* json.encode.decimal-as-plain-number: 0.0000001, not 1E-7 */
    kf_mapnull map_null;  /* json.map-null-key.mode: a MAP's NULL key fails the record (FAIL,
                           * the default), is left out (DROP) or written as the literal */
    char *null_literal;   /* json.map-null-key.literal (owned; default "null") */
    bool fail_missing;    /* json.fail-on-missing-field: a column absent from the object fails */
} kf_json_opts;

typedef struct kf_codec {
    kf_format fmt;
    int n;              /* physical columns the format carries */
    int *slot;          /* per column: its index in the row */
    sl_type *type;      /* per column */
    const sl_dtype **dt; /* per column: the full type */
    bool wide;          /* a column beyond the original seven types (json only) */
    char **name;        /* per column (json field names) */
    size_t *namelen;
    bool ignore_errors; /* json.ignore-parse-errors / csv.ignore-parse-errors */
    struct sl_avro_fmt *avro; /* avro formats: owned; records go through sl_avro_* */
    kf_json_opts json;  /* json and debezium-json: Flink's json.* options (defaults: all off) */
} kf_codec;

/* The option-table rows of Flink's json.* options (kf_json_opts), for every
 * operator that reads or writes the json format. */
#define KF_JSON_OPTIONS                                                                           \
    {"json.timestamp-format.standard", SL_CT_STRING, "SQL", NULL,                                \
     "SQL (2026-01-01 10:00:00.5) or ISO-8601 (2026-01-01T10:00:00.5) for written timestamps "  \
     "(a TIMESTAMP_LTZ in UTC with a trailing Z)."},                                              \
    {"json.encode.decimal-as-plain-number", SL_CT_STRING, "false", NULL,                         \
     "true: a DECIMAL is written in plain notation (0.0000001, not 1E-7)."},                    \
    {"json.map-null-key.mode", SL_CT_STRING, "FAIL", NULL,                                       \
     "A MAP's NULL key when writing: FAIL the job, DROP the entry, or write the LITERAL."},     \
    {"json.map-null-key.literal", SL_CT_STRING, "null", NULL,                                    \
     "The key text of a NULL MAP key with json.map-null-key.mode LITERAL."},                    \
    {"json.fail-on-missing-field", SL_CT_STRING, "false", NULL,                                  \
     "true: a record without one of the columns or of a ROW's fields, at any depth, fails "  \
     "(false: it is NULL)."}

/* A json source refuses both json.ignore-parse-errors and
 * json.fail-on-missing-field set to true, as Flink does. */
#define KF_JSON_BOTH_LENIENT_STRICT                                                              \
    "options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot both be true " \
    "(a missing field would fail the record and be ignored at once)"

/* Read Flink's json.* options (above) from a vertex config into c->json.
 * SL_ERR with "vertex 'vid': option 'json....': ..." for a bad value. */
int kf_json_opts_read(kf_codec *c, const struct json_t *config, const char *vid, char *err,
                      size_t errlen);

/* Parse a format name ("json", "csv", "raw", "debezium-json", "avro",
 * "avro-confluent"); SL_ERR when unknown. */
int kf_format_parse(const char *s, kf_format *out);
const char *kf_format_name(kf_format f);
/* Fill a codec for format fmt over columns cols[0..n) of schema s (copied).
 * raw needs exactly one STRING or BYTES column. SL_ERR with err. */
int kf_codec_init(kf_codec *c, kf_format fmt, const sl_schema *s, const int *cols, int n,
                  const char *vid, char *err, size_t errlen);
void kf_codec_free(kf_codec *c);

/* Decode one record (p, n) into vals[slot[i]]; SL_ERR with a reason in why
 * (no location: the caller adds topic, partition and offset). str is the
 * codec's scratch for unescaped strings. */
int kf_decode(const kf_codec *c, const char *p, size_t n, sl_value *vals, sl_buf *str, char *why,
              size_t whylen);
/* debezium-json: the change event (p, n) -- {"before", "after", "op"},
 * also inside {"schema", "payload"} -- with its before image into
 * before[slot[i]] and its after image into after[slot[i]]. */
int kf_decode_debezium(const kf_codec *c, const char *p, size_t n, sl_value *before,
                       sl_value *after, kf_change *out, sl_buf *str, char *why, size_t whylen);
/* Encode the codec's columns of row into out (appended); debezium-json
 * wraps them by row kind (+I/+U: op c with after, -U/-D: op d with before).
 * SL_ERR with why (a csv row that is not an insert). */
int kf_encode(const kf_codec *c, const sl_row *row, sl_buf *out, char *why, size_t whylen);

/* The headers column's text -- a JSON object of name -> string or null,
 * as the source writes it -- one fn(ctx, name, nlen, value, vlen) per
 * header in order (value NULL for null; both borrowed from p or str, valid
 * until the next call). str is scratch (reserved here: no allocation once it
 * has grown). SL_ERR with why when the text is not such an object or fn
 * fails. */
int kf_headers_parse(const char *p, size_t n, sl_buf *str,
                     int (*fn)(void *ctx, const char *name, size_t nlen, const char *val,
                               size_t vlen),
                     void *ctx, char *why, size_t whylen);

/* s[0..n) as a JSON string (quoted, escaped) appended to b. */
void kf_json_string(sl_buf *b, const char *s, size_t n);

/* A ';'-separated list of column names (or a JSON array of them) in option
 * `key` of v, resolved against s into cols (at most SL_MAX_FIELDS); *n 0
 * when the option is absent. SL_ERR with err naming the option. */
int kf_fields(const sl_vertex *v, const char *key, const sl_schema *s, int *cols, int *n,
              char *err, size_t errlen);

/* The key and value layout of a kafka / upsert-kafka table, Flink's
 * options: value.format (or format), key.format with key.fields (kafka) or
 * primary-key (upsert-kafka, required), value.fields-include ALL | EXCEPT_KEY.
 * phys: the columns records carry (in schema order). Fills the value
 * format, the key columns (*nk 0: no key) and the value columns. */
int kf_key_value_plan(const sl_vertex *v, const sl_schema *s, const int *phys, int nphys,
                      bool upsert, kf_format *vfmt, int *kcols, int *nk, int *vcols, int *nv,
                      char *err, size_t errlen);

/* A librdkafka configuration from the vertex's `properties.*` options
 * (properties.bootstrap.servers is required), each checked by librdkafka
 * itself, so a bad name or value fails plan() naming the option. Keys in
 * `reserved` (NULL-terminated, librdkafka names) are refused because the
 * operator sets them itself. Caller owns *out (rd_kafka_conf_destroy). */
int kf_conf_build(const sl_vertex *v, const char *const *reserved, rd_kafka_conf_t **out,
                  char *err, size_t errlen);
/* The value of property `name` (librdkafka name, e.g. "group.id") given in
 * the vertex config, or dflt. Borrowed. */
const char *kf_prop(const sl_vertex *v, const char *name, const char *dflt);

/* Parse "2026-01-01 00:00:00.123" / "2026-01-01T00:00:00.123Z" (fraction
 * optional, up to 9 digits, milliseconds kept) into epoch ms (UTC). */
int kf_parse_timestamp(const char *s, size_t n, int64_t *ms);

#endif
