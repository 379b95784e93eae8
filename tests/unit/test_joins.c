/*
 * test_joins.c -- unit tests for the join operators (operators/join.c,
 * interval_join.c, regular_join.c).
 *
 * A harness plans a join vertex against two fixed input schemas, opens it
 * through the runtime (sl_rt_open, so keys, watermarks and timers are the
 * runtime's) on either state backend and records every output row as text
 * ("+I[l3, r7]": the ids of the left and right rows, "-" for NULL) and every
 * output watermark.
 *
 * The random tests generate seeded streams with disorder and per-input
 * watermarks and compare the output, as a multiset, with a brute-force
 * model written from the documented semantics alone:
 *   interval join: a row is late when the other side's rows it could match
 *     are all behind the watermark at its arrival; the result is the join of
 *     all rows that are not late, plus outer rows for those without partner;
 *   regular join: the model keeps the multiset of live rows per side and
 *     derives the joined table after every input change; the operator's
 *     changelog, applied to a table, must give the same table after every
 *     step, and in the end.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobgraph.h"
#include "keygroup.h"
#include "operator.h"
#include "runtime.h"
#include "vstate.h"
#include "sl_test.h"

/* ---- harness ------------------------------------------------------------------ */

#define ROWLEN 64

typedef struct outlog {
    int n, cap;
    char (*rows)[ROWLEN];
    int64_t *ts;
    int64_t wm;          /* last output watermark */
    int behind;          /* rows emitted at or behind the output watermark */
    int right_off;       /* the right side's first column (0: NCOLS) */
} outlog;

/* Both inputs: k BIGINT, ts TIMESTAMP(3), id BIGINT, s STRING. */
enum { C_K, C_TS, C_ID, C_S, NCOLS };

static void fmt_id(char *d, size_t cap, char side, const sl_value *v)
{
    if (v->isnull) snprintf(d, cap, "-");
    else snprintf(d, cap, "%c%lld", side, (long long)v->v.i);
}

static int record(void *ctx, int output, sl_row *row)
{
    outlog *l = ctx;
    SL_UNUSED(output);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->rows = realloc(l->rows, (size_t)l->cap * ROWLEN);
        l->ts = realloc(l->ts, (size_t)l->cap * sizeof *l->ts);
        if (!l->rows || !l->ts) abort();
    }
    char a[24], b[24];
    int ro = l->right_off ? l->right_off : NCOLS;
    static const sl_value none = {.isnull = true};
    int has_r = row->n > ro; /* a semi or anti join's rows are the left row alone */
    fmt_id(a, sizeof a, 'l', &row->vals[C_ID]);
    fmt_id(b, sizeof b, 'r', has_r ? &row->vals[ro + C_ID] : &none);
    /* the string columns travel too: they must be the row's own */
    const sl_value *ls = &row->vals[C_S], *rs = has_r ? &row->vals[ro + C_S] : &none;
    if (!ls->isnull && (ls->v.s.len < 1 || ls->v.s.p[0] != 'L')) abort();
    if (!rs->isnull && (rs->v.s.len < 1 || rs->v.s.p[0] != 'R')) abort();
    snprintf(l->rows[l->n], ROWLEN, "%s[%s, %s]", sl_rowkind_short(row->kind), a, b);
    l->ts[l->n] = row->ts;
    if (l->wm != INT64_MIN && row->ts <= l->wm) l->behind++;
    l->n++;
    return SL_OK;
}

static int record_wm(void *ctx, int64_t wm)
{
    outlog *l = ctx;
    if (wm <= l->wm && l->wm != INT64_MIN) l->behind += 1000000; /* a watermark going back */
    l->wm = wm;
    return SL_OK;
}

typedef struct harness {
    sl_vertex v;
    sl_schema ins[2];
    sl_op op;
    int opened;
    char dir[64];
    outlog log;
    char err[512];
} harness;

static void schema_make(sl_schema *s)
{
    sl_schema_init(s);
    sl_schema_add(s, "k", SL_T_BIGINT);
    sl_schema_add(s, "ts", SL_T_TIMESTAMP);
    sl_schema_add(s, "id", SL_T_BIGINT);
    sl_schema_add(s, "s", SL_T_STRING);
}

/* Plan `type` with the JSON config; 0 with h->err when plan() refuses. */
static int plan(harness *h, const char *type, const char *config)
{
    memset(h, 0, sizeof *h);
    h->v.id = (char *)"j";
    h->v.type = (char *)type;
    h->v.def = sl_op_find(type);
    if (!h->v.def) abort();
    h->v.parallelism = 1;
    h->v.config = sl_test_config(config);
    schema_make(&h->ins[0]);
    schema_make(&h->ins[1]);
    return sl_vertex_plan(&h->v, 2, h->ins, NULL, h->err, sizeof h->err) == SL_OK;
}

static int open_op(harness *h, sl_backend_kind kind)
{
    sl_op *op = &h->op;
    sl_test_rt_init(op, &h->v, 0, 128, record, record_wm, &h->log, "j (1/1)");
    h->log.wm = INT64_MIN;
    h->opened = 1;
    int rc = sl_test_rt_open(op, kind, h->dir, sizeof h->dir, "join", NULL, 0);
    if (rc != SL_OK) fprintf(stderr, "open: %s\n", op->err);
    return rc;
}

static void teardown(harness *h)
{
    if (h->opened) sl_test_rt_close(&h->op, h->dir);
    else if (h->dir[0]) rmdir(h->dir);
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->ins[0]);
    sl_schema_free(&h->ins[1]);
    json_decref(h->v.config);
    free(h->log.rows);
    free(h->log.ts);
    memset(h, 0, sizeof *h);
}

/* One row of `side`: key (k < 0: NULL), time, id. */
static int feed(harness *h, int side, sl_rowkind kind, int64_t k, int64_t ts, int64_t id)
{
    char s[32];
    snprintf(s, sizeof s, "%c-%lld", side ? 'R' : 'L', (long long)id);
    sl_value v[NCOLS] = {
        k < 0 ? (sl_value){.isnull = true} : (sl_value){.v.i = k},
        {.v.i = ts},
        {.v.i = id},
        {.v.s = {s, (uint32_t)strlen(s)}},
    };
    sl_row r = {kind, NCOLS, v, ts};
    int rc = sl_rt_process(&h->op, side, &r);
    if (rc != SL_OK) fprintf(stderr, "process: %s\n", h->op.err);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(a, b); }

