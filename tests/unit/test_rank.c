/*
 * test_rank.c -- unit tests for the rank (Top-N) and deduplicate operators
 * (operators/rank.c).
 *
 * Each test plans a lone vertex against a fixed input schema, opens a keyed
 * state backend for key groups 0..127 as the runtime does, and drives
 * open/process/close through the runtime's own calls. Emitted rows are
 * rendered as text ("-U[1, 7, b, 3]"). Scripted tests state the exact
 * changelog, worked out by hand from Flink's Top-N and deduplication
 * semantics. The randomized tests feed seeded streams (insert-only, and
 * updating ones with -U/+U and -D) and after every input row apply the
 * operator's changelog to a materialized view, which must equal the Top-N
 * (or deduplicated) result a brute-force model computes from all live input
 * rows; each -U/-D must retract a row the view holds. Everything runs on
 * both state backends.
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

extern const sl_op_def sl_op_rank;
extern const sl_op_def sl_op_deduplicate;
void sl_rank_set_clock(int64_t (*fn)(void));

#define ROWLEN 160

typedef struct outlog {
    const sl_schema *schema;
    int n, cap;
    char (*rows)[ROWLEN];
} outlog;

static void format_vals(const sl_schema *s, const sl_value *vals, int n, char *d, size_t cap)
{
    size_t o = 0;
    for (int i = 0; i < n && o < cap; i++) {
        const sl_value *v = &vals[i];
        const char *sep = i ? ", " : "";
        if (v->isnull) o += (size_t)snprintf(d + o, cap - o, "%snull", sep);
        else if (s->fields[i].type == SL_T_STRING)
            o += (size_t)snprintf(d + o, cap - o, "%s%.*s", sep, (int)v->v.s.len, v->v.s.p);
        else o += (size_t)snprintf(d + o, cap - o, "%s%lld", sep, (long long)v->v.i);
    }
}

static int record(void *ctx, int output, sl_row *row)
{
    static const char *const kinds[] = {"+I", "-U", "+U", "-D"};
    outlog *l = ctx;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->rows = realloc(l->rows, (size_t)l->cap * ROWLEN);
        if (!l->rows) abort();
    }
    char body[ROWLEN - 8];
    format_vals(l->schema, row->vals, row->n, body, sizeof body);
    snprintf(l->rows[l->n++], ROWLEN, "%s[%s]", kinds[row->kind], body);
    return SL_OK;
}

typedef struct harness {
    sl_vertex v;
    sl_schema in, out;
    const sl_op_def *def;
    void *plan;
    sl_op op;
    bool opened;
    sl_kstate *ks;
    char dir[64];
    outlog log;
    char err[512];
} harness;

/* Input schema: part BIGINT, score INT, name STRING, ts TIMESTAMP. */
enum { C_PART, C_SCORE, C_NAME, C_TS, NCOLS };

static bool plan(harness *h, const sl_op_def *def, const char *config)
{
    memset(h, 0, sizeof *h);
    h->def = def;
    h->v.id = (char *)"r";
    h->v.type = (char *)def->name;
    h->v.config = sl_test_config(config);
    sl_schema_init(&h->in);
    sl_schema_add(&h->in, "part", SL_T_BIGINT);
    sl_schema_add(&h->in, "score", SL_T_INT);
    sl_schema_add(&h->in, "name", SL_T_STRING);
    sl_schema_add(&h->in, "ts", SL_T_TIMESTAMP);
    h->plan = sl_test_plan(def, &h->v, &h->in, &h->out, h->err, sizeof h->err);
    return h->plan != NULL;
}

static int open_op(harness *h, sl_backend_kind kind)
{
    if (kind == SL_BACKEND_ROCKSDB) {
        snprintf(h->dir, sizeof h->dir, "/tmp/sl_test_rank_XXXXXX");
        if (!mkdtemp(h->dir)) abort();
    }
    char err[256];
    h->ks = sl_kstate_open(kind, h->dir, 128, 0, 127, err, sizeof err);
    if (!h->ks) {
        fprintf(stderr, "sl_kstate_open: %s\n", err);
        return SL_ERR;
    }
    sl_op *op = &h->op;
    sl_rt_init(op, &h->v, 0, 128);
    op->plan = h->plan;
    op->kstate = h->ks;
    op->event_timers = sl_timers_new();
    op->proc_timers = sl_timers_new();
    op->emit = record;
    op->emit_ctx = &h->log;
    op->out_connected[0] = 1;
    op->task_name = "r (1/1)";
    h->log.schema = &h->out;
    h->opened = true;
    return h->def->open(op);
}

