/*
 * test_over.c -- unit tests for the over_aggregate operator
 * (operators/over_aggregate.c).
 *
 * The operator runs through the runtime's own calls (sl_rt_init, sl_rt_open,
 * sl_rt_process, sl_rt_watermark, sl_rt_end_input) with keyed state and
 * timers opened by the runtime for each subtask's key groups; every row goes
 * to the subtask owning its partition key's key group, as the exchange
 * sends it. Seeded rows (id, k, v, ts) arrive with times out of order by up
 * to 490 ms, with equal times (peers), and now and then a row far behind
 * the watermark; a watermark follows every few rows.
 *
 * Every result is checked against a brute-force model kept here: it replays
 * the arrivals to find the late rows (time at or before the watermark the
 * row meets), sorts each partition's other rows by (time, arrival) and
 * computes each frame from its definition -- ROWS n PRECEDING: the row and
 * the n before it; RANGE p PRECEDING: every row with time in [T - p, T]
 * (peers share their values); UNBOUNDED: from the partition's start (RANGE:
 * including the peers) -- for SUM, COUNT(*), MIN, MAX, AVG, ROW_NUMBER(),
 * FIRST_VALUE and LAST_VALUE of a column with NULLs, and (UNBOUNDED) LAG(v,
 * 2, id). Each non-late row comes out exactly once and the late ones are
 * counted in numLateRecordsDropped. The state left at the end is what the
 * frame needs (RANGE: only the per-key meta value; ROWS n: the last n rows;
 * UNBOUNDED: the first and last values and LAG's last 3).
 *
 * Each frame runs on both backends uninterrupted, and cut midway: the keyed
 * state and the timers of every subtask are snapshotted and re-dealt by key
 * group into another number of subtasks on the other backend (as a restore
 * after rescaling does), and the run goes on; its results must equal the
 * uninterrupted run's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobgraph.h"
#include "keygroup.h"
#include "operator.h"
#include "runtime.h"
#include "state.h"
#include "timers.h"
#include "sl_test.h"

extern const sl_op_def sl_op_over_aggregate;

#define MAXP 4
#define MAXKG 128
#define NROWS 1600
#define NKEYS 5
#define NOUT 12 /* s, c, mn, mx, a, rn, f, l, mnn, mxn, cn, g (LAG: UNBOUNDED frames only) */
#define CHUNK 32 /* frame records per state entry (over_aggregate.c's OV_CHUNK) */
#define NUL (-999) /* a NULL result */
#define NCOLS 5

/* ---- the input ---------------------------------------------------------------- */

typedef struct in_row {
    int64_t id, k, v, ts, nv; /* nv: v, or NULL (NUL) now and then */
} in_row;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#define BASE 1700000000000LL

static in_row g_rows[NROWS];
static int64_t g_wm_after[NROWS]; /* watermark delivered after row i (INT64_MIN: none) */

/* Row i: time i * 10 ms plus up to 490 ms, on a 20 ms grid (peers); every
 * 61st row an hour behind (late); now and then one at exactly the last
 * watermark (late) or 20 ms after it (not late); a watermark of max time -
 * 480 ms after every 7th row. */
static void gen_rows(uint64_t seed)
{
    int64_t maxts = INT64_MIN, wm = INT64_MIN;
    for (int i = 0; i < NROWS; i++) {
        uint64_t r = splitmix(&seed);
        in_row *x = &g_rows[i];
        x->id = i + 1;
        x->k = (int64_t)(r % NKEYS);
        x->v = (int64_t)((r >> 8) % 100);
        x->nv = (r >> 40) % 4 == 0 ? NUL : x->v;
        x->ts = BASE + (i * 10 + (int64_t)((r >> 20) % 50) * 10) / 20 * 20;
        if (i > 50 && i % 61 == 0) x->ts = BASE + i * 10 - 3600000;
        if (wm != INT64_MIN && i % 83 == 40) x->ts = wm;      /* late: at the watermark */
        if (wm != INT64_MIN && i % 83 == 41) x->ts = wm + 20; /* just in time */
        if (x->ts > maxts) maxts = x->ts;
        g_wm_after[i] = i % 7 == 6 ? maxts - 480 : INT64_MIN;
        if (g_wm_after[i] != INT64_MIN) wm = g_wm_after[i];
    }
}

