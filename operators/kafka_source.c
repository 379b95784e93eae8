/*
 * kafka_source.c -- the `kafka` source: records of Kafka topics through
 * librdkafka, with Flink's SQL connector options (docs/KAFKA.md).
 *
 *   topic | topic-pattern          one topic, several separated by ';', or a
 *                                  POSIX extended regex over topic names
 *   properties.bootstrap.servers   required
 *   properties.group.id            commits go there (default sluice-<vertex>)
 *   properties.*                   any librdkafka consumer property
 *   scan.startup.mode              group-offsets (default) | earliest-offset |
 *                                  latest-offset | timestamp | specific-offsets
 *   scan.startup.timestamp-millis  for timestamp
 *   scan.startup.specific-offsets  "partition:0,offset:42;partition:1,offset:7"
 *   scan.bounded.mode              unbounded (default) | latest-offset |
 *                                  group-offsets | timestamp (+ scan.bounded.
 *                                  timestamp-millis) | specific-offsets (+
 *                                  scan.bounded.specific-offsets)
 *   scan.topic-partition-discovery.interval   new partitions (default 5 min)
 *   format | value.format          json | csv | raw | debezium-json
 *   key.format, key.fields         the record key's columns ("a;b")
 *   value.fields-include           ALL | EXCEPT_KEY
 *   json.ignore-parse-errors /     skip (and count) records the format cannot
 *   csv.ignore-parse-errors        decode instead of failing the job
 *   watermark.column / .delay /    per-partition watermarks, see below
 *   watermark.idle-timeout / .interval
 *
 * upsert-kafka (its own type, same code): key.format + primary-key, values
 * are +U of their key, tombstones -D; always from the earliest offset.
 *
 * Columns: the vertex's "schema"; a field with "metadata": "offset" |
 * "partition" | "timestamp" | "topic" | "headers" (or "metadata": true,
 * taking the name of the field) is filled from the record, the others
 * ("physical") are the formats', in schema order: the key's from the key,
 * the value's from the value (which wins for a column in both).
 *
 * Partitions. At the first run() (after restore_state) the subtask reads
 * the topics' metadata and takes the partitions Flink's rule gives it
 * (owner_of: a topic's partitions round-robin from a start derived from the
 * topic's name), and later, every discovery interval, the new ones (from
 * their earliest offset, as Flink does). Assignment is manual
 * (rd_kafka_assign, no group rebalancing): positions are this operator's
 * state alone. Each position is made concrete at start-up (earliest, latest
 * and group offsets are looked up, a timestamp through offsets_for_times),
 * so that a checkpoint never records a logical offset whose meaning would
 * change by the time it is restored. Because a broker may answer an offset
 * lookup by time coarsely (tansu does), a partition started from a timestamp
 * also skips records older than it until the first one that is not.
 *
 * Checkpoints. snapshot_state writes every owned partition's next offset;
 * checkpoint_complete commits those of that checkpoint to the group (for
 * monitoring only: restores never read them). The state is a union
 * (SL_OPF_UNION_STATE): every restored subtask gets every old blob, knows
 * every partition's offset and keeps the partitions the rule gives it at
 * its parallelism, so a rescale deals them out again; a partition without
 * an offset in the state is new since the checkpoint and starts from the
 * earliest offset.
 *
 * Waiting. The consumer queue's io-event writes a byte into a non-blocking
 * pipe when records arrive; the pipe is watched (sl_op_watch_fd), so a task
 * waits on the records, its timers and its mail together: barrier latency
 * does not depend on any poll timeout. run() drains the pipe first and then
 * the queue, at most KS_BATCH records per call.
 *
 * Watermarks (with watermark.column, a TIMESTAMP column, e.g. the metadata
 * timestamp): per partition the largest event time seen; every interval the
 * subtask emits min over its active partitions of (max - delay - 1 ms, the
 * DataStream rule; max - delay with watermark.rule sql, Flink SQL's). A
 * partition without a record for idle-timeout is left out of the minimum
 * until it speaks again; when all are idle (or the subtask has none) the
 * subtask marks its output idle (sl_op_emit_idle).
 *
 * Memory: librdkafka's prefetch queue is bounded (queued.max.messages.kbytes,
 * 8 MiB per partition by default here unless given); records are decoded in
 * place (kafka_common.c), no allocation per record.
 *
 * Blob (little-endian) version 1: u8 version, "SLKS", u32 nparts, nparts x
 * { u16 topic length, topic, i32 partition, i64 next offset }, u32 ntopics,
 * ntopics x { u16 length, topic, i32 partition count }, u64 FNV-1a.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "blob.h"
#include "format_avro.h"
#include "kafka_common.h"
#include "log.h"

#define KS_BATCH 1024
#define KS_META_TIMEOUT_MS 10000
#define KS_BLOB_VERSION 1
#define KS_PENDING_COMMITS 8
#define KS_UNSET INT64_MIN

static const char ks_magic[4] = {'S', 'L', 'K', 'S'};

typedef enum { START_GROUP = 0, START_EARLIEST, START_LATEST, START_TIMESTAMP, START_SPECIFIC } ks_start;
typedef enum { BOUND_NONE = 0, BOUND_LATEST, BOUND_SPECIFIC, BOUND_TIMESTAMP, BOUND_GROUP } ks_bound;
typedef enum {
    META_NONE = 0, META_OFFSET, META_PARTITION, META_TIMESTAMP, META_TOPIC, META_HEADERS
} ks_meta;

typedef struct ks_spec {
    int32_t partition;
    int64_t offset;
} ks_spec;

typedef struct ks_plan {
    char *vid;
    char **topics;          /* explicit topics, or NULL with pattern */
    int ntopics;
    char *pattern;
    regex_t re;
    bool has_re;
    ks_start start;
    int64_t start_ts;
    ks_spec *start_spec;
    int nstart_spec;
    ks_bound bound;
    ks_spec *bound_spec;
    int nbound_spec;
    int64_t bound_ts;       /* BOUND_TIMESTAMP: records at or after it are not read */
    int64_t discovery_ms;   /* scan.topic-partition-discovery.interval (0: off) */
    kf_codec codec;         /* the value */
    bool has_key;
    kf_codec key;           /* key.format over key.fields (upsert-kafka: the primary key) */
    bool upsert;            /* upsert-kafka: values are +U, tombstones -D */
    int ncols;
    ks_meta *meta;          /* per column */
    int wm_col;             /* -1: no watermarks */
    int64_t wm_delay, wm_idle, wm_interval;
    int64_t wm_slack;     /* 1 ms (DataStream rule) or 0 (watermark.rule sql) */
    bool reset_earliest;    /* properties.auto.offset.reset is earliest */
} ks_plan;

typedef struct ks_part {
    char *topic;
    int32_t partition;
    int64_t next;           /* next offset to read; KS_UNSET until resolved */
    int64_t stop;           /* bounded: end before this offset (INT64_MAX: none) */
    int64_t stop_ts;        /* bounded by time: end at a record this new (INT64_MAX: none) */
    int64_t min_ts;         /* timestamp start: skip older records (INT64_MIN: off) */
    int64_t max_ts;         /* largest event time seen (INT64_MIN: none) */
    int64_t last_ms;        /* mono ms of its last record (or of the start) */
    bool idle, done;
} ks_part;

typedef struct ks_topic_count {
    char *topic;
    int32_t n;
} ks_topic_count;

typedef struct ks_commit {
    int64_t cpid;
    rd_kafka_topic_partition_list_t *offsets;
} ks_commit;

typedef struct ks_state {
    rd_kafka_t *rk;
    rd_kafka_queue_t *q;
    int pipe_r, pipe_w;
    bool started, ended;
    bool restored;          /* restore_state ran */
    ks_part *parts;         /* owned partitions */
    int nparts;
    ks_part *rparts;        /* restored positions, until start */
    int nrparts;
    ks_topic_count *counts; /* universe at start */
    int ncounts;
    int last_idx;           /* partition of the previous record */
    sl_value *vals;
    sl_value *before;       /* debezium-json: the before image of an update */
    sl_buf str, kstr;       /* decoding scratch of the value and the key */
    sl_avro *kav, *vav;     /* avro formats: the key's and the value's reader */
    sl_buf hdr;             /* the headers column's text */
    bool out_idle;
    int64_t wm_emitted;
    int64_t next_tick;      /* mono ms */
    int64_t discover_at;    /* mono ms of the next partition discovery (0: none) */
    uint64_t skipped;       /* undecodable records skipped */
    ks_commit commits[KS_PENDING_COMMITS];
    int64_t last_warn_ms;
} ks_state;

/* ---- plan ------------------------------------------------------------------ */

static void ks_plan_free(void *p)
{
    ks_plan *pl = p;
    if (!pl) return;
    for (int i = 0; i < pl->ntopics; i++) free(pl->topics[i]);
    free(pl->topics);
    free(pl->pattern);
    if (pl->has_re) regfree(&pl->re);
    free(pl->start_spec);
    free(pl->bound_spec);
    kf_codec_free(&pl->codec);
    kf_codec_free(&pl->key);
    free(pl->meta);
    free(pl->vid);
    free(pl);
}

