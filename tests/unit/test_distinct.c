/*
 * test_distinct.c -- DISTINCT aggregates and FILTER (WHERE ...) in the
 * group_aggregate and window operators (operators/agg.c keeps the
 * accumulators, each operator the value sets), and MIN/MAX of STRING in
 * group_aggregate (which keeps the strings, and their multisets over
 * retracting input, in its own state).
 *
 * Seeded random streams go through each operator on both state backends;
 * the test applies the emitted changelog to a table and compares it with
 * the aggregates it computes itself from the live input rows (GROUP BY,
 * with retractions of earlier rows) or from all rows of each window
 * (TUMBLE and HOP, insert-only as window input is). Every -U/-D must
 * retract the row the table holds for its key.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobgraph.h"
#include "bytes.h"
#include "keygroup.h"
#include "operator.h"
#include "runtime.h"
#include "sl_test.h"

extern const sl_op_def sl_op_group_aggregate;
extern const sl_op_def sl_op_window;

#define ROWLEN 200
#define NKEYS 5

typedef struct outlog {
    const sl_schema *schema;
    int n, cap;
    char (*rows)[ROWLEN];
} outlog;

static int record(void *ctx, int output, sl_row *row)
{
    static const char *const kinds[] = {"+I", "-U", "+U", "-D"};
    outlog *l = ctx;
    if (output != 0) return SL_OK;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->rows = realloc(l->rows, (size_t)l->cap * ROWLEN);
        if (!l->rows) abort();
    }
    size_t o = (size_t)snprintf(l->rows[l->n], ROWLEN, "%s[", kinds[row->kind]);
    for (int i = 0; i < row->n; i++) {
        const sl_value *v = &row->vals[i];
        if (v->isnull) o += (size_t)snprintf(l->rows[l->n] + o, ROWLEN - o, "%snull", i ? ", " : "");
        else if (l->schema->fields[i].type == SL_T_STRING)
            o += (size_t)snprintf(l->rows[l->n] + o, ROWLEN - o, "%s'%.*s'", i ? ", " : "",
                                  (int)v->v.s.len, v->v.s.p);
        else o += (size_t)snprintf(l->rows[l->n] + o, ROWLEN - o, "%s%lld", i ? ", " : "",
                                   (long long)v->v.i);
    }
    snprintf(l->rows[l->n] + o, ROWLEN - o, "]");
    l->n++;
    return SL_OK;
}

typedef struct harness {
    sl_vertex v;
    sl_schema in, out;
    const sl_op_def *def;
    void *plan;
    sl_op op;
    sl_kstate *ks;
    char dir[64];
    outlog log;
    char err[512];
} harness;

/* Input: k BIGINT, v INT, s STRING, f BOOLEAN, ts TIMESTAMP, g BOOLEAN,
 * h BOOLEAN. */
enum { C_K, C_V, C_S, C_F, C_TS, C_G, C_H, NCOLS };

#define MAXKG 128

/* Subtask `subtask` of `par` (key groups as the runtime deals them). */
static int setup_sub(harness *h, const sl_op_def *def, const char *config, sl_backend_kind kind,
                     int subtask, int par)
{
    memset(h, 0, sizeof *h);
    h->def = def;
    h->v.id = (char *)"a";
    h->v.type = (char *)def->name;
    h->v.config = json_loads(config, 0, NULL);
    if (!h->v.config) abort();
    sl_schema_init(&h->in);
    sl_schema_add(&h->in, "k", SL_T_BIGINT);
    sl_schema_add(&h->in, "v", SL_T_INT);
    sl_schema_add(&h->in, "s", SL_T_STRING);
    sl_schema_add(&h->in, "f", SL_T_BOOLEAN);
    sl_schema_add(&h->in, "ts", SL_T_TIMESTAMP);
    sl_schema_add(&h->in, "g", SL_T_BOOLEAN);
    sl_schema_add(&h->in, "h", SL_T_BOOLEAN);
    h->v.parallelism = par;
    h->plan = sl_test_plan(def, &h->v, &h->in, &h->out, h->err, sizeof h->err);
    if (!h->plan) {
        fprintf(stderr, "plan: %s\n", h->err);
        return SL_ERR;
    }
    if (kind == SL_BACKEND_ROCKSDB) {
        snprintf(h->dir, sizeof h->dir, "/tmp/sl_test_distinct_XXXXXX");
        if (!mkdtemp(h->dir)) abort();
    }
    int kg_first, kg_last;
    sl_kg_range(subtask, par, MAXKG, &kg_first, &kg_last);
    h->ks = sl_kstate_open(kind, h->dir, MAXKG, kg_first, kg_last, h->err, sizeof h->err);
    if (!h->ks) return SL_ERR;
    sl_op *op = &h->op;
    sl_rt_init(op, &h->v, subtask, MAXKG);
    op->plan = h->plan;
    op->kstate = h->ks;
    op->event_timers = sl_timers_new();
    op->proc_timers = sl_timers_new();
    op->emit = record;
    op->emit_ctx = &h->log;
    op->out_connected[0] = 1;
    op->task_name = "a (1/1)";
    h->log.schema = &h->out;
    return def->open(op);
}