static void teardown(harness *h)
{
    if (h->opened) {
        h->op.kstate = NULL;
        sl_rt_close(&h->op);
    }
    if (h->ks) sl_kstate_close(h->ks);
    if (h->dir[0]) rmdir(h->dir);
    if (h->plan) h->def->plan_free(h->plan);
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->in);
    sl_schema_free(&h->out);
    json_decref(h->v.config);
    free(h->log.rows);
    memset(h, 0, sizeof *h);
}

static const sl_value NUL = {.isnull = true};
static sl_value I(int64_t x) { return (sl_value){.v.i = x}; }
static sl_value S(const char *s) { return (sl_value){.v.s = {s, (uint32_t)strlen(s)}}; }

static int feed(harness *h, sl_rowkind kind, int64_t part, sl_value score, const char *name,
                int64_t ts)
{
    sl_value v[NCOLS] = {I(part), score, S(name), I(ts)};
    sl_row r = {kind, NCOLS, v, ts};
    return sl_rt_process(&h->op, 0, &r);
}

/* The log so far as one string "a; b; c", then cleared. */
static const char *drain(harness *h)
{
    static char buf[8192];
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < h->log.n && o < sizeof buf; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "; " : "", h->log.rows[i]);
    h->log.n = 0;
    return buf;
}

#define PI SL_KIND_INSERT
#define MU SL_KIND_UPDATE_BEFORE
#define PU SL_KIND_UPDATE_AFTER
#define MD SL_KIND_DELETE

static const sl_backend_kind backends[] = {SL_BACKEND_HASHMAP, SL_BACKEND_ROCKSDB};

/* ---- plan errors ---------------------------------------------------------------- */

static void test_rank_plan_errors(void)
{
    static const struct {
        const char *cfg, *want;
    } cases[] = {
        {"{\"order-by\": [\"score\"], \"limit\": 3}", "option 'partition-by' is required"},
        {"{\"partition-by\": [\"part\"], \"limit\": 3}", "option 'order-by' is required"},
        {"{\"partition-by\": [\"part\"], \"order-by\": [\"score\"]}", "option 'limit' is required"},
        {"{\"partition-by\": [\"part\"], \"order-by\": [\"score\"], \"limit\": 0}",
         "limit must be between 1 and"},
        {"{\"partition-by\": [\"nope\"], \"order-by\": [\"score\"], \"limit\": 3}",
         "partition-by: unknown column 'nope'"},
        {"{\"partition-by\": [\"part\"], \"order-by\": [\"score DESC\", \"score\"], \"limit\": 3}",
         "column 'score' is listed twice"},
        {"{\"partition-by\": [\"part\"], \"order-by\": [\"score\"], \"limit\": 3, "
         "\"row-number\": \"name\"}", "row-number column 'name' is already an input column"},
        {"{\"partition-by\": [\"part\"], \"order-by\": [\"score\"], \"limit\": 3, "
         "\"input-changelog\": \"upsert\"}", "input-changelog must be"},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        harness h;
        bool ok = plan(&h, &sl_op_rank, cases[i].cfg);
        if (ok || !strstr(h.err, cases[i].want))
            fprintf(stderr, "case %zu: got '%s', want '%s'\n", i, h.err, cases[i].want);
        bool good = !ok && strstr(h.err, cases[i].want);
        teardown(&h);
        CHECK(good);
    }
    harness h;
    CHECK(plan(&h, &sl_op_rank, "{\"partition-by\": \"part\", \"order-by\": [\"score DESC\"], "
               "\"limit\": 2, \"row-number\": \"rn\"}"));
    CHECK_EQ_INT(h.out.n, NCOLS + 1);
    CHECK_EQ_STR(h.out.fields[NCOLS].name, "rn");
    CHECK_EQ_INT(h.out.fields[NCOLS].type, SL_T_BIGINT);
    teardown(&h);
}

