/*
 * test_changelog_normalize.c -- unit tests for the changelog-normalize
 * operator (operators/changelog_normalize.c).
 *
 * The operator runs through the runtime's own calls (sl_rt_init, sl_rt_open,
 * sl_rt_process) with its keyed state backend opened by the runtime for the
 * subtask's key groups. The scripted test states the exact changelog of a
 * few upserts and tombstones, worked out by hand from Flink's
 * ChangelogNormalize, and with a state TTL (a repeated row emitted again, an
 * idle key forgotten) on a fake clock. The randomized test feeds seeded upserts and
 * tombstones (a tombstone carries the key only, as the upsert-kafka source
 * emits it) and checks every input's output against a brute-force model
 * that keeps each key's last row in a plain array: the exact rows and kinds
 * per input, and the materialized view the changelog builds (each -U/-D
 * must retract a row the view holds). Midway the keyed state is snapshotted
 * and re-dealt by key group to another parallelism on the other backend
 * (1 -> 3 -> 2 subtasks), rows routed to the subtask owning their key
 * group, as a restore after rescaling does.
 */
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

extern const sl_op_def sl_op_changelog_normalize;

#define MAXP 3
#define MAXKG 128
#define ROWLEN 96

typedef struct outlog {
    int n, cap;
    char (*rows)[ROWLEN];
} outlog;

static int record(void *ctx, int output, sl_row *row)
{
    static const char *const kinds[] = {"+I", "-U", "+U", "-D"};
    outlog *l = ctx;
    SL_UNUSED(output);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->rows = realloc(l->rows, (size_t)l->cap * ROWLEN);
        if (!l->rows) abort();
    }
    const sl_value *v = row->vals;
    char vs[40] = "null", xs[24] = "null";
    if (!v[1].isnull) snprintf(vs, sizeof vs, "%.*s", (int)v[1].v.s.len, v[1].v.s.p);
    if (!v[2].isnull) snprintf(xs, sizeof xs, "%lld", (long long)v[2].v.i);
    snprintf(l->rows[l->n++], ROWLEN, "%s[%lld, %s, %s]@%lld", kinds[row->kind],
             (long long)v[0].v.i, vs, xs, (long long)row->ts);
    return SL_OK;
}

/* One parallel instance of the vertex: p subtasks on one backend. */
typedef struct stage {
    sl_vertex v;
    void *plan;
    int p;
    sl_op op[MAXP];
    char dir[MAXP][48];
    sl_schema in, out;
    char err[512];
} stage;

static void schema_of(sl_schema *s)
{
    sl_schema_init(s);
    sl_schema_add(s, "k", SL_T_BIGINT);
    sl_schema_add(s, "v", SL_T_STRING);
    sl_schema_add(s, "x", SL_T_INT);
}

static int stage_open(stage *s, int p, sl_backend_kind bk, const char *config, outlog *log)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    s->v.id = (char *)"cn";
    s->v.type = (char *)"changelog-normalize";
    s->v.parallelism = p;
    s->v.config = json_loads(config, 0, NULL);
    schema_of(&s->in);
    s->plan = sl_test_plan(&sl_op_changelog_normalize, &s->v, &s->in, &s->out, s->err,
                           sizeof s->err);
    if (!s->plan) return SL_ERR;
    for (int i = 0; i < p; i++) {
        sl_op *op = &s->op[i];
        sl_test_rt_init(op, &s->v, i, MAXKG, record, NULL, log, "cn");
        op->plan = s->plan;
        if (sl_test_rt_open(op, bk, s->dir[i], sizeof s->dir[i], "cn", s->err, sizeof s->err) !=
            SL_OK)
            return SL_ERR;
    }
    return SL_OK;
}

static void stage_close(stage *s)
{
    for (int i = 0; i < s->p; i++) sl_test_rt_close(&s->op[i], s->dir[i]);
    if (s->plan) sl_op_changelog_normalize.plan_free(s->plan);
    sl_vertex_plan_free(&s->v);
    json_decref(s->v.config);
    sl_schema_free(&s->in);
    sl_schema_free(&s->out);
}