static int setup(harness *h, const sl_op_def *def, const char *config, sl_backend_kind kind)
{
    return setup_sub(h, def, config, kind, 0, 1);
}

static void teardown(harness *h)
{
    h->op.kstate = NULL;
    sl_rt_close(&h->op);
    if (h->ks) sl_kstate_close(h->ks);
    if (h->dir[0]) rmdir(h->dir);
    if (h->plan) h->def->plan_free(h->plan);
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->in);
    sl_schema_free(&h->out);
    json_decref(h->v.config);
    free(h->log.rows);
}

typedef struct mrow {
    int64_t k, v, ts;
    bool vnull, f, fnull, snull, g, gnull, hf, hnull;
    char s[8];
    bool live;
} mrow;

static int feed(harness *h, sl_rowkind kind, const mrow *m)
{
    sl_value vals[NCOLS] = {
        {.v.i = m->k}, {.isnull = m->vnull, .v.i = m->v},
        {.isnull = m->snull, .v.s = {m->s, (uint32_t)strlen(m->s)}},
        {.isnull = m->fnull, .v.i = m->f}, {.v.i = m->ts}, {.isnull = m->gnull, .v.i = m->g},
        {.isnull = m->hnull, .v.i = m->hf}};
    sl_row r = {kind, NCOLS, vals, m->ts};
    return sl_rt_process(&h->op, 0, &r);
}

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

static void random_row(mrow *m)
{
    memset(m, 0, sizeof *m);
    m->k = rnd(NKEYS);
    m->vnull = rnd(8) == 0;
    m->v = (int64_t)rnd(9) - 3;
    m->fnull = rnd(6) == 0;
    m->f = rnd(2);
    snprintf(m->s, sizeof m->s, "%c", 'a' + (int)rnd(5));
    m->live = true;
}

#define AGGS "[\"COUNT(DISTINCT v) AS dv\", \"SUM(DISTINCT v) AS sv\", \"COUNT(DISTINCT s) AS ds\"," \
             " \"COUNT(*) FILTER (WHERE f) AS nf\", \"SUM(v) FILTER (WHERE f) AS svf\"," \
             " \"COUNT(DISTINCT v) FILTER (WHERE f) AS dvf\", \"AVG(DISTINCT v) AS av\"," \
             " \"COUNT(*) AS n\"]"

/* The expected aggregates over rows[0..n) that match pred into buf (the
 * same order as AGGS), after `prefix`. */
static void expect(const mrow *const *rows, int n, const char *prefix, char *buf, size_t cap)
{
    bool seen_v[9] = {0}, seen_s[5] = {0}, seen_vf[9] = {0};
    int64_t dv = 0, sv = 0, ds = 0, nf = 0, svf = 0, nsvf = 0, dvf = 0;
    for (int i = 0; i < n; i++) {
        const mrow *m = rows[i];
        bool f = !m->fnull && m->f;
        if (!m->vnull && !seen_v[m->v + 3]) seen_v[m->v + 3] = true, dv++, sv += m->v;
        if (!seen_s[m->s[0] - 'a']) seen_s[m->s[0] - 'a'] = true, ds++;
        if (f) nf++;
        if (f && !m->vnull) svf += m->v, nsvf++;
        if (f && !m->vnull && !seen_vf[m->v + 3]) seen_vf[m->v + 3] = true, dvf++;
    }
    char svs[24], svfs[24], avs[24];
    snprintf(svs, sizeof svs, dv ? "%lld" : "null", (long long)sv);
    snprintf(svfs, sizeof svfs, nsvf ? "%lld" : "null", (long long)svf);
    snprintf(avs, sizeof avs, dv ? "%lld" : "null", dv ? (long long)(sv / dv) : 0LL);
    snprintf(buf, cap, "[%s%lld, %s, %lld, %lld, %s, %lld, %s, %d]", prefix, (long long)dv, svs,
             (long long)ds, (long long)nf, svfs, (long long)dvf, avs, n);
}

/* ---- GROUP BY --------------------------------------------------------------- */

#define MAXR 3000