/* The log's rows, sorted, equal the expected rows (sorted here). */
static int same_multiset(outlog *l, char (*exp)[ROWLEN], int nexp)
{
    qsort(l->rows, (size_t)l->n, ROWLEN, cmp_str);
    qsort(exp, (size_t)nexp, ROWLEN, cmp_str);
    if (l->n != nexp) {
        fprintf(stderr, "got %d rows, expected %d\n", l->n, nexp);
        for (int i = 0, j = 0; i < l->n || j < nexp;) {
            int c = i >= l->n ? 1 : j >= nexp ? -1 : strcmp(l->rows[i], exp[j]);
            if (c < 0) fprintf(stderr, "  unexpected %s\n", l->rows[i++]);
            else if (c > 0) fprintf(stderr, "  missing %s\n", exp[j++]);
            else i++, j++;
        }
        return 0;
    }
    for (int i = 0; i < nexp; i++)
        if (strcmp(l->rows[i], exp[i])) {
            fprintf(stderr, "row %d: got %s, expected %s\n", i, l->rows[i], exp[i]);
            return 0;
        }
    return 1;
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* ---- interval join: scripted ----------------------------------------------------- */

static const char *const IJ_INNER =
    "{\"join-type\": \"%s\", \"left-keys\": [\"k\"], \"right-keys\": [\"k\"], \"left-time\": \"ts\", "
    "\"right-time\": \"ts\", \"lower-bound\": %lld, \"upper-bound\": %lld}";

static char cfgbuf[512];
static const char *ij_config(const char *type, long long lo, long long hi)
{
    snprintf(cfgbuf, sizeof cfgbuf, IJ_INNER, type, lo, hi);
    return cfgbuf;
}

static void test_interval_plan_errors(void)
{
    harness h;
    CHECK(!plan(&h, "interval_join", ij_config("inner", 10, -10)));
    CHECK(strstr(h.err, "lower-bound 10 ms is above upper-bound -10 ms"));
    teardown(&h);
    CHECK(!plan(&h, "interval_join", ij_config("sideways", -10, 10)));
    CHECK(strstr(h.err, "join-type 'sideways'"));
    teardown(&h);
    CHECK(!plan(&h, "interval_join", "{\"left-keys\": [\"k\"], \"right-keys\": [\"nope\"], "
                "\"left-time\": \"ts\", \"right-time\": \"ts\", \"lower-bound\": 0, \"upper-bound\": 0}"));
    CHECK(strstr(h.err, "right-keys column 'nope' is not in the right input"));
    teardown(&h);
    CHECK(!plan(&h, "interval_join", "{\"left-keys\": [\"k\"], \"right-keys\": [\"k\"], "
                "\"left-time\": \"s\", \"right-time\": \"ts\", \"lower-bound\": 0, \"upper-bound\": 0}"));
    CHECK(strstr(h.err, "left-time 's' is STRING"));
    teardown(&h);
    CHECK(!plan(&h, "interval_join", "{\"left-keys\": [\"k\"], \"right-keys\": [\"k\"], "
                "\"left-time\": \"ts\", \"right-time\": \"ts\"}"));
    CHECK(strstr(h.err, "'lower-bound' and 'upper-bound'"));
    teardown(&h);
    CHECK(!plan(&h, "interval_join", "{\"left-keys\": [\"k\"], \"right-keys\": [\"id\", \"k\"], "
                "\"left-time\": \"ts\", \"right-time\": \"ts\", \"lower-bound\": 0, \"upper-bound\": 0}"));
    CHECK(strstr(h.err, "1 left-keys but 2 right-keys"));
    teardown(&h);
    /* the output names the right side's columns apart */
    CHECK(plan(&h, "interval_join", ij_config("inner", -10, 10)));
    CHECK_EQ_INT(h.v.out.n, 2 * NCOLS);
    CHECK_EQ_STR(h.v.out.fields[NCOLS].name, "k0");
    CHECK_EQ_STR(h.v.out.fields[NCOLS + C_TS].name, "ts0");
    teardown(&h);
}

static void interval_scripted(sl_backend_kind bk)
{
    harness h;
    CHECK(plan(&h, "interval_join", ij_config("full", -10, 10)));
    CHECK_EQ_INT(open_op(&h, bk), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 100, 1), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 1, 105, 1), SL_OK); /* matches l1 */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 1, 111, 2), SL_OK); /* 11 after l1: no */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 2, 100, 3), SL_OK); /* other key */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, -1, 100, 2), SL_OK); /* NULL key: outer at once */
    CHECK_EQ_INT(h.log.n, 2);
    CHECK_EQ_STR(h.log.rows[0], "+I[l1, r1]");
    CHECK_EQ_STR(h.log.rows[1], "+I[l2, -]");
    /* watermarks: both inputs to 125 -> r2 (kept until 111 + 20 = 131) stays,
     * l1 (kept until 120) and r3 (until 120) go, r3 unmatched */
    CHECK_EQ_INT(sl_rt_watermark(&h.op, 0, 125), SL_OK);
    CHECK_EQ_INT(h.log.n, 2); /* the right input still holds the watermark back */
    CHECK_EQ_INT(sl_rt_watermark(&h.op, 1, 125), SL_OK);
    CHECK_EQ_INT(h.log.n, 3);
    CHECK_EQ_STR(h.log.rows[2], "+I[-, r3]");
    CHECK_EQ_INT(h.log.wm, 125 - 21); /* held back by width + 1 */
    /* a left row at 114: late (114 + 10 <= 125) */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 114, 3), SL_OK);
    CHECK_EQ_INT(h.op.metrics.late_dropped, 1);
    /* a left row at 116 is not late (its partners up to 126 may come) and finds r2 */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 116, 4), SL_OK);
    CHECK_EQ_INT(h.log.n, 4);
    CHECK_EQ_STR(h.log.rows[3], "+I[l4, r2]");
    /* a right row at 135 is not late (135 + 10 > 125) and finds no partner yet */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 1, 135, 4), SL_OK);
    CHECK_EQ_INT(h.op.metrics.late_dropped, 1);
    CHECK_EQ_INT(sl_rt_end_all(&h.op), SL_OK);
    CHECK_EQ_INT(h.log.n, 5);
    CHECK_EQ_STR(h.log.rows[4], "+I[-, r4]");
    CHECK_EQ_INT(h.log.behind, 0);
    CHECK_EQ_INT(sl_kstate_entries(h.op.kstate), 0);
    teardown(&h);
}

static void test_interval_scripted_hashmap(void) { interval_scripted(SL_BACKEND_HASHMAP); }
static void test_interval_scripted_rocksdb(void) { interval_scripted(SL_BACKEND_ROCKSDB); }

/* ---- interval join: random streams against the model ------------------------------ */

typedef struct ev {
    int kind;            /* 0 row, 1 watermark */
    int side;
    int64_t k, ts, id, wm;
} ev;

#define MAXEV 1400

/* A stream: rows on both sides with times rising on average and disorder
 * up to `disorder` ms; each side's watermark trails its largest time by
 * `lag` ms (smaller than the disorder, so some rows come late). */
static int gen_stream(ev *evs, int nrows, int64_t disorder, int64_t lag, int nkeys)
{
    int n = 0;
    int64_t base = 1000, maxts[2] = {INT64_MIN, INT64_MIN}, wm[2] = {INT64_MIN, INT64_MIN};
    for (int i = 0; i < nrows; i++) {
        ev *e = &evs[n++];
        e->kind = 0;
        e->side = (int)(rnd() % 2);
        e->k = rnd() % 23 == 0 ? -1 : (int64_t)(rnd() % (uint64_t)nkeys);
        base += rnd_in(0, 6);
        e->ts = base - rnd_in(0, disorder);
        e->id = i;
        if (e->ts > maxts[e->side]) maxts[e->side] = e->ts;
        if (rnd() % 4 == 0) {
            int s = (int)(rnd() % 2);
            if (maxts[s] != INT64_MIN && maxts[s] - lag > wm[s]) {
                wm[s] = maxts[s] - lag;
                evs[n++] = (ev){.kind = 1, .side = s, .wm = wm[s]};
            }
        }
    }
    return n;
}

/* The model: late-ness from the watermark at arrival, then the brute-force join. */
static int interval_model(const ev *evs, int n, const char *type, int64_t lo, int64_t hi,
                          char (*exp)[ROWLEN], int *late)
{
    int64_t wm[2] = {INT64_MIN, INT64_MIN};
    static int accepted[MAXEV];
    int lo_outer = !strcmp(type, "left") || !strcmp(type, "full");
    int ro_outer = !strcmp(type, "right") || !strcmp(type, "full");
    *late = 0;
    for (int i = 0; i < n; i++) {
        const ev *e = &evs[i];
        accepted[i] = 0;
        if (e->kind == 1) {
            if (e->wm > wm[e->side]) wm[e->side] = e->wm;
            continue;
        }
        int64_t W = wm[0] < wm[1] ? wm[0] : wm[1];
        /* late: every time it could match on the other side is <= W */
        int64_t last = e->side == 0 ? e->ts + hi : e->ts - lo;
        if (W != INT64_MIN && last <= W) {
            (*late)++;
            continue;
        }
        accepted[i] = 1;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!accepted[i] || evs[i].side != 0) continue;
        int matched = 0;
        for (int j = 0; j < n; j++) {
            if (!accepted[j] || evs[j].side != 1) continue;
            const ev *l = &evs[i], *r = &evs[j];
            if (l->k < 0 || r->k < 0 || l->k != r->k) continue;
            if (r->ts < l->ts + lo || r->ts > l->ts + hi) continue;
            snprintf(exp[m++], ROWLEN, "+I[l%lld, r%lld]", (long long)l->id, (long long)r->id);
            matched = 1;
        }
        if (!matched && lo_outer) snprintf(exp[m++], ROWLEN, "+I[l%lld, -]", (long long)evs[i].id);
    }
    for (int j = 0; j < n && ro_outer; j++) {
        if (!accepted[j] || evs[j].side != 1) continue;
        int matched = 0;
        for (int i = 0; i < n && !matched; i++) {
            const ev *l = &evs[i], *r = &evs[j];
            if (!accepted[i] || l->side != 0 || l->k < 0 || r->k < 0 || l->k != r->k) continue;
            if (r->ts >= l->ts + lo && r->ts <= l->ts + hi) matched = 1;
        }
        if (!matched) snprintf(exp[m++], ROWLEN, "+I[-, r%lld]", (long long)evs[j].id);
    }
    return m;
}

static void interval_random(sl_backend_kind bk)
{
    static ev evs[MAXEV];
    static char exp[MAXEV * 40][ROWLEN];
    static const char *const types[] = {"inner", "left", "right", "full"};
    static const int64_t bounds[][2] = {{-20, 20}, {0, 30}, {5, 40}, {-40, -5}, {0, 0}};
    int total_late = 0, total_rows = 0;
    for (int seed = 1; seed <= 8; seed++) {
        for (size_t b = 0; b < SL_ARRAY_LEN(bounds); b++) {
            const char *type = types[(seed + (int)b) % 4];
            rng_state = 0x9e3779b97f4a7c15ull * (uint64_t)(seed * 31 + (int)b + 1);
            int n = gen_stream(evs, 600, 60, 25, 7);
            harness h;
            CHECK(plan(&h, "interval_join", ij_config(type, (long long)bounds[b][0], (long long)bounds[b][1])));
            CHECK_EQ_INT(open_op(&h, bk), SL_OK);
            uint64_t peak = 0;
            for (int i = 0; i < n; i++) {
                if (evs[i].kind == 0)
                    CHECK_EQ_INT(feed(&h, evs[i].side, SL_KIND_INSERT, evs[i].k, evs[i].ts, evs[i].id), SL_OK);
                else CHECK_EQ_INT(sl_rt_watermark(&h.op, evs[i].side, evs[i].wm), SL_OK);
                uint64_t e = sl_kstate_entries(h.op.kstate);
                if (e > peak) peak = e;
            }
            CHECK_EQ_INT(sl_rt_end_all(&h.op), SL_OK);
            int late;
            int m = interval_model(evs, n, type, bounds[b][0], bounds[b][1], exp, &late);
            if (!same_multiset(&h.log, exp, m)) {
                fprintf(stderr, "seed %d, %s join, bounds [%lld, %lld]\n", seed, type,
                        (long long)bounds[b][0], (long long)bounds[b][1]);
                CHECK(0);
            }
            CHECK_EQ_INT(h.op.metrics.late_dropped, late);
            CHECK_EQ_INT(h.log.behind, 0);
            CHECK_EQ_INT(sl_kstate_entries(h.op.kstate), 0); /* all cleaned */
            /* state is bounded by the interval: far fewer entries than rows */
            CHECK(peak < 150);
            total_late += late;
            total_rows += m;
            teardown(&h);
        }
    }
    CHECK(total_late > 0);   /* the streams do exercise late rows */
    CHECK(total_rows > 1000);
}

