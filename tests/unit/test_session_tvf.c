/*
 * test_session_tvf.c -- unit tests for the session_tvf operator
 * (operators/window_tvf.c): SESSION window TVF rows without aggregation.
 *
 * The operator runs through the runtime's own calls with keyed state and
 * timers per subtask; each row goes to the subtask owning its key's key
 * group. Seeded rows (id, k, ts) arrive out of order, some far behind; a
 * watermark (max ts - 1 s) follows every row. A model kept here replays the
 * arrivals: per key, a row opens [ts, ts + gap), merged with every open
 * session it touches; the row is late (dropped, counted) when the merged
 * session ends at or before the watermark; a session fires once the
 * watermark reaches its last millisecond (all at the end of input). Every
 * other row must come out exactly once with its session's window_start,
 * window_end and window_time = window_end - 1, on both backends, and the
 * same when the run is cut midway and its keyed state and timers are dealt
 * by key group into another number of subtasks on the other backend (as a
 * rescaled restore does). The state left at the end is empty.
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

extern const sl_op_def sl_op_session_tvf;

#define MAXP 4
#define MAXKG 128
#define NROWS 1200
#define NKEYS 5
#define GAP 700
#define DELAY 1000

typedef struct { int64_t id, k, ts; } in_row;
typedef struct { int64_t ws, we, wt; int seen; } result;

static in_row g_rows[NROWS];
static result g_want[NROWS];
static int g_nlate;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void gen_rows(uint64_t seed)
{
    int64_t t = 100000;
    for (int i = 0; i < NROWS; i++) {
        t += (int64_t)(splitmix(&seed) % 180);
        int64_t ts = t;
        if (i % 11 == 7) ts -= 800 + (int64_t)(splitmix(&seed) % 3000); /* behind, maybe late */
        if (i % 150 == 0) t += 2500; /* a pause: sessions end */
        g_rows[i] = (in_row){i, (int64_t)(splitmix(&seed) % NKEYS), ts};
    }
}

/* ---- the model -------------------------------------------------------------------- */

typedef struct { int64_t s, e; int n; int *ids; } msess;

static void fire(msess *ss, int *n, int64_t wm, int all)
{
    int keep = 0;
    for (int i = 0; i < *n; i++) {
        if (all || ss[i].e - 1 <= wm) {
            for (int j = 0; j < ss[i].n; j++)
                g_want[ss[i].ids[j]] = (result){ss[i].s, ss[i].e, ss[i].e - 1, 1};
            free(ss[i].ids);
        } else {
            ss[keep++] = ss[i];
        }
    }
    *n = keep;
}

static void model(void)
{
    static msess open_[NKEYS][NROWS];
    int nopen[NKEYS] = {0};
    memset(g_want, 0, sizeof g_want);
    g_nlate = 0;
    int64_t mx = INT64_MIN, wm = INT64_MIN;
    for (int i = 0; i < NROWS; i++) {
        const in_row *r = &g_rows[i];
        msess m = {r->ts, r->ts + GAP, 1, malloc(sizeof(int) * NROWS)};
        m.ids[0] = i;
        msess *ss = open_[r->k];
        int keep = 0;
        for (int j = 0; j < nopen[r->k]; j++) {
            if (ss[j].s <= r->ts + GAP && r->ts <= ss[j].e) {
                if (ss[j].s < m.s) m.s = ss[j].s;
                if (ss[j].e > m.e) m.e = ss[j].e;
                memcpy(m.ids + m.n, ss[j].ids, sizeof(int) * (size_t)ss[j].n);
                m.n += ss[j].n;
                free(ss[j].ids);
            } else {
                ss[keep++] = ss[j];
            }
        }
        nopen[r->k] = keep;
        if (m.e - 1 <= wm) { /* late: nothing merged (open sessions end after wm) */
            if (m.n != 1) abort();
            g_nlate++;
            free(m.ids);
        } else {
            ss[nopen[r->k]++] = m;
        }
        if (r->ts > mx) mx = r->ts;
        wm = mx - DELAY;
        for (int k = 0; k < NKEYS; k++) fire(open_[k], &nopen[k], wm, 0);
    }
    for (int k = 0; k < NKEYS; k++) fire(open_[k], &nopen[k], wm, 1);
}