/* ---- scripted Top-N changelogs ------------------------------------------------------ */

static void test_rank_append_with_row_number(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) {
        harness h;
        CHECK(plan(&h, &sl_op_rank, "{\"partition-by\": [\"part\"], \"order-by\": [\"score DESC\"], "
                   "\"limit\": 2, \"row-number\": \"rn\"}"));
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(10), "a", 1), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 10, a, 1, 1]");
        CHECK_EQ_INT(feed(&h, PI, 1, I(5), "b", 2), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 5, b, 2, 2]");
        /* a new first: every row shifts down one; b leaves at rank 3 silently */
        CHECK_EQ_INT(feed(&h, PI, 1, I(20), "c", 3), SL_OK);
        CHECK_EQ_STR(drain(&h), "-U[1, 10, a, 1, 1]; +U[1, 20, c, 3, 1]; "
                     "-U[1, 5, b, 2, 2]; +U[1, 10, a, 1, 2]");
        /* below the Top-2: nothing */
        CHECK_EQ_INT(feed(&h, PI, 1, I(1), "d", 4), SL_OK);
        CHECK_EQ_STR(drain(&h), "");
        /* a tie with rank 2 ranks after it (arrival order): nothing */
        CHECK_EQ_INT(feed(&h, PI, 1, I(10), "e", 5), SL_OK);
        CHECK_EQ_STR(drain(&h), "");
        /* another partition is independent; a NULL sorts last under DESC */
        CHECK_EQ_INT(feed(&h, PI, 2, NUL, "f", 6), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 2, I(0), "g", 7), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[2, null, f, 6, 1]; -U[2, null, f, 6, 1]; +U[2, 0, g, 7, 1]; "
                     "+I[2, null, f, 6, 2]");
        teardown(&h);
    }
}

static void test_rank_append_without_row_number(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) {
        harness h;
        CHECK(plan(&h, &sl_op_rank, "{\"partition-by\": [\"part\"], \"order-by\": [\"score\", "
                   "\"name DESC\"], \"limit\": 2}"));
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(3), "a", 1), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(3), "b", 2), SL_OK); /* name DESC: b before a */
        CHECK_EQ_STR(drain(&h), "+I[1, 3, a, 1]; +I[1, 3, b, 2]");
        CHECK_EQ_INT(feed(&h, PI, 1, I(2), "z", 3), SL_OK); /* evicts a */
        CHECK_EQ_STR(drain(&h), "-D[1, 3, a, 1]; +I[1, 2, z, 3]");
        CHECK_EQ_INT(feed(&h, PI, 1, I(3), "a", 4), SL_OK);
        CHECK_EQ_STR(drain(&h), "");
        /* a retraction on an insert-only vertex is refused, saying what to set */
        CHECK_EQ_INT(feed(&h, MD, 1, I(2), "z", 3), SL_ERR);
        CHECK(strstr(h.op.err, "\"input-changelog\": \"retract\"") != NULL);
        teardown(&h);
    }
}