/* 1500 random steps into a GROUP BY harness: a new row from gen (+I, at
 * times +U), or with retracting input now and then the retraction (-U or
 * -D) of an earlier live row. The rows go to rows[0 .. *n). */
static bool drive_group(harness *h, mrow *rows, int *n, bool retracting, void (*gen)(mrow *))
{
    bool good = true;
    for (int step = 0; good && step < 1500; step++) {
        if (retracting && *n > 0 && rnd(3) == 0) {
            int i = (int)rnd((uint32_t)*n);
            if (!rows[i].live) continue;
            rows[i].live = false;
            good = feed(h, rnd(2) ? SL_KIND_UPDATE_BEFORE : SL_KIND_DELETE, &rows[i]) == SL_OK;
        } else {
            gen(&rows[*n]);
            good = feed(h, rnd(5) ? SL_KIND_INSERT : SL_KIND_UPDATE_AFTER, &rows[*n]) == SL_OK;
            (*n)++;
        }
        if (!good) fprintf(stderr, "process: %s\n", h->op.err);
    }
    return good;
}

/* The harness's changelog applied to table (one row per key, "" = none):
 * false when a -U/-D does not retract the row the table holds. */
static bool apply_outlog(const outlog *l, char table[NKEYS][ROWLEN])
{
    memset(table, 0, NKEYS * ROWLEN);
    for (int i = 0; i < l->n; i++) {
        const char *r = l->rows[i];
        int key = atoi(r + 3);
        if (key < 0 || key >= NKEYS) return false;
        if (r[0] == '+') snprintf(table[key], ROWLEN, "%s", r + 2);
        else if (strcmp(table[key], r + 2)) {
            fprintf(stderr, "retraction %s of a row the table does not hold (%s)\n", r, table[key]);
            return false;
        } else table[key][0] = '\0';
    }
    return true;
}

static bool key_is(char table[NKEYS][ROWLEN], int key, const char *want)
{
    if (!strcmp(table[key], want)) return true;
    fprintf(stderr, "key %d: got %s, want %s\n", key, table[key], want);
    return false;
}

static bool apply_log(const harness *h, char table[NKEYS][ROWLEN])
{
    return apply_outlog(&h->log, table);
}

/* Every key's state went with its last row (value sets and strings too). */
static bool state_follows_rows(const harness *h, const mrow *rows, int n)
{
    int live = 0;
    for (int i = 0; i < n; i++) live += rows[i].live;
    return live > 0 || sl_kstate_entries(h->ks) == 0;
}

static void run_group(sl_backend_kind kind, uint64_t seed, bool *ok)
{
    static harness h;
    static mrow rows[MAXR];
    static char table[NKEYS][ROWLEN];
    *ok = false;
    if (setup(&h, &sl_op_group_aggregate, "{\"group-by\": [\"k\"], \"input-changelog\": "
              "\"retract\", \"aggregates\": " AGGS "}", kind) != SL_OK) {
        fprintf(stderr, "setup: %s %s\n", h.err, h.op.err);
        return;
    }
    rng = seed;
    int n = 0;
    bool good = drive_group(&h, rows, &n, true, random_row) && apply_log(&h, table);
    for (int key = 0; good && key < NKEYS; key++) {
        const mrow *sel[MAXR];
        int ns = 0;
        for (int i = 0; i < n; i++)
            if (rows[i].live && rows[i].k == key) sel[ns++] = &rows[i];
        char want[ROWLEN] = "", prefix[32];
        snprintf(prefix, sizeof prefix, "%d, ", key);
        if (ns) expect(sel, ns, prefix, want, sizeof want);
        good = key_is(table, key, want);
    }
    good = good && state_follows_rows(&h, rows, n);
    teardown(&h);
    *ok = good;
}

static void test_group_distinct_filter_model(void)
{
    for (int b = 0; b < 2; b++)
        for (uint64_t seed = 11; seed <= 13; seed++) {
            bool ok;
            run_group(b ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP, seed * 2654435761u, &ok);
            CHECK(ok);
        }
}