/* The subtask of s owning row's key. */
static sl_op *owner(stage *s, const sl_row *row)
{
    int k0 = 0;
    uint8_t key[64];
    size_t n = sl_row_key_encode(row, &s->in, &k0, 1, key, sizeof key);
    int kg = sl_kg_of_key(key, n, MAXKG);
    return &s->op[sl_kg_operator_index(kg, s->p, MAXKG)];
}

typedef struct move_ctx {
    stage *to;
    int failed;
} move_ctx;

static int move_entry(void *ctx, const sl_kentry *e)
{
    move_ctx *m = ctx;
    if (sl_test_restore_entry(m->to->op, m->to->p, MAXKG, e)) {
        m->failed = 1;
        return 1;
    }
    return 0;
}

/* A checkpoint of every subtask of `from`, restored into `to` by key group. */
static int redeal(stage *from, stage *to)
{
    move_ctx m = {to, 0};
    char err[256];
    for (int i = 0; i < from->p; i++) {
        sl_op *op = &from->op[i];
        sl_ksnap *snap = sl_kstate_snapshot(op->kstate, err, sizeof err);
        if (!snap) return SL_ERR;
        for (int kg = op->kg_first; kg <= op->kg_last && !m.failed; kg++)
            if (sl_ksnap_each(snap, kg, move_entry, &m, err, sizeof err) != SL_OK) m.failed = 1;
        sl_ksnap_release(snap);
    }
    return m.failed ? SL_ERR : SL_OK;
}

static const sl_value NUL = {.isnull = true};

static int feed(stage *s, sl_rowkind kind, int64_t k, const char *v, int64_t x, int64_t ts)
{
    sl_value vals[3] = {{.v.i = k}, NUL, NUL};
    if (v) vals[1] = (sl_value){.v.s = {v, (uint32_t)strlen(v)}};
    if (x >= 0) vals[2] = (sl_value){.v.i = x};
    sl_row r = {kind, 3, vals, ts};
    sl_op *op = owner(s, &r);
    int rc = sl_rt_process(op, 0, &r);
    if (rc != SL_OK) fprintf(stderr, "process: %s\n", op->err);
    return rc;
}

static const char *drain(outlog *l)
{
    static char buf[4096];
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < l->n && o < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "; " : "", l->rows[i]);
    l->n = 0;
    return buf;
}

#define PI SL_KIND_INSERT
#define MU SL_KIND_UPDATE_BEFORE
#define PU SL_KIND_UPDATE_AFTER
#define MD SL_KIND_DELETE

static const sl_backend_kind backends[] = {SL_BACKEND_HASHMAP, SL_BACKEND_ROCKSDB};

static void test_cn_plan_errors(void)
{
    outlog log = {0};
    stage s;
    CHECK_EQ_INT(stage_open(&s, 1, SL_BACKEND_HASHMAP, "{}", &log), SL_ERR);
    CHECK(strstr(s.err, "option 'key' is required"));
    stage_close(&s);
    CHECK_EQ_INT(stage_open(&s, 1, SL_BACKEND_HASHMAP, "{\"key\": \"k;nope\"}", &log), SL_ERR);
    CHECK(strstr(s.err, "unknown column 'nope'"));
    stage_close(&s);
    CHECK_EQ_INT(stage_open(&s, 1, SL_BACKEND_HASHMAP, "{\"key\": [\"k\", \"k\"]}", &log), SL_ERR);
    CHECK(strstr(s.err, "listed twice"));
    stage_close(&s);
    CHECK_EQ_INT(stage_open(&s, 1, SL_BACKEND_HASHMAP,
                            "{\"key\": \"k\", \"state.ttl\": \"1 h\", "
                            "\"table.exec.state.ttl\": \"1 h\"}", &log), SL_ERR);
    CHECK(strstr(s.err, "not both"));
    stage_close(&s);
    free(log.rows);
}