static void test_rank_retract(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) {
        harness h;
        CHECK(plan(&h, &sl_op_rank, "{\"partition-by\": [\"part\"], \"order-by\": [\"score DESC\"], "
                   "\"limit\": 2, \"row-number\": \"rn\", \"input-changelog\": \"retract\"}"));
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(30), "a", 1), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(20), "b", 2), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(10), "c", 3), SL_OK); /* kept outside the Top-2 */
        CHECK_EQ_STR(drain(&h), "+I[1, 30, a, 1, 1]; +I[1, 20, b, 2, 2]");
        /* the first goes: b moves up, c comes in at rank 2 */
        CHECK_EQ_INT(feed(&h, MU, 1, I(30), "a", 1), SL_OK);
        CHECK_EQ_STR(drain(&h), "-U[1, 30, a, 1, 1]; +U[1, 20, b, 2, 1]; "
                     "-U[1, 20, b, 2, 2]; +U[1, 10, c, 3, 2]");
        /* a's update comes back lower than both */
        CHECK_EQ_INT(feed(&h, PU, 1, I(5), "a", 4), SL_OK);
        CHECK_EQ_STR(drain(&h), "");
        /* retracting a row outside the Top-N changes nothing visible */
        CHECK_EQ_INT(feed(&h, MD, 1, I(5), "a", 4), SL_OK);
        CHECK_EQ_STR(drain(&h), "");
        /* a retraction of a row never seen is ignored */
        CHECK_EQ_INT(feed(&h, MD, 1, I(99), "q", 4), SL_OK);
        CHECK_EQ_INT(feed(&h, MD, 7, I(99), "q", 4), SL_OK);
        CHECK_EQ_STR(drain(&h), "");
        CHECK_EQ_INT(feed(&h, MD, 1, I(10), "c", 3), SL_OK);
        CHECK_EQ_STR(drain(&h), "-D[1, 10, c, 3, 2]");
        CHECK_EQ_INT(feed(&h, MD, 1, I(20), "b", 2), SL_OK);
        CHECK_EQ_STR(drain(&h), "-D[1, 20, b, 2, 1]");
        CHECK_EQ_INT((int)sl_kstate_entries(h.ks), 0); /* an empty partition leaves nothing */
        teardown(&h);
    }
}

/* Window Top-N: nothing until the watermark passes the window's end - 1,
 * then the final list as +I rows; late rows are counted and dropped; the
 * state goes with the window. Without partition columns: one ranking. */
static void test_rank_window(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) {
        harness h;
        CHECK(plan(&h, &sl_op_rank, "{\"partition-by\": [\"part\", \"ts\"], \"order-by\": "
                   "[\"score DESC\"], \"limit\": 2, \"row-number\": \"rn\", \"window-end\": "
                   "\"ts\"}"));
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(5), "a", 1000), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(9), "b", 1000), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(7), "c", 1000), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(1), "d", 2000), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 2, I(3), "e", 1000), SL_OK);
        CHECK_EQ_INT(sl_rt_watermark(&h.op, 0, 998), SL_OK);
        CHECK_EQ_STR(drain(&h), "");
        CHECK_EQ_INT(sl_rt_watermark(&h.op, 0, 999), SL_OK);
        const char *got = drain(&h);
        /* two partitions fire at 999; their order is the timer service's */
        CHECK(!strcmp(got, "+I[1, 9, b, 1000, 1]; +I[1, 7, c, 1000, 2]; +I[2, 3, e, 1000, 1]") ||
              !strcmp(got, "+I[2, 3, e, 1000, 1]; +I[1, 9, b, 1000, 1]; +I[1, 7, c, 1000, 2]"));
        CHECK_EQ_INT(feed(&h, PI, 1, I(99), "late", 1000), SL_OK);
        CHECK_EQ_INT((int)h.op.metrics.late_dropped, 1);
        CHECK_EQ_INT(sl_rt_end_input(&h.op, 0), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 1, d, 2000, 1]");
        CHECK_EQ_INT((int)sl_kstate_entries(h.ks), 0);
        teardown(&h);

        CHECK(!plan(&h, &sl_op_rank, "{\"partition-by\": [\"part\"], \"order-by\": [\"score\"], "
                    "\"limit\": 2, \"window-end\": \"ts\"}"));
        CHECK(strstr(h.err, "window-end 'ts' must be a TIMESTAMP column listed in partition-by"));
        teardown(&h);

        CHECK(plan(&h, &sl_op_rank, "{\"partition-by\": [], \"order-by\": [\"score\"], "
                   "\"limit\": 1}"));
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(5), "a", 1), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 2, I(4), "b", 2), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 3, I(6), "c", 3), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 5, a, 1]; -D[1, 5, a, 1]; +I[2, 4, b, 2]");
        teardown(&h);
    }
}

static int64_t fake_now;
static int64_t fake_clock(void) { return fake_now; }

