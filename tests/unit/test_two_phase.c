/*
 * test_two_phase.c -- two-phase (local/global) aggregation against the
 * one-phase plan and against a model (operators/local_aggregate.c, the
 * "phase": "global" modes of operators/window.c and group_aggregate.c).
 *
 * A seeded stream -- keys skewed (a few users take most rows), event time
 * out of order -- runs through the real watermark assigner into either
 *   one phase:  window / group_aggregate
 *   two phases: local_aggregate -> window / group_aggregate "phase": global
 * chained in-process as the runtime chains them, with a small mini-batch
 * (so the buffer fills and flushes) and a checkpoint barrier (the local
 * phase's snapshot_state, which flushes) every few hundred rows. Both plans
 * must emit exactly the same result rows (window aggregates; sorted, as
 * several keys fire together) or the same final table (GROUP BY, whose
 * intermediate updates are fewer with partials), and the same late drops.
 * Where no row is late the results must also equal the model: COUNT, SUM,
 * MIN, MAX, AVG and COUNT(col) recomputed per window and user from the
 * window definitions. SUM/AVG are of an INT column (exact in any order) and
 * MIN/MAX of a DOUBLE one. Every case runs on both state backends. Last, the
 * SQL planner: with Flink's mini-batch keys it puts the local phase where
 * Flink would, and the job it plans passes the job-graph parser.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobgraph.h"
#include "operator.h"
#include "runtime.h"
#include "sl_test.h"
#include "parse.h"
#include "sql.h"

extern const sl_op_def sl_op_window;
extern const sl_op_def sl_op_group_aggregate;
extern const sl_op_def sl_op_local_aggregate;
extern const sl_op_def sl_op_watermark;

#define T0 1787151600000LL
#define NROWS 6000
#define NUSERS 40
#define ROWLEN 256

__attribute__((weak)) int sl_op_fail(sl_op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->err, sizeof op->err, fmt, ap);
    va_end(ap);
    return SL_ERR;
}

static sl_backend_kind g_backend;

/* ---- the stream ------------------------------------------------------------ */

typedef struct gen_row {
    int64_t ts, user;
    int amount;
    double price;
    int has_name;
} gen_row;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 20 rows per second of arrival, event time up to `disorder` ms in the
 * past; user = NUSERS * u^3 (u uniform in [0, 1)): user 0 takes ~37 % of
 * the rows. */
static void gen(gen_row *rows, uint64_t seed, int64_t disorder)
{
    for (int i = 0; i < NROWS; i++) {
        double u = (double)(splitmix(&seed) >> 11) / 9007199254740992.0;
        rows[i].ts = T0 + (int64_t)i * 50 - (int64_t)(splitmix(&seed) % (uint64_t)(disorder + 1));
        rows[i].user = (int64_t)(NUSERS * u * u * u);
        rows[i].amount = (int)(splitmix(&seed) % 1000) - 300;
        rows[i].price = (double)(splitmix(&seed) % 100000) / 64.0 - 500.0;
        rows[i].has_name = splitmix(&seed) % 5 != 0;
    }
}

/* ---- stages, chained --------------------------------------------------------- */

typedef struct stage {
    sl_vertex v;
    sl_schema out;
    void *plan;
    sl_op op;
    char dir[64];
} stage;

typedef struct sink {
    char (*rows)[ROWLEN];
    int n, cap;
    const sl_schema *schema;
} sink;

static int to_stage(void *ctx, int output, sl_row *row)
{
    SL_UNUSED(output);
    return sl_rt_process(ctx, 0, row);
}

static int wm_to_stage(void *ctx, int64_t w) { return sl_rt_watermark(ctx, 0, w); }

static int to_sink(void *ctx, int output, sl_row *row)
{
    sink *k = ctx;
    SL_UNUSED(output);
    if (k->n == k->cap) {
        k->cap = k->cap ? 2 * k->cap : 256;
        k->rows = realloc(k->rows, (size_t)k->cap * ROWLEN);
        if (!k->rows) abort();
    }
    char *d = k->rows[k->n++];
    size_t o = (size_t)snprintf(d, ROWLEN, "%s[", sl_rowkind_short(row->kind));
    for (int i = 0; i < row->n && o < ROWLEN; i++) {
        if (i) o += (size_t)snprintf(d + o, ROWLEN - o, ", ");
        if (o < ROWLEN)
            o += (size_t)sl_value_format(d + o, ROWLEN - o, &row->vals[i], k->schema->fields[i].type);
    }
    if (o < ROWLEN) snprintf(d + o, ROWLEN - o, "]");
    return SL_OK;
}