static void test_interval_random_hashmap(void) { interval_random(SL_BACKEND_HASHMAP); }
static void test_interval_random_rocksdb(void) { interval_random(SL_BACKEND_ROCKSDB); }


/* ---- regular join ------------------------------------------------------------------ */

static const char *rj_config(const char *type, const char *extra)
{
    snprintf(cfgbuf, sizeof cfgbuf,
             "{\"join-type\": \"%s\", \"left-keys\": [\"k\"], \"right-keys\": [\"k\"]%s}", type, extra);
    return cfgbuf;
}

static void regular_scripted(sl_backend_kind bk)
{
    harness h;
    CHECK(plan(&h, "regular_join", rj_config("left", "")));
    CHECK_EQ_INT(open_op(&h, bk), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 0, 1), SL_OK);   /* +I[l1, -] */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 1, 0, 1), SL_OK);   /* -D[l1, -] +I[l1, r1] */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 1, 0, 2), SL_OK);   /* +I[l1, r2] */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 2, 0, 3), SL_OK);   /* nothing: right is inner */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_DELETE, 1, 0, 1), SL_OK);   /* -D[l1, r1] */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_UPDATE_BEFORE, 1, 0, 2), SL_OK); /* -D[l1, r2] +I[l1, -] */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_UPDATE_AFTER, 1, 0, 4), SL_OK);  /* -D[l1, -] +I[l1, r4] */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 2, 0, 2), SL_OK);   /* +I[l2, r3] */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_DELETE, 1, 0, 1), SL_OK);   /* -D[l1, r4] */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, -1, 0, 9), SL_OK);  /* +I[l9, -]: NULL key */
    static const char *const want[] = {"+I[l1, -]", "-D[l1, -]", "+I[l1, r1]", "+I[l1, r2]",
                                       "-D[l1, r1]", "-D[l1, r2]", "+I[l1, -]", "-D[l1, -]",
                                       "+I[l1, r4]", "+I[l2, r3]", "-D[l1, r4]", "+I[l9, -]"};
    CHECK_EQ_INT(h.log.n, (int)SL_ARRAY_LEN(want));
    for (size_t i = 0; i < SL_ARRAY_LEN(want); i++) CHECK_EQ_STR(h.log.rows[i], want[i]);
    teardown(&h);
}

static void test_regular_scripted_hashmap(void) { regular_scripted(SL_BACKEND_HASHMAP); }
static void test_regular_scripted_rocksdb(void) { regular_scripted(SL_BACKEND_ROCKSDB); }

/* The test's processing-time clock for state TTL. */
static int64_t fake_now;
static int64_t fake_clock(void) { return fake_now; }

static void regular_ttl(sl_backend_kind bk)
{
    harness h;
    CHECK(plan(&h, "regular_join", rj_config("inner", ", \"table.exec.state.ttl\": \"100 ms\", "
                                             "\"right.state.ttl\": \"1 s\"")));
    int64_t (*saved)(void) = sl_vstate_clock;
    sl_vstate_clock = fake_clock;
    fake_now = 1000;
    CHECK_EQ_INT(open_op(&h, bk), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 0, 1), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 2, 0, 1), SL_OK);
    CHECK(sl_kstate_entries(h.op.kstate) > 0);
    fake_now = 1050;
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 0, 2), SL_OK); /* key 1's left side written at 1050 */
    fake_now = 1120; /* l1 expired (1000 + 100), l2 not */
    CHECK_EQ_INT(sl_rt_fire_proc(&h.op, fake_now), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 1, 0, 3), SL_OK);
    CHECK_EQ_INT(h.log.n, 1);
    CHECK_EQ_STR(h.log.rows[0], "+I[l2, r3]");
    fake_now = 1160; /* key 1's left side idle for the TTL: cleared; right rows keep 1 s */
    CHECK_EQ_INT(sl_rt_fire_proc(&h.op, fake_now), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 2, 0, 4), SL_OK); /* r1 (1 s TTL) still there */
    CHECK_EQ_INT(h.log.n, 2);
    CHECK_EQ_STR(h.log.rows[1], "+I[l4, r1]");
    fake_now = 5000; /* everything idle for its TTL: the state is empty */
    CHECK_EQ_INT(sl_rt_fire_proc(&h.op, fake_now), SL_OK);
    CHECK_EQ_INT(sl_kstate_entries(h.op.kstate), 0);
    sl_vstate_clock = saved;
    teardown(&h);
}

/* A row that expired and comes again is one row, not two. */
static void regular_ttl_again(sl_backend_kind bk)
{
    harness h;
    CHECK(plan(&h, "regular_join", rj_config("inner", ", \"state.ttl\": \"100 ms\"")));
    int64_t (*saved)(void) = sl_vstate_clock;
    sl_vstate_clock = fake_clock;
    fake_now = 1000;
    CHECK_EQ_INT(open_op(&h, bk), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 0, 1), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 0, 2), SL_OK);
    fake_now = 1090;
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 0, 2), SL_OK); /* l2 rewritten: twice now */
    fake_now = 1150; /* l1 expired (1000 + 100), l2 not (1090 + 100) */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 0, 1), SL_OK); /* l1 again, once */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 1, 0, 7), SL_OK);
    CHECK_EQ_INT(h.log.n, 3);
    qsort(h.log.rows, (size_t)h.log.n, ROWLEN, cmp_str);
    CHECK_EQ_STR(h.log.rows[0], "+I[l1, r7]");
    CHECK_EQ_STR(h.log.rows[1], "+I[l2, r7]");
    CHECK_EQ_STR(h.log.rows[2], "+I[l2, r7]");
    sl_vstate_clock = saved;
    teardown(&h);
}

static void test_regular_ttl_again_hashmap(void) { regular_ttl_again(SL_BACKEND_HASHMAP); }
static void test_regular_ttl_again_rocksdb(void) { regular_ttl_again(SL_BACKEND_ROCKSDB); }

static void test_regular_ttl_hashmap(void) { regular_ttl(SL_BACKEND_HASHMAP); }
static void test_regular_ttl_rocksdb(void) { regular_ttl(SL_BACKEND_ROCKSDB); }

/* A multiset of rows "[l3, r7]" as a table the changelog is applied to. */
typedef struct table {
    int n;
    char rows[4000][ROWLEN];
} table;

static int table_apply(table *t, const char *change)
{
    const char *row = change + 2;
    if (!strncmp(change, "+I", 2) || !strncmp(change, "+U", 2)) {
        if (t->n == 4000) return 0;
        snprintf(t->rows[t->n++], ROWLEN, "%s", row);
        return 1;
    }
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->rows[i], row)) {
            memcpy(t->rows[i], t->rows[--t->n], ROWLEN);
            return 1;
        }
    fprintf(stderr, "%s retracts a row the table does not hold\n", change);
    return 0;
}

typedef struct live {
    int64_t k, id;
    int count;
} live;

/* The random join's optional condition: "MOD(id + id0, 3) <> 0", the left
 * and right ids (the right's id is id0 in the joined row). */
static int pair_holds(int cond, const live *l, const live *r)
{
    return !cond || (l->id + r->id) % 3 != 0;
}

/* The join of the live rows, as the table should read: rows of a key pair
 * where the condition (if any) holds; an outer row without one is padded. */
static void join_table(const live *L, int nl, const live *R, int nr, int lo, int ro, int cond,
                       table *t)
{
    t->n = 0;
    for (int i = 0; i < nl; i++)
        for (int c = 0; c < L[i].count; c++) {
            int m = 0;
            for (int j = 0; j < nr; j++)
                if (L[i].k >= 0 && L[i].k == R[j].k && pair_holds(cond, &L[i], &R[j]))
                    for (int d = 0; d < R[j].count; d++, m++)
                        snprintf(t->rows[t->n++], ROWLEN, "[l%lld, r%lld]", (long long)L[i].id,
                                 (long long)R[j].id);
            if (!m && lo) snprintf(t->rows[t->n++], ROWLEN, "[l%lld, -]", (long long)L[i].id);
        }
    for (int j = 0; j < nr && ro; j++)
        for (int d = 0; d < R[j].count; d++) {
            int m = 0;
            for (int i = 0; i < nl; i++)
                if (R[j].k >= 0 && L[i].k == R[j].k && L[i].count && pair_holds(cond, &L[i], &R[j]))
                    m = 1;
            if (!m) snprintf(t->rows[t->n++], ROWLEN, "[-, r%lld]", (long long)R[j].id);
        }
}