static void test_rank_ttl(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) {
        harness h;
        CHECK(plan(&h, &sl_op_rank, "{\"partition-by\": [\"part\"], \"order-by\": [\"score\"], "
                   "\"limit\": 1, \"input-changelog\": \"retract\", \"state.ttl\": \"10 s\"}"));
        sl_rank_set_clock(fake_clock);
        fake_now = 1000;
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(5), "a", 1), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(7), "b", 1), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 5, a, 1]");
        fake_now = 6000; /* an update moves the expiry */
        CHECK_EQ_INT(feed(&h, PI, 2, I(1), "c", 1), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(9), "d", 1), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[2, 1, c, 1]");
        CHECK_EQ_INT(sl_rt_fire_proc(&h.op, 11000), SL_OK);
        CHECK(sl_kstate_entries(h.ks) > 0);
        CHECK_EQ_INT(sl_rt_fire_proc(&h.op, 16000), SL_OK); /* both idle for 10 s now */
        CHECK_EQ_INT((int)sl_kstate_entries(h.ks), 0);
        CHECK_EQ_STR(drain(&h), ""); /* expiry emits nothing, as Flink's */
        fake_now = 17000;
        CHECK_EQ_INT(feed(&h, PI, 1, I(8), "e", 1), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 8, e, 1]");
        sl_rank_set_clock(NULL);
        teardown(&h);
    }
}

/* ---- the brute-force model ---------------------------------------------------------- */

#define MAXR 4000

typedef struct mrow {
    int64_t part;
    sl_value score;
    char name[8];
    int64_t ts;
    int64_t seq;   /* arrival of this copy */
    bool live;
} mrow;

static mrow rows[MAXR];
static int nrows;

/* A view: multiset of row texts. */
typedef struct view {
    int n;
    char (*r)[ROWLEN];
} view;

static int view_find(const view *v, const char *s)
{
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->r[i], s)) return i;
    return -1;
}

/* Apply log entries to the view; false on a retraction of a missing row. */
static bool view_apply(view *v, outlog *l)
{
    for (int i = 0; i < l->n; i++) {
        const char *e = l->rows[i];
        char body[ROWLEN];
        snprintf(body, sizeof body, "%s", e + 3);
        body[strlen(body) - 1] = '\0';
        if (e[0] == '+') {
            v->r = realloc(v->r, (size_t)(v->n + 1) * ROWLEN);
            snprintf(v->r[v->n++], ROWLEN, "%s", body);
        } else {
            int k = view_find(v, body);
            if (k < 0) {
                fprintf(stderr, "retraction of a row the view does not hold: %s\n", e);
                return false;
            }
            memcpy(v->r[k], v->r[v->n - 1], ROWLEN);
            v->n--;
        }
    }
    l->n = 0;
    return true;
}

static int strcmp_q(const void *a, const void *b) { return strcmp(a, b); }

/* score DESC (NULLs last), then name ASC, then arrival */
static int model_cmp(const void *pa, const void *pb)
{
    const mrow *a = *(const mrow *const *)pa, *b = *(const mrow *const *)pb;
    if (a->score.isnull != b->score.isnull) return a->score.isnull ? 1 : -1;
    if (!a->score.isnull && a->score.v.i != b->score.v.i) return a->score.v.i > b->score.v.i ? -1 : 1;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    return a->seq < b->seq ? -1 : 1;
}

static void row_text(const mrow *m, int64_t rn, char *d, size_t cap)
{
    char sc[24];
    if (m->score.isnull) snprintf(sc, sizeof sc, "null");
    else snprintf(sc, sizeof sc, "%lld", (long long)m->score.v.i);
    if (rn) snprintf(d, cap, "%lld, %s, %s, %lld, %lld", (long long)m->part, sc, m->name,
                     (long long)m->ts, (long long)rn);
    else snprintf(d, cap, "%lld, %s, %s, %lld", (long long)m->part, sc, m->name, (long long)m->ts);
}

/* The expected ranks start..limit of every partition (0..nparts) as a
 * sorted view. */