/* ---- the operator through the runtime --------------------------------------------- */

typedef struct stage {
    int p;
    sl_vertex v;
    sl_schema in, out;
    void *plan;
    sl_op op[MAXP];
    char dir[MAXP][64];
    char err[512];
} stage;

static result g_got[NROWS];

static int record(void *ctx, int output, sl_row *row)
{
    SL_UNUSED(ctx);
    SL_UNUSED(output);
    int64_t id = row->vals[0].v.i;
    if (row->kind != SL_KIND_INSERT || row->n != 6 || id < 0 || id >= NROWS) return SL_ERR;
    result *r = &g_got[id];
    r->ws = row->vals[3].v.i;
    r->we = row->vals[4].v.i;
    r->wt = row->vals[5].v.i;
    r->seen++;
    return row->ts == r->wt ? SL_OK : SL_ERR;
}

static int stage_open(stage *s, int p, sl_backend_kind bk)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->v.id = (char *)"session";
    s->v.type = (char *)"session_tvf";
    s->v.parallelism = p;
    char cfg[256];
    snprintf(cfg, sizeof cfg, "{\"window\": \"SESSION\", \"time\": \"ts\", \"gap\": %d, "
             "\"partition-by\": [\"k\"]}", GAP);
    s->v.config = sl_test_config(cfg);
    sl_schema_init(&s->in);
    sl_schema_add(&s->in, "id", SL_T_BIGINT);
    sl_schema_add(&s->in, "k", SL_T_BIGINT);
    sl_schema_add(&s->in, "ts", SL_T_TIMESTAMP);
    s->plan = sl_test_plan(&sl_op_session_tvf, &s->v, &s->in, &s->out, s->err, sizeof s->err);
    if (!s->plan) {
        fprintf(stderr, "plan: %s\n", s->err);
        return SL_ERR;
    }
    for (int i = 0; i < p; i++) {
        sl_op *op = &s->op[i];
        sl_test_rt_init(op, &s->v, i, MAXKG, record, NULL, NULL, "session");
        op->plan = s->plan;
        if (sl_test_rt_open(op, bk, s->dir[i], sizeof s->dir[i], "session", s->err,
                            sizeof s->err) != SL_OK)
            return SL_ERR;
    }
    return SL_OK;
}

static void stage_close(stage *s)
{
    for (int i = 0; i < s->p; i++) sl_test_rt_close(&s->op[i], s->dir[i]);
    if (s->plan) sl_op_session_tvf.plan_free(s->plan);
    sl_vertex_plan_free(&s->v);
    json_decref(s->v.config);
    sl_schema_free(&s->in);
    sl_schema_free(&s->out);
}

static int64_t wm_after(int i)
{
    int64_t mx = INT64_MIN;
    for (int j = 0; j <= i; j++)
        if (g_rows[j].ts > mx) mx = g_rows[j].ts;
    return mx - DELAY;
}

static int feed(stage *s, int from, int to)
{
    int64_t mx = from ? wm_after(from - 1) + DELAY : INT64_MIN;
    for (int i = from; i < to; i++) {
        const in_row *x = &g_rows[i];
        sl_value vals[3] = {{.v.i = x->id}, {.v.i = x->k}, {.v.i = x->ts}};
        sl_row r = {SL_KIND_INSERT, 3, vals, x->ts};
        int k1 = 1;
        uint8_t key[64];
        size_t n = sl_row_key_encode(&r, &s->in, &k1, 1, key, sizeof key);
        sl_op *op = &s->op[sl_kg_operator_index(sl_kg_of_key(key, n, MAXKG), s->p, MAXKG)];
        if (sl_rt_process(op, 0, &r) != SL_OK) {
            fprintf(stderr, "process: %s\n", op->err);
            return SL_ERR;
        }
        if (x->ts > mx) mx = x->ts;
        for (int j = 0; j < s->p; j++)
            if (sl_rt_watermark(&s->op[j], 0, mx - DELAY) != SL_OK) {
                fprintf(stderr, "watermark: %s\n", s->op[j].err);
                return SL_ERR;
            }
    }
    return SL_OK;
}