/* "partition:0,offset:42;partition:1,offset:300" */
static int parse_specific(const sl_vertex *v, const char *key, ks_spec **out, int *nout, char *err,
                          size_t errlen)
{
    const char *s = sl_vconf_str(v, key, NULL);
    if (!s || !*s)
        return sl_seterr(err, errlen, "vertex '%s': option '%s' is required for specific-offsets "
                                      "(\"partition:0,offset:42;partition:1,offset:300\")", v->id, key);
    int cap = 1;
    for (const char *c = s; *c; c++) cap += *c == ';';
    ks_spec *sp = sl_calloc((size_t)cap, sizeof *sp);
    int n = 0;
    const char *p = s;
    while (*p) {
        long long part, off;
        int used = 0;
        while (*p == ' ') p++;
        if (sscanf(p, "partition:%lld,offset:%lld%n", &part, &off, &used) != 2 || used == 0 ||
            part < 0 || part > INT32_MAX || off < 0) {
            free(sp);
            return sl_seterr(err, errlen, "vertex '%s': option '%s': cannot read '%s' (expected "
                                          "\"partition:0,offset:42;partition:1,offset:300\")",
                             v->id, key, p);
        }
        sp[n++] = (ks_spec){(int32_t)part, off};
        p += used;
        while (*p == ' ') p++;
        if (*p == ';') p++;
        else if (*p) {
            free(sp);
            return sl_seterr(err, errlen, "vertex '%s': option '%s': expected ';' at '%s'", v->id,
                             key, p);
        }
    }
    *out = sp;
    *nout = n;
    return SL_OK;
}

static int parse_bool_opt(const sl_vertex *v, const char *key, bool *out, char *err, size_t errlen)
{
    const char *s = sl_vconf_str(v, key, "false");
    if (!strcasecmp(s, "true")) *out = true;
    else if (!strcasecmp(s, "false")) *out = false;
    else return sl_seterr(err, errlen, "vertex '%s': option '%s' must be true or false", v->id, key);
    return SL_OK;
}

static const char *const ks_reserved[] = {"enable.auto.commit", "enable.auto.offset.store", NULL};

/* 'topic' (a ';'-separated list) or 'topic-pattern' (a POSIX extended
 * regular expression), exactly one of them. */
static int ks_plan_topics(const sl_vertex *v, ks_plan *pl, char *err, size_t errlen)
{
    const char *topic = sl_vconf_str(v, "topic", NULL), *pattern = sl_vconf_str(v, "topic-pattern", NULL);
    if ((topic != NULL) == (pattern != NULL)) {
        sl_seterr(err, errlen, "vertex '%s': give exactly one of 'topic' and 'topic-pattern'", v->id);
        return SL_ERR;
    }
    if (topic) {
        pl->topics = sl_calloc(strlen(topic) + 2, sizeof *pl->topics);
        const char *p = topic;
        while (*p) {
            const char *e = strchr(p, ';');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n) pl->topics[pl->ntopics++] = sl_strndup(p, n);
            p += n + (e != NULL);
        }
        if (pl->ntopics == 0) {
            sl_seterr(err, errlen, "vertex '%s': option 'topic' is empty", v->id);
            return SL_ERR;
        }
    } else {
        char why[200];
        int rc = regcomp(&pl->re, pattern, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            regerror(rc, &pl->re, why, sizeof why);
            sl_seterr(err, errlen, "vertex '%s': option 'topic-pattern': %s", v->id, why);
            return SL_ERR;
        }
        pl->has_re = true;
        pl->pattern = sl_strdup(pattern);
    }
    return SL_OK;
}

/* The declared columns: the physical ones' indexes into phys (*nphysp of
 * them), a metadata column's kind into pl->meta, checked against its type. */
static int ks_plan_columns(const sl_vertex *v, ks_plan *pl, int *phys, int *nphysp, char *err,
                           size_t errlen)
{
    const sl_schema *decl = &v->declared;
    json_t *js = json_object_get(v->json, "schema");
    int nphys = 0;
    for (int i = 0; i < decl->n; i++) {
        json_t *jm = json_is_array(js) ? json_object_get(json_array_get(js, (size_t)i), "metadata")
                                       : NULL;
        const char *m = json_is_string(jm) ? json_string_value(jm)
                        : json_is_true(jm) ? decl->fields[i].name
                                           : NULL;
        if (jm && !m && !json_is_false(jm)) {
            sl_seterr(err, errlen, "vertex '%s': schema field '%s': 'metadata' must be a string or "
                      "true", v->id, decl->fields[i].name);
            return SL_ERR;
        }
        if (!m) {
            phys[nphys++] = i;
            continue;
        }
        sl_type want;
        if (!strcmp(m, "offset")) pl->meta[i] = META_OFFSET, want = SL_T_BIGINT;
        else if (!strcmp(m, "partition")) pl->meta[i] = META_PARTITION, want = SL_T_INT;
        else if (!strcmp(m, "timestamp")) pl->meta[i] = META_TIMESTAMP, want = SL_T_TIMESTAMP;
        else if (!strcmp(m, "topic")) pl->meta[i] = META_TOPIC, want = SL_T_STRING;
        else if (!strcmp(m, "headers")) pl->meta[i] = META_HEADERS, want = SL_T_STRING;
        else {
            sl_seterr(err, errlen, "vertex '%s': schema field '%s': unknown metadata '%s' (offset, "
                      "partition, timestamp, topic, headers)", v->id, decl->fields[i].name, m);
            return SL_ERR;
        }
        sl_type t = decl->fields[i].type;
        bool ok = t == want || (want == SL_T_INT && t == SL_T_BIGINT);
        if (!ok) {
            sl_seterr(err, errlen, "vertex '%s': schema field '%s': metadata '%s' is %s, not %s",
                      v->id, decl->fields[i].name, m, sl_type_name(want), sl_type_name(t));
            return SL_ERR;
        }
    }
    *nphysp = nphys;
    return SL_OK;
}

/* Where reading starts (scan.startup.*), where a bounded read ends
 * (scan.bounded.*), and partition discovery. */
static int ks_plan_bounds(const sl_vertex *v, ks_plan *pl, bool upsert, char *err, size_t errlen)
{
    /* upsert-kafka reads every topic from its start, as Flink's */
    const char *sm = sl_vconf_str(v, "scan.startup.mode", upsert ? "earliest-offset" : "group-offsets");
    if (!strcmp(sm, "group-offsets")) pl->start = START_GROUP;
    else if (!strcmp(sm, "earliest-offset")) pl->start = START_EARLIEST;
    else if (!strcmp(sm, "latest-offset")) pl->start = START_LATEST;
    else if (!strcmp(sm, "timestamp")) pl->start = START_TIMESTAMP;
    else if (!strcmp(sm, "specific-offsets")) pl->start = START_SPECIFIC;
    else {
        sl_seterr(err, errlen, "vertex '%s': option 'scan.startup.mode': '%s' is not one of "
                  "earliest-offset, latest-offset, group-offsets, timestamp, specific-offsets",
                  v->id, sm);
        return SL_ERR;
    }
    if (pl->start == START_TIMESTAMP) {
        if (!json_object_get(v->config, "scan.startup.timestamp-millis")) {
            sl_seterr(err, errlen, "vertex '%s': scan.startup.mode 'timestamp' needs "
                      "'scan.startup.timestamp-millis'", v->id);
            return SL_ERR;
        }
        if (sl_vconf_int(v, "scan.startup.timestamp-millis", 0, &pl->start_ts, err, errlen))
            return SL_ERR;
    } else if (json_object_get(v->config, "scan.startup.timestamp-millis")) {
        sl_seterr(err, errlen, "vertex '%s': 'scan.startup.timestamp-millis' only applies to "
                  "scan.startup.mode 'timestamp'", v->id);
        return SL_ERR;
    }
    if (pl->start == START_SPECIFIC &&
        parse_specific(v, "scan.startup.specific-offsets", &pl->start_spec, &pl->nstart_spec, err,
                       errlen))
        return SL_ERR;
    const char *bm = sl_vconf_str(v, "scan.bounded.mode", "unbounded");
    if (!strcmp(bm, "unbounded")) pl->bound = BOUND_NONE;
    else if (!strcmp(bm, "latest-offset")) pl->bound = BOUND_LATEST;
    else if (!strcmp(bm, "specific-offsets")) pl->bound = BOUND_SPECIFIC;
    else if (!strcmp(bm, "timestamp")) pl->bound = BOUND_TIMESTAMP;
    else if (!strcmp(bm, "group-offsets")) pl->bound = BOUND_GROUP;
    else {
        sl_seterr(err, errlen, "vertex '%s': option 'scan.bounded.mode': '%s' is not one of "
                  "unbounded, latest-offset, group-offsets, timestamp, specific-offsets", v->id, bm);
        return SL_ERR;
    }
    if (pl->bound == BOUND_TIMESTAMP) {
        if (!json_object_get(v->config, "scan.bounded.timestamp-millis")) {
            sl_seterr(err, errlen, "vertex '%s': scan.bounded.mode 'timestamp' needs "
                      "'scan.bounded.timestamp-millis'", v->id);
            return SL_ERR;
        }
        if (sl_vconf_int(v, "scan.bounded.timestamp-millis", 0, &pl->bound_ts, err, errlen))
            return SL_ERR;
    } else if (json_object_get(v->config, "scan.bounded.timestamp-millis")) {
        sl_seterr(err, errlen, "vertex '%s': 'scan.bounded.timestamp-millis' only applies to "
                  "scan.bounded.mode 'timestamp'", v->id);
        return SL_ERR;
    }
    /* Flink's default: every 5 minutes; a bounded read discovers nothing */
    if (sl_vconf_interval(v, "scan.topic-partition-discovery.interval", 300000, &pl->discovery_ms,
                          err, errlen))
        return SL_ERR;
    if (pl->bound != BOUND_NONE) pl->discovery_ms = 0;
    if (pl->bound == BOUND_SPECIFIC &&
        parse_specific(v, "scan.bounded.specific-offsets", &pl->bound_spec, &pl->nbound_spec, err,
                       errlen))
        return SL_ERR;
    if ((pl->start == START_SPECIFIC || pl->bound == BOUND_SPECIFIC) && pl->ntopics != 1) {
        sl_seterr(err, errlen, "vertex '%s': specific offsets need exactly one 'topic'", v->id);
        return SL_ERR;
    }
    return SL_OK;
}