static int wm_to_sink(void *ctx, int64_t w)
{
    SL_UNUSED(ctx);
    SL_UNUSED(w);
    return SL_OK;
}

static void input_schema(sl_schema *s)
{
    sl_schema_init(s);
    sl_schema_add(s, "user_id", SL_T_BIGINT);
    sl_schema_add(s, "ts", SL_T_TIMESTAMP);
    sl_schema_add(s, "amount", SL_T_INT);
    sl_schema_add(s, "price", SL_T_DOUBLE);
    sl_schema_add(s, "name", SL_T_STRING);
}

/* Plan and open def as vertex id with config cfg on input schema in. */
static int stage_open(stage *s, const sl_op_def *def, const char *id, const char *cfg,
                      const sl_schema *in)
{
    char err[600];
    s->v.id = (char *)id;
    s->v.type = (char *)def->name;
    s->v.config = json_loads(cfg, 0, NULL);
    SL_ASSERT(s->v.config);
    s->plan = sl_test_plan(def, &s->v, in, &s->out, err, sizeof err);
    if (!s->plan) {
        fprintf(stderr, "plan %s: %s\n", id, err);
        return SL_ERR;
    }
    sl_rt_init(&s->op, &s->v, 0, 128);
    s->op.plan = s->plan;
    s->op.out_connected[0] = 1;
    s->op.task_name = id;
    if ((def->flags & SL_OPF_KEYED) && g_backend == SL_BACKEND_ROCKSDB) {
        snprintf(s->dir, sizeof s->dir, "/tmp/sl_test_two_phase_XXXXXX");
        if (!mkdtemp(s->dir)) abort();
    }
    if (sl_rt_open(&s->op, g_backend, s->dir) != SL_OK) {
        fprintf(stderr, "open %s: %s\n", id, s->op.err);
        return SL_ERR;
    }
    return SL_OK;
}

static void stage_close(stage *s)
{
    if (s->plan) {
        sl_rt_close(&s->op);
        s->v.def->plan_free(s->plan);
    }
    if (s->dir[0]) rmdir(s->dir);
    sl_vertex_plan_free(&s->v);
    sl_schema_free(&s->out);
    json_decref(s->v.config);
}

static void link_stage(stage *from, stage *to)
{
    from->op.emit = to_stage;
    from->op.emit_wm = wm_to_stage;
    from->op.emit_ctx = &to->op;
}

/* Run rows through watermark(delay) -> [local_aggregate(local) ->] agg(agg)
 * into k; a barrier every `barrier` rows when two-phase. SL_OK or SL_ERR;
 * *drops gets the aggregate's late drops. */
static int run(const gen_row *rows, int64_t delay, const char *local, const sl_op_def *aggdef,
               const char *agg, int barrier, sink *k, int64_t *drops)
{
    sl_schema in;
    input_schema(&in);
    stage w = {0}, l = {0}, a = {0};
    char wcfg[128];
    snprintf(wcfg, sizeof wcfg, "{\"column\": \"ts\", \"delay\": %lld}", (long long)delay);
    int rc = stage_open(&w, &sl_op_watermark, "wm", wcfg, &in);
    if (rc == SL_OK && local) rc = stage_open(&l, &sl_op_local_aggregate, "local", local, &w.out);
    if (rc == SL_OK) rc = stage_open(&a, aggdef, "agg", agg, local ? &l.out : &w.out);
    if (rc == SL_OK) {
        link_stage(&w, local ? &l : &a);
        if (local) link_stage(&l, &a);
        a.op.emit = to_sink;
        a.op.emit_wm = wm_to_sink;
        a.op.emit_ctx = k;
        k->schema = &a.out;
    }
    for (int i = 0; rc == SL_OK && i < NROWS; i++) {
        sl_value vals[5] = {{.v.i = rows[i].user}, {.v.i = rows[i].ts}, {.v.i = rows[i].amount},
                            {.v.d = rows[i].price}, {.isnull = !rows[i].has_name}};
        if (rows[i].has_name) vals[4].v.s.p = "n", vals[4].v.s.len = 1;
        sl_row row = {.kind = SL_KIND_INSERT, .n = 5, .vals = vals, .ts = SL_TS_NONE};
        rc = sl_rt_process(&w.op, 0, &row);
        if (rc == SL_OK && i % 4 == 3) rc = sl_op_watermark.proc_time(&w.op, (int64_t)i * 50);
        if (rc == SL_OK && local && barrier && i % barrier == barrier - 1) {
            void *blob = (void *)1;
            size_t len = 1;
            rc = sl_op_local_aggregate.snapshot_state(&l.op, i, &blob, &len);
            if (blob || len) rc = SL_ERR; /* the local phase keeps no state */
        }
    }
    if (rc == SL_OK) rc = sl_rt_end_input(&w.op, 0);
    if (rc != SL_OK) fprintf(stderr, "run: %s | %s | %s\n", w.op.err, l.op.err, a.op.err);
    *drops = (int64_t)a.op.metrics.late_dropped;
    if (local) *drops += 0; /* partials count their rows in late_dropped */
    stage_close(&a);
    if (local) stage_close(&l);
    stage_close(&w);
    sl_schema_free(&in);
    return rc;
}

