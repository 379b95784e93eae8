/*
 * kafka_sink.c -- the `kafka-sink` operator: rows into a Kafka topic through
 * librdkafka, with Flink's options (docs/KAFKA.md).
 *
 *   topic                          the one topic written
 *   properties.bootstrap.servers   required
 *   properties.*                   any librdkafka producer property
 *   sink.delivery-guarantee        none | at-least-once (default) | exactly-once
 *   sink.transactional-id-prefix   required for exactly-once
 *   sink.partitioner               default | fixed | round-robin
 *   format | value.format          json | csv | raw | debezium-json (the value)
 *   key.format, key.fields         optional key: columns "a;b" in that format
 *   value.fields-include           ALL | EXCEPT_KEY
 *   metadata.timestamp             an input column (TIMESTAMP) written as the
 *                                  record's timestamp (NULL: the producer's clock)
 *                                  instead of the row's event time
 *   metadata.headers               an input column (STRING: the source's JSON
 *                                  object of name -> string or null) written
 *                                  as the record's headers
 *   (metadata columns are not written by the formats)
 *
 * upsert-kafka-sink (its own type, same code): key.format + primary-key;
 * +I/+U write the value, -D a tombstone, -U is dropped (Flink's upsert-kafka).
 *
 * (A separate type from the `kafka` source because the job graph refuses an
 * edge into a source; the SQL layer maps 'connector' = 'kafka' to either.)
 *
 * Rows are encoded into one buffer reused record after record and handed to
 * rd_kafka_producev (which copies them into librdkafka's queue, bounded by
 * queue.buffering.max.kbytes: 16 MiB here unless given). A full queue is
 * backpressure: the task serves delivery reports until there is room. The
 * plain kafka sink takes inserts only unless its value format is
 * debezium-json (Flink refuses an updating query into it): another row kind
 * fails the task.
 *
 * Partitioners: default leaves it to librdkafka (hash of the key, or spread
 * when there is none); fixed sends subtask i's rows to partition
 * i % partitions (Flink's FlinkFixedPartitioner); round-robin cycles through
 * the partitions record by record.
 *
 * none: fire and forget (a failed delivery is logged). at-least-once: every
 * record produced before a barrier is acknowledged by the broker before the
 * checkpoint is: snapshot_state defers a wait (sl_op_defer) that runs on the
 * snapshot thread until the in-flight count of every interval up to this
 * barrier is zero. Each record's opaque is its interval's slot; the delivery
 * callback (whichever thread serves it) only touches atomics, so the task
 * thread goes on producing meanwhile. A failed delivery fails the task (and
 * declines the checkpoint): nothing acknowledged is ever lost.
 *
 * exactly-once (needs checkpointing): one transaction per subtask per
 * checkpoint, each with its own producer and transactional.id
 * "<prefix>-<subtask>-<n>", n counting this subtask's transactions and kept
 * in the checkpoint, so an id is never reused for another transaction after
 * a restore. At the barrier of checkpoint c the open transaction is closed
 * to new rows (the next row opens transaction n + 1 with a new producer) and
 * flushed on the snapshot thread: pre-committed. checkpoint_complete(c)
 * commits every transaction staged at or before c. An aborted checkpoint
 * leaves its transaction pending for the next completion. Each
 * transaction's producer id and epoch (from librdkafka's eos debug log,
 * which is the only place librdkafka tells them) go into the state with its
 * id, so that restore_state can finish a transaction whose checkpoint
 * completed while its commit was lost: it sends EndTxn(commit) for that
 * producer id and epoch to the transaction coordinator itself
 * (kafka_txn.c), as Flink resumes such transactions. Then the ids this
 * subtask (and the old subtasks whose state it got) may have used after the
 * checkpoint are initialised once, which fences their producers and aborts
 * their lingering transactions. End of input commits the open transaction
 * at once (like the file sink; see there for the caveat).
 *
 * transaction.timeout.ms must exceed the checkpoint interval plus a margin,
 * or the broker aborts transactions before their checkpoint commits them.
 * The JobManager refuses such a job at submission (kk_check_job,
 * called with the job's effective interval: the cluster's setting with the
 * job's "config" over it), naming both numbers. The sink also measures it,
 * for what the interval cannot show (min-pause, slow checkpoints): a
 * transaction whose age at its barrier plus the margin (10 s, or half the
 * timeout when that is smaller) reaches the timeout fails the task.
 *
 * Blob (exactly-once only), little-endian, version 1: u8 version, "SLKK",
 * u32 owner subtask, u64 next n, u32 npending, npending x { i64 cpid,
 * u64 n, i64 producer id, i16 epoch }, u64 FNV-1a.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "blob.h"
#include "format_avro.h"
#include "kafka_common.h"
#include "kafka_txn.h"
#include "log.h"

#define KK_SLOTS 64                 /* in-flight counters, one per checkpoint interval */
#define KK_META_TIMEOUT_MS 10000
#define KK_TXN_TIMEOUT_MS 30000     /* init / commit / abort */
#define KK_ABORT_WINDOW 4           /* ids after the checkpoint's that are fenced on start */
#define KK_BLOB_VERSION 1
#define KK_MARGIN_MS 10000

static const char kk_magic[4] = {'S', 'L', 'K', 'K'};

typedef enum { DG_NONE = 0, DG_ALO, DG_EOS } kk_guarantee;
typedef enum { PART_DEFAULT = 0, PART_FIXED, PART_RR } kk_partitioner;

typedef struct kk_plan {
    char *vid;
    char *topic;
    kk_guarantee guarantee;
    char *prefix;
    kk_partitioner partitioner;
    kf_codec value;
    bool upsert;                /* upsert-kafka: -D is a tombstone, -U is dropped */
    bool has_key;
    kf_codec key;
    int64_t txn_timeout_ms;
    int ts_col;                 /* "metadata" timestamp column, -1 = the row's event time */
    int hdr_col;                /* "metadata" headers column, -1 = none */
} kk_plan;

/* What a producer shares with the threads that may serve its callbacks and
 * with deferred flushes: freed by whoever drops the last reference. */