static void *ks_plan_common(sl_plan_ctx *pc, bool upsert, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *decl = &v->declared;
    if (decl->n == 0) {
        sl_seterr(err, errlen, "vertex '%s': the kafka source needs a 'schema'", v->id);
        return NULL;
    }
    ks_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id);
    pl->wm_col = -1;
    pl->ncols = decl->n;
    pl->meta = sl_calloc((size_t)decl->n, sizeof *pl->meta);
    int *phys = sl_calloc((size_t)decl->n, sizeof *phys), nphys = 0;

    /* topics */
    if (ks_plan_topics(v, pl, err, errlen) != SL_OK) goto fail;

    /* columns: physical ones in phys, metadata ones in pl->meta */
    if (ks_plan_columns(v, pl, phys, &nphys, err, errlen) != SL_OK) goto fail;

    /* formats: the key's columns, then the value's */
    pl->upsert = upsert;
    kf_format f;
    int kcols[SL_MAX_FIELDS], nk = 0, vcols[SL_MAX_FIELDS], nv = 0;
    if (kf_key_value_plan(v, decl, phys, nphys, upsert, &f, kcols, &nk, vcols, &nv, err,
                          errlen) != SL_OK)
        goto fail;
    if (nk) {
        kf_format kfo;
        kf_format_parse(sl_vconf_str(v, "key.format", ""), &kfo);
        if (kf_codec_init(&pl->key, kfo, decl, kcols, nk, v->id, err, errlen) != SL_OK) goto fail;
        pl->has_key = true;
    }
    if (kf_codec_init(&pl->codec, f, decl, vcols, nv, v->id, err, errlen) != SL_OK ||
        kf_json_opts_read(&pl->codec, v->config, v->id, err, errlen) != SL_OK)
        goto fail;
    if ((pl->has_key && (pl->key.fmt == KF_AVRO || pl->key.fmt == KF_AVRO_CONFLUENT) &&
         sl_avro_fmt_plan(&pl->key, v, true, NULL, err, errlen)) ||
        ((f == KF_AVRO || f == KF_AVRO_CONFLUENT) &&
         sl_avro_fmt_plan(&pl->codec, v, false, NULL, err, errlen)))
        goto fail;
    bool ij = false, ic = false;
    if (parse_bool_opt(v, "json.ignore-parse-errors", &ij, err, errlen) ||
        parse_bool_opt(v, "csv.ignore-parse-errors", &ic, err, errlen))
        goto fail;
    pl->codec.ignore_errors = f == KF_JSON ? ij : f == KF_CSV ? ic : false;
    if (f == KF_JSON && ij && pl->codec.json.fail_missing) {
        sl_seterr(err, errlen, "vertex '%s': %s", v->id, KF_JSON_BOTH_LENIENT_STRICT);
        goto fail;
    }

    /* startup and bounds */
    if (ks_plan_bounds(v, pl, upsert, err, errlen) != SL_OK) goto fail;

    /* watermarks */
    const char *wc = sl_vconf_str(v, "watermark.column", NULL);
    if (wc) {
        pl->wm_col = sl_schema_find(decl, wc);
        if (pl->wm_col < 0 || decl->fields[pl->wm_col].type != SL_T_TIMESTAMP) {
            sl_seterr(err, errlen, "vertex '%s': option 'watermark.column': '%s' is not a "
                      "TIMESTAMP column of the schema", v->id, wc);
            goto fail;
        }
    } else if (json_object_get(v->config, "watermark.delay") ||
               json_object_get(v->config, "watermark.idle-timeout")) {
        sl_seterr(err, errlen, "vertex '%s': watermark options need 'watermark.column'", v->id);
        goto fail;
    }
    if (sl_vconf_interval(v, "watermark.delay", 0, &pl->wm_delay, err, errlen) ||
        sl_vconf_interval(v, "watermark.idle-timeout", 0, &pl->wm_idle, err, errlen) ||
        sl_vconf_interval(v, "watermark.interval", 200, &pl->wm_interval, err, errlen))
        goto fail;
    if (pl->wm_interval == 0) pl->wm_interval = 1;
    pl->wm_slack = strcmp(sl_vconf_str(v, "watermark.rule", "datastream"), "sql") ? 1 : 0;

    const char *reset = kf_prop(v, "auto.offset.reset", "latest");
    pl->reset_earliest = !strcmp(reset, "earliest") || !strcmp(reset, "smallest") ||
                         !strcmp(reset, "beginning");

    /* librdkafka checks every property now, so a typo fails the submission */
    rd_kafka_conf_t *conf;
    if (kf_conf_build(v, ks_reserved, &conf, err, errlen) != SL_OK) goto fail;
    rd_kafka_conf_destroy(conf);

    free(phys);
    sl_schema_copy(pc->out, decl);
    return pl;
fail:
    free(phys);
    ks_plan_free(pl);
    return NULL;
}

static void *ks_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    return ks_plan_common(pc, false, err, errlen);
}

static void *ks_plan_upsert(sl_plan_ctx *pc, char *err, size_t errlen)
{
    return ks_plan_common(pc, true, err, errlen);
}

/* ---- helpers -------------------------------------------------------------------- */

static const char *vid_of(const sl_op *op) { return ((const ks_plan *)op->plan)->vid; }

static void ks_log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    SL_UNUSED(rk);
    if (level <= 3) sl_error("kafka", "%s: %s", fac, buf);
    else if (level <= 4) sl_warn("kafka", "%s: %s", fac, buf);
    else sl_debug("kafka", "%s: %s", fac, buf);
}