/* A key whose rows are all retracted leaves no value sets behind. */
static void test_group_distinct_state_cleared(void)
{
    for (int b = 0; b < 2; b++) {
        static harness h;
        CHECK_EQ_INT(setup(&h, &sl_op_group_aggregate, "{\"group-by\": [\"k\"], \"aggregates\": "
                           "[\"COUNT(DISTINCT s) AS ds\", \"SUM(DISTINCT v)\"]}",
                           b ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP), SL_OK);
        mrow a = {.k = 1, .v = 4, .s = "x"}, c = {.k = 1, .v = 4, .s = "y"};
        CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, &a), SL_OK);
        CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, &c), SL_OK);
        CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, &a), SL_OK);
        CHECK_EQ_INT(feed(&h, SL_KIND_DELETE, &c), SL_OK);
        CHECK_EQ_INT(feed(&h, SL_KIND_DELETE, &a), SL_OK);
        CHECK_EQ_INT(feed(&h, SL_KIND_DELETE, &a), SL_OK);
        /* the third row (a again) changes nothing; deleting c: back to 1 value; the
         * first a going changes nothing; the last one deletes the key */
        CHECK_EQ_INT(h.log.n, 6);
        CHECK_EQ_STR(h.log.rows[0], "+I[1, 1, 4]");
        CHECK_EQ_STR(h.log.rows[1], "-U[1, 1, 4]");
        CHECK_EQ_STR(h.log.rows[2], "+U[1, 2, 4]");
        CHECK_EQ_STR(h.log.rows[3], "-U[1, 2, 4]");
        CHECK_EQ_STR(h.log.rows[4], "+U[1, 1, 4]");
        CHECK_EQ_STR(h.log.rows[5], "-D[1, 1, 4]");
        CHECK_EQ_INT((int)sl_kstate_entries(h.ks), 0);
        teardown(&h);
    }
}

/* ---- calls sharing a column's value sets (GROUP BY) -------------------------- */

/* Several DISTINCT calls per column with different FILTERs: they share one
 * state entry per value, with a count per call, so a mix-up of calls shows
 * as a wrong value in one of these columns. The groups: v -> calls 0, 1, 3,
 * 4, 7; s -> calls 2, 6 (in list order, as the operator numbers them). */
#define SAGGS "[\"COUNT(DISTINCT v) AS a0\", \"COUNT(DISTINCT v) FILTER (WHERE f) AS a1\"," \
              " \"COUNT(DISTINCT s) FILTER (WHERE g) AS a2\"," \
              " \"SUM(DISTINCT v) FILTER (WHERE g) AS a3\"," \
              " \"COUNT(DISTINCT v) FILTER (WHERE h) AS a4\", \"COUNT(*) AS n\"," \
              " \"COUNT(DISTINCT s) AS a6\", \"COUNT(DISTINCT v) FILTER (WHERE g) AS a7\"]"
#define SCONF "{\"group-by\": [\"k\"], \"input-changelog\": \"retract\", \"aggregates\": " SAGGS "}"

static void random_row_gh(mrow *m)
{
    random_row(m);
    m->gnull = rnd(7) == 0;
    m->g = rnd(3) == 0;
    m->hnull = rnd(9) == 0;
    m->hf = rnd(4) != 0;
}

/* SAGGS over rows[0..n) (all of one key), after `prefix`. */
static void expect_shared(const mrow *const *rows, int n, const char *prefix, char *buf,
                          size_t cap)
{
    bool seen[6][9] = {{0}}; /* per distinct call in SAGGS order: v + 3, or s - 'a' */
    int64_t c[6] = {0}, sum3 = 0;
    for (int i = 0; i < n; i++) {
        const mrow *m = rows[i];
        bool f = !m->fnull && m->f, g = !m->gnull && m->g, hh = !m->hnull && m->hf;
        bool pass[6] = {!m->vnull, !m->vnull && f, g, !m->vnull && g, !m->vnull && hh, true};
        int idx[6] = {(int)m->v + 3, (int)m->v + 3, m->s[0] - 'a', (int)m->v + 3, (int)m->v + 3,
                      m->s[0] - 'a'};
        for (int j = 0; j < 6; j++)
            if (pass[j] && !seen[j][idx[j]]) {
                seen[j][idx[j]] = true;
                c[j]++;
                if (j == 3) sum3 += m->v;
            }
    }
    char s3[24];
    snprintf(s3, sizeof s3, c[3] ? "%lld" : "null", (long long)sum3);
    /* a7 is a3's set counted */
    snprintf(buf, cap, "[%s%lld, %lld, %lld, %s, %lld, %d, %lld, %lld]", prefix, (long long)c[0],
             (long long)c[1], (long long)c[2], s3, (long long)c[4], n, (long long)c[5],
             (long long)c[3]);
}

/* The subtask of the `par` in hs owning m's key. */
static harness *owner(harness *hs, int par, const mrow *m)
{
    sl_value kv = {.v.i = m->k};
    sl_row r = {SL_KIND_INSERT, 1, &kv, 0};
    sl_schema ks;
    sl_schema_init(&ks);
    sl_schema_add(&ks, "k", SL_T_BIGINT);
    int k0 = 0;
    uint8_t key[64];
    size_t n = sl_row_key_encode(&r, &ks, &k0, 1, key, sizeof key);
    sl_schema_free(&ks);
    return &hs[sl_kg_operator_index(sl_kg_of_key(key, n, MAXKG), par, MAXKG)];
}