typedef struct kk_shared {
    atomic_int refs;
    rd_kafka_t *rk;
    atomic_int_fast64_t inflight[KK_SLOTS];
    atomic_int failed;          /* first delivery failure recorded */
    char failmsg[400];          /* written once, by the thread that set failed */
    atomic_int_fast64_t pid;    /* producer id from the eos log (-1: unknown) */
    atomic_int epoch;
    bool transactional;
} kk_shared;

typedef struct kk_txn {
    kk_shared *sh;
    uint64_t n;                 /* its number: transactional.id prefix-subtask-n */
    int64_t cpid;               /* staged at this checkpoint (0: still open) */
    uint64_t records;
    int64_t started_ms;         /* mono */
    int64_t started_wall;       /* wall-clock ms, for the REST API's age */
} kk_txn;

typedef struct kk_state {
    kk_shared *sh;              /* none / at-least-once: the one producer */
    uint64_t slot;              /* current interval (at-least-once) */
    int32_t npart;              /* the topic's partitions (fixed / round-robin) */
    uint64_t rr;
    sl_buf val, key;
    sl_avro *kav, *vav;         /* avro formats: the key's and the value's writer */
    sl_buf hdrstr;              /* scratch of the headers column's parse */
    uint64_t since_poll;
    /* exactly-once */
    kk_txn cur;                 /* cur.sh NULL: no open transaction */
    kk_txn *pend;               /* staged, oldest first */
    int npend, cappend;
    uint64_t next_n;
    bool recovered;             /* restore_state ran (or open found nothing to do) */
} kk_state;

/* ---- plan ------------------------------------------------------------------ */

static void kk_plan_free(void *p)
{
    kk_plan *pl = p;
    if (!pl) return;
    kf_codec_free(&pl->value);
    kf_codec_free(&pl->key);
    free(pl->vid);
    free(pl->topic);
    free(pl->prefix);
    free(pl);
}

static const char *const kk_reserved[] = {"transactional.id", "enable.idempotence", NULL};

/* "metadata.timestamp" / "metadata.headers": the input columns written as
 * the record's timestamp and headers (Flink's writable metadata). */
static int kk_plan_metadata(const sl_vertex *v, const sl_schema *in, kk_plan *pl, char *err,
                            size_t errlen)
{
    static const char *const keys[] = {"metadata.timestamp", "metadata.headers"};
    int *slots[] = {&pl->ts_col, &pl->hdr_col};
    const sl_type want[] = {SL_T_TIMESTAMP, SL_T_STRING};
    pl->ts_col = pl->hdr_col = -1;
    for (int i = 0; i < 2; i++) {
        const char *col = sl_vconf_str(v, keys[i], NULL);
        if (!col) continue;
        int c = sl_schema_find(in, col);
        if (c < 0)
            return sl_seterr(err, errlen, "vertex '%s': option '%s': the input has no column '%s'",
                             v->id, keys[i], col);
        if (in->fields[c].type != want[i])
            return sl_seterr(err, errlen, "vertex '%s': option '%s': column '%s' is %s, not %s",
                             v->id, keys[i], col, sl_type_name(in->fields[c].type),
                             sl_type_name(want[i]));
        *slots[i] = c;
    }
    if (pl->ts_col >= 0 && pl->ts_col == pl->hdr_col)
        return sl_seterr(err, errlen, "vertex '%s': one column for both the timestamp and the "
                         "headers", v->id);
    return SL_OK;
}

static void *kk_plan_common(sl_plan_ctx *pc, bool upsert, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    kk_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id);
    const char *topic = sl_vconf_str(v, "topic", NULL);
    if (!topic || !*topic || strchr(topic, ';')) {
        sl_seterr(err, errlen, "vertex '%s': option 'topic' (the one topic written) is required",
                  v->id);
        goto fail;
    }
    pl->topic = sl_strdup(topic);
    const char *g = sl_vconf_str(v, "sink.delivery-guarantee", "at-least-once");
    if (!strcmp(g, "none")) pl->guarantee = DG_NONE;
    else if (!strcmp(g, "at-least-once")) pl->guarantee = DG_ALO;
    else if (!strcmp(g, "exactly-once")) pl->guarantee = DG_EOS;
    else {
        sl_seterr(err, errlen, "vertex '%s': option 'sink.delivery-guarantee': '%s' is not none, "
                  "at-least-once or exactly-once", v->id, g);
        goto fail;
    }
    const char *prefix = sl_vconf_str(v, "sink.transactional-id-prefix", NULL);
    if (pl->guarantee == DG_EOS && (!prefix || !*prefix)) {
        sl_seterr(err, errlen, "vertex '%s': exactly-once needs 'sink.transactional-id-prefix' "
                  "(unique to this job: transactions are named after it)", v->id);
        goto fail;
    }
    if (prefix) pl->prefix = sl_strdup(prefix);
    const char *part = sl_vconf_str(v, "sink.partitioner", "default");
    if (!strcmp(part, "default")) pl->partitioner = PART_DEFAULT;
    else if (!strcmp(part, "fixed")) pl->partitioner = PART_FIXED;
    else if (!strcmp(part, "round-robin")) pl->partitioner = PART_RR;
    else {
        sl_seterr(err, errlen, "vertex '%s': option 'sink.partitioner': '%s' is not default, "
                  "fixed or round-robin", v->id, part);
        goto fail;
    }
    int phys[SL_MAX_FIELDS], kcols[SL_MAX_FIELDS], vcols[SL_MAX_FIELDS], nk = 0, nv = 0, np = 0;
    if (kk_plan_metadata(v, in, pl, err, errlen) != SL_OK) goto fail;
    for (int i = 0; i < in->n; i++)
        if (i != pl->ts_col && i != pl->hdr_col) phys[np++] = i;
    kf_format f;
    pl->upsert = upsert;
    if (kf_key_value_plan(v, in, phys, np, upsert, &f, kcols, &nk, vcols, &nv, err, errlen))
        goto fail;
    if (kf_codec_init(&pl->value, f, in, vcols, nv, v->id, err, errlen) != SL_OK ||
        kf_json_opts_read(&pl->value, v->config, v->id, err, errlen) != SL_OK)
        goto fail;
    if (nk) {
        kf_format kfo;
        kf_format_parse(sl_vconf_str(v, "key.format", ""), &kfo);
        if (kf_codec_init(&pl->key, kfo, in, kcols, nk, v->id, err, errlen) != SL_OK ||
            kf_json_opts_read(&pl->key, v->config, v->id, err, errlen) != SL_OK)
            goto fail;
        pl->has_key = true;
    }
    if ((pl->has_key && (pl->key.fmt == KF_AVRO || pl->key.fmt == KF_AVRO_CONFLUENT) &&
         sl_avro_fmt_plan(&pl->key, v, true, pl->topic, err, errlen)) ||
        ((f == KF_AVRO || f == KF_AVRO_CONFLUENT) &&
         sl_avro_fmt_plan(&pl->value, v, false, pl->topic, err, errlen)))
        goto fail;
    const char *tt = kf_prop(v, "transaction.timeout.ms", "60000");
    char *end;
    pl->txn_timeout_ms = strtoll(tt, &end, 10);
    rd_kafka_conf_t *conf;
    if (kf_conf_build(v, kk_reserved, &conf, err, errlen) != SL_OK) goto fail;
    rd_kafka_conf_destroy(conf);
    return pl;