static int cmp_part(const void *a, const void *b)
{
    const ks_part *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

static void parts_free(ks_part *p, int n)
{
    for (int i = 0; i < n; i++) free(p[i].topic);
    free(p);
}

static void counts_free(ks_topic_count *c, int n)
{
    for (int i = 0; i < n; i++) free(c[i].topic);
    free(c);
}

/* The topics' partitions (sorted) into *out; the per-topic counts too. */
static int read_universe(sl_op *op, ks_state *st, ks_part **out, int *nout)
{
    const ks_plan *pl = op->plan;
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e;
    ks_part *u = NULL;
    int nu = 0, cap = 0;
    int rc = SL_OK;
    const char *bs = kf_prop(op->vertex, "bootstrap.servers", "?");
    int nquery = pl->has_re ? 1 : pl->ntopics;
    for (int t = 0; t < nquery && rc == SL_OK; t++) {
        rd_kafka_topic_t *rkt = pl->has_re ? NULL : rd_kafka_topic_new(st->rk, pl->topics[t], NULL);
        e = rd_kafka_metadata(st->rk, pl->has_re, rkt, &md, KS_META_TIMEOUT_MS);
        if (rkt) rd_kafka_topic_destroy(rkt);
        if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
            rc = sl_op_fail(op, "kafka source '%s': cannot read the metadata of %s%s%s from "
                            "brokers %s within %d s: %s", pl->vid, pl->has_re ? "topics matching '" : "topic '",
                            pl->has_re ? pl->pattern : pl->topics[t], "'", bs,
                            KS_META_TIMEOUT_MS / 1000, rd_kafka_err2str(e));
            break;
        }
        for (int i = 0; i < md->topic_cnt && rc == SL_OK; i++) {
            const struct rd_kafka_metadata_topic *mt = &md->topics[i];
            if (pl->has_re) {
                if (mt->err || regexec(&pl->re, mt->topic, 0, NULL, 0) != 0) continue;
            } else if (strcmp(mt->topic, pl->topics[t]) != 0) {
                continue;
            } else if (mt->err || mt->partition_cnt == 0) {
                rc = sl_op_fail(op, "kafka source '%s': topic '%s' on brokers %s: %s", pl->vid,
                                mt->topic, bs,
                                mt->err ? rd_kafka_err2str(mt->err) : "it has no partitions");
                break;
            }
            st->counts = sl_realloc(st->counts, (size_t)(st->ncounts + 1) * sizeof *st->counts);
            st->counts[st->ncounts++] = (ks_topic_count){sl_strdup(mt->topic), mt->partition_cnt};
            for (int k = 0; k < mt->partition_cnt; k++) {
                if (nu == cap) {
                    cap = cap ? cap * 2 : 16;
                    u = sl_realloc(u, (size_t)cap * sizeof *u);
                }
                u[nu++] = (ks_part){.topic = sl_strdup(mt->topic),
                                    .partition = mt->partitions[k].id,
                                    .next = KS_UNSET,
                                    .stop = INT64_MAX,
                                    .stop_ts = INT64_MAX,
                                    .min_ts = INT64_MIN,
                                    .max_ts = INT64_MIN};
            }
        }
        rd_kafka_metadata_destroy(md);
        md = NULL;
        if (rc == SL_OK && !pl->has_re) {
            bool found = false;
            for (int i = 0; i < st->ncounts; i++) found |= !strcmp(st->counts[i].topic, pl->topics[t]);
            if (!found)
                rc = sl_op_fail(op, "kafka source '%s': topic '%s' does not exist on brokers %s",
                                pl->vid, pl->topics[t], bs);
        }
    }
    if (rc != SL_OK) {
        parts_free(u, nu);
        return rc;
    }
    if (nu) qsort(u, (size_t)nu, sizeof *u, cmp_part);
    *out = u;
    *nout = nu;
    return SL_OK;
}

static const ks_part *restored_pos(const ks_state *st, const char *topic, int32_t partition)
{
    for (int i = 0; i < st->nrparts; i++)
        if (st->rparts[i].partition == partition && !strcmp(st->rparts[i].topic, topic))
            return &st->rparts[i];
    return NULL;
}

/* Low/high watermark offsets of one partition. */
static int watermarks(sl_op *op, ks_state *st, const ks_part *p, int64_t *lo, int64_t *hi)
{
    rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(st->rk, p->topic, p->partition, lo, hi,
                                                             KS_META_TIMEOUT_MS);
    if (e)
        return sl_op_fail(op, "kafka source '%s': cannot read the offsets of topic '%s' "
                          "partition %d: %s", vid_of(op), p->topic, p->partition, rd_kafka_err2str(e));
    return SL_OK;
}

static const ks_spec *find_spec(const ks_spec *s, int n, int32_t partition)
{
    for (int i = 0; i < n; i++)
        if (s[i].partition == partition) return &s[i];
    return NULL;
}

/* Concrete start offsets for the partitions still unset. */
static int resolve_starts(sl_op *op, ks_state *st)
{
    const ks_plan *pl = op->plan;
    rd_kafka_topic_partition_list_t *group = NULL, *times = NULL;
    int rc = SL_OK;
    for (int i = 0; i < st->nparts && rc == SL_OK; i++) {
        ks_part *p = &st->parts[i];
        if (p->next != KS_UNSET) continue;
        ks_start mode = pl->start;
        if (mode == START_SPECIFIC) {
            const ks_spec *sp = find_spec(pl->start_spec, pl->nstart_spec, p->partition);
            if (sp) {
                p->next = sp->offset;
                continue;
            }
            mode = START_GROUP; /* Flink: partitions without a specific offset use the group's */
        }
        if (mode == START_GROUP) {
            if (!group) group = rd_kafka_topic_partition_list_new(st->nparts);
            rd_kafka_topic_partition_list_add(group, p->topic, p->partition);
        } else if (mode == START_TIMESTAMP) {
            if (!times) times = rd_kafka_topic_partition_list_new(st->nparts);
            rd_kafka_topic_partition_list_add(times, p->topic, p->partition)->offset = pl->start_ts;
            p->min_ts = pl->start_ts;
        } else {
            int64_t lo, hi;
            if ((rc = watermarks(op, st, p, &lo, &hi)) != SL_OK) break;
            p->next = mode == START_EARLIEST ? lo : hi;
        }
    }
    if (rc == SL_OK && group) {
        rd_kafka_resp_err_t e = rd_kafka_committed(st->rk, group, KS_META_TIMEOUT_MS);
        if (e)
            rc = sl_op_fail(op, "kafka source '%s': cannot read the committed offsets of group "
                            "'%s': %s", vid_of(op), kf_prop(op->vertex, "group.id", "?"),
                            rd_kafka_err2str(e));
        for (int k = 0; rc == SL_OK && k < group->cnt; k++) {
            const rd_kafka_topic_partition_t *tp = &group->elems[k];
            for (int i = 0; i < st->nparts; i++) {
                ks_part *p = &st->parts[i];
                if (p->partition != tp->partition || strcmp(p->topic, tp->topic)) continue;
                if (tp->offset >= 0) {
                    p->next = tp->offset;
                } else {
                    int64_t lo, hi;
                    if ((rc = watermarks(op, st, p, &lo, &hi)) != SL_OK) break;
                    p->next = pl->reset_earliest ? lo : hi; /* auto.offset.reset */
                }
            }
        }
    }
    if (rc == SL_OK && times) {
        rd_kafka_resp_err_t e = rd_kafka_offsets_for_times(st->rk, times, KS_META_TIMEOUT_MS);
        if (e)
            rc = sl_op_fail(op, "kafka source '%s': cannot look up offsets for timestamp %lld: %s",
                            vid_of(op), (long long)pl->start_ts, rd_kafka_err2str(e));
        for (int k = 0; rc == SL_OK && k < times->cnt; k++) {
            const rd_kafka_topic_partition_t *tp = &times->elems[k];
            for (int i = 0; i < st->nparts; i++) {
                ks_part *p = &st->parts[i];
                if (p->partition != tp->partition || strcmp(p->topic, tp->topic)) continue;
                int64_t lo, hi;
                if ((rc = watermarks(op, st, p, &lo, &hi)) != SL_OK) break;
                /* -1: no record at or after the time: start at the end */
                p->next = tp->offset >= 0 ? SL_MAX(tp->offset, lo) : hi;
            }
        }
    }
    if (group) rd_kafka_topic_partition_list_destroy(group);
    if (times) rd_kafka_topic_partition_list_destroy(times);
    return rc;
}

static int resolve_stops(sl_op *op, ks_state *st)
{
    const ks_plan *pl = op->plan;
    if (pl->bound == BOUND_NONE) return SL_OK;
    rd_kafka_topic_partition_list_t *group = NULL;
    if (pl->bound == BOUND_GROUP && st->nparts > 0) {
        group = rd_kafka_topic_partition_list_new(st->nparts);
        for (int i = 0; i < st->nparts; i++)
            rd_kafka_topic_partition_list_add(group, st->parts[i].topic, st->parts[i].partition);
        rd_kafka_resp_err_t e = rd_kafka_committed(st->rk, group, KS_META_TIMEOUT_MS);
        if (e) {
            rd_kafka_topic_partition_list_destroy(group);
            return sl_op_fail(op, "kafka source '%s': cannot read the committed offsets of group "
                              "'%s' (scan.bounded.mode group-offsets): %s", vid_of(op),
                              kf_prop(op->vertex, "group.id", "?"), rd_kafka_err2str(e));
        }
    }
    int rc = SL_OK;
    for (int i = 0; i < st->nparts && rc == SL_OK; i++) {
        ks_part *p = &st->parts[i];
        const ks_spec *sp = pl->bound == BOUND_SPECIFIC
                                ? find_spec(pl->bound_spec, pl->nbound_spec, p->partition)
                                : NULL;
        int64_t lo, hi;
        if (sp) {
            p->stop = sp->offset;
        } else if ((rc = watermarks(op, st, p, &lo, &hi)) != SL_OK) {
            break;
        } else if (group) {
            /* the group's committed offset; without one, auto.offset.reset */
            const rd_kafka_topic_partition_t *tp =
                rd_kafka_topic_partition_list_find(group, p->topic, p->partition);
            p->stop = tp && tp->offset >= 0 ? tp->offset : pl->reset_earliest ? lo : hi;
        } else {
            p->stop = hi;
        }
        /* by time: the first record at or after it ends the partition (the
         * source checks each record's time, so a broker's coarse offset
         * lookup by time cannot make it stop early) */
        if (pl->bound == BOUND_TIMESTAMP) p->stop_ts = pl->bound_ts;
        if (p->next >= p->stop) p->done = true;
    }
    if (group) rd_kafka_topic_partition_list_destroy(group);
    return rc;
}