/* `steps` random steps (new rows, retractions of live ones) over `par`
 * subtasks hs. */
static bool drive_sub(harness *hs, int par, mrow *rows, int *n, int steps)
{
    for (int step = 0; step < steps; step++) {
        mrow *m;
        sl_rowkind kind;
        if (*n > 0 && rnd(3) == 0) {
            m = &rows[rnd((uint32_t)*n)];
            if (!m->live) continue;
            m->live = false;
            kind = rnd(2) ? SL_KIND_UPDATE_BEFORE : SL_KIND_DELETE;
        } else {
            m = &rows[(*n)++];
            random_row_gh(m);
            kind = rnd(5) ? SL_KIND_INSERT : SL_KIND_UPDATE_AFTER;
        }
        harness *h = owner(hs, par, m);
        if (feed(h, kind, m) != SL_OK) {
            fprintf(stderr, "process: %s\n", h->op.err);
            return false;
        }
    }
    return true;
}

/* The changelog in log against the model of the live rows. */
static bool check_shared(const outlog *log, const mrow *rows, int n)
{
    static char table[NKEYS][ROWLEN];
    bool good = apply_outlog(log, table);
    for (int key = 0; good && key < NKEYS; key++) {
        static const mrow *sel[MAXR];
        int ns = 0;
        for (int i = 0; i < n; i++)
            if (rows[i].live && rows[i].k == key) sel[ns++] = &rows[i];
        char want[ROWLEN] = "", prefix[32];
        snprintf(prefix, sizeof prefix, "%d, ", key);
        if (ns) expect_shared(sel, ns, prefix, want, sizeof want);
        good = key_is(table, key, want);
    }
    return good;
}

static void test_group_distinct_shared_calls_model(void)
{
    for (int b = 0; b < 2; b++)
        for (uint64_t seed = 21; seed <= 23; seed++) {
            static harness h;
            static mrow rows[MAXR];
            CHECK_EQ_INT(setup(&h, &sl_op_group_aggregate, SCONF,
                               b ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP), SL_OK);
            rng = seed * 2654435761u;
            int n = 0;
            CHECK(drive_sub(&h, 1, rows, &n, 1500));
            CHECK(check_shared(&h.log, rows, n));
            CHECK(state_follows_rows(&h, rows, n));
            teardown(&h);
        }
}

/* Moving a checkpoint of `from` into the subtasks `to` by key group. With
 * `legacy` each "distinct-calls" entry is written as the layout before it
 * had them: one "distinct" entry per call and value (namespace = aggregate
 * index + value bytes, value = i64 copies), as an old snapshot holds. */
typedef struct redeal_ctx {
    harness *to;
    int par;
    bool legacy;
    int sid_new, sid_old;
    int failed;
} redeal_ctx;

static int redeal_entry(void *ctx, const sl_kentry *e)
{
    static const int calls[2][5] = {{0, 1, 3, 4, 7}, {2, 6}};
    redeal_ctx *m = ctx;
    sl_kstate *ks = m->to[sl_kg_operator_index(e->kg, m->par, MAXKG)].ks;
    char err[256];
    if (!m->legacy || e->sid != m->sid_new) {
        if (sl_kstate_restore(ks, e, err, sizeof err) == SL_OK) return 0;
        fprintf(stderr, "restore: %s\n", err);
        m->failed = 1;
        return 1;
    }
    const uint8_t *ns = e->ns;
    uint8_t ons[64];
    if (e->nslen > sizeof ons || ns[0] > 1 || e->vlen != (ns[0] ? 16u : 40u)) {
        m->failed = 1;
        return 1;
    }
    memcpy(ons + 1, ns + 1, e->nslen - 1);
    for (size_t j = 0; j < e->vlen / 8; j++) {
        const uint8_t *c = (const uint8_t *)e->val + 8 * j;
        if (!sl_get_lei64(c)) continue;
        ons[0] = (uint8_t)calls[ns[0]][j];
        sl_kentry o = *e;
        o.sid = m->sid_old;
        o.ns = ons;
        o.val = c;
        o.vlen = 8;
        if (sl_kstate_restore(ks, &o, err, sizeof err) != SL_OK) {
            fprintf(stderr, "restore: %s\n", err);
            m->failed = 1;
            return 1;
        }
    }
    return 0;
}