static int cmp_rows(const void *x, const void *y) { return strcmp(x, y); }

/* ---- the model ------------------------------------------------------------------ */

typedef struct mwin {
    int64_t start, end, user, cnt, sum, names;
    double lo, hi;
} mwin;

typedef struct mtable {
    mwin *w;
    int n, cap;
} mtable;

static mwin *mfind(mtable *t, int64_t s, int64_t e, int64_t u)
{
    for (int i = 0; i < t->n; i++)
        if (t->w[i].start == s && t->w[i].end == e && t->w[i].user == u) return &t->w[i];
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->w = realloc(t->w, (size_t)t->cap * sizeof *t->w);
        if (!t->w) abort();
    }
    t->w[t->n] = (mwin){s, e, u, 0, 0, 0, 1e300, -1e300};
    return &t->w[t->n++];
}

static void madd(mtable *t, int64_t s, int64_t e, const gen_row *r)
{
    mwin *w = mfind(t, s, e, r->user);
    w->cnt++;
    w->sum += r->amount;
    w->names += r->has_name;
    if (r->price < w->lo) w->lo = r->price;
    if (r->price > w->hi) w->hi = r->price;
}

/* The model's rows in the operators' text form, sorted: window rows
 * (kind 'T', 'H', 'C') or GROUP BY rows (kind 'G', windows ignored). */
static int model_rows(const gen_row *rows, char kind, int64_t slide, int64_t size, sink *k)
{
    mtable t = {0};
    for (int i = 0; i < NROWS; i++) {
        int64_t ts = rows[i].ts;
        if (kind == 'G') {
            madd(&t, 0, 0, &rows[i]);
        } else if (kind == 'C') {
            int64_t s = ts - ((ts % size) + size) % size;
            for (int64_t e = s + slide; e <= s + size; e += slide)
                if (ts < e) madd(&t, s, e, &rows[i]);
        } else {
            int64_t s = ts - size + 1;
            while (((s % slide) + slide) % slide != 0) s++;
            for (; s <= ts; s += slide) madd(&t, s, s + size, &rows[i]);
        }
    }
    sl_schema ty;
    sl_schema_init(&ty);
    sl_schema_add(&ty, "t", SL_T_TIMESTAMP);
    sl_schema_add(&ty, "d", SL_T_DOUBLE);
    for (int i = 0; i < t.n; i++) {
        mwin *w = &t.w[i];
        char a[40], b[40], c[40], lo[40], hi[40];
        sl_value v;
        v = (sl_value){.v.i = w->start};
        sl_value_format(a, sizeof a, &v, SL_T_TIMESTAMP);
        v = (sl_value){.v.i = w->end};
        sl_value_format(b, sizeof b, &v, SL_T_TIMESTAMP);
        v = (sl_value){.v.i = w->end - 1};
        sl_value_format(c, sizeof c, &v, SL_T_TIMESTAMP);
        v = (sl_value){.v.d = w->lo};
        sl_value_format(lo, sizeof lo, &v, SL_T_DOUBLE);
        v = (sl_value){.v.d = w->hi};
        sl_value_format(hi, sizeof hi, &v, SL_T_DOUBLE);
        int64_t avg = w->sum / w->cnt; /* INT AVG truncates toward zero */
        if (k->n == k->cap) {
            k->cap = k->cap ? 2 * k->cap : 256;
            k->rows = realloc(k->rows, (size_t)k->cap * ROWLEN);
            if (!k->rows) abort();
        }
        if (kind == 'G')
            snprintf(k->rows[k->n++], ROWLEN, "[%lld, %lld, %lld, %s, %s, %lld, %lld]",
                     (long long)w->user, (long long)w->cnt, (long long)(int32_t)w->sum, lo, hi,
                     (long long)avg, (long long)w->names);
        else
            snprintf(k->rows[k->n++], ROWLEN, "+I[%s, %s, %s, %lld, %lld, %lld, %s, %s, %lld, %lld]",
                     a, b, c, (long long)w->user, (long long)w->cnt, (long long)(int32_t)w->sum,
                     lo, hi, (long long)avg, (long long)w->names);
    }
    sl_schema_free(&ty);
    free(t.w);
    qsort(k->rows, (size_t)k->n, ROWLEN, cmp_rows);
    return SL_OK;
}