/* Which subtask reads a partition: Flink's rule (its Kafka source
 * enumerator), the topic's partitions dealt round-robin from a start that
 * depends on the topic's name (Java's String.hashCode; Kafka topic names
 * are ASCII). Stable when partitions or topics are added. */
static int owner_of(const char *topic, int32_t partition, int parallelism)
{
    uint32_t h = 0;
    for (const unsigned char *c = (const unsigned char *)topic; *c; c++) h = 31u * h + *c;
    uint32_t start = (h * 31u & 0x7FFFFFFFu) % (uint32_t)parallelism;
    return (int)((start + (uint32_t)partition) % (uint32_t)parallelism);
}

static bool in_parts(const ks_part *p, int n, const char *topic, int32_t partition)
{
    for (int i = 0; i < n; i++)
        if (p[i].partition == partition && !strcmp(p[i].topic, topic)) return true;
    return false;
}

/* Read the topics, decide the partitions, resolve positions, assign. The
 * state is a union (SL_OPF_UNION_STATE): after a restore every subtask has
 * every partition's offset and keeps those the rule gives it, so a rescale
 * deals the partitions out again. */
static int ks_start_consuming(sl_op *op, ks_state *st)
{
    const ks_plan *pl = op->plan;
    ks_part *u;
    int nu;
    st->started = true;
    if (read_universe(op, st, &u, &nu) != SL_OK) return SL_ERR;
    st->parts = sl_calloc((size_t)nu + 1, sizeof *st->parts);
    for (int i = 0; i < nu; i++) {
        if (owner_of(u[i].topic, u[i].partition, op->parallelism) != op->subtask) continue;
        const ks_part *r = st->restored ? restored_pos(st, u[i].topic, u[i].partition) : NULL;
        ks_part *p = &st->parts[st->nparts++];
        *p = u[i];
        u[i].topic = NULL;
        if (r) p->next = r->next; /* else: fresh, or new since the checkpoint (resolved below) */
    }
    for (int i = 0; i < st->nrparts; i++) {
        const ks_part *rp = &st->rparts[i];
        if (owner_of(rp->topic, rp->partition, op->parallelism) == op->subtask &&
            !in_parts(st->parts, st->nparts, rp->topic, rp->partition))
            sl_warn("kafka", "kafka source '%s' (%d/%d): topic '%s' partition %d of the restored "
                    "state no longer exists; its records are not read", pl->vid, op->subtask + 1,
                    op->parallelism, rp->topic, rp->partition);
    }
    parts_free(u, nu);
    if (st->restored) {
        /* partitions new since the checkpoint start from the earliest offset */
        for (int i = 0; i < st->nparts; i++) {
            ks_part *p = &st->parts[i];
            if (p->next != KS_UNSET) continue;
            int64_t lo, hi;
            if (watermarks(op, st, p, &lo, &hi) != SL_OK) return SL_ERR;
            p->next = lo;
        }
    } else if (resolve_starts(op, st) != SL_OK) {
        return SL_ERR;
    }
    if (resolve_stops(op, st) != SL_OK) return SL_ERR;

    int64_t now = sl_mono_ms();
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(st->nparts + 1);
    for (int i = 0; i < st->nparts; i++) {
        ks_part *p = &st->parts[i];
        p->last_ms = now;
        if (p->done) continue;
        rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = p->next;
    }
    rd_kafka_resp_err_t e = rd_kafka_assign(st->rk, l);
    rd_kafka_topic_partition_list_destroy(l);
    if (e)
        return sl_op_fail(op, "kafka source '%s': cannot assign partitions: %s", pl->vid,
                          rd_kafka_err2str(e));
    char list[512];
    size_t n = 0;
    list[0] = '\0';
    /* topic/partition@start, and ..end when bounded (the end the broker's
     * ListOffsets answered, docs/KAFKA.md) */
    for (int i = 0; i < st->nparts && n < sizeof list - 64; i++) {
        const ks_part *p = &st->parts[i];
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s/%d@%lld", i ? " " : "", p->topic,
                              p->partition, (long long)p->next);
        if (p->stop != INT64_MAX && n < sizeof list)
            n += (size_t)snprintf(list + n, sizeof list - n, "..%lld", (long long)p->stop);
    }
    sl_info("kafka", "kafka source '%s' (%d/%d): %d partition%s%s%s (librdkafka %s)", pl->vid,
            op->subtask + 1, op->parallelism, st->nparts, st->nparts == 1 ? "" : "s",
            st->nparts ? ": " : "", list, rd_kafka_version_str());
    st->next_tick = now + pl->wm_interval;
    if (pl->discovery_ms > 0) st->discover_at = now + pl->discovery_ms;
    if (st->nparts == 0) {
        st->out_idle = true;
        if (sl_op_emit_idle(op, 1) != SL_OK) return SL_ERR;
    }
    parts_free(st->rparts, st->nrparts);
    st->rparts = NULL;
    st->nrparts = 0;
    return SL_OK;
}

/* ---- running ------------------------------------------------------------------------- */

static int ks_open(sl_op *op)
{
    const ks_plan *pl = op->plan;
    ks_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->pipe_r = st->pipe_w = -1;
    st->wm_emitted = INT64_MIN;
    st->vals = sl_calloc((size_t)pl->ncols + 1, sizeof *st->vals);
    st->before = sl_calloc((size_t)pl->ncols + 1, sizeof *st->before);
    if (pl->has_key && pl->key.avro) st->kav = sl_avro_new(&pl->key);
    if (pl->codec.avro) st->vav = sl_avro_new(&pl->codec);
    rd_kafka_conf_t *conf;
    if (kf_conf_build(op->vertex, ks_reserved, &conf, op->err, sizeof op->err) != SL_OK)
        return SL_ERR;
    char why[512], tmp[300];
    snprintf(tmp, sizeof tmp, "sluice-%s", pl->vid);
    const char *group = kf_prop(op->vertex, "group.id", tmp);
    if (rd_kafka_conf_set(conf, "group.id", group, why, sizeof why) ||
        rd_kafka_conf_set(conf, "enable.auto.commit", "false", why, sizeof why) ||
        rd_kafka_conf_set(conf, "enable.auto.offset.store", "false", why, sizeof why) ||
        (pl->bound != BOUND_NONE &&
         rd_kafka_conf_set(conf, "enable.partition.eof", "true", why, sizeof why)) ||
        (!kf_prop(op->vertex, "queued.max.messages.kbytes", NULL) &&
         rd_kafka_conf_set(conf, "queued.max.messages.kbytes", "8192", why, sizeof why))) {
        rd_kafka_conf_destroy(conf);
        return sl_op_fail(op, "kafka source '%s': %s", pl->vid, why);
    }
    if (!kf_prop(op->vertex, "client.id", NULL)) {
        snprintf(tmp, sizeof tmp, "sluice-%s-%d", pl->vid, op->subtask);
        rd_kafka_conf_set(conf, "client.id", tmp, why, sizeof why);
    }
    rd_kafka_conf_set_log_cb(conf, ks_log_cb);
    st->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof why);
    if (!st->rk) {
        rd_kafka_conf_destroy(conf);
        return sl_op_fail(op, "kafka source '%s': cannot create a consumer: %s", pl->vid, why);
    }
    st->q = rd_kafka_queue_get_consumer(st->rk);
    if (!st->q) return sl_op_fail(op, "kafka source '%s': no consumer queue", pl->vid);
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0)
        return sl_op_fail(op, "kafka source '%s': pipe: %s", pl->vid, strerror(errno));
    st->pipe_r = fds[0];
    st->pipe_w = fds[1];
    rd_kafka_queue_io_event_enable(st->q, st->pipe_w, "k", 1);
    return sl_op_watch_fd(op, st->pipe_r, POLLIN);
}

static int find_part(ks_state *st, const char *topic, int32_t partition)
{
    int k = st->last_idx;
    if (k < st->nparts && st->parts[k].partition == partition && !strcmp(st->parts[k].topic, topic))
        return k;
    for (k = 0; k < st->nparts; k++)
        if (st->parts[k].partition == partition && !strcmp(st->parts[k].topic, topic))
            return st->last_idx = k;
    return -1;
}

static void pause_part(ks_state *st, ks_part *p)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, p->topic, p->partition);
    rd_kafka_pause_partitions(st->rk, l);
    rd_kafka_topic_partition_list_destroy(l);
}

static void mark_done(ks_state *st, ks_part *p)
{
    if (p->done) return;
    p->done = true;
    pause_part(st, p);
}