static int same_table(table *a, table *b)
{
    qsort(a->rows, (size_t)a->n, ROWLEN, cmp_str);
    qsort(b->rows, (size_t)b->n, ROWLEN, cmp_str);
    if (a->n != b->n) {
        fprintf(stderr, "table has %d rows, the model %d\n", a->n, b->n);
        return 0;
    }
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->rows[i], b->rows[i])) {
            fprintf(stderr, "table row %s, model row %s\n", a->rows[i], b->rows[i]);
            return 0;
        }
    return 1;
}

/* Seeded changelogs on both sides (inserts, duplicates, deletes, updates
 * that may move a row to another key) against join_table after every step;
 * with `cond` the join carries a condition beyond the keys, which decides
 * both the pairs and which outer rows stand alone. */
static void regular_random(sl_backend_kind bk, int cond)
{
    static const char *const types[] = {"inner", "left", "right", "full"};
    static live side[2][400];
    static table got, want;
    for (int seed = 1; seed <= 6; seed++)
        for (int ti = 0; ti < 4; ti++) {
            rng_state = 0x2545f4914f6cdd1dull * (uint64_t)(seed * 7 + ti + 1 + cond * 100);
            harness h;
            CHECK(plan(&h, "regular_join",
                       rj_config(types[ti], cond ? ", \"condition\": \"MOD(id + id0, 3) <> 0\"" : "")));
            CHECK_EQ_INT(open_op(&h, bk), SL_OK);
            int n[2] = {0, 0}, applied = 0;
            got.n = 0;
            int64_t next_id = 1;
            for (int step = 0; step < 300; step++) {
                int s = (int)(rnd() % 2);
                live *rows = side[s];
                int op = (int)(rnd() % 10);
                int pick = -1;
                for (int tries = 0; n[s] && tries < 4 && pick < 0; tries++) {
                    int i = (int)(rnd() % (uint64_t)n[s]);
                    if (rows[i].count) pick = i;
                }
                if (op < 5 || pick < 0) { /* insert: a new row, or a duplicate of a live one */
                    if (op == 0 && pick >= 0) {
                        rows[pick].count++;
                        CHECK_EQ_INT(feed(&h, s, SL_KIND_INSERT, rows[pick].k, 0, rows[pick].id), SL_OK);
                    } else {
                        CHECK(n[s] < 400);
                        live *r = &rows[n[s]++];
                        r->k = rnd() % 17 == 0 ? -1 : (int64_t)(rnd() % 5);
                        r->id = next_id++;
                        r->count = 1;
                        CHECK_EQ_INT(feed(&h, s, SL_KIND_INSERT, r->k, 0, r->id), SL_OK);
                    }
                } else if (op < 8) { /* delete */
                    rows[pick].count--;
                    CHECK_EQ_INT(feed(&h, s, SL_KIND_DELETE, rows[pick].k, 0, rows[pick].id), SL_OK);
                } else { /* update: -U old, +U new (maybe another key) */
                    rows[pick].count--;
                    CHECK_EQ_INT(feed(&h, s, SL_KIND_UPDATE_BEFORE, rows[pick].k, 0, rows[pick].id), SL_OK);
                    CHECK(n[s] < 400);
                    live *r = &rows[n[s]++];
                    r->k = rnd() % 3 == 0 ? (int64_t)(rnd() % 5) : rows[pick].k;
                    r->id = next_id++;
                    r->count = 1;
                    CHECK_EQ_INT(feed(&h, s, SL_KIND_UPDATE_AFTER, r->k, 0, r->id), SL_OK);
                }
                for (; applied < h.log.n; applied++) CHECK(table_apply(&got, h.log.rows[applied]));
                int lo = ti == 1 || ti == 3, ro = ti == 2 || ti == 3;
                join_table(side[0], n[0], side[1], n[1], lo, ro, cond, &want);
                if (!same_table(&got, &want)) {
                    fprintf(stderr, "seed %d, %s join, step %d\n", seed, types[ti], step);
                    CHECK(0);
                }
            }
            /* only +I and -D come out */
            for (int i = 0; i < h.log.n; i++)
                CHECK(!strncmp(h.log.rows[i], "+I", 2) || !strncmp(h.log.rows[i], "-D", 2));
            teardown(&h);
        }
}

static void test_regular_random_hashmap(void) { regular_random(SL_BACKEND_HASHMAP, 0); }
static void test_regular_random_rocksdb(void) { regular_random(SL_BACKEND_ROCKSDB, 0); }
static void test_regular_condition_hashmap(void) { regular_random(SL_BACKEND_HASHMAP, 1); }
static void test_regular_condition_rocksdb(void) { regular_random(SL_BACKEND_ROCKSDB, 1); }

/* The semi (anti) join's table: each copy of a live left row whose key has a
 * live right row for which the condition holds (has none), alone. */
static void semi_table(const live *L, int nl, const live *R, int nr, int anti, int cond, table *t)
{
    t->n = 0;
    for (int i = 0; i < nl; i++) {
        int m = 0;
        for (int j = 0; j < nr && !m; j++)
            m = L[i].k >= 0 && L[i].k == R[j].k && R[j].count && pair_holds(cond, &L[i], &R[j]);
        if (m != anti)
            for (int c = 0; c < L[i].count; c++)
                snprintf(t->rows[t->n++], ROWLEN, "[l%lld, -]", (long long)L[i].id);
    }
}

/* Seeded changelogs on both sides through the semi and anti modes, with and
 * without a condition, against semi_table after every step. */
static void semi_random(sl_backend_kind bk)
{
    static live side[2][400];
    static table got, want;
    for (int seed = 1; seed <= 6; seed++)
        for (int mode = 0; mode < 4; mode++) {
            int anti = mode & 1, cond = mode >> 1;
            rng_state = 0x9e3779b97f4a7c15ull * (uint64_t)(seed * 11 + mode + 1);
            harness h;
            char extra[128];
            snprintf(extra, sizeof extra, ", \"mode\": \"%s\"%s", anti ? "anti" : "semi",
                     cond ? ", \"condition\": \"MOD(id + id0, 3) <> 0\"" : "");
            CHECK(plan(&h, "regular_join", rj_config("inner", extra)));
            CHECK_EQ_INT(h.v.out.n, NCOLS); /* the left columns only */
            CHECK_EQ_INT(open_op(&h, bk), SL_OK);
            int n[2] = {0, 0}, applied = 0;
            got.n = 0;
            int64_t next_id = 1;
            for (int step = 0; step < 300; step++) {
                int s = (int)(rnd() % 2);
                live *rows = side[s];
                int op = (int)(rnd() % 10);
                int pick = -1;
                for (int tries = 0; n[s] && tries < 4 && pick < 0; tries++) {
                    int i = (int)(rnd() % (uint64_t)n[s]);
                    if (rows[i].count) pick = i;
                }
                if (op < 5 || pick < 0) {
                    if (op == 0 && pick >= 0) {
                        rows[pick].count++;
                        CHECK_EQ_INT(feed(&h, s, SL_KIND_INSERT, rows[pick].k, 0, rows[pick].id), SL_OK);
                    } else {
                        CHECK(n[s] < 400);
                        live *r = &rows[n[s]++];
                        r->k = rnd() % 17 == 0 ? -1 : (int64_t)(rnd() % 5);
                        r->id = next_id++;
                        r->count = 1;
                        CHECK_EQ_INT(feed(&h, s, SL_KIND_INSERT, r->k, 0, r->id), SL_OK);
                    }
                } else if (op < 8) {
                    rows[pick].count--;
                    CHECK_EQ_INT(feed(&h, s, SL_KIND_DELETE, rows[pick].k, 0, rows[pick].id), SL_OK);
                } else {
                    rows[pick].count--;
                    CHECK_EQ_INT(feed(&h, s, SL_KIND_UPDATE_BEFORE, rows[pick].k, 0, rows[pick].id), SL_OK);
                    CHECK(n[s] < 400);
                    live *r = &rows[n[s]++];
                    r->k = rnd() % 3 == 0 ? (int64_t)(rnd() % 5) : rows[pick].k;
                    r->id = next_id++;
                    r->count = 1;
                    CHECK_EQ_INT(feed(&h, s, SL_KIND_UPDATE_AFTER, r->k, 0, r->id), SL_OK);
                }
                for (; applied < h.log.n; applied++) CHECK(table_apply(&got, h.log.rows[applied]));
                semi_table(side[0], n[0], side[1], n[1], anti, cond, &want);
                if (!same_table(&got, &want)) {
                    fprintf(stderr, "seed %d, %s%s, step %d\n", seed, anti ? "anti" : "semi",
                            cond ? " with a condition" : "", step);
                    CHECK(0);
                    break;
                }
            }
            teardown(&h);
        }
}

static void test_semi_anti_hashmap(void) { semi_random(SL_BACKEND_HASHMAP); }
static void test_semi_anti_rocksdb(void) { semi_random(SL_BACKEND_ROCKSDB); }