static void model_expect(view *v, int nparts, int start, int limit, bool rn)
{
    static const mrow *sel[MAXR];
    v->n = 0;
    for (int p = 0; p < nparts; p++) {
        int n = 0;
        for (int i = 0; i < nrows; i++)
            if (rows[i].live && rows[i].part == p) sel[n++] = &rows[i];
        qsort(sel, (size_t)n, sizeof *sel, model_cmp);
        for (int i = start - 1; i < n && i < limit; i++) {
            v->r = realloc(v->r, (size_t)(v->n + 1) * ROWLEN);
            row_text(sel[i], rn ? i + 1 : 0, v->r[v->n++], ROWLEN);
        }
    }
    if (v->n) qsort(v->r, (size_t)v->n, ROWLEN, strcmp_q);
}

static bool views_equal(view *got, view *want)
{
    if (got->n) qsort(got->r, (size_t)got->n, ROWLEN, strcmp_q);
    bool eq = got->n == want->n;
    for (int i = 0; eq && i < got->n; i++) eq = !strcmp(got->r[i], want->r[i]);
    if (!eq) {
        fprintf(stderr, "view (%d rows) != model (%d rows)\n", got->n, want->n);
        for (int i = 0; i < got->n || i < want->n; i++)
            fprintf(stderr, "  %-40s | %s\n", i < got->n ? got->r[i] : "",
                    i < want->n ? want->r[i] : "");
    }
    return eq;
}

static uint64_t rng;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* A seeded stream of `steps` changes on `nparts` partitions; updating
 * streams retract live rows (-D, or -U then +U with a new score). */
static void run_random(sl_backend_kind kind, uint64_t seed, bool updating, bool rn, int start,
                       int limit, int steps, bool *ok)
{
    *ok = false;
    harness h;
    char cfg[300];
    snprintf(cfg, sizeof cfg, "{\"partition-by\": [\"part\"], \"order-by\": [\"score DESC\", "
             "\"name\"], \"limit\": %d, \"rank-start\": %d%s%s}", limit, start,
             rn ? ", \"row-number\": \"rn\"" : "",
             updating ? ", \"input-changelog\": \"retract\"" : "");
    if (!plan(&h, &sl_op_rank, cfg) || open_op(&h, kind) != SL_OK) {
        fprintf(stderr, "setup: %s %s\n", h.err, h.op.err);
        teardown(&h);
        return;
    }
    rng = seed;
    nrows = 0;
    const int nparts = 4;
    view got = {0}, want = {0};
    bool good = true;
    for (int step = 0; good && step < steps && nrows < MAXR - 2; step++) {
        int live = 0;
        for (int i = 0; i < nrows; i++) live += rows[i].live;
        if (updating && live > 0 && rnd(3) == 0) {
            int k = (int)rnd((uint32_t)live), i = 0;
            for (;; i++)
                if (rows[i].live && k-- == 0) break;
            /* the operator removes the earliest identical copy */
            for (int j = 0; j < i; j++)
                if (rows[j].live && rows[j].part == rows[i].part &&
                    rows[j].score.isnull == rows[i].score.isnull &&
                    (rows[j].score.isnull || rows[j].score.v.i == rows[i].score.v.i) &&
                    !strcmp(rows[j].name, rows[i].name) && rows[j].ts == rows[i].ts) {
                    i = j;
                    break;
                }
            mrow *m = &rows[i];
            bool upd = rnd(2) == 0;
            m->live = false;
            if (feed(&h, upd ? MU : MD, m->part, m->score, m->name, m->ts) != SL_OK) {
                fprintf(stderr, "process: %s\n", h.op.err);
                good = false;
                break;
            }
            if (upd) {
                mrow *u = &rows[nrows];
                *u = *m;
                u->score = I(rnd(12));
                u->seq = step;
                u->live = true;
                nrows++;
                if (feed(&h, PU, u->part, u->score, u->name, u->ts) != SL_OK) good = false;
            }
        } else {
            mrow *m = &rows[nrows++];
            m->part = rnd(nparts);
            m->score = rnd(10) == 0 ? NUL : I(rnd(12));
            snprintf(m->name, sizeof m->name, "%c", 'a' + (int)rnd(4));
            m->ts = rnd(3);
            m->seq = step;
            m->live = true;
            if (feed(&h, PI, m->part, m->score, m->name, m->ts) != SL_OK) good = false;
        }
        if (!good) fprintf(stderr, "process: %s\n", h.op.err);
        if (good) good = view_apply(&got, &h.log);
        if (good) {
            model_expect(&want, nparts, start, limit, rn);
            good = views_equal(&got, &want);
            if (!good) fprintf(stderr, "at step %d (seed %llu)\n", step, (unsigned long long)seed);
        }
    }
    free(got.r);
    free(want.r);
    teardown(&h);
    *ok = good;
}