fail:
    kk_plan_free(pl);
    return NULL;
}

static void *kk_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    return kk_plan_common(pc, false, err, errlen);
}

static void *kk_plan_upsert(sl_plan_ctx *pc, char *err, size_t errlen)
{
    return kk_plan_common(pc, true, err, errlen);
}

/* ---- producers ------------------------------------------------------------------ */

static void shared_unref(kk_shared *sh)
{
    if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1) return;
    if (sh->rk) rd_kafka_destroy(sh->rk);
    free(sh);
}

/* Delivery reports: any thread that serves the producer's queue. */
static void kk_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    kk_shared *sh = opaque;
    SL_UNUSED(rk);
    uintptr_t slot = (uintptr_t)m->_private;
    if (m->err) {
        int zero = 0;
        if (atomic_compare_exchange_strong(&sh->failed, &zero, 1)) {
            snprintf(sh->failmsg, sizeof sh->failmsg, "delivery to topic '%s' partition %d failed: %s",
                     m->rkt ? rd_kafka_topic_name(m->rkt) : "?", m->partition,
                     rd_kafka_err2str(m->err));
            atomic_store(&sh->failed, 2); /* the message is written */
        }
    }
    atomic_fetch_sub(&sh->inflight[slot % KK_SLOTS], 1);
}

/* librdkafka's log; for transactional producers the eos debug lines carry
 * the producer id and epoch: "... PID{Id:1000,Epoch:0} ..." */
static void kk_log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    kk_shared *sh = rd_kafka_opaque(rk);
    if (sh && sh->transactional) {
        const char *p = strstr(buf, "PID{Id:");
        const char *last = NULL;
        while (p) { /* "changed from PID{...} to PID{...}": the last one */
            last = p;
            p = strstr(p + 1, "PID{Id:");
        }
        long long id;
        int ep;
        if (last && sscanf(last, "PID{Id:%lld,Epoch:%d}", &id, &ep) == 2 && id >= 0) {
            atomic_store(&sh->pid, (int_fast64_t)id);
            atomic_store(&sh->epoch, ep);
        }
    }
    if (level <= 3) sl_error("kafka", "%s: %s", fac, buf);
    else if (level <= 4) sl_warn("kafka", "%s: %s", fac, buf);
    else sl_debug("kafka", "%s: %s", fac, buf);
}

/* A producer; transactional when txn_id is given (then initialised, which
 * fences earlier producers of that id and aborts their open transaction). */
static kk_shared *producer_new(sl_op *op, const char *txn_id, char *err, size_t errlen)
{
    const kk_plan *pl = op->plan;
    rd_kafka_conf_t *conf;
    if (kf_conf_build(op->vertex, kk_reserved, &conf, err, errlen) != SL_OK) return NULL;
    char why[512];
    kk_shared *sh = sl_calloc(1, sizeof *sh);
    atomic_init(&sh->refs, 1);
    atomic_init(&sh->failed, 0);
    atomic_init(&sh->pid, -1);
    atomic_init(&sh->epoch, -1);
    for (int i = 0; i < KK_SLOTS; i++) atomic_init(&sh->inflight[i], 0);
    sh->transactional = txn_id != NULL;
    int bad = 0;
    if (!kf_prop(op->vertex, "queue.buffering.max.kbytes", NULL))
        bad |= rd_kafka_conf_set(conf, "queue.buffering.max.kbytes", "16384", why, sizeof why);
    if (!kf_prop(op->vertex, "client.id", NULL)) {
        char cid[300];
        snprintf(cid, sizeof cid, "sluice-%s-%d", pl->vid, op->subtask);
        bad |= rd_kafka_conf_set(conf, "client.id", cid, why, sizeof why);
    }
    if (txn_id) {
        bad |= rd_kafka_conf_set(conf, "transactional.id", txn_id, why, sizeof why);
        const char *dbg = kf_prop(op->vertex, "debug", NULL);
        char d[300];
        snprintf(d, sizeof d, "%s%seos", dbg ? dbg : "", dbg ? "," : "");
        bad |= rd_kafka_conf_set(conf, "debug", d, why, sizeof why);
    }
    if (bad) {
        rd_kafka_conf_destroy(conf);
        free(sh);
        sl_seterr(err, errlen, "kafka sink '%s': %s", pl->vid, why);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, kk_dr_cb);
    rd_kafka_conf_set_log_cb(conf, kk_log_cb);
    rd_kafka_conf_set_opaque(conf, sh);
    sh->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
    if (!sh->rk) {
        rd_kafka_conf_destroy(conf);
        free(sh);
        sl_seterr(err, errlen, "kafka sink '%s': cannot create a producer: %s", pl->vid, why);
        return NULL;
    }
    if (txn_id) {
        rd_kafka_error_t *e = rd_kafka_init_transactions(sh->rk, KK_TXN_TIMEOUT_MS);
        if (e) {
            sl_seterr(err, errlen, "kafka sink '%s': cannot initialise transactional id '%s' on "
                      "brokers %s: %s", pl->vid, txn_id, kf_prop(op->vertex, "bootstrap.servers", "?"),
                      rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
            shared_unref(sh);
            return NULL;
        }
    }
    return sh;
}

static void txn_id_of(const kk_plan *pl, int subtask, uint64_t n, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%d-%llu", pl->prefix, subtask, (unsigned long long)n);
}

static int check_failed(sl_op *op, kk_shared *sh)
{
    if (!sh || atomic_load(&sh->failed) != 2) return SL_OK;
    return sl_op_fail(op, "kafka sink '%s': %s", ((const kk_plan *)op->plan)->vid, sh->failmsg);
}

static int topic_partitions(sl_op *op, rd_kafka_t *rk, int32_t *n)
{
    const kk_plan *pl = op->plan;
    const struct rd_kafka_metadata *md;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, pl->topic, NULL);
    rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, rkt, &md, KK_META_TIMEOUT_MS);
    rd_kafka_topic_destroy(rkt);
    if (e)
        return sl_op_fail(op, "kafka sink '%s': cannot read the metadata of topic '%s' from "
                          "brokers %s: %s", pl->vid, pl->topic,
                          kf_prop(op->vertex, "bootstrap.servers", "?"), rd_kafka_err2str(e));
    int rc = SL_OK;
    if (md->topic_cnt < 1 || md->topics[0].err || md->topics[0].partition_cnt < 1)
        rc = sl_op_fail(op, "kafka sink '%s': topic '%s' on brokers %s: %s", pl->vid, pl->topic,
                        kf_prop(op->vertex, "bootstrap.servers", "?"),
                        md->topic_cnt < 1 || !md->topics[0].err ? "it has no partitions"
                                                                : rd_kafka_err2str(md->topics[0].err));
    else *n = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
    return rc;
}