/* Rows into one subtask; a checkpoint restored into two (new layout, or
 * written as the old one and migrated at restore); more rows, retractions
 * of rows from before the checkpoint among them. One changelog across both
 * runs must match the model. */
static void test_group_distinct_shared_restore_rescale(void)
{
    for (int b = 0; b < 2; b++)
        for (int legacy = 0; legacy < 2; legacy++) {
            sl_backend_kind kind = b ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP;
            static harness one, two[2];
            static mrow rows[MAXR];
            outlog log = {0};
            char err[256];
            CHECK_EQ_INT(setup(&one, &sl_op_group_aggregate, SCONF, kind), SL_OK);
            one.op.emit_ctx = &log;
            log.schema = &one.out;
            rng = (uint64_t)(31 + b * 2 + legacy) * 2654435761u;
            int n = 0;
            CHECK(drive_sub(&one, 1, rows, &n, 800));
            uint64_t entries = sl_kstate_entries(one.ks);
            for (int i = 0; i < 2; i++) {
                CHECK_EQ_INT(setup_sub(&two[i], &sl_op_group_aggregate, SCONF, kind, i, 2), SL_OK);
                two[i].op.emit_ctx = &log;
            }
            redeal_ctx m = {two, 2, legacy, sl_kstate_register(one.ks, "distinct-calls"),
                            sl_kstate_register(one.ks, "distinct"), 0};
            sl_ksnap *snap = sl_kstate_snapshot(one.ks, err, sizeof err);
            CHECK(snap != NULL);
            for (int kg = 0; snap && kg < MAXKG && !m.failed; kg++)
                if (sl_ksnap_each(snap, kg, redeal_entry, &m, err, sizeof err) != SL_OK)
                    m.failed = 1;
            if (snap) sl_ksnap_release(snap);
            CHECK(!m.failed);
            teardown(&one);
            log.schema = &two[0].out;
            for (int i = 0; i < 2; i++) {
                sl_op *op = &two[i].op;
                int rc = sl_op_group_aggregate.restore_state(op, NULL, NULL, 0);
                if (rc != SL_OK) fprintf(stderr, "restore_state: %s\n", op->err);
                CHECK_EQ_INT(rc, SL_OK);
            }
            /* migrated or not, the same entries as before the checkpoint */
            CHECK_EQ_INT((int)(sl_kstate_entries(two[0].ks) + sl_kstate_entries(two[1].ks)),
                         (int)entries);
            CHECK(drive_sub(two, 2, rows, &n, 700));
            CHECK(check_shared(&log, rows, n));
            for (int i = 0; i < 2; i++) teardown(&two[i]);
            free(log.rows);
        }
}

/* An old-layout entry for an aggregate that is not DISTINCT in the job
 * restoring it fails the restore with a message instead of being misread. */
static void test_group_distinct_old_layout_mismatch(void)
{
    for (int b = 0; b < 2; b++) {
        static harness h;
        char err[256];
        CHECK_EQ_INT(setup(&h, &sl_op_group_aggregate, SCONF,
                           b ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP), SL_OK);
        uint8_t ns[9] = {5}, val[8] = {1}; /* call 5 is COUNT(*) */
        sl_kentry e = {.sid = sl_kstate_register(h.ks, "distinct"), .kg = 0, .key = "k",
                       .klen = 1, .ns = ns, .nslen = sizeof ns, .val = val, .vlen = sizeof val};
        CHECK_EQ_INT(sl_kstate_restore(h.ks, &e, err, sizeof err), SL_OK);
        CHECK_EQ_INT(sl_op_group_aggregate.restore_state(&h.op, NULL, NULL, 0), SL_ERR);
        CHECK(strstr(h.op.err, "aggregate 6, which is not a DISTINCT aggregate") != NULL);
        teardown(&h);
    }
}

/* ---- MIN/MAX of STRING (GROUP BY) ---------------------------------------------- */

/* Strings of 0-3 letters from a-f and a two-byte UTF-8 letter, so that
 * prefixes, lengths and bytes above 0x7f all decide orders, and values are
 * many (an extremum is often a single row, whose retraction needs the
 * successor); NULL at times. */
static void random_str_row(mrow *m)
{
    static const char *const pieces[] = {"a", "b", "c", "d", "e", "f", "\xc3\xa9"};
    random_row(m);
    m->s[0] = '\0';
    for (uint32_t n = rnd(4), i = 0; i < n; i++) strcat(m->s, pieces[rnd(7)]); /* <= 6 bytes */
    m->snull = rnd(7) == 0;
}