/* A condition the join cannot use is refused at plan time, naming it. */
static void test_regular_condition_errors(void)
{
    harness h;
    CHECK(!plan(&h, "regular_join", rj_config("left", ", \"condition\": \"id + id0\"")));
    CHECK(strstr(h.err, "vertex 'j': condition must be a BOOLEAN expression, got BIGINT"));
    teardown(&h);
    CHECK(!plan(&h, "regular_join", rj_config("left", ", \"condition\": \"nope > 1\"")));
    CHECK(strstr(h.err, "vertex 'j': condition: ") && strstr(h.err, "nope"));
    teardown(&h);
    CHECK(!plan(&h, "regular_join", rj_config("left", ", \"condition\": 3")));
    CHECK(strstr(h.err, "vertex 'j': condition must be a string expression"));
    teardown(&h);
    CHECK(!plan(&h, "regular_join", rj_config("left", ", \"mode\": \"semi\"")));
    CHECK(strstr(h.err, "vertex 'j': mode 'semi': semi or anti, with join-type inner"));
    teardown(&h);
    CHECK(!plan(&h, "regular_join", rj_config("inner", ", \"mode\": \"half\"")));
    CHECK(strstr(h.err, "vertex 'j': mode 'half': semi or anti, with join-type inner"));
    teardown(&h);
}


/* ---- a hot key, across a checkpoint with rescale -------------------------------------
 * Thousands of rows of one side on one key (new rows, duplicates, deletes,
 * updates), a handful on the other; half-way every subtask's state is
 * snapshotted and dealt by key group to a job of another parallelism. The
 * joined table, applied from the changelog, must equal the model's after
 * every phase. `hot` is the side with thousands of rows. */

#define HK_MAXKG 64
#define HK_P 3
#define HK_NL 10000         /* ids of the hot side */
#define HK_NR 256           /* ids of the other side */
#define HK_NKEYS 4          /* key 0 is the hot one */

typedef struct hk_stage {
    sl_vertex v;
    sl_schema ins[2];
    int p;
    sl_op op[HK_P];
    char dir[HK_P][48];
    char err[512];
} hk_stage;

static int hk_open(hk_stage *s, int p, const char *type, sl_backend_kind bk, outlog *log)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->v.id = (char *)"j";
    s->v.type = (char *)"regular_join";
    s->v.def = sl_op_find("regular_join");
    s->v.parallelism = p;
    s->v.config = json_loads(rj_config(type, ""), 0, NULL);
    schema_make(&s->ins[0]);
    schema_make(&s->ins[1]);
    if (sl_vertex_plan(&s->v, 2, s->ins, NULL, s->err, sizeof s->err) != SL_OK) return SL_ERR;
    for (int i = 0; i < p; i++) {
        sl_op *op = &s->op[i];
        sl_test_rt_init(op, &s->v, i, HK_MAXKG, record, record_wm, log, "j");
        if (sl_test_rt_open(op, bk, s->dir[i], sizeof s->dir[i], "hk", s->err, sizeof s->err) !=
            SL_OK)
            return SL_ERR;
    }
    return SL_OK;
}

static void hk_close(hk_stage *s)
{
    for (int i = 0; i < s->p; i++) sl_test_rt_close(&s->op[i], s->dir[i]);
    sl_vertex_plan_free(&s->v);
    json_decref(s->v.config);
    sl_schema_free(&s->ins[0]);
    sl_schema_free(&s->ins[1]);
}

static int hk_feed(hk_stage *s, int side, sl_rowkind kind, int64_t k, int64_t id)
{
    char str[32];
    snprintf(str, sizeof str, "%c-%lld", side ? 'R' : 'L', (long long)id);
    sl_value v[NCOLS] = {{.v.i = k}, {.v.i = 0}, {.v.i = id},
                         {.v.s = {str, (uint32_t)strlen(str)}}};
    sl_row r = {kind, NCOLS, v, 0};
    uint8_t key[32];
    int k0 = C_K;
    size_t n = sl_row_key_encode(&r, &s->ins[side], &k0, 1, key, sizeof key);
    sl_op *op = &s->op[sl_kg_operator_index(sl_kg_of_key(key, n, HK_MAXKG), s->p, HK_MAXKG)];
    int rc = sl_rt_process(op, side, &r);
    if (rc != SL_OK) fprintf(stderr, "process: %s\n", op->err);
    return rc;
}

typedef struct hk_move {
    hk_stage *to;
    int failed;
    int legacy;                 /* add the old layout's index values */
    uint64_t moved;
} hk_move;

static int hk_move_entry(void *ctx, const sl_kentry *e)
{
    hk_move *m = ctx;
    if (sl_test_restore_entry(m->to->op, m->to->p, HK_MAXKG, e)) {
        m->failed = 1;
        return 1;
    }
    m->moved++;
    sl_op *op = &m->to->op[sl_kg_operator_index(e->kg, m->to->p, HK_MAXKG)];
    char err[256];
    /* the old layout also held, per key and side, an index value listing
     * the rows (its content does not matter: it is never read) */
    int rows[2] = {sl_kstate_register(op->kstate, "join-left"),
                   sl_kstate_register(op->kstate, "join-right")};
    for (int s = 0; m->legacy && s < 2; s++) {
        if (e->sid != rows[s]) continue;
        sl_kentry ix = *e;
        ix.sid = sl_kstate_register(op->kstate, s ? "join-right-index" : "join-left-index");
        ix.ns = NULL;
        ix.nslen = 0;
        ix.val = "\4\0\0\0row!";
        ix.vlen = 8;
        if (sl_kstate_restore(op->kstate, &ix, err, sizeof err) != SL_OK) {
            fprintf(stderr, "restore: %s\n", err);
            m->failed = 1;
            return 1;
        }
    }
    return 0;
}

/* Every subtask's state of `from`, snapshotted and restored into `to`. */
static int hk_redeal(hk_stage *from, hk_stage *to, int legacy, uint64_t *moved)
{
    hk_move m = {to, 0, legacy, 0};
    char err[256];
    for (int i = 0; i < from->p; i++) {
        sl_op *op = &from->op[i];
        sl_ksnap *snap = sl_kstate_snapshot(op->kstate, err, sizeof err);
        if (!snap) return SL_ERR;
        for (int kg = op->kg_first; kg <= op->kg_last && !m.failed; kg++)
            if (sl_ksnap_each(snap, kg, hk_move_entry, &m, err, sizeof err) != SL_OK) m.failed = 1;
        sl_ksnap_release(snap);
    }
    *moved = m.moved;
    return m.failed ? SL_ERR : SL_OK;
}

/* The joined table as counts per (left id + 1, right id + 1), 0 = NULL side. */
typedef struct hk_model {
    int64_t key[2][HK_NL];
    int count[2][HK_NL];
    int n[2];                   /* ids handed out per side */
    int got[HK_NL + 1][HK_NR + 1];
    int want[HK_NL + 1][HK_NR + 1];
} hk_model;

/* Apply the log's changes to m->got (in the hot side's orientation). */
static int hk_apply(hk_model *m, outlog *log, int hot)
{
    for (int i = 0; i < log->n; i++) {
        const char *r = log->rows[i];
        long long a = -1, b = -1;
        const char *lp = strchr(r, '['), *rp = strchr(r, ',');
        if (!lp || !rp) return 0;
        if (lp[1] == 'l') a = atoll(lp + 2);
        if (rp[2] == 'r') b = atoll(rp + 3);
        long long h = hot ? b : a, o = hot ? a : b;
        if (h >= HK_NL || o >= HK_NR) return 0;
        int *c = &m->got[h + 1][o + 1];
        *c += r[0] == '+' ? 1 : -1;
        if (*c < 0) {
            fprintf(stderr, "%s retracts a row the table does not hold\n", r);
            return 0;
        }
    }
    log->n = 0;
    return 1;
}

static int hk_same(hk_model *m, int hot, int lo, int ro)
{
    int houter = hot ? ro : lo, oouter = hot ? lo : ro;
    memset(m->want, 0, sizeof m->want);
    int live_h[HK_NKEYS] = {0}, live_o[HK_NKEYS] = {0};
    for (int i = 0; i < m->n[0]; i++) live_h[m->key[0][i]] += m->count[0][i];
    for (int j = 0; j < m->n[1]; j++) live_o[m->key[1][j]] += m->count[1][j];
    for (int i = 0; i < m->n[0]; i++) {
        if (!m->count[0][i]) continue;
        if (!live_o[m->key[0][i]]) {
            if (houter) m->want[i + 1][0] = m->count[0][i];
            continue;
        }
        for (int j = 0; j < m->n[1]; j++)
            if (m->key[1][j] == m->key[0][i])
                m->want[i + 1][j + 1] = m->count[0][i] * m->count[1][j];
    }
    for (int j = 0; j < m->n[1]; j++)
        if (m->count[1][j] && !live_h[m->key[1][j]] && oouter) m->want[0][j + 1] = m->count[1][j];
    for (int i = 0; i <= HK_NL; i++)
        for (int j = 0; j <= HK_NR; j++)
            if (m->got[i][j] != m->want[i][j]) {
                fprintf(stderr, "pair (%d, %d) of the hot side's ids: %d in the table, "
                        "%d in the model\n", i - 1, j - 1, m->got[i][j], m->want[i][j]);
                return 0;
            }
    return 1;
}