/* ---- exactly-once transactions ------------------------------------------------------ */

/* The open and pre-committed transactions as the operator's published info
 * (GET /sluice/jobs/:jobid/kafka-transactions, `sluice kafka transactions`). At
 * most the 16 oldest pre-committed ones are listed, with their count. */
static void publish_txns(sl_op *op, const kk_state *st)
{
    const kk_plan *pl = op->plan;
    json_t *list = json_array();
    char id[512];
    for (int k = 0; k < st->npend && k < 16; k++) {
        const kk_txn *t = &st->pend[k];
        txn_id_of(pl, op->subtask, t->n, id, sizeof id);
        json_array_append_new(list, json_pack("{s:s,s:s,s:I,s:I,s:I}", "transactional-id", id,
                                              "state", "pre-committed", "checkpoint-id",
                                              (json_int_t)t->cpid, "records",
                                              (json_int_t)t->records, "started-at",
                                              (json_int_t)t->started_wall));
    }
    if (st->cur.sh) {
        txn_id_of(pl, op->subtask, st->cur.n, id, sizeof id);
        json_array_append_new(list, json_pack("{s:s,s:s,s:n,s:I,s:I}", "transactional-id", id,
                                              "state", "open", "checkpoint-id", "records",
                                              (json_int_t)st->cur.records, "started-at",
                                              (json_int_t)st->cur.started_wall));
    }
    json_t *o = json_pack("{s:o,s:i}", "kafka-transactions", list, "pre-committed", st->npend);
    char *txt = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    sl_op_set_info(op, txt);
    free(txt);
}