/* A changelog applied to a table keyed by the first column; the final
 * rows, sorted, without their kind. */
static void materialize(sink *k)
{
    char (*tab)[ROWLEN] = calloc(NUSERS + 1, ROWLEN);
    if (!tab) abort();
    for (int i = 0; i < k->n; i++) {
        const char *r = strchr(k->rows[i], '[');
        long u = strtol(r + 1, NULL, 10);
        SL_ASSERT(u >= 0 && u <= NUSERS);
        if (k->rows[i][0] == '+') snprintf(tab[u], ROWLEN, "%s", r);
        else tab[u][0] = 0;
    }
    k->n = 0;
    for (int u = 0; u <= NUSERS; u++)
        if (tab[u][0]) memcpy(k->rows[k->n++], tab[u], ROWLEN);
    free(tab);
    qsort(k->rows, (size_t)k->n, ROWLEN, cmp_rows);
}

static int same_rows(const sink *a, const sink *b, const char *what)
{
    if (a->n != b->n) {
        fprintf(stderr, "  %s: %d rows against %d\n", what, a->n, b->n);
        return 0;
    }
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->rows[i], b->rows[i])) {
            fprintf(stderr, "  %s: row %d:\n    %s\n    %s\n", what, i, a->rows[i], b->rows[i]);
            return 0;
        }
    return 1;
}

/* ---- the cases ---------------------------------------------------------------------- */

#define AGGS "[\"COUNT(*) AS c\", \"SUM(amount) AS s\", \"MIN(price) AS lo\", " \
             "\"MAX(price) AS hi\", \"AVG(amount) AS a\", \"COUNT(name) AS nn\"]"

/* One window case: one phase and two phases (mini-batch size `size`) on the
 * same stream; equal rows and drops; and the model when nothing is late
 * (delay > disorder). aggs: the aggregate list -- AGGS, or "[]" for a
 * distinct per window, whose model is tests/unit/test_window.c's. */
static void window_case_aggs(const char *window, char kind, int64_t slide, int64_t wsize,
                             int64_t disorder, int64_t delay, int mb_size, uint64_t seed,
                             const char *aggs)
{
    gen_row *rows = malloc(NROWS * sizeof *rows);
    if (!rows) abort();
    gen(rows, seed, disorder);
    char one[512], loc[512], glob[512];
    snprintf(one, sizeof one, "{\"time-column\": \"ts\", \"window\": \"%s\", \"group-by\": "
             "[\"user_id\"], \"aggregates\": %s}", window, aggs);
    snprintf(loc, sizeof loc, "{\"time-column\": \"ts\", \"window\": \"%s\", \"group-by\": "
             "[\"user_id\"], \"aggregates\": %s, \"table.exec.mini-batch.size\": %d}",
             window, aggs, mb_size);
    snprintf(glob, sizeof glob, "{\"phase\": \"global\", \"window\": \"%s\", \"group-by\": "
             "[\"user_id\"], \"aggregates\": %s}", window, aggs);
    sink k1 = {0}, k2 = {0}, km = {0};
    int64_t d1 = -1, d2 = -2;
    CHECK_EQ_INT(run(rows, delay, NULL, &sl_op_window, one, 0, &k1, &d1), SL_OK);
    CHECK_EQ_INT(run(rows, delay, loc, &sl_op_window, glob, 333, &k2, &d2), SL_OK);
    qsort(k1.rows, (size_t)k1.n, ROWLEN, cmp_rows);
    qsort(k2.rows, (size_t)k2.n, ROWLEN, cmp_rows);
    CHECK(k1.n > 100);
    CHECK(same_rows(&k1, &k2, "one phase vs two phases"));
    CHECK_EQ_INT(d1, d2);
    if (delay > disorder && strcmp(aggs, AGGS) == 0) {
        CHECK_EQ_INT(d1, 0);
        model_rows(rows, kind, slide, wsize, &km);
        CHECK(same_rows(&km, &k1, "model vs plans"));
    } else if (delay <= disorder) {
        CHECK(d1 > 0); /* the case meant to have late rows has them */
    }
    free(k1.rows);
    free(k2.rows);
    free(km.rows);
    free(rows);
}