/* ---- the model ----------------------------------------------------------------- */

typedef struct result {
    int64_t v[NOUT];
    int seen; /* times emitted */
} result;

typedef struct frame_cfg {
    const char *name;
    int rows;           /* ROWS, else RANGE */
    int64_t preceding;  /* rows or ms; -1: UNBOUNDED */
    int partitioned;    /* PARTITION BY k */
} frame_cfg;

static int g_late[NROWS];
static int g_nlate, g_nlate_equal; /* late rows, those with the watermark's time */

static int by_time(const void *a, const void *b)
{
    const in_row *x = &g_rows[*(const int *)a], *y = &g_rows[*(const int *)b];
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void mark_late(void)
{
    int64_t wm = INT64_MIN;
    g_nlate = g_nlate_equal = 0;
    for (int i = 0; i < NROWS; i++) {
        g_late[i] = g_rows[i].ts <= wm;
        g_nlate += g_late[i];
        g_nlate_equal += g_rows[i].ts == wm;
        if (g_wm_after[i] != INT64_MIN && g_wm_after[i] > wm) wm = g_wm_after[i];
    }
}

/* want[id - 1] for frame f; *held: the rows ROWS n keeps at the end. */
static void model(const frame_cfg *f, result *want, int *held)
{
    static int idx[NROWS];
    memset(want, 0, sizeof *want * NROWS);
    *held = 0;
    for (int part = 0; part < (f->partitioned ? NKEYS : 1); part++) {
        int n = 0;
        for (int i = 0; i < NROWS; i++)
            if (!g_late[i] && (!f->partitioned || g_rows[i].k == part)) idx[n++] = i;
        qsort(idx, (size_t)n, sizeof *idx, by_time);
        for (int j = 0; j < n; j++) {
            int64_t T = g_rows[idx[j]].ts;
            int lo = 0, hi = j; /* frame: idx[lo..hi] */
            if (f->rows) {
                if (f->preceding >= 0 && j - f->preceding > 0) lo = j - (int)f->preceding;
            } else {
                while (hi + 1 < n && g_rows[idx[hi + 1]].ts == T) hi++; /* peers */
                if (f->preceding >= 0)
                    while (g_rows[idx[lo]].ts < T - f->preceding) lo++;
            }
            int64_t s = 0, mn = INT64_MAX, mx = INT64_MIN;
            for (int q = lo; q <= hi; q++) {
                int64_t v = g_rows[idx[q]].v;
                s += v;
                if (v < mn) mn = v;
                if (v > mx) mx = v;
            }
            int64_t c = hi - lo + 1, fv = NUL, lv = NUL, mnn = NUL, mxn = NUL, cn = 0;
            for (int q = lo; q <= hi; q++) {
                int64_t v = g_rows[idx[q]].nv;
                if (v == NUL) continue;
                if (fv == NUL) fv = v;
                lv = v;
                if (mnn == NUL || v < mnn) mnn = v;
                if (mxn == NUL || v > mxn) mxn = v;
                cn++;
            }
            result *w = &want[g_rows[idx[j]].id - 1];
            w->v[6] = fv;
            w->v[7] = lv;
            w->v[8] = mnn;
            w->v[9] = mxn;
            w->v[10] = cn;
            /* LAG(v, 2, id): 2 rows before the frame's last (peers: the last peer) */
            w->v[11] = f->preceding >= 0 ? 0 : hi >= 2 ? g_rows[idx[hi - 2]].v : g_rows[idx[j]].id;
            w->v[0] = s;
            w->v[1] = c;
            w->v[2] = mn;
            w->v[3] = mx;
            w->v[4] = s / c;
            w->v[5] = j + 1;
            w->seen = 1;
        }
        /* ROWS n keeps the last n of the partition's n rows, numbered from
         * 0 in the order they came out: an entry per full chunk of CHUNK
         * (the last, partial one is in the key's meta value) */
        if (f->rows && f->preceding > 0 && n > 0) {
            int kept = n < f->preceding ? n : (int)f->preceding, head = n - kept;
            *held += n / CHUNK - head / CHUNK;
        }
    }
}

/* ---- the operator through the runtime ------------------------------------------- */

typedef struct stage {
    int p;
    sl_vertex v;
    sl_schema in, out;
    void *plan;
    sl_op op[MAXP];
    char dir[MAXP][64];
    char err[512];
    result *got;
} stage;

static void schema_of(sl_schema *s)
{
    sl_schema_init(s);
    sl_schema_add(s, "id", SL_T_BIGINT);
    sl_schema_add(s, "k", SL_T_BIGINT);
    sl_schema_add(s, "v", SL_T_INT);
    sl_schema_add(s, "ts", SL_T_TIMESTAMP);
    sl_schema_add(s, "nv", SL_T_INT);
}

static void (*g_schema)(sl_schema *s) = schema_of; /* the stages' input */

static int record(void *ctx, int output, sl_row *row)
{
    result *got = ctx;
    SL_UNUSED(output);
    int64_t id = row->vals[0].v.i;
    int nout = row->n - NCOLS;
    if (row->kind != SL_KIND_INSERT || (nout != NOUT && nout != NOUT - 1) || id < 1 || id > NROWS) {
        fprintf(stderr, "unexpected output row (id %lld, %d columns)\n", (long long)id, row->n);
        return SL_ERR;
    }
    result *r = &got[id - 1];
    for (int i = 0; i < nout; i++) r->v[i] = row->vals[NCOLS + i].isnull ? NUL : row->vals[NCOLS + i].v.i;
    r->seen++;
    if (row->ts != row->vals[3].v.i) {
        fprintf(stderr, "id %lld: row time %lld, not its ts\n", (long long)id, (long long)row->ts);
        return SL_ERR;
    }
    return SL_OK;
}

static char *config_of(const frame_cfg *f)
{
    static char buf[512];
    char pre[32];
    if (f->preceding < 0) snprintf(pre, sizeof pre, "unbounded");
    else snprintf(pre, sizeof pre, "%lld", (long long)f->preceding);
    snprintf(buf, sizeof buf,
             "{\"partition-by\": %s, \"order-by\": \"ts\", \"frame\": \"%s\", \"preceding\": \"%s\","
             " \"aggregates\": [\"SUM(v) AS s\", \"COUNT(*) AS c\", \"MIN(v) AS mn\","
             " \"MAX(v) AS mx\", \"AVG(v) AS a\", \"ROW_NUMBER() AS rn\", \"FIRST_VALUE(nv) AS f\","
             " \"LAST_VALUE(nv) AS l\", \"MIN(nv) AS mnn\", \"MAX(nv) AS mxn\","
             " \"COUNT(nv) AS cn\"%s]}",
             f->partitioned ? "[\"k\"]" : "[]", f->rows ? "rows" : "range", pre,
             f->preceding < 0 ? ", \"LAG(v, 2, id) AS g\"" : "");
    return buf;
}

static int stage_open(stage *s, int p, sl_backend_kind bk, const char *config, result *got)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->got = got;
    s->v.id = (char *)"over";
    s->v.type = (char *)"over_aggregate";
    s->v.parallelism = p;
    s->v.config = sl_test_config(config);
    g_schema(&s->in);
    s->plan = sl_test_plan(&sl_op_over_aggregate, &s->v, &s->in, &s->out, s->err, sizeof s->err);
    if (!s->plan) return SL_ERR;
    for (int i = 0; i < p; i++) {
        sl_op *op = &s->op[i];
        sl_test_rt_init(op, &s->v, i, MAXKG, record, NULL, got, "over");
        op->plan = s->plan;
        if (sl_test_rt_open(op, bk, s->dir[i], sizeof s->dir[i], "over", s->err, sizeof s->err) !=
            SL_OK)
            return SL_ERR;
    }
    return SL_OK;
}