static int txn_begin(sl_op *op, kk_state *st)
{
    const kk_plan *pl = op->plan;
    char id[512];
    txn_id_of(pl, op->subtask, st->next_n, id, sizeof id);
    kk_shared *sh = producer_new(op, id, op->err, sizeof op->err);
    if (!sh) return SL_ERR;
    rd_kafka_error_t *e = rd_kafka_begin_transaction(sh->rk);
    if (e) {
        sl_op_fail(op, "kafka sink '%s': cannot begin transaction '%s': %s", pl->vid, id,
                   rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        shared_unref(sh);
        return SL_ERR;
    }
    st->cur = (kk_txn){.sh = sh, .n = st->next_n++, .started_ms = sl_mono_ms(),
                       .started_wall = sl_now_ms()};
    publish_txns(op, st);
    return SL_OK;
}

static int txn_commit(sl_op *op, kk_txn *t)
{
    const kk_plan *pl = op->plan;
    if (check_failed(op, t->sh) != SL_OK) return SL_ERR;
    rd_kafka_error_t *e = rd_kafka_commit_transaction(t->sh->rk, KK_TXN_TIMEOUT_MS);
    if (e) {
        char id[512];
        txn_id_of(pl, op->subtask, t->n, id, sizeof id);
        sl_op_fail(op, "kafka sink '%s': cannot commit transaction '%s' (checkpoint %lld, %llu "
                   "records): %s", pl->vid, id, (long long)t->cpid,
                   (unsigned long long)t->records, rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        return SL_ERR;
    }
    shared_unref(t->sh);
    t->sh = NULL;
    return SL_OK;
}

/* Deferred from the barrier: flush a staged transaction (pre-commit). The
 * task thread no longer touches its producer until checkpoint_complete. */
typedef struct kk_flush {
    kk_shared *sh;
    uint64_t upto_slot;  /* at-least-once: the interval closed by the barrier */
    bool eos;
    char what[200];
} kk_flush;

static int kk_flush_run(void *arg, char *err, size_t errlen)
{
    kk_flush *f = arg;
    int rc = SL_OK;
    if (f->eos) {
        rd_kafka_resp_err_t e = rd_kafka_flush(f->sh->rk, KK_TXN_TIMEOUT_MS);
        if (e) rc = sl_seterr(err, errlen, "%s: flush: %s", f->what, rd_kafka_err2str(e));
    } else {
        /* every interval up to this barrier: nothing in flight. The last
         * KK_SLOTS - 1 intervals only: the slot before them is the one the
         * task is filling now (upto + 1 modulo KK_SLOTS). */
        for (;;) {
            int64_t left = 0;
            for (uint64_t s = f->upto_slot + 2 > KK_SLOTS ? f->upto_slot + 2 - KK_SLOTS : 0;
                 s <= f->upto_slot; s++)
                left += atomic_load(&f->sh->inflight[s % KK_SLOTS]);
            if (left <= 0 || atomic_load(&f->sh->failed)) break;
            rd_kafka_poll(f->sh->rk, 20);
        }
    }
    if (rc == SL_OK && atomic_load(&f->sh->failed)) {
        while (atomic_load(&f->sh->failed) != 2) usleep(100); /* its message is being written */
        rc = sl_seterr(err, errlen, "%s: %s", f->what, f->sh->failmsg);
    }
    shared_unref(f->sh);
    free(f);
    return rc;
}

/* ---- operator ----------------------------------------------------------------------- */

static int kk_open(sl_op *op)
{
    const kk_plan *pl = op->plan;
    kk_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    if (pl->value.avro) st->vav = sl_avro_new(&pl->value);
    if (pl->has_key && pl->key.avro) st->kav = sl_avro_new(&pl->key);
    if (pl->guarantee == DG_EOS) {
        if (!op->checkpointing)
            return sl_op_fail(op, "kafka sink '%s': sink.delivery-guarantee 'exactly-once' "
                              "commits transactions when checkpoints complete, but this job "
                              "takes no checkpoints (set execution.checkpointing.interval)",
                              pl->vid);
        if (pl->txn_timeout_ms <= 0)
            return sl_op_fail(op, "kafka sink '%s': properties.transaction.timeout.ms must be a "
                              "positive number of milliseconds", pl->vid);
        /* the first transaction begins with the first row, after restore;
         * the topic is checked now, with a plain producer */
        kk_shared *probe = producer_new(op, NULL, op->err, sizeof op->err);
        if (!probe) return SL_ERR;
        int rc = topic_partitions(op, probe->rk, &st->npart);
        shared_unref(probe);
        return rc;
    }
    st->sh = producer_new(op, NULL, op->err, sizeof op->err);
    if (!st->sh) return SL_ERR;
    /* a missing topic or unreachable brokers fail the task now, not when
     * the first deliveries time out */
    return topic_partitions(op, st->sh->rk, &st->npart);
}

/* Fence the ids old subtask `owner` may have used after its checkpoint:
 * initialising an id aborts the open transaction of that id. */
static int abort_lingering(sl_op *op, int owner, uint64_t from)
{
    const kk_plan *pl = op->plan;
    for (uint64_t n = from; n < from + KK_ABORT_WINDOW; n++) {
        if (owner == op->subtask && n == from) continue; /* the next transaction's own init does it */
        char id[512];
        txn_id_of(pl, owner, n, id, sizeof id);
        kk_shared *sh = producer_new(op, id, op->err, sizeof op->err);
        if (!sh) return SL_ERR;
        shared_unref(sh);
    }
    return SL_OK;
}

/* Before the first row of an exactly-once sink. */
static int eos_start(sl_op *op, kk_state *st)
{
    if (!st->recovered) {
        st->recovered = true;
        if (abort_lingering(op, op->subtask, st->next_n) != SL_OK) return SL_ERR;
    }
    return txn_begin(op, st);
}

static int add_header(void *ctx, const char *name, size_t nlen, const char *val, size_t vlen)
{
    rd_kafka_resp_err_t e = rd_kafka_header_add(ctx, name, (ssize_t)nlen, val, (ssize_t)vlen);
    return e == RD_KAFKA_RESP_ERR_NO_ERROR ? SL_OK : SL_ERR;
}

static int kk_process(sl_op *op, int input, sl_row *row)
{
    const kk_plan *pl = op->plan;
    kk_state *st = op->priv;
    char why[300];
    bool tombstone = false;
    if (pl->upsert) {
        /* Flink's upsert-kafka: the key's latest value, a delete is a
         * tombstone, an update's before image says nothing new */
        if (row->kind == SL_KIND_UPDATE_BEFORE) return SL_OK;
        tombstone = row->kind == SL_KIND_DELETE;
    } else if (row->kind != SL_KIND_INSERT && pl->value.fmt != KF_DEBEZIUM) {
        return sl_op_fail(op, "kafka sink '%s': a %s row arrived, but the kafka sink takes "
                          "inserts only (the input is an updating changelog: write it with "
                          "upsert-kafka, or with value.format 'debezium-json')", pl->vid,
                          sl_rowkind_short(row->kind));
    }
    if (pl->guarantee == DG_EOS && !st->cur.sh && eos_start(op, st) != SL_OK) return SL_ERR;
    kk_shared *sh = pl->guarantee == DG_EOS ? st->cur.sh : st->sh;
    st->val.len = 0;
    st->key.len = 0;
    bool null_value = tombstone || (pl->value.fmt == KF_RAW && row->vals[pl->value.slot[0]].isnull);
    if ((!tombstone && (st->vav ? sl_avro_encode(st->vav, row, &st->val, why, sizeof why)
                                : kf_encode(&pl->value, row, &st->val, why, sizeof why)) != SL_OK) ||
        (pl->has_key && (st->kav ? sl_avro_encode(st->kav, row, &st->key, why, sizeof why)
                                 : kf_encode(&pl->key, row, &st->key, why, sizeof why)) != SL_OK))
        return sl_op_fail(op, "kafka sink '%s': %s", pl->vid, why);
    int64_t ts = row->ts == SL_TS_NONE ? 0 : row->ts;
    if (pl->ts_col >= 0) ts = row->vals[pl->ts_col].isnull ? 0 : row->vals[pl->ts_col].v.i;
    rd_kafka_headers_t *hdrs = NULL;
    if (pl->hdr_col >= 0 && !row->vals[pl->hdr_col].isnull) {
        const sl_value *hv = &row->vals[pl->hdr_col];
        hdrs = rd_kafka_headers_new(8);
        if (kf_headers_parse(hv->v.s.p, hv->v.s.len, &st->hdrstr, add_header, hdrs, why,
                             sizeof why) != SL_OK) {
            rd_kafka_headers_destroy(hdrs);
            return sl_op_fail(op, "kafka sink '%s': column '%s': %s", pl->vid,
                              op->in->fields[pl->hdr_col].name, why);
        }
    }
    int32_t partition = RD_KAFKA_PARTITION_UA;
    if (pl->partitioner == PART_FIXED) partition = op->subtask % st->npart;
    else if (pl->partitioner == PART_RR) partition = (int32_t)(st->rr++ % (uint64_t)st->npart);
    uint64_t slot = pl->guarantee == DG_EOS ? 0 : st->slot;
    for (;;) {
        atomic_fetch_add(&sh->inflight[slot % KK_SLOTS], 1);
        rd_kafka_resp_err_t e = rd_kafka_producev(
            sh->rk, RD_KAFKA_V_TOPIC(pl->topic), RD_KAFKA_V_PARTITION(partition),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_VALUE(null_value ? NULL : st->val.p, null_value ? 0 : st->val.len),
            RD_KAFKA_V_KEY(pl->has_key ? st->key.p : NULL, pl->has_key ? st->key.len : 0),
            RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_HEADERS(hdrs),
            RD_KAFKA_V_OPAQUE((void *)(uintptr_t)slot), RD_KAFKA_V_END);
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break; /* librdkafka owns hdrs now */
        atomic_fetch_sub(&sh->inflight[slot % KK_SLOTS], 1);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL && hdrs) rd_kafka_headers_destroy(hdrs);
        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            return sl_op_fail(op, "kafka sink '%s': cannot produce to topic '%s': %s", pl->vid,
                              pl->topic, rd_kafka_err2str(e));
        rd_kafka_poll(sh->rk, 10); /* backpressure: wait for deliveries */
        if (check_failed(op, sh) != SL_OK) {
            if (hdrs) rd_kafka_headers_destroy(hdrs);
            return SL_ERR;
        }
    }
    if (pl->guarantee == DG_EOS && (++st->cur.records & 4095) == 0) publish_txns(op, st);
    if (++st->since_poll >= 256) {
        st->since_poll = 0;
        rd_kafka_poll(sh->rk, 0);
        if (pl->guarantee != DG_NONE && check_failed(op, sh) != SL_OK) return SL_ERR;
        if (pl->guarantee == DG_NONE && atomic_load(&sh->failed) == 2) {
            sl_warn("kafka", "kafka sink '%s' (%d/%d): %s (sink.delivery-guarantee none)",
                    pl->vid, op->subtask + 1, op->parallelism, sh->failmsg);
            atomic_store(&sh->failed, 0);
        }
    }
    return SL_OK;
}

static int kk_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    const kk_plan *pl = op->plan;
    kk_state *st = op->priv;
    *blob = NULL;
    *len = 0;
    if (pl->guarantee == DG_NONE) return SL_OK;
    if (pl->guarantee == DG_ALO) {
        if (check_failed(op, st->sh) != SL_OK) return SL_ERR;
        kk_flush *f = sl_calloc(1, sizeof *f);
        atomic_fetch_add(&st->sh->refs, 1);
        f->sh = st->sh;
        f->upto_slot = st->slot++;
        snprintf(f->what, sizeof f->what, "kafka sink '%s' (%d/%d)", pl->vid, op->subtask + 1,
                 op->parallelism);
        return sl_op_defer(op, kk_flush_run, f);
    }
    /* exactly-once: stage the open transaction */
    if (st->cur.sh) {
        int64_t age = sl_mono_ms() - st->cur.started_ms;
        int64_t margin = SL_MIN(KK_MARGIN_MS, pl->txn_timeout_ms / 2);
        if (age + margin >= pl->txn_timeout_ms)
            return sl_op_fail(op, "kafka sink '%s': properties.transaction.timeout.ms is %lld ms, "
                              "but a transaction lasted %lld ms until its checkpoint (about the "
                              "checkpoint interval) and a margin of %lld ms is needed: the broker "
                              "would abort transactions before their checkpoint commits them; "
                              "raise transaction.timeout.ms above the checkpoint interval + %lld "
                              "ms or checkpoint more often", pl->vid,
                              (long long)pl->txn_timeout_ms, (long long)age, (long long)margin,
                              (long long)margin);
        if (check_failed(op, st->cur.sh) != SL_OK) return SL_ERR;
        st->cur.cpid = cpid;
        if (st->npend == st->cappend) {
            st->cappend = st->cappend ? st->cappend * 2 : 4;
            st->pend = sl_realloc(st->pend, (size_t)st->cappend * sizeof *st->pend);
        }
        st->pend[st->npend++] = st->cur;
        kk_flush *f = sl_calloc(1, sizeof *f);
        atomic_fetch_add(&st->cur.sh->refs, 1);
        f->sh = st->cur.sh;
        f->eos = true;
        snprintf(f->what, sizeof f->what, "kafka sink '%s' (%d/%d) transaction %llu", pl->vid,
                 op->subtask + 1, op->parallelism, (unsigned long long)st->cur.n);
        memset(&st->cur, 0, sizeof st->cur);
        publish_txns(op, st);
        if (sl_op_defer(op, kk_flush_run, f) != SL_OK) return SL_ERR;
    } else if (!st->recovered) {
        /* no row yet: fence what an earlier attempt may have left now */
        st->recovered = true;
        if (abort_lingering(op, op->subtask, st->next_n) != SL_OK) return SL_ERR;
    }
    size_t total = 1 + 4 + 4 + 8 + 4 + (size_t)st->npend * 26 + 8;
    unsigned char *b = sl_malloc(total), *p = b;
    *p++ = KK_BLOB_VERSION;
    memcpy(p, kk_magic, 4);
    p += 4;
    p = sl_put_le_n(p, (uint32_t)op->subtask, 4);
    p = sl_put_le_n(p, st->next_n, 8);
    p = sl_put_le_n(p, (uint32_t)st->npend, 4);
    for (int i = 0; i < st->npend; i++) {
        const kk_txn *t = &st->pend[i];
        p = sl_put_le_n(p, (uint64_t)t->cpid, 8);
        p = sl_put_le_n(p, t->n, 8);
        p = sl_put_le_n(p, (uint64_t)atomic_load(&t->sh->pid), 8);
        p = sl_put_le_n(p, (uint16_t)atomic_load(&t->sh->epoch), 2);
    }
    p = sl_put_le_n(p, sl_blob_fnv1a(b, (size_t)(p - b)), 8);
    SL_ASSERT((size_t)(p - b) == total);
    *blob = b;
    *len = total;
    return SL_OK;
}