/* One step on side ms (0: the hot side, model numbering) of stage s. */
static int hk_step(hk_stage *s, hk_model *m, int hot, int ms)
{
    int side = ms ? !hot : hot; /* the operator's input */
    int cap = ms ? HK_NR : HK_NL;
    int op = (int)(rnd() % 20), pick = -1;
    for (int tries = 0; m->n[ms] && tries < 6 && pick < 0; tries++) {
        int i = (int)(rnd() % (uint64_t)m->n[ms]);
        if (m->count[ms][i]) pick = i;
    }
    /* the other side keeps few rows on the hot key: delete when it has 6 */
    if (ms == 1 && pick >= 0) {
        int nlive = 0;
        for (int j = 0; j < m->n[1]; j++) nlive += m->key[1][j] == 0 && m->count[1][j];
        if (nlive >= 6 && op < 13) op = 13;
    }
    if (op < 13 || pick < 0) {
        if (op < 2 && pick >= 0) { /* a duplicate */
            m->count[ms][pick]++;
            return hk_feed(s, side, SL_KIND_INSERT, m->key[ms][pick], pick);
        }
        if (m->n[ms] == cap) return SL_OK;
        int i = m->n[ms]++;
        m->key[ms][i] = ms == 0 ? (rnd() % 8 ? 0 : (int64_t)(1 + rnd() % (HK_NKEYS - 1)))
                                : (int64_t)(rnd() % HK_NKEYS);
        m->count[ms][i] = 1;
        return hk_feed(s, side, SL_KIND_INSERT, m->key[ms][i], i);
    }
    if (op < 18) {
        m->count[ms][pick]--;
        return hk_feed(s, side, SL_KIND_DELETE, m->key[ms][pick], pick);
    }
    /* an update: -U of the picked row, +U of a new one of the same key */
    m->count[ms][pick]--;
    if (hk_feed(s, side, SL_KIND_UPDATE_BEFORE, m->key[ms][pick], pick) != SL_OK) return SL_ERR;
    if (m->n[ms] == cap) return SL_OK;
    int i = m->n[ms]++;
    m->key[ms][i] = m->key[ms][pick];
    m->count[ms][i] = 1;
    return hk_feed(s, side, SL_KIND_UPDATE_AFTER, m->key[ms][i], i);
}

static void regular_hot_key(sl_backend_kind bk)
{
    static const char *const types[] = {"inner", "left", "right", "full"};
    static hk_model m;
    static outlog log;
    for (int hot = 0; hot < 2; hot++)
        for (int ti = 0; ti < 4; ti++) {
            if (ti != 3 && ti != 1 + hot && ti != 0) continue; /* inner, the hot side outer, full */
            rng_state = 0x9e3779b97f4a7c15ull * (uint64_t)(hot * 4 + ti + 1);
            memset(&m, 0, sizeof m);
            log.n = 0;
            log.wm = INT64_MIN;
            int lo = ti == 1 || ti == 3, ro = ti == 2 || ti == 3;
            hk_stage a, b;
            CHECK_EQ_INT(hk_open(&a, 2, types[ti], bk, &log), SL_OK);
            for (int step = 0; step < 8000; step++) {
                CHECK_EQ_INT(hk_step(&a, &m, hot, rnd() % 50 == 0), SL_OK);
                CHECK(hk_apply(&m, &log, hot));
            }
            if (!hk_same(&m, hot, lo, ro)) {
                fprintf(stderr, "hot side %d, %s join, before the checkpoint\n", hot, types[ti]);
                CHECK(0);
            }
            int hot_rows = 0;
            for (int i = 0; i < m.n[0]; i++) hot_rows += m.key[0][i] == 0 && m.count[0][i] > 0;
            CHECK(hot_rows > 2000);
            uint64_t entries = 0, moved = 0;
            for (int i = 0; i < a.p; i++) entries += sl_kstate_entries(a.op[i].kstate);
            CHECK_EQ_INT(hk_open(&b, 3, types[ti], bk, &log), SL_OK);
            /* the hot side outer: restored as if the old layout had written it */
            int legacy = ti == 1 + hot;
            CHECK_EQ_INT(hk_redeal(&a, &b, legacy, &moved), SL_OK);
            CHECK_EQ_INT((int)moved, (int)entries);
            hk_close(&a);
            for (int step = 0; step < 5000; step++) {
                CHECK_EQ_INT(hk_step(&b, &m, hot, rnd() % 50 == 0), SL_OK);
                CHECK(hk_apply(&m, &log, hot));
            }
            /* a write on every key and side (a new row, then its delete): the
             * old layout's index values are gone after it */
            for (int ms = 0; ms < 2; ms++)
                for (int64_t k = 0; k < HK_NKEYS; k++) {
                    CHECK(m.n[ms] < (ms ? HK_NR : HK_NL));
                    int i = m.n[ms]++, side = ms ? !hot : hot;
                    m.key[ms][i] = k;
                    CHECK_EQ_INT(hk_feed(&b, side, SL_KIND_INSERT, k, i), SL_OK);
                    CHECK_EQ_INT(hk_feed(&b, side, SL_KIND_DELETE, k, i), SL_OK);
                    CHECK(hk_apply(&m, &log, hot));
                }
            if (!hk_same(&m, hot, lo, ro)) {
                fprintf(stderr, "hot side %d, %s join, after the checkpoint\n", hot, types[ti]);
                CHECK(0);
            }
            /* one state entry per distinct live row, nothing else */
            uint64_t nlive = 0, after = 0;
            for (int ms = 0; ms < 2; ms++)
                for (int i = 0; i < m.n[ms]; i++) nlive += m.count[ms][i] > 0;
            for (int i = 0; i < b.p; i++) after += sl_kstate_entries(b.op[i].kstate);
            CHECK_EQ_INT((int)after, (int)nlive);
            hk_close(&b);
        }
    free(log.rows);
    free(log.ts);
    memset(&log, 0, sizeof log);
}

static void test_regular_hot_key_hashmap(void) { regular_hot_key(SL_BACKEND_HASHMAP); }
static void test_regular_hot_key_rocksdb(void) { regular_hot_key(SL_BACKEND_ROCKSDB); }

/* ---- temporal join ------------------------------------------------------------------ */

static const char *tj_config(const char *type)
{
    snprintf(cfgbuf, sizeof cfgbuf,
             "{\"join-type\": \"%s\", \"left-keys\": [\"k\"], \"right-keys\": [\"k\"], "
             "\"left-time\": \"ts\", \"right-time\": \"ts\"}", type);
    return cfgbuf;
}

typedef struct tev {
    int kind;            /* 0 row, 1 watermark */
    int side;
    sl_rowkind rk;
    int64_t k, ts, id, wm;
} tev;

static void temporal_scripted(sl_backend_kind bk)
{
    harness h;
    CHECK(plan(&h, "temporal_join", tj_config("left")));
    CHECK_EQ_INT(open_op(&h, bk), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 1, 100, 1), SL_OK);  /* version r1 of key 1 from 100 */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 150, 1), SL_OK);  /* waits for the watermark */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_INSERT, 1, 200, 2), SL_OK);  /* r2 from 200 */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 250, 2), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 50, 3), SL_OK);   /* before any version */
    CHECK_EQ_INT(feed(&h, 1, SL_KIND_DELETE, 1, 300, 2), SL_OK);  /* key 1 gone from 300 */
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 350, 4), SL_OK);
    CHECK_EQ_INT(h.log.n, 0);
    CHECK_EQ_INT(sl_rt_watermark(&h.op, 0, 260), SL_OK);
    CHECK_EQ_INT(sl_rt_watermark(&h.op, 1, 260), SL_OK);
    CHECK_EQ_INT(h.log.n, 3);
    CHECK_EQ_STR(h.log.rows[0], "+I[l3, -]");
    CHECK_EQ_STR(h.log.rows[1], "+I[l1, r1]");
    CHECK_EQ_STR(h.log.rows[2], "+I[l2, r2]");
    CHECK_EQ_INT(feed(&h, 0, SL_KIND_INSERT, 1, 240, 5), SL_OK);  /* late */
    CHECK_EQ_INT(h.op.metrics.late_dropped, 1);
    CHECK_EQ_INT(sl_rt_end_all(&h.op), SL_OK);
    CHECK_EQ_INT(h.log.n, 4);
    CHECK_EQ_STR(h.log.rows[3], "+I[l4, -]");
    CHECK_EQ_INT(sl_kstate_entries(h.op.kstate), 0); /* the tombstone was the last word */
    teardown(&h);
}

static void test_temporal_scripted_hashmap(void) { temporal_scripted(SL_BACKEND_HASHMAP); }
static void test_temporal_scripted_rocksdb(void) { temporal_scripted(SL_BACKEND_ROCKSDB); }

/* The model: a stream row is released when the watermark first reaches its
 * time and joins, among the versions of its key that have arrived by then
 * (-U ignored), the one with the largest time <= its own (the last to
 * arrive among equals); a -D there means none. */