static void stage_close(stage *s)
{
    for (int i = 0; i < s->p; i++) sl_test_rt_close(&s->op[i], s->dir[i]);
    if (s->plan) sl_op_over_aggregate.plan_free(s->plan);
    sl_vertex_plan_free(&s->v);
    json_decref(s->v.config);
    sl_schema_free(&s->in);
    sl_schema_free(&s->out);
}

static int fill(const in_row *x, sl_value vals[NCOLS])
{
    memset(vals, 0, sizeof *vals * NCOLS);
    vals[0].v.i = x->id;
    vals[1].v.i = x->k;
    vals[2].v.i = x->v;
    vals[3].v.i = x->ts;
    vals[4].isnull = x->nv == NUL;
    vals[4].v.i = x->nv == NUL ? 0 : x->nv;
    return NCOLS;
}

/* The subtask owning x's partition key, as the exchange routes it. */
static sl_op *owner(stage *s, const frame_cfg *f, const in_row *x)
{
    sl_value vals[NCOLS];
    sl_row r = {SL_KIND_INSERT, fill(x, vals), vals, x->ts};
    int k1 = 1;
    uint8_t key[64];
    size_t n = sl_row_key_encode(&r, &s->in, &k1, f->partitioned ? 1 : 0, key, sizeof key);
    int kg = sl_kg_of_key(key, n, MAXKG);
    return &s->op[sl_kg_operator_index(kg, s->p, MAXKG)];
}