static int kk_checkpoint_complete(sl_op *op, int64_t cpid)
{
    const kk_plan *pl = op->plan;
    kk_state *st = op->priv;
    if (pl->guarantee != DG_EOS) return SL_OK;
    int k = 0;
    for (; k < st->npend && st->pend[k].cpid <= cpid; k++)
        if (txn_commit(op, &st->pend[k]) != SL_OK) return SL_ERR;
    if (k > 0) {
        memmove(st->pend, st->pend + k, (size_t)(st->npend - k) * sizeof *st->pend);
        st->npend -= k;
        publish_txns(op, st);
    }
    return SL_OK;
}

static int kk_checkpoint_abort(sl_op *op, int64_t cpid)
{
    SL_UNUSED(cpid);
    SL_UNUSED(op);
    return SL_OK; /* staged transactions wait for the next completed checkpoint */
}

static int kk_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    const kk_plan *pl = op->plan;
    kk_state *st = op->priv;
    if (pl->guarantee != DG_EOS) return SL_OK;
    st->recovered = true;
    for (int k = 0; k < nblobs; k++) {
        const unsigned char *b = blobs[k], *p;
        size_t len = lens[k];
        if (len < 1 + 4 + 4 + 8 + 4 + 8 || memcmp(b + 1, kk_magic, 4) || b[0] != KK_BLOB_VERSION)
            return sl_op_fail(op, "kafka sink '%s' subtask %d: cannot restore state %d of %d: not "
                              "kafka sink state of version %d", pl->vid, op->subtask, k + 1,
                              nblobs, KK_BLOB_VERSION);
        p = b + len - 8;
        if (sl_get_le_n(&p, 8) != sl_blob_fnv1a(b, len - 8))
            return sl_op_fail(op, "kafka sink '%s' subtask %d: cannot restore state %d of %d: "
                              "damaged (checksum)", pl->vid, op->subtask, k + 1, nblobs);
        p = b + 5;
        int owner = (int)sl_get_le_n(&p, 4);
        uint64_t next = sl_get_le_n(&p, 8);
        uint64_t np = sl_get_le_n(&p, 4);
        if (np * 26 != len - (1 + 4 + 4 + 8 + 4 + 8))
            return sl_op_fail(op, "kafka sink '%s' subtask %d: cannot restore state %d of %d: "
                              "damaged (length)", pl->vid, op->subtask, k + 1, nblobs);
        /* recover and commit: these transactions' checkpoint completed */
        for (uint64_t i = 0; i < np; i++) {
            int64_t c = (int64_t)sl_get_le_n(&p, 8);
            uint64_t n = sl_get_le_n(&p, 8);
            int64_t pid = (int64_t)sl_get_le_n(&p, 8);
            int16_t epoch = (int16_t)sl_get_le_n(&p, 2);
            char id[512], why[512];
            txn_id_of(pl, owner, n, id, sizeof id);
            if (pid < 0)
                return sl_op_fail(op, "kafka sink '%s': cannot recover transaction '%s' of "
                                  "checkpoint %lld: its producer id was not recorded", pl->vid, id,
                                  (long long)c);
            int rc = kf_txn_end(kf_prop(op->vertex, "bootstrap.servers", ""), id, pid, epoch, 1,
                                KK_TXN_TIMEOUT_MS, why, sizeof why);
            if (rc != SL_OK)
                return sl_op_fail(op, "kafka sink '%s': cannot recover transaction '%s' (producer "
                                  "%lld epoch %d) of checkpoint %lld: %s", pl->vid, id,
                                  (long long)pid, epoch, (long long)c, why);
            sl_info("kafka", "kafka sink '%s' (%d/%d): transaction '%s' of checkpoint %lld "
                    "committed on restore", pl->vid, op->subtask + 1, op->parallelism, id,
                    (long long)c);
        }
        if (abort_lingering(op, owner, next) != SL_OK) return SL_ERR;
        if (owner == op->subtask) st->next_n = SL_MAX(st->next_n, next);
    }
    return SL_OK;
}