static void window_case(const char *window, char kind, int64_t slide, int64_t wsize,
                        int64_t disorder, int64_t delay, int mb_size, uint64_t seed)
{
    window_case_aggs(window, kind, slide, wsize, disorder, delay, mb_size, seed, AGGS);
}

static void body_windows(void)
{
    /* nothing late: against the model too */
    window_case("TUMBLE(INTERVAL '10' SECOND)", 'T', 10000, 10000, 3000, 4000, 64, 1);
    window_case("HOP(INTERVAL '2' SECOND, INTERVAL '10' SECOND)", 'H', 2000, 10000, 3000, 4000,
                64, 2);
    window_case("CUMULATE(INTERVAL '2' SECOND, INTERVAL '10' SECOND)", 'C', 2000, 10000, 3000,
                4000, 16, 3);
    /* late rows (disorder beyond the delay): the same drops */
    window_case("TUMBLE(INTERVAL '5' SECOND)", 'T', 5000, 5000, 8000, 1000, 1000, 4);
    window_case("HOP(INTERVAL '1' SECOND, INTERVAL '5' SECOND)", 'H', 1000, 5000, 8000, 1000, 7,
                5);
    window_case("CUMULATE(INTERVAL '1' SECOND, INTERVAL '4' SECOND)", 'C', 1000, 4000, 8000,
                1000, 100, 6);
    /* no aggregates (a distinct per key and window): the partial is just
     * the row count, and the two plans give the same rows and drops */
    window_case_aggs("TUMBLE(INTERVAL '5' SECOND)", 'T', 5000, 5000, 8000, 1000, 50, 7, "[]");
    window_case_aggs("HOP(INTERVAL '1' SECOND, INTERVAL '5' SECOND)", 'H', 1000, 5000, 3000,
                     4000, 9, 8, "[]");
    window_case_aggs("CUMULATE(INTERVAL '1' SECOND, INTERVAL '4' SECOND)", 'C', 1000, 4000, 8000,
                     1000, 100, 9, "[]");
}

static void body_group(void)
{
    gen_row *rows = malloc(NROWS * sizeof *rows);
    if (!rows) abort();
    gen(rows, 7, 5000);
    const char *one = "{\"group-by\": [\"user_id\"], \"aggregates\": " AGGS "}";
    const char *loc = "{\"group-by\": [\"user_id\"], \"aggregates\": " AGGS
                      ", \"table.exec.mini-batch.size\": 25, "
                      "\"table.exec.mini-batch.allow-latency\": \"0 s\"}";
    const char *glob = "{\"phase\": \"global\", \"group-by\": [\"user_id\"], \"aggregates\": " AGGS "}";
    sink k1 = {0}, k2 = {0}, km = {0};
    int64_t d1, d2;
    CHECK_EQ_INT(run(rows, 1000, NULL, &sl_op_group_aggregate, one, 0, &k1, &d1), SL_OK);
    CHECK_EQ_INT(run(rows, 1000, loc, &sl_op_group_aggregate, glob, 401, &k2, &d2), SL_OK);
    CHECK(k2.n < k1.n); /* partials: fewer updates */
    materialize(&k1);
    materialize(&k2);
    model_rows(rows, 'G', 0, 0, &km);
    CHECK(same_rows(&k1, &k2, "one phase vs two phases"));
    CHECK(same_rows(&km, &k1, "model vs plans"));
    free(k1.rows);
    free(k2.rows);
    free(km.rows);
    /* no aggregates (SELECT DISTINCT): one row per user either way */
    sink d1k = {0}, d2k = {0};
    CHECK_EQ_INT(run(rows, 1000, NULL, &sl_op_group_aggregate, "{\"group-by\": [\"user_id\"]}",
                     0, &d1k, &d1), SL_OK);
    CHECK_EQ_INT(run(rows, 1000, "{\"group-by\": [\"user_id\"], \"table.exec.mini-batch.size\": 7}",
                     &sl_op_group_aggregate, "{\"phase\": \"global\", \"group-by\": [\"user_id\"]}",
                     401, &d2k, &d2), SL_OK);
    CHECK_EQ_INT(d1k.n, NUSERS); /* inserts only: a distinct never changes its row */
    CHECK(same_rows(&d1k, &d2k, "SELECT DISTINCT: one phase vs two phases"));
    free(d1k.rows);
    free(d2k.rows);
    free(rows);
}