/* The periodic watermark and idleness judgement. */
static int ks_tick(sl_op *op, ks_state *st, int64_t now)
{
    const ks_plan *pl = op->plan;
    st->next_tick = now + pl->wm_interval;
    if (st->nparts == 0) return SL_OK;
    int64_t wm = INT64_MAX;
    int active = 0;
    for (int i = 0; i < st->nparts; i++) {
        ks_part *p = &st->parts[i];
        if (!p->idle && pl->wm_idle > 0 && now - p->last_ms >= pl->wm_idle) p->idle = true;
        if (p->idle || p->done) continue;
        active++;
        int64_t w = p->max_ts == INT64_MIN || p->max_ts < INT64_MIN + pl->wm_delay + pl->wm_slack
                        ? INT64_MIN
                        : p->max_ts - pl->wm_delay - pl->wm_slack;
        if (w < wm) wm = w;
    }
    if (active == 0) {
        if (!st->out_idle && pl->wm_col >= 0) {
            st->out_idle = true;
            return sl_op_emit_idle(op, 1);
        }
        return SL_OK;
    }
    if (pl->wm_col >= 0 && wm != INT64_MIN && wm > st->wm_emitted) {
        if (st->out_idle) {
            st->out_idle = false;
            if (sl_op_emit_idle(op, 0) != SL_OK) return SL_ERR;
        }
        st->wm_emitted = wm;
        return sl_op_emit_watermark(op, wm);
    }
    return SL_OK;
}

static int handle_error(sl_op *op, ks_state *st, const rd_kafka_message_t *m)
{
    const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : "";
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        int k = find_part(st, topic, m->partition);
        if (k >= 0) {
            ks_part *p = &st->parts[k];
            /* the end of what is there: control records count as read */
            if (m->offset > p->next) p->next = m->offset;
            if (p->next >= p->stop) mark_done(st, p);
        }
        return SL_OK;
    }
    char fatal[256];
    if (rd_kafka_fatal_error(st->rk, fatal, sizeof fatal))
        return sl_op_fail(op, "kafka source '%s': fatal consumer error: %s", vid_of(op), fatal);
    switch (m->err) {
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
        return sl_op_fail(op, "kafka source '%s': topic '%s' partition %d: %s", vid_of(op), topic,
                          m->partition, rd_kafka_message_errstr(m));
    default: {
        int64_t now = sl_mono_ms();
        if (now - st->last_warn_ms > 5000) {
            st->last_warn_ms = now;
            sl_warn("kafka", "kafka source '%s' (%d/%d): %s (retrying)", vid_of(op),
                    op->subtask + 1, op->parallelism, rd_kafka_message_errstr(m));
        }
        return SL_OK;
    }
    }
}

/* The record's headers as a JSON object {"name": "value", ...} (a header
 * without a value is null; Sluice has no MAP type) into b. */
static void headers_text(const rd_kafka_message_t *m, sl_buf *b)
{
    b->len = 0;
    sl_buf_reserve(b, 2);
    b->p[b->len++] = '{';
    rd_kafka_headers_t *h = NULL;
    if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR && h) {
        const char *name;
        const void *val;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &val, &size) == 0; i++) {
            if (i) {
                sl_buf_reserve(b, 1);
                b->p[b->len++] = ',';
            }
            kf_json_string(b, name, strlen(name));
            sl_buf_reserve(b, 5);
            b->p[b->len++] = ':';
            if (val) {
                kf_json_string(b, val, size);
            } else {
                memcpy(b->p + b->len, "null", 4);
                b->len += 4;
            }
        }
    }
    sl_buf_reserve(b, 1);
    b->p[b->len++] = '}';
}

/* One record: decode, fill metadata columns, watermark bookkeeping, emit. */
static int handle_record(sl_op *op, ks_state *st, const rd_kafka_message_t *m, int64_t now)
{
    const ks_plan *pl = op->plan;
    const char *topic = rd_kafka_topic_name(m->rkt);
    int k = find_part(st, topic, m->partition);
    if (k < 0) return SL_OK; /* not ours (cannot happen with manual assignment) */
    ks_part *p = &st->parts[k];
    if (p->done) return SL_OK;
    if (m->offset >= p->stop) {
        mark_done(st, p);
        return SL_OK;
    }
    rd_kafka_timestamp_type_t tstype;
    int64_t ts = rd_kafka_message_timestamp(m, &tstype);
    if (ts >= p->stop_ts) { /* scan.bounded.mode timestamp: the end */
        mark_done(st, p);
        return SL_OK;
    }
    p->next = m->offset + 1;
    int rc = SL_OK;
    if (p->min_ts != INT64_MIN) {
        if (ts >= 0 && ts < p->min_ts) goto out;
        p->min_ts = INT64_MIN;
    }
    bool tomb = !m->payload;
    if (tomb && !pl->upsert && pl->codec.fmt != KF_RAW) goto out; /* a tombstone: no row */
    char why[300];
    const char *part_name = "key";
    kf_format bad_fmt = pl->key.fmt;
    kf_change change = KF_CHANGE_INSERT;
    int drc = SL_OK;
    if (pl->has_key) {
        if (!m->key) {
            for (int i = 0; i < pl->key.n; i++) st->vals[pl->key.slot[i]].isnull = true;
        } else {
            drc = st->kav ? sl_avro_decode(st->kav, m->key, m->key_len, st->vals, &st->kstr, why,
                                           sizeof why)
                          : kf_decode(&pl->key, m->key, m->key_len, st->vals, &st->kstr, why,
                                      sizeof why);
        }
    }
    if (drc == SL_OK) {
        part_name = "value";
        bad_fmt = pl->codec.fmt;
        if (tomb && pl->upsert) {
            change = KF_CHANGE_DELETE; /* the key's row is gone */
            for (int i = 0; i < pl->codec.n; i++) st->vals[pl->codec.slot[i]].isnull = true;
        } else if (pl->codec.fmt == KF_DEBEZIUM) {
            drc = kf_decode_debezium(&pl->codec, m->payload, m->len, st->before, st->vals, &change,
                                     &st->str, why, sizeof why);
        } else if (st->vav) {
            drc = sl_avro_decode(st->vav, m->payload, m->len, st->vals, &st->str, why, sizeof why);
        } else {
            drc = kf_decode(&pl->codec, m->payload, m->len, st->vals, &st->str, why, sizeof why);
        }
    }
    if (drc != SL_OK) {
        if (!pl->codec.ignore_errors)
            return sl_op_fail(op, "kafka source '%s': cannot decode the %s of topic '%s' "
                              "partition %d offset %lld as %s: %s", pl->vid, part_name, topic,
                              m->partition, (long long)m->offset, kf_format_name(bad_fmt), why);
        st->skipped++;
        op->metrics.records_in_errors++;
        if (st->skipped <= 10 || st->skipped % 1000 == 0)
            sl_warn("kafka", "kafka source '%s' (%d/%d): skipped topic '%s' partition %d offset "
                    "%lld (%s%s): %s; %llu skipped so far", pl->vid, op->subtask + 1,
                    op->parallelism, topic, m->partition, (long long)m->offset,
                    strcmp(part_name, "value") ? "key " : "",
                    kf_format_name(bad_fmt), why, (unsigned long long)st->skipped);
        goto out;
    }
    /* debezium-json: the update's or delete's before image is a row too */
    bool two = pl->codec.fmt == KF_DEBEZIUM && change != KF_CHANGE_INSERT;
    if (two && pl->has_key)
        for (int i = 0; i < pl->key.n; i++) st->before[pl->key.slot[i]] = st->vals[pl->key.slot[i]];
    for (int i = 0; i < pl->ncols; i++) {
        sl_value *v = &st->vals[i];
        switch (pl->meta[i]) {
        case META_NONE: break;
        case META_OFFSET: *v = (sl_value){.v.i = m->offset}; break;
        case META_PARTITION: *v = (sl_value){.v.i = m->partition}; break;
        case META_TIMESTAMP:
            *v = (sl_value){.isnull = ts < 0 || tstype == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE,
                            .v.i = ts};
            break;
        case META_TOPIC:
            *v = (sl_value){.v.s = {topic, (uint32_t)strlen(topic)}};
            break;
        case META_HEADERS:
            headers_text(m, &st->hdr);
            *v = (sl_value){.v.s = {st->hdr.p, (uint32_t)st->hdr.len}};
            break;
        }
        if (two && pl->meta[i] != META_NONE) st->before[i] = *v;
    }
    /* debezium deletes carry only the before image */
    sl_value *img = pl->codec.fmt == KF_DEBEZIUM && change == KF_CHANGE_DELETE ? st->before
                                                                                  : st->vals;
    int64_t evt = SL_TS_NONE;
    if (pl->wm_col >= 0) {
        const sl_value *v = &img[pl->wm_col];
        if (v->isnull && !(tomb && pl->upsert))
            return sl_op_fail(op, "kafka source '%s': topic '%s' partition %d offset %lld: the "
                              "watermark column '%s' is NULL", pl->vid, topic, m->partition,
                              (long long)m->offset, op->out->fields[pl->wm_col].name);
        if (!v->isnull) { /* an upsert tombstone may have no time: it moves no watermark */
            evt = v->v.i;
            if (evt > p->max_ts) p->max_ts = evt;
        }
    }
    p->last_ms = now;
    p->idle = false;
    if (st->out_idle) {
        st->out_idle = false;
        if (sl_op_emit_idle(op, 0) != SL_OK) return SL_ERR;
    }
    sl_row row = {SL_KIND_INSERT, pl->ncols, img, evt};
    if (change == KF_CHANGE_DELETE) {
        row.kind = SL_KIND_DELETE;
    } else if (change == KF_CHANGE_UPDATE) {
        sl_row ub = {SL_KIND_UPDATE_BEFORE, pl->ncols, st->before, evt};
        rc = sl_op_emit(op, &ub);
        if (rc == SL_ERR) goto emitted;
        row.kind = SL_KIND_UPDATE_AFTER;
    } else if (pl->upsert) {
        row.kind = SL_KIND_UPDATE_AFTER; /* the key's latest value */
    }
    int rc2 = sl_op_emit(op, &row);
    if (rc2 != SL_OK) rc = rc2;
emitted:
    if (rc == SL_ERR && !op->err[0]) sl_op_fail(op, "kafka source '%s': downstream failed", pl->vid);
out:
    if (p->next >= p->stop) mark_done(st, p);
    return rc;
}