/* Rows [from, to) and the watermarks after them. */
static int feed(stage *s, const frame_cfg *f, int from, int to)
{
    for (int i = from; i < to; i++) {
        const in_row *x = &g_rows[i];
        sl_value vals[NCOLS];
        sl_row r = {SL_KIND_INSERT, fill(x, vals), vals, x->ts};
        sl_op *op = owner(s, f, x);
        if (sl_rt_process(op, 0, &r) != SL_OK) {
            fprintf(stderr, "process: %s\n", op->err);
            return SL_ERR;
        }
        if (g_wm_after[i] == INT64_MIN) continue;
        for (int j = 0; j < s->p; j++)
            if (sl_rt_watermark(&s->op[j], 0, g_wm_after[i]) != SL_OK) {
                fprintf(stderr, "watermark: %s\n", s->op[j].err);
                return SL_ERR;
            }
    }
    return SL_OK;
}

static int end(stage *s)
{
    for (int j = 0; j < s->p; j++)
        if (sl_rt_end_input(&s->op[j], 0) != SL_OK) {
            fprintf(stderr, "end: %s\n", s->op[j].err);
            return SL_ERR;
        }
    return SL_OK;
}

static uint64_t late_dropped(const stage *s)
{
    uint64_t n = 0;
    for (int j = 0; j < s->p; j++) n += s->op[j].metrics.late_dropped;
    return n;
}

/* A snapshot of every subtask of `from`'s keyed state and timers, dealt by
 * key group into `to` (NULL: only count the entries into *entries). */
static int redeal(stage *from, stage *to, uint64_t *entries)
{
    return sl_test_redeal(from->op, from->p, to ? to->op : NULL, to ? to->p : 0, MAXKG, &sl_op_over_aggregate,
                          entries);
}

static int same(const result *got, const result *want, const char *what)
{
    for (int i = 0; i < NROWS; i++) {
        if (got[i].seen != want[i].seen || memcmp(got[i].v, want[i].v, sizeof got[i].v) != 0) {
            fprintf(stderr, "%s: id %d: seen %d (want %d); s c mn mx a rn f l g =", what, i + 1,
                    got[i].seen, want[i].seen);
            for (int k = 0; k < NOUT; k++) fprintf(stderr, " %lld", (long long)got[i].v[k]);
            fprintf(stderr, ", want");
            for (int k = 0; k < NOUT; k++) fprintf(stderr, " %lld", (long long)want[i].v[k]);
            fprintf(stderr, "\n");
            return 0;
        }
    }
    return 1;
}