static void test_rank_random_append(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            bool ok;
            run_random(backends[b], seed * 7919, false, true, 1, 3, 600, &ok);
            CHECK(ok);
            run_random(backends[b], seed * 104729, false, false, 1, 2, 600, &ok);
            CHECK(ok);
        }
}

static void test_rank_random_updating(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            bool ok;
            run_random(backends[b], seed * 15485863, true, true, 1, 3, 800, &ok);
            CHECK(ok);
            run_random(backends[b], seed * 32452843, true, false, 1, 2, 800, &ok);
            CHECK(ok);
            run_random(backends[b], seed * 49979687, true, true, 1, 1, 500, &ok);
            CHECK(ok);
            /* a longer list than the rows per partition, so the cache never fills */
            run_random(backends[b], seed * 67867967, true, true, 1, 40, 600, &ok);
            CHECK(ok);
        }
}

/* Rank ranges other than 1..N (rn BETWEEN 2 AND 5, rn > 1 AND rn <= 3): only
 * those positions go out, with and without the row number, on append-only
 * and updating input. */
static void test_rank_random_range(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            bool ok;
            run_random(backends[b], seed * 7727, false, true, 2, 5, 600, &ok);
            CHECK(ok);
            run_random(backends[b], seed * 6481, false, false, 2, 3, 600, &ok);
            CHECK(ok);
            run_random(backends[b], seed * 9241, true, true, 2, 5, 800, &ok);
            CHECK(ok);
            run_random(backends[b], seed * 3571, true, false, 3, 3, 800, &ok);
            CHECK(ok);
            run_random(backends[b], seed * 1223, true, true, 4, 30, 600, &ok);
            CHECK(ok);
        }
}

/* ---- deduplicate ---------------------------------------------------------------------- */

static void test_dedup_plan_errors(void)
{
    static const struct {
        const char *cfg, *want;
    } cases[] = {
        {"{\"time\": \"processing\", \"keep\": \"first\"}", "option 'key' is required"},
        {"{\"key\": [\"part\"], \"time\": \"processing\"}", "'keep' must be \"first\" or \"last\""},
        {"{\"key\": [\"part\"], \"keep\": \"last\"}", "set either 'time-column'"},
        {"{\"key\": [\"part\"], \"keep\": \"last\", \"time-column\": \"name\"}",
         "time-column 'name' must be a TIMESTAMP column"},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(cases); i++) {
        harness h;
        bool ok = plan(&h, &sl_op_deduplicate, cases[i].cfg);
        if (ok || !strstr(h.err, cases[i].want))
            fprintf(stderr, "case %zu: got '%s', want '%s'\n", i, h.err, cases[i].want);
        bool good = !ok && strstr(h.err, cases[i].want);
        teardown(&h);
        CHECK(good);
    }
}