static void test_cn_scripted(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) {
        outlog log = {0};
        stage s;
        CHECK_EQ_INT(stage_open(&s, 1, backends[b], "{\"key\": [\"k\"]}", &log), SL_OK);
        CHECK_EQ_INT(feed(&s, PU, 1, "a", 1, 10), SL_OK);
        CHECK_EQ_STR(drain(&log), "+I[1, a, 1]@10");
        CHECK_EQ_INT(feed(&s, PU, 1, "a", 1, 11), SL_OK); /* the same row: nothing */
        CHECK_EQ_STR(drain(&log), "");
        CHECK_EQ_INT(feed(&s, PI, 1, "b", -1, 12), SL_OK);
        CHECK_EQ_STR(drain(&log), "-U[1, a, 1]@12; +U[1, b, null]@12");
        CHECK_EQ_INT(feed(&s, PU, 2, "c", 3, 13), SL_OK);
        CHECK_EQ_STR(drain(&log), "+I[2, c, 3]@13");
        CHECK_EQ_INT(feed(&s, MD, 1, NULL, -1, 14), SL_OK); /* a tombstone: the key only */
        CHECK_EQ_STR(drain(&log), "-D[1, b, null]@14");
        CHECK_EQ_INT(feed(&s, MD, 1, NULL, -1, 15), SL_OK); /* the key is gone */
        CHECK_EQ_STR(drain(&log), "");
        CHECK_EQ_INT(feed(&s, MU, 2, NULL, -1, 16), SL_OK); /* -U deletes as -D does */
        CHECK_EQ_STR(drain(&log), "-D[2, c, 3]@16");
        CHECK_EQ_INT(feed(&s, PU, 1, "b", -1, 17), SL_OK); /* a new life of key 1 */
        CHECK_EQ_STR(drain(&log), "+I[1, b, null]@17");
        stage_close(&s);
        free(log.rows);
    }
}

static int64_t fake_now;
static int64_t fake_clock(void) { return fake_now; }

/* With a state TTL a repeated row is emitted again (-U/+U, as Flink does, so
 * downstream state is refreshed) and a key idle past the TTL starts over. */
static void test_cn_ttl(void)
{
    int64_t (*saved)(void) = sl_vstate_clock;
    sl_vstate_clock = fake_clock;
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) {
        outlog log = {0};
        stage s;
        fake_now = 1000;
        CHECK_EQ_INT(stage_open(&s, 1, backends[b], "{\"key\": \"k\", \"state.ttl\": \"10 s\"}",
                                &log), SL_OK);
        CHECK_EQ_INT(feed(&s, PU, 1, "a", 1, 1), SL_OK);
        CHECK_EQ_STR(drain(&log), "+I[1, a, 1]@1");
        fake_now = 2000;
        CHECK_EQ_INT(feed(&s, PU, 1, "a", 1, 2), SL_OK);
        CHECK_EQ_STR(drain(&log), "-U[1, a, 1]@2; +U[1, a, 1]@2");
        fake_now = 12001; /* idle for 10.001 s */
        CHECK_EQ_INT(feed(&s, MD, 1, NULL, -1, 3), SL_OK);
        CHECK_EQ_STR(drain(&log), "");
        CHECK_EQ_INT(feed(&s, PU, 1, "b", 2, 4), SL_OK);
        CHECK_EQ_STR(drain(&log), "+I[1, b, 2]@4");
        stage_close(&s);
        free(log.rows);
    }
    sl_vstate_clock = saved;
}

/* ---- randomized, against a brute-force model -------------------------------------- */

#define NKEYS 37
#define NEVENTS 4000

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33) % n;
}

typedef struct mrow {
    int live;
    const char *v; /* NULL = null */
    int64_t x;     /* -1 = null */
} mrow;

static void mrow_text(char *d, size_t cap, const char *kind, int64_t k, const mrow *m, int64_t ts)
{
    char xs[24] = "null";
    if (m->x >= 0) snprintf(xs, sizeof xs, "%lld", (long long)m->x);
    snprintf(d, cap, "%s[%lld, %s, %s]@%lld", kind, (long long)k, m->v ? m->v : "null", xs,
             (long long)ts);
}

/* The materialized view of the output: rows "[k, v, x]" with counts. */
typedef struct view {
    char rows[NKEYS * 12][ROWLEN];
    int cnt[NKEYS * 12];
    int n;
} view;

static int view_apply(view *w, const char *line)
{
    char body[ROWLEN];
    snprintf(body, sizeof body, "%s", line + 2);
    char *at = strchr(body, '@');
    if (at) *at = '\0';
    int add = line[0] == '+';
    for (int i = 0; i < w->n; i++)
        if (!strcmp(w->rows[i], body)) {
            w->cnt[i] += add ? 1 : -1;
            return w->cnt[i] >= 0 && w->cnt[i] <= 1;
        }
    if (!add || w->n == NKEYS * 12) return 0; /* retracting a row the view does not hold */
    snprintf(w->rows[w->n], ROWLEN, "%s", body);
    w->cnt[w->n++] = 1;
    return 1;
}