static const sl_backend_kind backends[] = {SL_BACKEND_HASHMAP, SL_BACKEND_ROCKSDB};

/* Frame f on both backends: uninterrupted at parallelism p1, and cut at
 * row `cut` with the state re-dealt into p2 subtasks on the other backend. */
static void check_frame(const frame_cfg *f, int p1, int p2, int cut)
{
    static result want[NROWS], plain[NROWS], rescaled[NROWS];
    int held;
    gen_rows(0x5eed0000u + (uint64_t)p1 * 16 + (uint64_t)p2);
    mark_late();
    model(f, want, &held);
    CHECK(g_nlate >= 20 && g_nlate_equal >= 1);
    const char *cfg = config_of(f);
    for (int b = 0; b < 2; b++) {
        stage s, t;
        memset(plain, 0, sizeof plain);
        CHECK_EQ_INT(stage_open(&s, p1, backends[b], cfg, plain), SL_OK);
        CHECK_EQ_INT(feed(&s, f, 0, NROWS), SL_OK);
        CHECK_EQ_INT(end(&s), SL_OK);
        CHECK(same(plain, want, f->name));
        CHECK_EQ_INT(late_dropped(&s), g_nlate);
        uint64_t entries = 0;
        CHECK_EQ_INT(redeal(&s, NULL, &entries), SL_OK);
        /* one meta value per key; ROWS n keeps the last n rows of each in
         * frame chunks (RANGE: none once the clean-up timers have fired);
         * UNBOUNDED: the first and last values and LAG's 3 of each */
        CHECK_EQ_INT(entries, (f->partitioned ? NKEYS : 1) * (f->preceding < 0 ? 6 : 1) + held);
        for (int j = 0; j < s.p; j++) {
            CHECK_EQ_INT(sl_timers_count(s.op[j].event_timers), 0);
            CHECK_EQ_INT(sl_timers_count(s.op[j].proc_timers), 0);
        }
        stage_close(&s);

        memset(rescaled, 0, sizeof rescaled);
        CHECK_EQ_INT(stage_open(&s, p1, backends[b], cfg, rescaled), SL_OK);
        CHECK_EQ_INT(feed(&s, f, 0, cut), SL_OK);
        CHECK_EQ_INT(stage_open(&t, p2, backends[1 - b], cfg, rescaled), SL_OK);
        CHECK_EQ_INT(redeal(&s, &t, NULL), SL_OK);
        uint64_t late1 = late_dropped(&s);
        stage_close(&s);
        /* the watermark goes on where it was (the source's next one) */
        int64_t wm = INT64_MIN;
        for (int i = 0; i < cut; i++)
            if (g_wm_after[i] > wm) wm = g_wm_after[i];
        for (int j = 0; j < t.p; j++) CHECK_EQ_INT(sl_rt_watermark(&t.op[j], 0, wm), SL_OK);
        CHECK_EQ_INT(feed(&t, f, cut, NROWS), SL_OK);
        CHECK_EQ_INT(end(&t), SL_OK);
        CHECK_EQ_INT(late1 + late_dropped(&t), g_nlate);
        stage_close(&t);
        CHECK(same(rescaled, plain, f->name));
    }
}

static void test_rows_bounded(void)
{
    frame_cfg f = {"ROWS 3 PRECEDING", 1, 3, 1};
    check_frame(&f, 1, 3, NROWS / 2);
    check_frame(&f, 3, 2, NROWS / 3);
}

static void test_rows_unbounded(void)
{
    frame_cfg f = {"ROWS UNBOUNDED PRECEDING", 1, -1, 1};
    check_frame(&f, 2, 1, NROWS / 2);
}

static void test_range_bounded(void)
{
    frame_cfg f = {"RANGE 300 ms PRECEDING", 0, 300, 1};
    check_frame(&f, 2, 1, NROWS / 2);
    check_frame(&f, 1, 4, NROWS * 2 / 3);
}