/* scan.topic-partition-discovery.interval: read the topics again and take
 * the partitions (and, with a topic-pattern, topics) that appeared and the
 * rule gives this subtask, from their earliest offset, as Flink does. A
 * failed metadata read is logged and retried at the next interval. */
static int ks_discover(sl_op *op, ks_state *st)
{
    const ks_plan *pl = op->plan;
    ks_topic_count *old = st->counts;
    int nold = st->ncounts;
    st->counts = NULL;
    st->ncounts = 0;
    ks_part *u;
    int nu;
    if (read_universe(op, st, &u, &nu) != SL_OK) {
        sl_warn("kafka", "kafka source '%s' (%d/%d): partition discovery: %s (retrying in %lld ms)",
                pl->vid, op->subtask + 1, op->parallelism, op->err, (long long)pl->discovery_ms);
        op->err[0] = '\0';
        counts_free(st->counts, st->ncounts);
        st->counts = old;
        st->ncounts = nold;
        return SL_OK;
    }
    counts_free(old, nold);
    rd_kafka_topic_partition_list_t *l = NULL;
    int rc = SL_OK;
    for (int i = 0; i < nu && rc == SL_OK; i++) {
        if (owner_of(u[i].topic, u[i].partition, op->parallelism) != op->subtask ||
            in_parts(st->parts, st->nparts, u[i].topic, u[i].partition))
            continue;
        int64_t lo, hi;
        if ((rc = watermarks(op, st, &u[i], &lo, &hi)) != SL_OK) break;
        st->parts = sl_realloc(st->parts, (size_t)(st->nparts + 1) * sizeof *st->parts);
        ks_part *p = &st->parts[st->nparts++];
        *p = u[i];
        u[i].topic = NULL;
        p->next = lo;
        p->last_ms = sl_mono_ms();
        if (!l) l = rd_kafka_topic_partition_list_new(4);
        rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = lo;
        sl_info("kafka", "kafka source '%s' (%d/%d): discovered topic '%s' partition %d, reading "
                "it from offset %lld", pl->vid, op->subtask + 1, op->parallelism, p->topic,
                p->partition, (long long)lo);
    }
    parts_free(u, nu);
    if (rc == SL_OK && l) {
        rd_kafka_error_t *e = rd_kafka_incremental_assign(st->rk, l);
        if (e) {
            rc = sl_op_fail(op, "kafka source '%s': cannot assign the discovered partitions: %s",
                            pl->vid, rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
        }
    }
    if (l) rd_kafka_topic_partition_list_destroy(l);
    return rc;
}

static bool all_done(const ks_state *st)
{
    for (int i = 0; i < st->nparts; i++)
        if (!st->parts[i].done) return false;
    return true;
}

static int ks_run(sl_op *op)
{
    const ks_plan *pl = op->plan;
    ks_state *st = op->priv;
    if (st->ended) return SL_DONE;
    if (!st->started && ks_start_consuming(op, st) != SL_OK) return SL_ERR;
    if (pl->bound != BOUND_NONE && all_done(st)) {
        st->ended = true;
        return SL_DONE;
    }
    char drain[256];
    while (read(st->pipe_r, drain, sizeof drain) > 0) {
    }
    int64_t now = sl_mono_ms();
    if (st->discover_at && now >= st->discover_at) {
        st->discover_at = now + pl->discovery_ms;
        if (ks_discover(op, st) != SL_OK) return SL_ERR;
    }
    int n = 0, rc = SL_OK;
    while (n < KS_BATCH && rc == SL_OK) {
        rd_kafka_message_t *m = rd_kafka_consume_queue(st->q, 0);
        if (!m) break;
        n++;
        rc = m->err ? handle_error(op, st, m) : handle_record(op, st, m, now);
        rd_kafka_message_destroy(m);
    }
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_AGAIN) {
        op->wake_at_ms = now;
        return SL_AGAIN;
    }
    if (now >= st->next_tick && ks_tick(op, st, now) != SL_OK) return SL_ERR;
    if (pl->bound != BOUND_NONE && all_done(st)) {
        st->ended = true;
        return SL_DONE;
    }
    if (n == KS_BATCH) return SL_OK;
    op->wake_at_ms = st->next_tick;
    return SL_AGAIN;
}

/* ---- checkpoints ----------------------------------------------------------------------- */

static int ks_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    ks_state *st = op->priv;
    if (!st->started && ks_start_consuming(op, st) != SL_OK) return SL_ERR;
    size_t total = 1 + 4 + 4 + 4 + 8;
    for (int i = 0; i < st->nparts; i++) total += 2 + strlen(st->parts[i].topic) + 4 + 8;
    for (int i = 0; i < st->ncounts; i++) total += 2 + strlen(st->counts[i].topic) + 4;
    unsigned char *b = sl_malloc(total), *p = b;
    *p++ = KS_BLOB_VERSION;
    memcpy(p, ks_magic, 4);
    p += 4;
    p = sl_put_le_n(p, (uint64_t)st->nparts, 4);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(st->nparts + 1);
    for (int i = 0; i < st->nparts; i++) {
        const ks_part *kp = &st->parts[i];
        size_t tl = strlen(kp->topic);
        p = sl_put_le_n(p, tl, 2);
        memcpy(p, kp->topic, tl);
        p += tl;
        p = sl_put_le_n(p, (uint32_t)kp->partition, 4);
        p = sl_put_le_n(p, (uint64_t)kp->next, 8);
        rd_kafka_topic_partition_list_add(l, kp->topic, kp->partition)->offset = kp->next;
    }
    p = sl_put_le_n(p, (uint64_t)st->ncounts, 4);
    for (int i = 0; i < st->ncounts; i++) {
        size_t tl = strlen(st->counts[i].topic);
        p = sl_put_le_n(p, tl, 2);
        memcpy(p, st->counts[i].topic, tl);
        p += tl;
        p = sl_put_le_n(p, (uint32_t)st->counts[i].n, 4);
    }
    p = sl_put_le_n(p, sl_blob_fnv1a(b, (size_t)(p - b)), 8);
    SL_ASSERT((size_t)(p - b) == total);
    *blob = b;
    *len = total;
    /* remembered for the commit when this checkpoint completes */
    ks_commit *slot = &st->commits[0];
    for (int i = 0; i < KS_PENDING_COMMITS; i++)
        if (!st->commits[i].offsets || st->commits[i].cpid < slot->cpid) {
            slot = &st->commits[i];
            if (!slot->offsets) break;
        }
    if (slot->offsets) rd_kafka_topic_partition_list_destroy(slot->offsets);
    slot->cpid = cpid;
    slot->offsets = l;
    return SL_OK;
}

static int ks_checkpoint_complete(sl_op *op, int64_t cpid)
{
    ks_state *st = op->priv;
    for (int i = 0; i < KS_PENDING_COMMITS; i++) {
        ks_commit *c = &st->commits[i];
        if (!c->offsets || c->cpid > cpid) continue;
        if (c->cpid == cpid && c->offsets->cnt > 0) {
            /* monitoring only: asynchronous, and a failure is just logged */
            rd_kafka_resp_err_t e = rd_kafka_commit(st->rk, c->offsets, 1);
            if (e)
                sl_warn("kafka", "kafka source '%s': committing offsets of checkpoint %lld: %s",
                        vid_of(op), (long long)cpid, rd_kafka_err2str(e));
        }
        rd_kafka_topic_partition_list_destroy(c->offsets);
        c->offsets = NULL;
    }
    return SL_OK;
}