/* What the phases refuse, with messages that say why. */
static void body_refusals(void)
{
    sl_schema in;
    input_schema(&in);
    stage s = {0};
    char err[600];
    s.v.id = (char *)"local";
    s.v.config = json_loads("{\"group-by\": [\"user_id\"], \"aggregates\": [\"COUNT(DISTINCT "
                            "amount)\"]}", 0, NULL);
    s.plan = sl_test_plan(&sl_op_local_aggregate, &s.v, &in, &s.out, err, sizeof err);
    CHECK(!s.plan);
    CHECK(strstr(err, "DISTINCT aggregates cannot be pre-aggregated"));
    stage_close(&s);
    memset(&s, 0, sizeof s);
    s.v.id = (char *)"local";
    s.v.config = json_loads("{\"window\": \"SESSION(INTERVAL '1' SECOND)\", \"time-column\": "
                            "\"ts\", \"aggregates\": [\"COUNT(*)\"]}", 0, NULL);
    s.plan = sl_test_plan(&sl_op_local_aggregate, &s.v, &in, &s.out, err, sizeof err);
    CHECK(!s.plan);
    CHECK(strstr(err, "SESSION windows merge"));
    stage_close(&s);
    memset(&s, 0, sizeof s);
    s.v.id = (char *)"agg";
    s.v.config = json_loads("{\"phase\": \"global\", \"window\": \"TUMBLE(INTERVAL '1' SECOND)\","
                            " \"aggregates\": [\"COUNT(*)\"]}", 0, NULL);
    s.plan = sl_test_plan(&sl_op_window, &s.v, &in, &s.out, err, sizeof err);
    CHECK(!s.plan);
    CHECK(strstr(err, "takes a local_aggregate's output"));
    stage_close(&s);
    memset(&s, 0, sizeof s);
    s.v.id = (char *)"local";
    s.v.config = json_loads("{\"aggregates\": [\"COUNT(*)\"], \"table.exec.mini-batch.size\": 0}",
                            0, NULL);
    s.plan = sl_test_plan(&sl_op_local_aggregate, &s.v, &in, &s.out, err, sizeof err);
    CHECK(!s.plan);
    CHECK(strstr(err, "'table.exec.mini-batch.size' must be from 1"));
    stage_close(&s);
    memset(&s, 0, sizeof s);
    s.v.id = (char *)"agg";
    s.v.config = json_loads("{\"phase\": \"local\", \"group-by\": [\"user_id\"], "
                            "\"aggregates\": [\"COUNT(*)\"]}", 0, NULL);
    s.plan = sl_test_plan(&sl_op_group_aggregate, &s.v, &in, &s.out, err, sizeof err);
    CHECK(!s.plan);
    CHECK(strstr(err, "vertex 'agg': option 'phase' must be 'single' or 'global', not 'local'"));
    stage_close(&s);
    sl_schema_free(&in);
}

#define BOTH(name)                                                             \
    static void test_##name(void)                                              \
    {                                                                          \
        g_backend = SL_BACKEND_HASHMAP;                                        \
        body_##name();                                                         \
        if (sl_test_failed_) return;                                           \
        g_backend = SL_BACKEND_ROCKSDB;                                        \
        body_##name();                                                         \
        if (sl_test_failed_) fprintf(stderr, "  (backend: rocksdb)\n");        \
        g_backend = SL_BACKEND_HASHMAP;                                        \
    }