static void test_range_unbounded(void)
{
    frame_cfg f = {"RANGE UNBOUNDED PRECEDING", 0, -1, 1};
    check_frame(&f, 2, 3, NROWS / 2);
}

static void test_no_partition(void)
{
    frame_cfg f = {"RANGE 200 ms PRECEDING, no PARTITION BY", 0, 200, 0};
    check_frame(&f, 1, 2, NROWS / 2);
    frame_cfg g = {"ROWS 5 PRECEDING, no PARTITION BY", 1, 5, 0};
    check_frame(&g, 2, 1, NROWS / 2);
}

/* Frames of more rows than a state entry holds (about 50 rows a key), and
 * ROWS 0 (the frame empties after every row). */
static void test_large_frames(void)
{
    frame_cfg f = {"ROWS 40 PRECEDING", 1, 40, 1};
    check_frame(&f, 2, 3, NROWS / 2);
    frame_cfg g = {"RANGE 2500 ms PRECEDING", 0, 2500, 1};
    check_frame(&g, 3, 1, NROWS * 2 / 5);
    frame_cfg h = {"ROWS 0 PRECEDING", 1, 0, 1};
    check_frame(&h, 1, 2, NROWS / 2);
    frame_cfg z = {"RANGE 0 ms PRECEDING", 0, 0, 1};
    check_frame(&z, 2, 1, NROWS / 2);
}

/* A snapshot of state version 1 (an entry of "over-rows", id 0, or
 * "over-meta", id 1) is refused on restore, naming the vertex and the
 * version. */
static void test_old_layout_refused(void)
{
    frame_cfg f = {"RANGE 300 ms PRECEDING", 0, 300, 1};
    for (int sid = 0; sid < 2; sid++) {
        stage s;
        result *got = calloc(NROWS, sizeof *got);
        CHECK_EQ_INT(stage_open(&s, 1, SL_BACKEND_HASHMAP, config_of(&f), got), SL_OK);
        sl_op *op = &s.op[0];
        uint8_t key[8] = {0}, ns[16] = {0}, val[9] = {0};
        sl_kentry e = {.sid = sid, .kg = op->kg_first, .key = key, .klen = sizeof key,
                       .ns = ns, .nslen = sizeof ns, .val = val, .vlen = sizeof val};
        char err[256];
        CHECK_EQ_INT(sl_kstate_restore(op->kstate, &e, err, sizeof err), SL_OK);
        CHECK_EQ_INT(sl_op_over_aggregate.restore_state(op, NULL, NULL, 0), SL_ERR);
        CHECK(strstr(op->err, "version 1") != NULL);
        CHECK(strstr(op->err, "vertex 'over'") != NULL);
        stage_close(&s);
        free(got);
    }
}

/* ---- STRING MIN/MAX over an UNBOUNDED frame ------------------------------------------ */

#define NSTR 3000
#define SKEYS 3
#define SLEN 12

static char g_str[NSTR][SLEN + 1]; /* row i's string ("" with g_slen 0 is the empty one) */
static int g_slen[NSTR];           /* -1: NULL */
static char g_smin[NSTR][SLEN + 1], g_smax[NSTR][SLEN + 1]; /* what came out ("~": NULL) */
static int g_sseen[NSTR];

static void str_schema(sl_schema *s)
{
    sl_schema_init(s);
    sl_schema_add(s, "id", SL_T_BIGINT);
    sl_schema_add(s, "k", SL_T_BIGINT);
    sl_schema_add(s, "s", SL_T_STRING);
    sl_schema_add(s, "ts", SL_T_TIMESTAMP);
}

static int str_record(void *ctx, int output, sl_row *row)
{
    SL_UNUSED(ctx);
    SL_UNUSED(output);
    int64_t id = row->vals[0].v.i;
    if (row->n != 6 || id < 0 || id >= NSTR) return SL_ERR;
    char *out[2] = {g_smin[id], g_smax[id]};
    for (int j = 0; j < 2; j++) {
        const sl_value *x = &row->vals[4 + j];
        if (x->isnull) {
            strcpy(out[j], "~");
        } else {
            if (x->v.s.len > SLEN) return SL_ERR;
            memcpy(out[j], x->v.s.p, x->v.s.len);
            out[j][x->v.s.len] = '\0';
        }
    }
    g_sseen[id]++;
    return SL_OK;
}