static int end(stage *s)
{
    for (int j = 0; j < s->p; j++)
        if (sl_rt_end_input(&s->op[j], 0) != SL_OK) return SL_ERR;
    return SL_OK;
}

static uint64_t late_dropped(const stage *s)
{
    uint64_t n = 0;
    for (int j = 0; j < s->p; j++) n += s->op[j].metrics.late_dropped;
    return n;
}

/* Every subtask's keyed state and event timers dealt by key group into `to`
 * (NULL: only count the entries). */
static int redeal(stage *from, stage *to, uint64_t *entries)
{
    return sl_test_redeal(from->op, from->p, to ? to->op : NULL, to ? to->p : 0, MAXKG, &sl_op_session_tvf,
                          entries);
}

static int same(const char *what)
{
    for (int i = 0; i < NROWS; i++)
        if (memcmp(&g_got[i], &g_want[i], sizeof g_got[i])) {
            fprintf(stderr, "%s: id %d: [%lld, %lld) seen %d, want [%lld, %lld) seen %d\n", what,
                    i, (long long)g_got[i].ws, (long long)g_got[i].we, g_got[i].seen,
                    (long long)g_want[i].ws, (long long)g_want[i].we, g_want[i].seen);
            return 0;
        }
    return 1;
}

static const sl_backend_kind backends[] = {SL_BACKEND_HASHMAP, SL_BACKEND_ROCKSDB};

static void check(int p1, int p2, int cut, uint64_t seed)
{
    gen_rows(seed);
    model();
    int merged = 0;
    for (int i = 0; i < NROWS; i++) merged += g_want[i].seen && g_want[i].we - g_want[i].ws > GAP;
    CHECK(g_nlate >= 10 && merged > NROWS / 2);
    for (int b = 0; b < 2; b++) {
        stage s, t;
        memset(g_got, 0, sizeof g_got);
        CHECK_EQ_INT(stage_open(&s, p1, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&s, 0, NROWS), SL_OK);
        CHECK_EQ_INT(end(&s), SL_OK);
        CHECK(same("uninterrupted"));
        CHECK_EQ_INT(late_dropped(&s), g_nlate);
        uint64_t entries = 1;
        CHECK_EQ_INT(redeal(&s, NULL, &entries), SL_OK);
        CHECK_EQ_INT(entries, 0);
        stage_close(&s);

        memset(g_got, 0, sizeof g_got);
        CHECK_EQ_INT(stage_open(&s, p1, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&s, 0, cut), SL_OK);
        CHECK_EQ_INT(stage_open(&t, p2, backends[1 - b]), SL_OK);
        CHECK_EQ_INT(redeal(&s, &t, &entries), SL_OK);
        CHECK(entries > 0);
        uint64_t late1 = late_dropped(&s);
        stage_close(&s);
        for (int j = 0; j < t.p; j++) CHECK_EQ_INT(sl_rt_watermark(&t.op[j], 0, wm_after(cut - 1)), SL_OK);
        CHECK_EQ_INT(feed(&t, cut, NROWS), SL_OK);
        CHECK_EQ_INT(end(&t), SL_OK);
        CHECK_EQ_INT(late1 + late_dropped(&t), g_nlate);
        stage_close(&t);
        CHECK(same("cut and rescaled"));
    }
}

static void test_sessions(void) { check(1, 3, NROWS / 2, 0x5e55); }

static void test_sessions_rescaled_down(void) { check(4, 2, NROWS / 3, 0x5e56); }

SL_TEST_MAIN(SL_TEST(test_sessions), SL_TEST(test_sessions_rescaled_down))