BOTH(windows)
BOTH(group)

static void test_refusals(void) { body_refusals(); }


/* ---- planned from SQL ------------------------------------------------------------ */

static const char *SQL_TABLES =
    "CREATE TABLE ev (user_id BIGINT, amount INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
    "INTERVAL '1' SECOND) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE out_w (ws TIMESTAMP(3), user_id BIGINT, c BIGINT, s INT) WITH ('connector' = "
    "'print');\n"
    "CREATE TABLE out_g (user_id BIGINT, c BIGINT, s INT) WITH ('connector' = 'print');\n"
    "CREATE TABLE out_s (user_id BIGINT, m STRING) WITH ('connector' = 'print');\n";

/* The job planned for `insert` after `set` (SET statements, may be empty):
 * its vertex types in order, "ERR: ..." on an error; the job in *job. */
static const char *sql_types(const char *set, const char *insert, json_t **job)
{
    static char out[1200];
    char script[4096], err[1024];
    snprintf(script, sizeof script, "%s%s", set, insert);
    sl_sql_session *s = sl_sql_session_new();
    const char *parts[2] = {SQL_TABLES, script};
    snprintf(out, sizeof out, "(nothing)");
    *job = NULL;
    for (int k = 0; k < 2; k++) {
        const char *t = parts[k];
        size_t pos = 0, len = strlen(t);
        while (pos < len) {
            size_t end;
            int r = sql_split(t + pos, len - pos, &end);
            if (r < 0) break;
            if (r == 0) end = len - pos;
            sl_sql_result res;
            if (sl_sql_execute(s, t + pos, end, 1, 1, &res, err, sizeof err) != SL_OK) {
                snprintf(out, sizeof out, "ERR: %s", err);
                sl_sql_session_destroy(s);
                return out;
            }
            if (res.kind == SL_SQL_JOB) *job = json_loads(res.job, 0, NULL);
            sl_sql_result_clear(&res);
            pos += end;
        }
    }
    sl_sql_session_destroy(s);
    out[0] = 0;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(*job, "vertices"), i, v) {
        size_t o = strlen(out);
        snprintf(out + o, sizeof out - o, "%s%s", o ? " " : "",
                 json_string_value(json_object_get(v, "type")));
    }
    return out;
}

/* The config of the first vertex of `type`, compact. */
static const char *vcfg(json_t *job, const char *type)
{
    static char out[2048];
    size_t i;
    json_t *v;
    snprintf(out, sizeof out, "(none)");
    json_array_foreach(json_object_get(job, "vertices"), i, v) {
        if (strcmp(json_string_value(json_object_get(v, "type")), type)) continue;
        char *c = json_dumps(json_object_get(v, "config"), JSON_COMPACT | JSON_PRESERVE_ORDER);
        snprintf(out, sizeof out, "%s", c);
        free(c);
        break;
    }
    return out;
}

static int job_parses(json_t *job)
{
    char err[1024], *text = json_dumps(job, 0);
    sl_jobgraph *g = sl_jobgraph_parse(text, strlen(text), 1, 0, err, sizeof err);
    if (!g) fprintf(stderr, "  job refused: %s\n", err);
    free(text);
    sl_jobgraph_destroy(g);
    return g != NULL;
}