/* Strings in Flink's StringData order: unsigned bytes, then length. */
static int str_cmp(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), n = la < lb ? la : lb;
    int c = memcmp(a, b, n);
    return c ? c : (la > lb) - (la < lb);
}

static sl_op *str_owner(stage *s, int64_t k)
{
    sl_value vals[4] = {{.v.i = 0}, {.v.i = k}, {.isnull = true}, {.v.i = 0}};
    sl_row r = {SL_KIND_INSERT, 4, vals, 0};
    int k1 = 1;
    uint8_t key[64];
    size_t n = sl_row_key_encode(&r, &s->in, &k1, 1, key, sizeof key);
    return &s->op[sl_kg_operator_index(sl_kg_of_key(key, n, MAXKG), s->p, MAXKG)];
}

static int str_feed(stage *s, int from, int to)
{
    for (int i = from; i < to; i++) {
        sl_value vals[4] = {{.v.i = i}, {.v.i = i % SKEYS}, {.isnull = g_slen[i] < 0},
                            {.v.i = 1000 + i}};
        vals[2].v.s.p = g_str[i];
        vals[2].v.s.len = g_slen[i] < 0 ? 0 : (uint32_t)g_slen[i];
        sl_row r = {SL_KIND_INSERT, 4, vals, 1000 + i};
        sl_op *op = str_owner(s, i % SKEYS);
        if (sl_rt_process(op, 0, &r) != SL_OK) {
            fprintf(stderr, "process: %s\n", op->err);
            return SL_ERR;
        }
    }
    return SL_OK;
}

static const char *str_config =
    "{\"partition-by\": [\"k\"], \"order-by\": \"ts\", \"time\": \"processing\", "
    "\"frame\": \"rows\", \"preceding\": \"unbounded\", "
    "\"aggregates\": [\"MIN(s) AS mn\", \"MAX(s) AS mx\"]}";

/* An UNBOUNDED frame's MIN/MAX of a STRING over thousands of distinct strings
 * (bytes above 0x7f, prefixes of each other, the empty string, NULLs): every
 * row's values equal a running extremum's, and the state left is one meta
 * value and one extremum per item and key -- not the distinct strings. */
static void test_string_minmax_unbounded(void)
{
    uint64_t seed = 0x5717;
    static const char alpha[] = "ab\x7f\x80\xe9z";
    for (int i = 0; i < NSTR; i++) {
        uint64_t r = splitmix(&seed);
        g_slen[i] = i % 11 == 3 ? -1 : i % 97 == 5 ? 0 : 1 + (int)(r % SLEN);
        for (int j = 0; j < g_slen[i]; j++) g_str[i][j] = alpha[splitmix(&seed) % 6];
        g_str[i][g_slen[i] < 0 ? 0 : g_slen[i]] = '\0';
    }
    g_schema = str_schema;
    for (int b = 0; b < 2; b++) {
        stage s;
        memset(g_sseen, 0, sizeof g_sseen);
        CHECK_EQ_INT(stage_open(&s, 2, backends[b], str_config, NULL), SL_OK);
        for (int j = 0; j < s.p; j++) s.op[j].emit = str_record;
        CHECK_EQ_INT(str_feed(&s, 0, NSTR), SL_OK);
        const char *mn[SKEYS] = {0}, *mx[SKEYS] = {0};
        for (int i = 0; i < NSTR; i++) {
            int k = i % SKEYS;
            if (g_slen[i] >= 0) {
                if (!mn[k] || str_cmp(g_str[i], mn[k]) < 0) mn[k] = g_str[i];
                if (!mx[k] || str_cmp(g_str[i], mx[k]) > 0) mx[k] = g_str[i];
            }
            CHECK_EQ_INT(g_sseen[i], 1);
            CHECK_EQ_STR(g_smin[i], mn[k] ? mn[k] : "~");
            CHECK_EQ_STR(g_smax[i], mx[k] ? mx[k] : "~");
        }
        uint64_t entries = 0;
        CHECK_EQ_INT(redeal(&s, NULL, &entries), SL_OK);
        CHECK_EQ_INT(entries, SKEYS * 3);
        stage_close(&s);
    }
    g_schema = schema_of;
}