static void temporal_random(sl_backend_kind bk)
{
    static tev evs[1600];
    static char exp[1600][ROWLEN];
    for (int seed = 1; seed <= 8; seed++)
        for (int left = 0; left < 2; left++) {
            rng_state = 0x853c49e6748fea9bull * (uint64_t)(seed * 3 + left + 1);
            int n = 0;
            int64_t base = 1000, maxts[2] = {INT64_MIN, INT64_MIN}, wm[2] = {INT64_MIN, INT64_MIN};
            for (int i = 0; i < 700; i++) {
                tev *e = &evs[n++];
                e->kind = 0;
                e->side = rnd() % 3 == 0;
                e->k = rnd() % 29 == 0 && !e->side ? -1 : (int64_t)(rnd() % 5);
                base += rnd_in(0, 5);
                e->ts = base - rnd_in(0, 40);
                e->id = i;
                e->rk = SL_KIND_INSERT;
                if (e->side && rnd() % 6 == 0) e->rk = SL_KIND_DELETE;
                if (e->side && rnd() % 9 == 0) e->rk = SL_KIND_UPDATE_BEFORE;
                if (e->side && e->rk == SL_KIND_INSERT && rnd() % 4 == 0) e->rk = SL_KIND_UPDATE_AFTER;
                if (e->ts > maxts[e->side]) maxts[e->side] = e->ts;
                if (rnd() % 4 == 0) {
                    int s = (int)(rnd() % 2);
                    if (maxts[s] != INT64_MIN && maxts[s] - 15 > wm[s]) {
                        wm[s] = maxts[s] - 15;
                        evs[n++] = (tev){.kind = 1, .side = s, .wm = wm[s]};
                    }
                }
            }
            evs[n++] = (tev){.kind = 1, .side = 0, .wm = INT64_MAX};
            evs[n++] = (tev){.kind = 1, .side = 1, .wm = INT64_MAX};
            /* the model */
            int m = 0, late = 0;
            int64_t W[2] = {INT64_MIN, INT64_MIN};
            static int pending[1600];
            int np = 0;
            for (int i = 0; i < n; i++) {
                const tev *e = &evs[i];
                if (e->kind == 0 && e->side == 0) {
                    int64_t cw = W[0] < W[1] ? W[0] : W[1];
                    if (e->ts <= cw) late++;
                    else if (e->k < 0) {
                        if (left) snprintf(exp[m++], ROWLEN, "+I[l%lld, -]", (long long)e->id);
                    } else pending[np++] = i;
                    continue;
                }
                if (e->kind == 0) continue;
                if (e->wm > W[e->side]) W[e->side] = e->wm;
                int64_t cw = W[0] < W[1] ? W[0] : W[1];
                for (int p = 0; p < np; p++) {
                    const tev *l = &evs[pending[p]];
                    if (l->ts > cw) continue;
                    int best = -1;
                    for (int j = 0; j < i; j++) {
                        const tev *r = &evs[j];
                        if (r->kind || r->side != 1 || r->k != l->k || r->rk == SL_KIND_UPDATE_BEFORE) continue;
                        if (r->ts > l->ts) continue;
                        if (best < 0 || r->ts >= evs[best].ts) best = j;
                    }
                    if (best >= 0 && evs[best].rk != SL_KIND_DELETE)
                        snprintf(exp[m++], ROWLEN, "+I[l%lld, r%lld]", (long long)l->id,
                                 (long long)evs[best].id);
                    else if (left)
                        snprintf(exp[m++], ROWLEN, "+I[l%lld, -]", (long long)l->id);
                    pending[p--] = pending[--np];
                }
            }
            harness h;
            CHECK(plan(&h, "temporal_join", tj_config(left ? "left" : "inner")));
            CHECK_EQ_INT(open_op(&h, bk), SL_OK);
            for (int i = 0; i < n; i++) {
                if (evs[i].kind == 0)
                    CHECK_EQ_INT(feed(&h, evs[i].side, evs[i].rk, evs[i].k, evs[i].ts, evs[i].id), SL_OK);
                else CHECK_EQ_INT(sl_rt_watermark(&h.op, evs[i].side, evs[i].wm), SL_OK);
                /* versions no stream row can reach are gone: per key at most the
                 * ones after the watermark and one before */
                CHECK(sl_kstate_entries(h.op.kstate) < 200);
            }
            if (!same_multiset(&h.log, exp, m)) {
                fprintf(stderr, "seed %d, %s temporal join\n", seed, left ? "left" : "inner");
                CHECK(0);
            }
            CHECK_EQ_INT(h.op.metrics.late_dropped, late);
            CHECK(late > 0 && m > 100);
            teardown(&h);
        }
}

static void test_temporal_random_hashmap(void) { temporal_random(SL_BACKEND_HASHMAP); }
static void test_temporal_random_rocksdb(void) { temporal_random(SL_BACKEND_ROCKSDB); }


/* ---- window join -------------------------------------------------------------------- */

/* The window join's inputs carry one more column, `we`: a row's window is
 * [ts, we) = [ts, ts + 10), ts a multiple of 10 (a TUMBLE of 10 ms). */
static int feed_w(harness *h, int side, int64_t k, int64_t wstart, int64_t id)
{
    char s[32];
    snprintf(s, sizeof s, "%c-%lld", side ? 'R' : 'L', (long long)id);
    sl_value v[NCOLS + 1] = {
        k < 0 ? (sl_value){.isnull = true} : (sl_value){.v.i = k},
        {.v.i = wstart},
        {.v.i = id},
        {.v.s = {s, (uint32_t)strlen(s)}},
        {.v.i = wstart + 10},
    };
    sl_row r = {SL_KIND_INSERT, NCOLS + 1, v, wstart};
    int rc = sl_rt_process(&h->op, side, &r);
    if (rc != SL_OK) fprintf(stderr, "process: %s\n", h->op.err);
    return rc;
}

static int plan_w(harness *h, const char *type)
{
    memset(h, 0, sizeof *h);
    h->v.id = (char *)"j";
    h->v.type = (char *)"window_join";
    h->v.def = sl_op_find("window_join");
    h->v.parallelism = 1;
    snprintf(cfgbuf, sizeof cfgbuf,
             "{\"join-type\": \"%s\", \"left-keys\": [\"k\"], \"right-keys\": [\"k\"], "
             "\"left-window\": [\"ts\", \"we\"], \"right-window\": [\"ts\", \"we\"]}", type);
    h->v.config = json_loads(cfgbuf, 0, NULL);
    for (int s = 0; s < 2; s++) {
        schema_make(&h->ins[s]);
        sl_schema_add(&h->ins[s], "we", SL_T_TIMESTAMP);
    }
    return sl_vertex_plan(&h->v, 2, h->ins, NULL, h->err, sizeof h->err) == SL_OK;
}

static void window_random(sl_backend_kind bk)
{
    static const char *const types[] = {"inner", "left", "right", "full"};
    static ev evs[MAXEV];
    static char exp[MAXEV * 20][ROWLEN];
    static int accepted[MAXEV];
    int total_late = 0, total_rows = 0;
    for (int seed = 1; seed <= 6; seed++)
        for (int ti = 0; ti < 4; ti++) {
            rng_state = 0xda942042e4dd58b5ull * (uint64_t)(seed * 5 + ti + 1);
            int n = gen_stream(evs, 500, 40, 12, 4);
            for (int i = 0; i < n; i++) /* the row's window: [ts / 10 * 10, + 10) */
                if (evs[i].kind == 0) evs[i].ts = evs[i].ts / 10 * 10;
            /* the model */
            int64_t wm[2] = {INT64_MIN, INT64_MIN};
            int late = 0, m = 0;
            for (int i = 0; i < n; i++) {
                accepted[i] = 0;
                if (evs[i].kind == 1) {
                    if (evs[i].wm > wm[evs[i].side]) wm[evs[i].side] = evs[i].wm;
                    continue;
                }
                int64_t W = wm[0] < wm[1] ? wm[0] : wm[1];
                if (evs[i].ts + 9 <= W) late++;
                else accepted[i] = 1;
            }
            int lo = ti == 1 || ti == 3, ro = ti == 2 || ti == 3;
            for (int i = 0; i < n; i++) {
                if (!accepted[i]) continue;
                const ev *a = &evs[i];
                int matched = 0;
                for (int j = 0; j < n; j++) {
                    const ev *b = &evs[j];
                    if (!accepted[j] || b->side == a->side || a->k < 0 || b->k != a->k || b->ts != a->ts) continue;
                    matched = 1;
                    if (a->side == 0)
                        snprintf(exp[m++], ROWLEN, "+I[l%lld, r%lld]", (long long)a->id, (long long)b->id);
                }
                if (!matched && a->side == 0 && lo) snprintf(exp[m++], ROWLEN, "+I[l%lld, -]", (long long)a->id);
                if (!matched && a->side == 1 && ro) snprintf(exp[m++], ROWLEN, "+I[-, r%lld]", (long long)a->id);
            }
            harness h;
            CHECK(plan_w(&h, types[ti]));
            CHECK_EQ_INT(open_op(&h, bk), SL_OK);
            h.log.right_off = NCOLS + 1;
            for (int i = 0; i < n; i++) {
                if (evs[i].kind == 0) CHECK_EQ_INT(feed_w(&h, evs[i].side, evs[i].k, evs[i].ts, evs[i].id), SL_OK);
                else CHECK_EQ_INT(sl_rt_watermark(&h.op, evs[i].side, evs[i].wm), SL_OK);
            }
            CHECK_EQ_INT(sl_rt_end_all(&h.op), SL_OK);
            if (!same_multiset(&h.log, exp, m)) {
                fprintf(stderr, "seed %d, %s window join\n", seed, types[ti]);
                CHECK(0);
            }
            CHECK_EQ_INT(h.op.metrics.late_dropped, late);
            CHECK_EQ_INT(h.log.behind, 0);
            CHECK_EQ_INT(sl_kstate_entries(h.op.kstate), 0);
            total_late += late;
            total_rows += m;
            teardown(&h);
        }
    CHECK(total_late > 0 && total_rows > 1000);
}