static int kk_end_input(sl_op *op, int input)
{
    const kk_plan *pl = op->plan;
    kk_state *st = op->priv;
    if (pl->guarantee == DG_EOS) {
        /* with checkpoints, the final checkpoint stages the open transaction
         * and its completion commits it (committing here would duplicate
         * rows if the job failed over before that checkpoint) */
        if (op->final_checkpoint) return SL_OK;
        /* a restored job without checkpoints: commit everything now */
        for (int k = 0; k < st->npend; k++) {
            rd_kafka_flush(st->pend[k].sh->rk, KK_TXN_TIMEOUT_MS);
            if (txn_commit(op, &st->pend[k]) != SL_OK) return SL_ERR;
        }
        st->npend = 0;
        if (st->cur.sh) {
            if (txn_commit(op, &st->cur) != SL_OK) return SL_ERR;
            memset(&st->cur, 0, sizeof st->cur);
        }
        publish_txns(op, st);
        return SL_OK;
    }
    rd_kafka_resp_err_t e = rd_kafka_flush(st->sh->rk, KK_TXN_TIMEOUT_MS);
    if (e)
        return sl_op_fail(op, "kafka sink '%s': flushing at the end of input: %s", pl->vid,
                          rd_kafka_err2str(e));
    if (pl->guarantee != DG_NONE) return check_failed(op, st->sh);
    return SL_OK;
}