static int ks_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    ks_state *st = op->priv;
    st->restored = true;
    for (int k = 0; k < nblobs; k++) {
        const unsigned char *b = blobs[k], *p = b, *end;
        size_t len = lens[k];
        const char *why = NULL;
        if (len < 1 + 4 + 4 + 4 + 8) why = "too short";
        else if (memcmp(b + 1, ks_magic, 4) != 0) why = "not kafka source state";
        else if (b[0] != KS_BLOB_VERSION) why = "another format version";
        else {
            const unsigned char *sp = b + len - 8;
            if (sl_get_le_n(&sp, 8) != sl_blob_fnv1a(b, len - 8)) why = "damaged (checksum)";
        }
        end = b + len - 8;
        p = b + 5;
        uint64_t n = why ? 0 : sl_get_le_n(&p, 4);
        if (!why && n > (size_t)(end - p) / 14) why = "damaged (count)";
        for (uint64_t i = 0; !why && i < n; i++) {
            if (end - p < 2) { why = "damaged (cut short)"; break; }
            size_t tl = sl_get_le_n(&p, 2);
            if ((size_t)(end - p) < tl + 12) { why = "damaged (cut short)"; break; }
            st->rparts = sl_realloc(st->rparts, (size_t)(st->nrparts + 1) * sizeof *st->rparts);
            ks_part *rp = &st->rparts[st->nrparts++];
            memset(rp, 0, sizeof *rp);
            rp->topic = sl_strndup((const char *)p, tl);
            p += tl;
            rp->partition = (int32_t)sl_get_le_n(&p, 4);
            rp->next = (int64_t)sl_get_le_n(&p, 8);
        }
        uint64_t nt = 0;
        if (!why && end - p < 4) why = "damaged (cut short)";
        if (!why) nt = sl_get_le_n(&p, 4);
        for (uint64_t i = 0; !why && i < nt; i++) {
            if (end - p < 2) { why = "damaged (cut short)"; break; }
            size_t tl = sl_get_le_n(&p, 2);
            if ((size_t)(end - p) < tl + 4) { why = "damaged (cut short)"; break; }
            p += tl + 4; /* the partition count at the checkpoint: not needed to restore */
        }
        if (!why && p != end) why = "damaged (stray bytes)";
        if (why)
            return sl_op_fail(op, "kafka source '%s' subtask %d: cannot restore state %d of %d: %s",
                              vid_of(op), op->subtask, k + 1, nblobs, why);
    }
    return SL_OK;
}

static void ks_close(sl_op *op)
{
    ks_state *st = op->priv;
    if (!st) return;
    const ks_plan *pl = op->plan;
    if (st->skipped)
        sl_warn("kafka", "kafka source '%s' (%d/%d): %llu undecodable record%s skipped", pl->vid,
                op->subtask + 1, op->parallelism, (unsigned long long)st->skipped,
                st->skipped == 1 ? "" : "s");
    for (int i = 0; i < KS_PENDING_COMMITS; i++)
        if (st->commits[i].offsets) rd_kafka_topic_partition_list_destroy(st->commits[i].offsets);
    if (st->q) {
        rd_kafka_queue_io_event_enable(st->q, -1, NULL, 0);
        rd_kafka_queue_destroy(st->q);
    }
    if (st->rk) {
        /* manual assignment, nothing to leave: do not wait for the group */
        rd_kafka_destroy_flags(st->rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    }
    if (st->pipe_r >= 0) {
        sl_op_unwatch_fd(op, st->pipe_r);
        close(st->pipe_r);
    }
    if (st->pipe_w >= 0) close(st->pipe_w);
    parts_free(st->parts, st->nparts);
    parts_free(st->rparts, st->nrparts);
    counts_free(st->counts, st->ncounts);
    sl_buf_free(&st->str);
    sl_buf_free(&st->kstr);
    sl_buf_free(&st->hdr);
    sl_avro_destroy(st->kav);
    sl_avro_destroy(st->vav);
    free(st->vals);
    free(st->before);
    free(st);
    op->priv = NULL;
}

/* the topics and the client, both kafka sources */
#define KS_TOPIC_OPTIONS \
    {"topic", SL_CT_STRING, NULL, NULL, \
     "Topic name (a list separated by ';' on sources)."}, \
    {"topic-pattern", SL_CT_STRING, NULL, NULL, \
     "Regular expression of the topic names to read."}, \
    {"properties.*", SL_CT_STRING, NULL, NULL, \
     "librdkafka properties (properties.bootstrap.servers is required)."},

/* where a bounded read ends, and partition discovery, both kafka sources */
#define KS_BOUNDED_OPTIONS \
    {"scan.bounded.mode", SL_CT_STRING, NULL, NULL, \
     "unbounded, latest-offset, group-offsets, timestamp or specific-offsets."}, \
    {"scan.bounded.specific-offsets", SL_CT_STRING, NULL, NULL, \
     "End offsets for scan.bounded.mode specific-offsets."}, \
    {"scan.bounded.timestamp-millis", SL_CT_STRING, NULL, NULL, \
     "End time for scan.bounded.mode timestamp."}, \
    {"scan.topic-partition-discovery.interval", SL_CT_STRING, NULL, NULL, \
     "How often new partitions are looked for (0: never)."},

/* the value's columns, bad records and watermarks, both kafka sources */
#define KS_VALUE_OPTIONS \
    {"value.fields-include", SL_CT_STRING, NULL, NULL, \
     "ALL or EXCEPT_KEY: whether key columns are also in the value."}, \
    {"json.ignore-parse-errors", SL_CT_STRING, NULL, NULL, \
     "true: a value not of its type is NULL (the field, element or MAP value; a record that " \
     "is no JSON object is skipped and counted) instead of failing, as Flink's."},             \
    KF_JSON_OPTIONS, \
    {"csv.ignore-parse-errors", SL_CT_STRING, NULL, NULL, \
     "true: skip (and count) a row that does not parse as CSV instead of failing."}, \
    {"watermark.column", SL_CT_STRING, NULL, NULL, \
     "Event-time column the source's watermarks follow."}, \
    {"watermark.delay", SL_CT_STRING, NULL, NULL, \
     "Bounded out-of-orderness of the source's watermarks."}, \
    {"watermark.idle-timeout", SL_CT_STRING, NULL, NULL, \
     "Silence after which a partition is marked idle."}, \
    {"watermark.interval", SL_CT_STRING, NULL, NULL, \
     "Watermark emission interval of the source."}, \
    {"watermark.rule", SL_CT_ENUM, "datastream", "datastream,sql", \
     "datastream: max - delay - 1 ms per partition; sql: max - delay (Flink SQL's WATERMARK rule)."},

static const sl_op_option ks_options[] = {
    KS_TOPIC_OPTIONS
    {"scan.startup.mode", SL_CT_STRING, NULL, NULL,
     "earliest-offset, latest-offset, group-offsets, timestamp or specific-offsets."},
    {"scan.startup.timestamp-millis", SL_CT_STRING, NULL, NULL,
     "Start offset time for scan.startup.mode timestamp."},
    {"scan.startup.specific-offsets", SL_CT_STRING, NULL, NULL,
     "partition:0,offset:42;... for scan.startup.mode specific-offsets."},
    KS_BOUNDED_OPTIONS
    {"format", SL_CT_STRING, NULL, NULL,
     "Row format: csv or json."},
    {"value.format", SL_CT_STRING, NULL, NULL,
     "Format of the record value: csv, json or raw."},
    {"key.format", SL_CT_STRING, NULL, NULL,
     "Format of the record key."},
    {"key.fields", SL_CT_JSON, NULL, NULL,
     "Columns (';'-separated) that make up the record key."},
    KS_VALUE_OPTIONS
    SL_AVRO_OPTIONS
    SL_OP_OPTIONS_END,
};

static const sl_op_option ks_upsert_options[] = {
    KS_TOPIC_OPTIONS
    KS_BOUNDED_OPTIONS
    {"key.format", SL_CT_STRING, NULL, NULL,
     "Format of the record key."},
    {"value.format", SL_CT_STRING, NULL, NULL,
     "Format of the record value: csv, json or raw."},
    {"primary-key", SL_CT_JSON, NULL, NULL,
     "Primary key columns (';'-separated)."},
    KS_VALUE_OPTIONS
    SL_AVRO_OPTIONS
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_kafka_source = {
    .abi = SL_OP_ABI_VERSION,
    .name = "kafka",
    .flags = SL_OPF_SOURCE | SL_OPF_UNION_STATE,
    .options = ks_options,
    .plan = ks_plan_new,
    .plan_free = ks_plan_free,
    .open = ks_open,
    .run = ks_run,
    .close = ks_close,
    .snapshot_state = ks_snapshot,
    .restore_state = ks_restore,
    .checkpoint_complete = ks_checkpoint_complete,
};

/* upsert-kafka: the same source, reading key and value as an upsert
 * changelog on the primary key. */
const sl_op_def sl_op_upsert_kafka_source = {
    .abi = SL_OP_ABI_VERSION,
    .name = "upsert-kafka",
    .flags = SL_OPF_SOURCE | SL_OPF_UNION_STATE,
    .options = ks_upsert_options,
    .plan = ks_plan_upsert,
    .plan_free = ks_plan_free,
    .open = ks_open,
    .run = ks_run,
    .close = ks_close,
    .snapshot_state = ks_snapshot,
    .restore_state = ks_restore,
    .checkpoint_complete = ks_checkpoint_complete,
};