static void test_window_random_hashmap(void) { window_random(SL_BACKEND_HASHMAP); }
static void test_window_random_rocksdb(void) { window_random(SL_BACKEND_ROCKSDB); }

/* ---- window TVF ---------------------------------------------------------------- */

typedef struct wrow {
    int64_t id, ws, we, wt, ts;
} wrow;

typedef struct wlog {
    wrow r[64];
    int n;
} wlog;

static int record_w(void *ctx, int output, sl_row *row)
{
    wlog *l = ctx;
    SL_UNUSED(output);
    if (l->n == 64 || row->n != NCOLS + 3) abort();
    l->r[l->n++] = (wrow){row->vals[C_ID].v.i, row->vals[NCOLS].v.i, row->vals[NCOLS + 1].v.i,
                          row->vals[NCOLS + 2].v.i, row->ts};
    return SL_OK;
}

static int cmp_wrow(const void *a, const void *b)
{
    const wrow *x = a, *y = b;
    return x->ws < y->ws ? -1 : x->ws > y->ws ? 1 : x->we < y->we ? -1 : x->we > y->we;
}

/* The windows of each row of a random stream (negative times too) against a
 * model that tries every aligned window near the row; rows of windows behind
 * the watermark are dropped and counted. */
static void test_window_tvf_windows(void)
{
    static const struct {
        const char *cfg;
        int kind;          /* 0 tumble, 1 hop, 2 cumulate */
        int64_t size, slide, offset;
    } cases[] = {
        {"{\"window\":\"TUMBLE\",\"time\":\"ts\",\"size\":\"10 s\"}", 0, 10000, 10000, 0},
        {"{\"window\":\"TUMBLE\",\"time\":\"ts\",\"size\":10000,\"offset\":3000}", 0, 10000, 10000, 3000},
        {"{\"window\":\"HOP\",\"time\":\"ts\",\"slide\":\"4 s\",\"size\":\"10 s\"}", 1, 10000, 4000, 0},
        {"{\"window\":\"CUMULATE\",\"time\":\"ts\",\"step\":\"2 s\",\"size\":\"10 s\"}", 2, 10000, 2000, 0},
    };
    rng_state = 0x77;
    for (size_t c = 0; c < SL_ARRAY_LEN(cases); c++) {
        sl_vertex v = {.id = (char *)"w", .type = (char *)"window_tvf", .parallelism = 1};
        v.def = sl_op_find("window_tvf");
        v.config = json_loads(cases[c].cfg, 0, NULL);
        sl_schema in;
        schema_make(&in);
        char err[512];
        CHECK(v.config && sl_vertex_plan(&v, 1, &in, NULL, err, sizeof err) == SL_OK);
        sl_op op = {0};
        sl_rt_init(&op, &v, 0, 128);
        wlog log = {0};
        op.emit = record_w;
        op.emit_ctx = &log;
        op.out_connected[0] = 1;
        op.task_name = "w (1/1)";
        CHECK(sl_rt_open(&op, SL_BACKEND_HASHMAP, NULL) == SL_OK);
        int64_t wm = INT64_MIN;
        uint64_t late = 0;
        for (int i = 0; i < 300; i++) {
            if (i == 150) {
                wm = -5000;
                CHECK(sl_rt_watermark(&op, 0, wm) == SL_OK);
            }
            int64_t ts = rnd_in(-40000, 40000);
            sl_value vals[NCOLS] = {{.v.i = 1}, {.v.i = ts}, {.v.i = i}, {.v.s = {"L", 1}}};
            sl_row r = {SL_KIND_INSERT, NCOLS, vals, ts};
            log.n = 0;
            CHECK(sl_rt_process(&op, 0, &r) == SL_OK);
            wrow want[64];
            int nw = 0;
            int64_t sz = cases[c].size, sl = cases[c].slide, off = cases[c].offset;
            int64_t step = cases[c].kind == 1 ? sl : sz;
            for (int64_t n = -60000 / step - 3; n <= 60000 / step + 3; n++) {
                int64_t st = n * step + off;
                for (int64_t e = st + (cases[c].kind == 2 ? sl : sz); e <= st + sz;
                     e += cases[c].kind == 2 ? sl : sz)
                    if (st <= ts && ts < e) {
                        want[nw++] = (wrow){i, st, e, e - 1, e - 1};
                        if (e - 1 <= wm) late++; /* late, and out all the same (Flink's TVF) */
                    }
            }
            qsort(log.r, (size_t)log.n, sizeof *log.r, cmp_wrow);
            qsort(want, (size_t)nw, sizeof *want, cmp_wrow);
            CHECK_EQ_INT(log.n, nw);
            CHECK(log.n == nw && !memcmp(log.r, want, sizeof *want * (size_t)nw));
        }
        CHECK(late > 0); /* windows the watermark had passed went out too */
        CHECK_EQ_INT((long long)op.metrics.late_dropped, 0);
        sl_rt_close(&op);
        sl_vertex_plan_free(&v);
        sl_schema_free(&in);
        json_decref(v.config);
    }
}

static void test_window_tvf_plan_errors(void)
{
    static const struct {
        const char *cfg, *msg;
    } bad[] = {
        {"{\"window\":\"SESSION\",\"time\":\"ts\",\"size\":1000}", "'window' must be TUMBLE, HOP or CUMULATE"},
        {"{\"window\":\"TUMBLE\",\"time\":\"id\",\"size\":1000}", "'time' must name a TIMESTAMP column"},
        {"{\"window\":\"TUMBLE\",\"time\":\"ts\",\"size\":0}", "'size' must be a positive interval"},
        {"{\"window\":\"HOP\",\"time\":\"ts\",\"size\":1000,\"slide\":2000}", "'slide' must be positive and at most 'size'"},
        {"{\"window\":\"CUMULATE\",\"time\":\"ts\",\"size\":1000,\"step\":300}", "must be a multiple of its step"},
        {"{\"window\":\"HOP\",\"time\":\"ts\",\"size\":1000,\"slide\":500,\"offset\":500}", "'offset' must be less than 'slide'"},
        {"{\"window\":\"TUMBLE\",\"time\":\"ts\",\"size\":1000,\"offset\":1000}", "'offset' must be less than 'size'"},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(bad); i++) {
        sl_vertex v = {.id = (char *)"w", .type = (char *)"window_tvf", .parallelism = 1};
        v.def = sl_op_find("window_tvf");
        v.config = json_loads(bad[i].cfg, 0, NULL);
        sl_schema in;
        schema_make(&in);
        char err[512] = "";
        CHECK(sl_vertex_plan(&v, 1, &in, NULL, err, sizeof err) != SL_OK);
        if (!strstr(err, bad[i].msg)) fprintf(stderr, "case %zu: %s\n", i, err);
        CHECK(strstr(err, bad[i].msg) != NULL);
        sl_vertex_plan_free(&v);
        sl_schema_free(&in);
        json_decref(v.config);
    }
}

SL_TEST_MAIN(SL_TEST(test_window_tvf_windows), SL_TEST(test_window_tvf_plan_errors),
             SL_TEST(test_interval_plan_errors), SL_TEST(test_interval_scripted_hashmap),
             SL_TEST(test_interval_scripted_rocksdb), SL_TEST(test_interval_random_hashmap),
             SL_TEST(test_interval_random_rocksdb), SL_TEST(test_regular_scripted_hashmap),
             SL_TEST(test_regular_scripted_rocksdb), SL_TEST(test_regular_ttl_hashmap),
             SL_TEST(test_regular_ttl_rocksdb), SL_TEST(test_regular_ttl_again_hashmap),
             SL_TEST(test_regular_ttl_again_rocksdb), SL_TEST(test_regular_random_hashmap),
             SL_TEST(test_regular_random_rocksdb), SL_TEST(test_regular_condition_hashmap),
             SL_TEST(test_regular_condition_rocksdb), SL_TEST(test_regular_condition_errors),
             SL_TEST(test_semi_anti_hashmap), SL_TEST(test_semi_anti_rocksdb),
             SL_TEST(test_regular_hot_key_hashmap),
             SL_TEST(test_regular_hot_key_rocksdb), SL_TEST(test_temporal_scripted_hashmap),
             SL_TEST(test_temporal_scripted_rocksdb), SL_TEST(test_temporal_random_hashmap),
             SL_TEST(test_temporal_random_rocksdb), SL_TEST(test_window_random_hashmap),
             SL_TEST(test_window_random_rocksdb))