static void test_dedup_scripted(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++) {
        harness h;
        /* keep first, processing time: append-only */
        CHECK(plan(&h, &sl_op_deduplicate, "{\"key\": [\"part\"], \"time\": \"processing\", "
                   "\"keep\": \"first\"}"));
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(1), "a", 5), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(2), "b", 3), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 2, I(3), "c", 9), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 1, a, 5]; +I[2, 3, c, 9]");
        CHECK_EQ_INT(feed(&h, MD, 1, I(1), "a", 5), SL_ERR);
        CHECK(strstr(h.op.err, "insert-only input") != NULL);
        teardown(&h);

        /* keep last, processing time */
        CHECK(plan(&h, &sl_op_deduplicate, "{\"key\": [\"part\"], \"time\": \"processing\", "
                   "\"keep\": \"last\"}"));
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(1), "a", 5), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(2), "b", 3), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 1, a, 5]; -U[1, 1, a, 5]; +U[1, 2, b, 3]");
        teardown(&h);

        /* keep first, event time: an earlier row replaces */
        CHECK(plan(&h, &sl_op_deduplicate, "{\"key\": [\"part\"], \"time-column\": \"ts\", "
                   "\"keep\": \"first\"}"));
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(1), "a", 5), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(2), "b", 7), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(3), "c", 5), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(4), "d", 2), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 1, a, 5]; -U[1, 1, a, 5]; +U[1, 4, d, 2]");
        teardown(&h);

        /* keep last, event time: a later-or-equal row replaces */
        CHECK(plan(&h, &sl_op_deduplicate, "{\"key\": [\"part\"], \"time-column\": \"ts\", "
                   "\"keep\": \"last\"}"));
        CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(1), "a", 5), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(2), "b", 3), SL_OK);
        CHECK_EQ_INT(feed(&h, PI, 1, I(3), "c", 5), SL_OK);
        CHECK_EQ_STR(drain(&h), "+I[1, 1, a, 5]; -U[1, 1, a, 5]; +U[1, 3, c, 5]");
        teardown(&h);
    }
}

/* Random streams against the model: per key, the first or last row by
 * arrival (processing time) or by ts (event time; ties: keep first keeps
 * the earliest arrival, keep last the latest). */
static void test_dedup_random(void)
{
    for (size_t b = 0; b < SL_ARRAY_LEN(backends); b++)
        for (int mode = 0; mode < 4; mode++) {
            bool rowtime = mode & 1, last = mode & 2;
            harness h;
            char cfg[200];
            snprintf(cfg, sizeof cfg, "{\"key\": [\"part\"], %s, \"keep\": \"%s\"}",
                     rowtime ? "\"time-column\": \"ts\"" : "\"time\": \"processing\"",
                     last ? "last" : "first");
            CHECK(plan(&h, &sl_op_deduplicate, cfg));
            CHECK_EQ_INT(open_op(&h, backends[b]), SL_OK);
            rng = 977 + (uint64_t)mode;
            view got = {0}, want = {0};
            mrow best[6];
            bool has[6] = {0};
            bool good = true;
            for (int step = 0; good && step < 500; step++) {
                mrow m = {.part = rnd(6), .score = I(step), .ts = rnd(50)};
                snprintf(m.name, sizeof m.name, "%c", 'a' + (int)rnd(26));
                good = feed(&h, PI, m.part, m.score, m.name, m.ts) == SL_OK;
                mrow *k = &best[m.part];
                bool take = !has[m.part] ||
                            (!rowtime ? last : last ? m.ts >= k->ts : m.ts < k->ts);
                if (take) *k = m, has[m.part] = true;
                if (good) good = view_apply(&got, &h.log);
                want.n = 0;
                for (int p = 0; p < 6; p++)
                    if (has[p]) {
                        want.r = realloc(want.r, (size_t)(want.n + 1) * ROWLEN);
                        row_text(&best[p], 0, want.r[want.n++], ROWLEN);
                    }
                qsort(want.r, (size_t)want.n, ROWLEN, strcmp_q);
                if (good) good = views_equal(&got, &want);
            }
            free(got.r);
            free(want.r);
            teardown(&h);
            CHECK(good);
        }
}

SL_TEST_MAIN(SL_TEST(test_rank_plan_errors), SL_TEST(test_rank_append_with_row_number),
             SL_TEST(test_rank_append_without_row_number), SL_TEST(test_rank_retract),
             SL_TEST(test_rank_ttl), SL_TEST(test_rank_window), SL_TEST(test_rank_random_append),
             SL_TEST(test_rank_random_updating), SL_TEST(test_rank_random_range),
             SL_TEST(test_dedup_plan_errors),
             SL_TEST(test_dedup_scripted), SL_TEST(test_dedup_random))
