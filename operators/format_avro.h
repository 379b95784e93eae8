/*
 * format_avro.h -- Flink's `avro` and `avro-confluent` formats for the Kafka
 * source and sink, on Debian's libavro (avro-c).
 *
 * Two halves, as the Kafka codecs are split:
 *   - sl_avro_fmt, made at plan time by kf_codec_init and hung on the codec
 *     (kf_codec.avro): the Avro schema derived from the codec's columns as
 *     Flink derives it (record `record` in namespace
 *     org.apache.flink.avro.generated, nullable types as a union with null
 *     first, DECIMAL as bytes with logicalType decimal, DATE int date, TIME
 *     time-millis (time-micros for p > 3), TIMESTAMP(p <= 3) timestamp-millis,
 *     TIMESTAMP(p <= 6) timestamp-micros, ARRAY array, MAP<STRING, _> and
 *     MULTISET<STRING> map, ROW a nested record `<parent>_<field>`), its
 *     JSON text and the registry options. Immutable once planned, so every
 *     subtask may read it.
 *   - sl_avro, one per subtask (made in open()): libavro's generic value the
 *     records are read into and written from, the memory reader and writer,
 *     the schema registry's answers (writer schemas by id, the id the sink
 *     registered). Owned by the task thread.
 *
 * avro-confluent records are the Confluent wire format: a zero byte, the
 * schema id as 4 bytes big endian, then the Avro binary. The sink registers
 * its schema under the subject (POST /subjects/<subject>/versions) once,
 * the source fetches each writer schema it meets (GET /schemas/ids/<id>)
 * once and reads through libavro's schema resolution when it differs from
 * the table's. Both calls are plain HTTP/1.1 through libevent's evhttp,
 * made on the task thread the first time an id is needed (then cached).
 */
#ifndef SL_FORMAT_AVRO_H
#define SL_FORMAT_AVRO_H

#include "kafka_common.h"

/* The schema registry's options of an avro-confluent format, each under the
 * prefix P ("", "value." or "key.") with W saying which format it is for. */
#define SL_AVRO_REGISTRY_OPTIONS(P, W)                                                          \
    {P "avro-confluent.url", SL_CT_STRING, NULL, NULL,                                          \
     W ": the schema registry, http://host:port or https://host:port."},                       \
    {P "avro-confluent.subject", SL_CT_STRING, NULL, NULL,                                      \
     W ": the sink's subject (default <topic>-" P "value / -key)."},                            \
    {P "avro-confluent.basic-auth.credentials-source", SL_CT_STRING, NULL, NULL,                \
     W ": USER_INFO (basic-auth.user-info) or URL (user and password in the URL)."},           \
    {P "avro-confluent.basic-auth.user-info", SL_CT_STRING, NULL, NULL,                         \
     W ": 'user:password' for the registry's basic authentication."},                          \
    {P "avro-confluent.bearer-auth.credentials-source", SL_CT_STRING, NULL, NULL,               \
     W ": STATIC_TOKEN (bearer-auth.token)."},                                                 \
    {P "avro-confluent.bearer-auth.token", SL_CT_STRING, NULL, NULL,                            \
     W ": the token for the registry's bearer authentication."},                               \
    {P "avro-confluent.ssl.truststore.location", SL_CT_STRING, NULL, NULL,                      \
     W ": PEM file of the CAs an https:// registry's certificate must chain to (default: the "  \
       "system's)."},                                                                          \
    {P "avro-confluent.ssl.truststore.password", SL_CT_STRING, NULL, NULL,                      \
     W ": accepted for Flink's sake; a PEM truststore has no password."},                      \
    {P "avro-confluent.ssl.keystore.location", SL_CT_STRING, NULL, NULL,                        \
     W ": PEM file with the client certificate and key an https:// registry asks for."},       \
    {P "avro-confluent.ssl.keystore.password", SL_CT_STRING, NULL, NULL,                        \
     W ": the password of the keystore's key, if it is encrypted."},

/* The options of the avro formats, in the kafka connectors' option tables. */
#define SL_AVRO_OPTIONS                                                                         \
    {"not-null-fields", SL_CT_JSON, NULL, NULL,                                                 \
     "Columns (';'-separated) declared NOT NULL: no union with null in the avro schema "       \
     "(set by the SQL planner)."},                                                             \
    SL_AVRO_REGISTRY_OPTIONS("", "avro-confluent (format)")                                    \
    SL_AVRO_REGISTRY_OPTIONS("value.", "avro-confluent value.format")                          \
    SL_AVRO_REGISTRY_OPTIONS("key.", "avro-confluent key.format")

typedef struct sl_avro_fmt sl_avro_fmt;
typedef struct sl_avro sl_avro;

/* Plan codec c (filled by kf_codec_init with an avro format) for the key
 * (key = true) or the value of vertex v: the columns named in option
 * `not-null-fields` (the planner's: declared NOT NULL) lose their union with
 * null, the schema is derived into c->avro, and avro-confluent reads its
 * registry options -- `key.avro-confluent.*` for the key,
 * `value.avro-confluent.*` or `avro-confluent.*` for the value: url (required,
 * http://host[:port][/path]) and subject (default <topic>-key /
 * <topic>-value when topic is given). SL_ERR with err naming the column
 * whose type Avro cannot carry (intervals, TIMESTAMP(p > 6), MAP keys that
 * are not STRING), a name that is not an Avro name, or the option. */
int sl_avro_fmt_plan(kf_codec *c, const sl_vertex *v, bool key, const char *topic, char *err,
                     size_t errlen);
void sl_avro_fmt_free(sl_avro_fmt *f);
/* The derived schema as JSON text (borrowed, lives as long as f). */
const char *sl_avro_fmt_schema(const sl_avro_fmt *f);

/* Per-subtask state for codec c (which must outlive it). Caller owns it. */
sl_avro *sl_avro_new(const kf_codec *c);
void sl_avro_destroy(sl_avro *a);

/* Decode one record p[0..n) into vals[c->slot[i]]. Strings borrow from a
 * (valid until the next decode), nested values from str (reused). SL_ERR
 * with why (no location: the caller adds topic, partition and offset). */
int sl_avro_decode(sl_avro *a, const char *p, size_t n, sl_value *vals, sl_buf *str, char *why,
                   size_t whylen);
/* Encode the codec's columns of row, appended to out. SL_ERR with why. */
int sl_avro_encode(sl_avro *a, const sl_row *row, sl_buf *out, char *why, size_t whylen);

#endif