static int view_matches(const view *w, const mrow *model)
{
    int live = 0;
    for (int k = 0; k < NKEYS; k++) {
        if (!model[k].live) continue;
        live++;
        char t[ROWLEN];
        mrow_text(t, sizeof t, "", k, &model[k], 0);
        *strchr(t, '@') = '\0';
        int found = 0;
        for (int i = 0; i < w->n; i++)
            if (w->cnt[i] == 1 && !strcmp(w->rows[i], t)) found = 1;
        if (!found) return 0;
    }
    int held = 0;
    for (int i = 0; i < w->n; i++) held += w->cnt[i];
    return held == live;
}

static void run_random(sl_backend_kind first, uint64_t seed)
{
    static const char *const vs[] = {"a", "b", "c", NULL};
    static mrow model[NKEYS];
    static view w;
    memset(model, 0, sizeof model);
    memset(&w, 0, sizeof w);
    rng = seed;
    outlog log = {0};
    static stage stages[2];
    stage *s = &stages[0];
    sl_backend_kind bk = first;
    static const int pars[] = {1, 3, 2};
    CHECK_EQ_INT(stage_open(s, pars[0], bk, "{\"key\": \"k\"}", &log), SL_OK);
    for (int e = 0; e < NEVENTS; e++) {
        if (e && e % (NEVENTS / 3) == 0 && e / (NEVENTS / 3) < 3) {
            /* a checkpoint, then a restore at another parallelism on the other backend */
            stage *next = s == &stages[0] ? &stages[1] : &stages[0];
            bk = bk == SL_BACKEND_HASHMAP ? SL_BACKEND_ROCKSDB : SL_BACKEND_HASHMAP;
            CHECK_EQ_INT(stage_open(next, pars[e / (NEVENTS / 3)], bk, "{\"key\": \"k\"}", &log),
                         SL_OK);
            CHECK_EQ_INT(redeal(s, next), SL_OK);
            stage_close(s);
            s = next;
        }
        int64_t k = rnd(NKEYS), ts = 1000 + e;
        char want[2][ROWLEN];
        int nwant = 0;
        mrow *m = &model[k];
        if (rnd(4) == 0) { /* a tombstone, or an -U from a retracting upstream */
            if (m->live) mrow_text(want[nwant++], ROWLEN, "-D", k, m, ts);
            m->live = 0;
            CHECK_EQ_INT(feed(s, rnd(2) ? MD : MU, k, NULL, -1, ts), SL_OK);
        } else {
            mrow nw = {1, vs[rnd(4)], (int64_t)rnd(3) - 1};
            if (!m->live) {
                mrow_text(want[nwant++], ROWLEN, "+I", k, &nw, ts);
            } else if (m->v != nw.v || m->x != nw.x) {
                mrow_text(want[nwant++], ROWLEN, "-U", k, m, ts);
                mrow_text(want[nwant++], ROWLEN, "+U", k, &nw, ts);
            }
            *m = nw;
            CHECK_EQ_INT(feed(s, rnd(2) ? PU : PI, k, nw.v, nw.x, ts), SL_OK);
        }
        CHECK_EQ_INT(log.n, nwant);
        for (int i = 0; i < nwant; i++) {
            CHECK_EQ_STR(log.rows[i], want[i]);
            CHECK(view_apply(&w, log.rows[i]));
        }
        log.n = 0;
        CHECK(view_matches(&w, model));
    }
    stage_close(s);
    free(log.rows);
}

static void test_cn_random_rescaled(void)
{
    for (uint64_t seed = 1; seed <= 3; seed++) {
        run_random(SL_BACKEND_HASHMAP, seed);
        if (sl_test_failed_) return;
        run_random(SL_BACKEND_ROCKSDB, seed * 7919);
        if (sl_test_failed_) return;
    }
}

SL_TEST_MAIN(SL_TEST(test_cn_plan_errors), SL_TEST(test_cn_scripted), SL_TEST(test_cn_ttl),
             SL_TEST(test_cn_random_rescaled))