static void test_sql_plans(void)
{
    const char *on = "SET 'table.exec.mini-batch.enabled' = 'true';\n"
                     "SET 'table.exec.mini-batch.allow-latency' = '2 s';\n"
                     "SET 'table.exec.mini-batch.size' = '500';\n";
    const char *win = "INSERT INTO out_w SELECT window_start, user_id, COUNT(*), SUM(amount) FROM "
                      "TABLE(HOP(TABLE ev, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '10' "
                      "SECOND)) GROUP BY window_start, window_end, user_id;";
    const char *grp = "INSERT INTO out_g SELECT user_id, COUNT(*), SUM(amount) FROM ev GROUP BY "
                      "user_id;";
    json_t *j;
    /* off by default, as in Flink */
    CHECK_EQ_STR(sql_types("", win, &j), "datagen watermark window calc calc print");
    json_decref(j);
    CHECK_EQ_STR(sql_types(on, win, &j),
                 "datagen watermark local_aggregate window calc calc print");
    CHECK_EQ_STR(vcfg(j, "local_aggregate"),
                 "{\"group-by\":[\"user_id\"],\"aggregates\":[\"COUNT(*) AS __agg0\","
                 "\"SUM(amount) AS __agg1\"],\"window\":\"HOP(INTERVAL '1' SECOND, INTERVAL '10' "
                 "SECOND)\",\"time-column\":\"ts\",\"table.exec.mini-batch.allow-latency\":\"2 s\","
                 "\"table.exec.mini-batch.size\":\"500\"}");
    CHECK(strstr(vcfg(j, "window"), "\"phase\":\"global\""));
    CHECK(job_parses(j));
    json_decref(j);
    CHECK_EQ_STR(sql_types(on, grp, &j),
                 "datagen watermark local_aggregate group_aggregate calc calc print");
    CHECK(strstr(vcfg(j, "group_aggregate"), "\"phase\":\"global\""));
    CHECK(job_parses(j));
    json_decref(j);
    /* a distinct (no aggregate call) takes the two phases too, in windows (Nexmark q8) */
    CHECK_EQ_STR(sql_types(on, "INSERT INTO out_g SELECT user_id, 1, 1 FROM ev GROUP BY user_id;",
                           &j),
                 "datagen watermark local_aggregate group_aggregate calc calc print");
    CHECK(job_parses(j));
    json_decref(j);
    CHECK_EQ_STR(sql_types(on, "INSERT INTO out_w SELECT window_start, user_id, 1, 1 FROM "
                               "TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
                               "GROUP BY window_start, window_end, user_id;", &j),
                 "datagen watermark local_aggregate window calc calc print");
    CHECK_EQ_STR(vcfg(j, "local_aggregate"),
                 "{\"group-by\":[\"user_id\"],\"aggregates\":[],\"window\":\"TUMBLE(INTERVAL "
                 "'5' SECOND)\",\"time-column\":\"ts\",\"table.exec.mini-batch.allow-latency\":"
                 "\"2 s\",\"table.exec.mini-batch.size\":\"500\"}");
    CHECK(job_parses(j));
    json_decref(j);
    /* ONE_PHASE, DISTINCT: one phase */
    char set[1024];
    snprintf(set, sizeof set, "%sSET 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE';\n", on);
    CHECK_EQ_STR(sql_types(set, grp, &j), "datagen watermark group_aggregate calc calc print");
    json_decref(j);
    CHECK_EQ_STR(sql_types(on, "INSERT INTO out_g SELECT user_id, COUNT(DISTINCT amount), "
                               "SUM(amount) FROM ev GROUP BY user_id;", &j),
                 "datagen watermark group_aggregate calc calc print");
    json_decref(j);
    /* MAX of a STRING: one phase (the accumulator does not hold it) */
    CHECK_EQ_STR(sql_types(on, "INSERT INTO out_s SELECT user_id, MAX(CAST(amount AS STRING)) "
                               "FROM ev GROUP BY user_id;", &j),
                 "datagen watermark calc group_aggregate calc calc print");
    CHECK(strstr(vcfg(j, "group_aggregate"), "MAX(`__arg0`)") ||
          strstr(vcfg(j, "group_aggregate"), "MAX(__arg0)"));
    CHECK(job_parses(j));
    json_decref(j);
    /* in a window too: one phase */
    CHECK_EQ_STR(sql_types(on, "INSERT INTO out_s SELECT user_id, MAX(CAST(amount AS STRING)) "
                               "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '5' "
                               "SECOND)) GROUP BY window_start, window_end, user_id;", &j),
                 "datagen watermark calc window calc calc print");
    CHECK(job_parses(j));
    json_decref(j);
    /* bad values are refused at SET, naming the key */
    CHECK(strstr(sql_types("SET 'table.optimizer.agg-phase-strategy' = 'THREE_PHASE';\n", grp,
                           &j), "must be AUTO, ONE_PHASE or TWO_PHASE, not 'THREE_PHASE'"));
    json_decref(j);
    CHECK(strstr(sql_types("SET 'table.exec.mini-batch.size' = '0';\n", grp, &j),
                 "'table.exec.mini-batch.size' must be a number from 1"));
    json_decref(j);
}

SL_TEST_MAIN(SL_TEST(test_windows), SL_TEST(test_group), SL_TEST(test_refusals),
             SL_TEST(test_sql_plans))