/* State written before 2026-12-08 (an UNBOUNDED frame's STRING MIN/MAX
 * counting each distinct string in "over-distinct", id 6: u16 item, the
 * bytes -> i64 copies) restores: the key's next row reads its extremum from
 * those entries, which then go. */
static void test_string_minmax_old_layout(void)
{
    g_schema = str_schema;
    stage s;
    memset(g_sseen, 0, sizeof g_sseen);
    CHECK_EQ_INT(stage_open(&s, 1, SL_BACKEND_ROCKSDB, str_config, NULL), SL_OK);
    sl_op *op = &s.op[0];
    op->emit = str_record;
    sl_value kv[4] = {{.v.i = 0}, {.v.i = 1}, {.isnull = true}, {.v.i = 0}};
    sl_row kr = {SL_KIND_INSERT, 4, kv, 0};
    int k1 = 1;
    uint8_t key[64];
    size_t klen = sl_row_key_encode(&kr, &s.in, &k1, 1, key, sizeof key);
    static const char *const old[] = {"m", "c", "x", "cc"};
    for (int item = 0; item < 2; item++)
        for (int j = 0; j < 4; j++) {
            uint8_t ns[8] = {0, (uint8_t)item}, cnt[8] = {(uint8_t)(j + 1)};
            memcpy(ns + 2, old[j], strlen(old[j]));
            sl_kentry e = {.sid = 6, .kg = sl_kg_of_key(key, klen, MAXKG), .key = key,
                           .klen = klen, .ns = ns, .nslen = 2 + strlen(old[j]), .val = cnt,
                           .vlen = 8};
            char err[256];
            CHECK_EQ_INT(sl_kstate_restore(op->kstate, &e, err, sizeof err), SL_OK);
        }
    CHECK_EQ_INT(sl_op_over_aggregate.restore_state(op, NULL, NULL, 0), SL_OK);
    uint64_t entries = 0;
    CHECK_EQ_INT(redeal(&s, NULL, &entries), SL_OK);
    CHECK_EQ_INT(entries, 8);
    strcpy(g_str[1], "d"), g_slen[1] = 1; /* key 1 */
    strcpy(g_str[2], "zz"), g_slen[2] = 2; /* key 2: no old state */
    CHECK_EQ_INT(str_feed(&s, 1, 3), SL_OK);
    CHECK_EQ_STR(g_smin[1], "c");
    CHECK_EQ_STR(g_smax[1], "x");
    CHECK_EQ_STR(g_smin[2], "zz");
    CHECK_EQ_STR(g_smax[2], "zz");
    strcpy(g_str[4], "zzz"), g_slen[4] = 3; /* key 1 again: from the new entries */
    CHECK_EQ_INT(str_feed(&s, 4, 5), SL_OK);
    CHECK_EQ_STR(g_smin[4], "c");
    CHECK_EQ_STR(g_smax[4], "zzz");
    CHECK_EQ_INT(redeal(&s, NULL, &entries), SL_OK);
    CHECK_EQ_INT(entries, 2 * 3); /* per key: its meta value and two extrema */
    stage_close(&s);
    g_schema = schema_of;
}

SL_TEST_MAIN(SL_TEST(test_string_minmax_unbounded), SL_TEST(test_string_minmax_old_layout),
             SL_TEST(test_rows_bounded), SL_TEST(test_large_frames), SL_TEST(test_old_layout_refused), SL_TEST(test_rows_unbounded),
             SL_TEST(test_range_bounded), SL_TEST(test_range_unbounded),
             SL_TEST(test_no_partition))