/* Flink's string order from its definition: unsigned bytes, then length. */
static int model_cmp(const char *a, const char *b)
{
    for (size_t i = 0;; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (!x || !y) return x ? 1 : y ? -1 : 0;
        if (x != y) return x < y ? -1 : 1;
    }
}

#define STR_AGGS "[\"MIN(s) AS lo\", \"MAX(s) AS hi\", \"MAX(s) FILTER (WHERE f) AS hf\", " \
                 "\"COUNT(*) AS n\", \"MIN(v) AS vlo\"]"

static void run_group_str(sl_backend_kind kind, uint64_t seed, bool retracting, bool *ok)
{
    static harness h;
    static mrow rows[MAXR];
    static char table[NKEYS][ROWLEN];
    *ok = false;
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"group-by\": [\"k\"], \"input-changelog\": \"%s\", "
             "\"aggregates\": " STR_AGGS "}", retracting ? "retract" : "insert-only");
    if (setup(&h, &sl_op_group_aggregate, cfg, kind) != SL_OK) {
        fprintf(stderr, "setup: %s %s\n", h.err, h.op.err);
        return;
    }
    rng = seed;
    int n = 0;
    bool good = drive_group(&h, rows, &n, retracting, random_str_row);
    /* then most rows leave, in random order, so that extrema leave often and
     * their successors must be found in what is left */
    for (int i = 0; good && retracting && i < n; i++) {
        int j = (int)rnd((uint32_t)n);
        if (!rows[j].live || rnd(10) == 0) continue;
        rows[j].live = false;
        good = feed(&h, SL_KIND_DELETE, &rows[j]) == SL_OK;
    }
    good = good && apply_log(&h, table);
    for (int key = 0; good && key < NKEYS; key++) {
        const char *lo = NULL, *hi = NULL, *hf = NULL;
        int cnt = 0;
        int64_t vlo = 0;
        bool has_v = false;
        for (int i = 0; i < n; i++) {
            const mrow *m = &rows[i];
            if (!m->live || m->k != key) continue;
            cnt++;
            if (!m->vnull && (!has_v || m->v < vlo)) vlo = m->v, has_v = true;
            if (m->snull) continue;
            if (!lo || model_cmp(m->s, lo) < 0) lo = m->s;
            if (!hi || model_cmp(m->s, hi) > 0) hi = m->s;
            if (!m->fnull && m->f && (!hf || model_cmp(m->s, hf) > 0)) hf = m->s;
        }
        char want[ROWLEN] = "", a[16], b[16], c[16], d[24];
        snprintf(a, sizeof a, lo ? "'%s'" : "null", lo);
        snprintf(b, sizeof b, hi ? "'%s'" : "null", hi);
        snprintf(c, sizeof c, hf ? "'%s'" : "null", hf);
        snprintf(d, sizeof d, has_v ? "%lld" : "null", (long long)vlo);
        if (cnt) snprintf(want, sizeof want, "[%d, %s, %s, %s, %d, %s]", key, a, b, c, cnt, d);
        good = key_is(table, key, want);
    }
    good = good && state_follows_rows(&h, rows, n);
    teardown(&h);
    *ok = good;
}

static void test_group_string_minmax_model(void)
{
    for (int b = 0; b < 2; b++)
        for (uint64_t seed = 21; seed <= 23; seed++)
            for (int retracting = 0; retracting < 2; retracting++) {
                bool ok;
                run_group_str(b ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP,
                              seed * 2654435761u, retracting, &ok);
                CHECK(ok);
            }
}

/* A retraction on insert-only input fails the task with what to set. */
static void test_group_string_minmax_needs_retract(void)
{
    static harness h;
    CHECK_EQ_INT(setup(&h, &sl_op_group_aggregate, "{\"group-by\": [\"k\"], \"aggregates\": "
                       "[\"MAX(s) AS hi\"]}", SL_BACKEND_HASHMAP), SL_OK);
    mrow a = {.k = 1, .s = "x"};
    CHECK_EQ_INT(feed(&h, SL_KIND_INSERT, &a), SL_OK);
    CHECK_EQ_INT(feed(&h, SL_KIND_DELETE, &a), SL_ERR);
    CHECK(strstr(h.op.err, "aggregate 1 'MAX(s) AS hi' received a retraction (-D) but the "
                 "vertex's input is insert-only"));
    teardown(&h);
}

/* ---- windows -------------------------------------------------------------------- */