static void kk_close(sl_op *op)
{
    kk_state *st = op->priv;
    if (!st) return;
    /* open or staged transactions are left to the broker's timeout or to the
     * next attempt's fencing; a producer a deferred flush still holds lives
     * until that flush ends */
    for (int k = 0; k < st->npend; k++) shared_unref(st->pend[k].sh);
    free(st->pend);
    shared_unref(st->cur.sh);
    shared_unref(st->sh);
    sl_buf_free(&st->val);
    sl_buf_free(&st->key);
    sl_buf_free(&st->hdrstr);
    sl_avro_destroy(st->kav);
    sl_avro_destroy(st->vav);
    free(st);
    op->priv = NULL;
}

/* the topic, the client and the delivery guarantee, both kafka sinks */
#define KK_HEAD_OPTIONS \
    {"topic", SL_CT_STRING, NULL, NULL, \
     "Topic name (a list separated by ';' on sources)."}, \
    {"properties.*", SL_CT_STRING, NULL, NULL, \
     "librdkafka properties (properties.bootstrap.servers is required)."}, \
    {"sink.delivery-guarantee", SL_CT_STRING, NULL, NULL, \
     "none, at-least-once or exactly-once."}, \
    {"sink.transactional-id-prefix", SL_CT_STRING, NULL, NULL, \
     "Prefix of the transactional ids (exactly-once)."}, \
    {"sink.partitioner", SL_CT_STRING, NULL, NULL, \
     "default, fixed or round-robin."},

/* the value's columns, parallelism and metadata, both kafka sinks */
#define KK_TAIL_OPTIONS \
    {"value.fields-include", SL_CT_STRING, NULL, NULL, \
     "ALL or EXCEPT_KEY: whether key columns are also in the value."}, \
    {"sink.parallelism", SL_CT_STRING, NULL, NULL, \
     "Parallelism of the sink."}, \
    {"metadata.timestamp", SL_CT_STRING, NULL, NULL, \
     "Column written as the record's timestamp."}, \
    {"metadata.headers", SL_CT_STRING, NULL, NULL, \
     "Column written as the record's headers."},

static const sl_op_option kk_options[] = {
    KK_HEAD_OPTIONS
    {"format", SL_CT_STRING, NULL, NULL,
     "Row format: csv or json."},
    KF_JSON_OPTIONS,
    {"value.format", SL_CT_STRING, NULL, NULL,
     "Format of the record value: csv, json or raw."},
    {"key.format", SL_CT_STRING, NULL, NULL,
     "Format of the record key."},
    {"key.fields", SL_CT_JSON, NULL, NULL,
     "Columns (';'-separated) that make up the record key."},
    KK_TAIL_OPTIONS
    SL_AVRO_OPTIONS
    SL_OP_OPTIONS_END,
};

static const sl_op_option kk_upsert_options[] = {
    KK_HEAD_OPTIONS
    {"value.format", SL_CT_STRING, NULL, NULL,
     "Format of the record value: csv, json or raw."},
    {"key.format", SL_CT_STRING, NULL, NULL,
     "Format of the record key."},
    {"primary-key", SL_CT_JSON, NULL, NULL,
     "Primary key columns (';'-separated)."},
    KK_TAIL_OPTIONS
    SL_AVRO_OPTIONS
    SL_OP_OPTIONS_END,
};

static int kk_check_job(const sl_vertex *v, const void *plan, const sl_job_check *jc, char *err,
                        size_t errlen);

const sl_op_def sl_op_kafka_sink = {
    .abi = SL_OP_ABI_VERSION,
    .name = "kafka-sink",
    .flags = SL_OPF_SINK,
    .options = kk_options,
    .plan = kk_plan_new,
    .plan_free = kk_plan_free,
    .check_job = kk_check_job,
    .open = kk_open,
    .process = kk_process,
    .end_input = kk_end_input,
    .close = kk_close,
    .snapshot_state = kk_snapshot,
    .restore_state = kk_restore,
    .checkpoint_complete = kk_checkpoint_complete,
    .checkpoint_abort = kk_checkpoint_abort,
};

extern const sl_op_def sl_op_upsert_kafka_sink;

/* check_job: an exactly-once sink's transactions must outlive the job's
 * checkpoint interval plus the margin, or the broker aborts them before
 * their checkpoints commit them. */
static int kk_check_job(const sl_vertex *v, const void *plan, const sl_job_check *jc, char *err,
                        size_t errlen)
{
    const kk_plan *pl = plan;
    int64_t interval_ms = jc->checkpoint_interval_ms;
    if (!pl || pl->guarantee != DG_EOS || interval_ms <= 0 || pl->txn_timeout_ms <= 0) return SL_OK;
    int64_t margin = SL_MIN(KK_MARGIN_MS, pl->txn_timeout_ms / 2);
    if (interval_ms + margin < pl->txn_timeout_ms) return SL_OK;
    return sl_seterr(err, errlen, "kafka sink '%s': properties.transaction.timeout.ms is %lld ms, "
                     "but execution.checkpointing.interval is %lld ms and a margin of %lld ms is "
                     "needed: the broker would abort transactions before their checkpoint "
                     "commits them; raise transaction.timeout.ms above %lld ms or checkpoint "
                     "more often", pl->vid, (long long)pl->txn_timeout_ms,
                     (long long)interval_ms, (long long)margin,
                     (long long)(interval_ms + margin));
}

/* upsert-kafka: the same sink, keyed by the primary key, writing the latest
 * value of each key and a tombstone for a delete. */
const sl_op_def sl_op_upsert_kafka_sink = {
    .abi = SL_OP_ABI_VERSION,
    .name = "upsert-kafka-sink",
    .flags = SL_OPF_SINK,
    .options = kk_upsert_options,
    .plan = kk_plan_upsert,
    .plan_free = kk_plan_free,
    .check_job = kk_check_job,
    .open = kk_open,
    .process = kk_process,
    .end_input = kk_end_input,
    .close = kk_close,
    .snapshot_state = kk_snapshot,
    .restore_state = kk_restore,
    .checkpoint_complete = kk_checkpoint_complete,
    .checkpoint_abort = kk_checkpoint_abort,
};