static void run_window(sl_backend_kind kind, const char *win, int64_t size, int64_t slide,
                       uint64_t seed, bool *ok)
{
    static harness h;
    static mrow rows[MAXR];
    *ok = false;
    char cfg[1024];
    snprintf(cfg, sizeof cfg, "{\"time-column\": \"ts\", \"window\": \"%s\", \"group-by\": "
             "[\"k\"], \"aggregates\": " AGGS "}", win);
    if (setup(&h, &sl_op_window, cfg, kind) != SL_OK) {
        fprintf(stderr, "setup: %s %s\n", h.err, h.op.err);
        return;
    }
    rng = seed;
    int n = 0;
    bool good = true;
    int64_t wm = 0;
    for (int step = 0; good && step < 1200; step++) {
        random_row(&rows[n]);
        rows[n].ts = wm + 1 + rnd(3000); /* never late */
        good = feed(&h, SL_KIND_INSERT, &rows[n]) == SL_OK;
        n++;
        if (step % 50 == 49) {
            wm += 1500;
            good = good && sl_rt_watermark(&h.op, 0, wm) == SL_OK;
        }
    }
    good = good && sl_rt_end_input(&h.op, 0) == SL_OK;
    if (!good) fprintf(stderr, "process: %s\n", h.op.err);
    /* expected: per window (start from the earliest), per key */
    static char want[20000][ROWLEN];
    int nw = 0;
    int64_t maxts = 0;
    for (int i = 0; i < n; i++) maxts = rows[i].ts > maxts ? rows[i].ts : maxts;
    for (int64_t s = -size + slide; good && s <= maxts; s += slide)
        for (int key = 0; key < NKEYS; key++) {
            static const mrow *sel[MAXR];
            int ns = 0;
            for (int i = 0; i < n; i++)
                if (rows[i].k == key && rows[i].ts >= s && rows[i].ts < s + size) sel[ns++] = &rows[i];
            if (!ns) continue;
            char prefix[80];
            snprintf(prefix, sizeof prefix, "%lld, %lld, %lld, %d, ", (long long)s,
                     (long long)(s + size), (long long)(s + size - 1), key);
            expect(sel, ns, prefix, want[nw], ROWLEN);
            char tmp[ROWLEN];
            snprintf(tmp, sizeof tmp, "+I%s", want[nw]);
            snprintf(want[nw++], ROWLEN, "%s", tmp);
        }
    if (good && nw != h.log.n) {
        fprintf(stderr, "%d windows emitted, %d expected\n", h.log.n, nw);
        good = false;
    }
    for (int i = 0; good && i < nw; i++) {
        int found = 0;
        for (int j = 0; j < h.log.n && !found; j++) found = !strcmp(h.log.rows[j], want[i]);
        if (!found) {
            fprintf(stderr, "missing %s\n", want[i]);
            good = false;
        }
    }
    if (good && sl_kstate_entries(h.ks) != 0) {
        fprintf(stderr, "%llu state entries left\n", (unsigned long long)sl_kstate_entries(h.ks));
        good = false;
    }
    teardown(&h);
    *ok = good;
}

static void test_window_distinct_filter_model(void)
{
    for (int b = 0; b < 2; b++) {
        sl_backend_kind k = b ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP;
        bool ok;
        run_window(k, "TUMBLE(INTERVAL '2' SECOND)", 2000, 2000, 5, &ok);
        CHECK(ok);
        run_window(k, "HOP(INTERVAL '1' SECOND, INTERVAL '3' SECOND)", 3000, 1000, 6, &ok);
        CHECK(ok);
    }
}

static void test_window_distinct_refused_in_sessions(void)
{
    static harness h;
    CHECK_EQ_INT(setup(&h, &sl_op_window, "{\"time-column\": \"ts\", \"window\": \"SESSION("
                       "INTERVAL '1' SECOND)\", \"aggregates\": [\"COUNT(DISTINCT v)\"]}",
                       SL_BACKEND_HASHMAP), SL_ERR);
    CHECK(strstr(h.err, "DISTINCT aggregates in SESSION windows are not supported") != NULL);
    if (h.plan) teardown(&h);
    else {
        sl_vertex_plan_free(&h.v);
        sl_schema_free(&h.in);
        sl_schema_free(&h.out);
        json_decref(h.v.config);
    }
}

SL_TEST_MAIN(SL_TEST(test_group_distinct_filter_model), SL_TEST(test_group_distinct_state_cleared),
             SL_TEST(test_group_distinct_shared_calls_model),
             SL_TEST(test_group_distinct_shared_restore_rescale),
             SL_TEST(test_group_distinct_old_layout_mismatch),
             SL_TEST(test_group_string_minmax_model), SL_TEST(test_group_string_minmax_needs_retract),
             SL_TEST(test_window_distinct_filter_model),
             SL_TEST(test_window_distinct_refused_in_sessions))
