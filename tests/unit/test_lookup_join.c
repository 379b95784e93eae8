/*
 * test_lookup_join.c -- the lookup_join operator (operators/lookup_join.c)
 * driven through the runtime, as a task thread would.
 *
 * The table is a CSV file written here from a seeded generator (repeated
 * keys, NULL keys, strings with commas, quotes and line breaks); the stream
 * is seeded rows with keys in and out of the table's range and NULL keys.
 * A model written from the documented semantics -- each row joined with
 * every table row of its key in file order, a left join padding NULLs, a
 * NULL key matching nothing -- gives the exact output sequence. Also: a
 * computed key column dropped by left-columns, the watermark passing
 * through, a reload after lookup.join.cache.ttl seeing the file's new
 * contents, and the errors: a missing file, a malformed row (file:line),
 * a table over lookup.max-memory.
 *
 * Planning from SQL (sql/plan_join.c): Nexmark q13's shape (PROCTIME() in a
 * subquery, an expression key computed before the join, the side table not
 * read as a stream), a table's PROCTIME() column with a plain key, a
 * numeric key cast to the table's type, an inner join's other condition
 * after it, a view's PROCTIME() item windowed in processing time, and the
 * refusals, each naming what is wrong.
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
#include "sql_run.h"

/* ---- harness ------------------------------------------------------------------ */

typedef struct outlog {
    char *text;          /* one line per row: "+I|id|k|ts|tk|tv|tn" */
    size_t len, cap;
    int n;
    int64_t wm;
} outlog;

static void out_append(outlog *l, const char *s)
{
    size_t n = strlen(s);
    if (l->len + n + 1 > l->cap) {
        l->cap = (l->len + n + 1) * 2;
        l->text = realloc(l->text, l->cap);
        if (!l->text) abort();
    }
    memcpy(l->text + l->len, s, n + 1);
    l->len += n;
}

static void fmt_value(char *d, size_t cap, const sl_value *v, sl_type t)
{
    if (v->isnull) snprintf(d, cap, "null");
    else if (t == SL_T_STRING) snprintf(d, cap, "'%.*s'", (int)v->v.s.len, v->v.s.p);
    else snprintf(d, cap, "%lld", (long long)v->v.i);
}

static const sl_schema *out_schema;

static int record(void *ctx, int output, sl_row *row)
{
    outlog *l = ctx;
    SL_UNUSED(output);
    out_append(l, sl_rowkind_short(row->kind));
    for (int i = 0; i < row->n; i++) {
        char b[256];
        fmt_value(b, sizeof b, &row->vals[i], out_schema->fields[i].type);
        out_append(l, "|");
        out_append(l, b);
    }
    char ts[32];
    snprintf(ts, sizeof ts, "@%lld\n", (long long)row->ts);
    out_append(l, ts);
    l->n++;
    return SL_OK;
}

static int record_wm(void *ctx, int64_t wm)
{
    ((outlog *)ctx)->wm = wm;
    return SL_OK;
}

typedef struct harness {
    sl_vertex v;
    sl_schema in;
    sl_op op;
    int opened;
    outlog log;
    char err[512];
} harness;

static char tmpdir[64];

/* Input: id BIGINT, k BIGINT, ts TIMESTAMP(3) [, kk BIGINT]; table: tk
 * BIGINT, tv STRING, tn INT. */
static int plan(harness *h, int with_kk, const char *fmt, ...)
{
    char config[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(config, sizeof config, fmt, ap);
    va_end(ap);
    memset(h, 0, sizeof *h);
    h->v.id = (char *)"lj";
    h->v.type = (char *)"lookup_join";
    h->v.def = sl_op_find("lookup_join");
    if (!h->v.def) abort();
    h->v.parallelism = 1;
    h->v.config = sl_test_config(config);
    sl_schema_init(&h->v.declared);
    sl_schema_add(&h->v.declared, "tk", SL_T_BIGINT);
    sl_schema_add(&h->v.declared, "tv", SL_T_STRING);
    sl_schema_add(&h->v.declared, "tn", SL_T_INT);
    sl_schema_init(&h->in);
    sl_schema_add(&h->in, "id", SL_T_BIGINT);
    sl_schema_add(&h->in, "k", SL_T_BIGINT);
    sl_schema_add(&h->in, "ts", SL_T_TIMESTAMP);
    if (with_kk) sl_schema_add(&h->in, "kk", SL_T_BIGINT);
    return sl_vertex_plan(&h->v, 1, &h->in, NULL, h->err, sizeof h->err) == SL_OK;
}

static int open_op(harness *h)
{
    sl_op *op = &h->op;
    sl_test_rt_init(op, &h->v, 0, 128, record, record_wm, &h->log, "lj (1/1)");
    h->log.wm = INT64_MIN;
    h->opened = 1;
    out_schema = &h->v.out;
    return sl_rt_open(op, SL_BACKEND_HASHMAP, NULL);
}

static void teardown(harness *h)
{
    if (h->opened) sl_rt_close(&h->op);
    sl_vertex_plan_free(&h->v);
    sl_schema_free(&h->in);
    sl_schema_free(&h->v.declared);
    json_decref(h->v.config);
    free(h->log.text);
    memset(h, 0, sizeof *h);
}

/* One input row (k < 0: NULL key; kk as given when the input has it). */
static int feed(harness *h, int64_t id, int64_t k, int64_t ts, int64_t kk)
{
    sl_value v[4] = {
        {.v.i = id},
        k < 0 ? (sl_value){.isnull = true} : (sl_value){.v.i = k},
        {.v.i = ts},
        {.v.i = kk},
    };
    sl_row r = {SL_KIND_INSERT, h->in.n, v, ts};
    int rc = sl_rt_process(&h->op, 0, &r);
    if (rc != SL_OK) fprintf(stderr, "process: %s\n", h->op.err);
    return rc;
}

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- the model ------------------------------------------------------------------ */

typedef struct trow {
    int64_t k;      /* -1: NULL */
    char v[64];     /* the string's value */
    int vnull;
    int n;
} trow;

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

/* The table as CSV (quoted where needed) into path. */
static void write_table(const char *path, const trow *t, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) abort();
    for (int i = 0; i < n; i++) {
        if (t[i].k >= 0) fprintf(f, "%lld", (long long)t[i].k);
        fputc(',', f);
        if (!t[i].vnull) {
            fputc('"', f);
            for (const char *p = t[i].v; *p; p++) {
                if (*p == '"') fputc('"', f);
                fputc(*p, f);
            }
            fputc('"', f);
        }
        fprintf(f, ",%d\n", t[i].n);
        if (i % 17 == 5) fputc('\n', f); /* blank lines are skipped */
    }
    fclose(f);
}

static void model_row(outlog *m, int64_t id, int64_t k, int64_t ts, const trow *t)
{
    char b[512];
    char tk[32], tv[80];
    if (!t) snprintf(tk, sizeof tk, "null"), snprintf(tv, sizeof tv, "null");
    else {
        snprintf(tk, sizeof tk, "%lld", (long long)t->k);
        if (t->vnull) snprintf(tv, sizeof tv, "null");
        else snprintf(tv, sizeof tv, "'%s'", t->v);
    }
    char kt[32];
    if (k < 0) snprintf(kt, sizeof kt, "null");
    else snprintf(kt, sizeof kt, "%lld", (long long)k);
    char tn[16];
    if (t) snprintf(tn, sizeof tn, "%d", t->n);
    else snprintf(tn, sizeof tn, "null");
    snprintf(b, sizeof b, "+I|%lld|%s|%lld|%s|%s|%s@%lld\n", (long long)id, kt, (long long)ts, tk,
             tv, tn, (long long)ts);
    out_append(m, b);
    m->n++;
}

static int same_text(const outlog *got, const outlog *want)
{
    const char *g = got->text ? got->text : "", *w = want->text ? want->text : "";
    if (!strcmp(g, w)) return 1;
    size_t i = 0;
    while (g[i] && g[i] == w[i]) i++;
    while (i > 0 && g[i - 1] != '\n') i--;
    fprintf(stderr, "output differs (%d rows, expected %d) at:\n  got  %.120s\n  want %.120s\n",
            got->n, want->n, g + i, w + i);
    return 0;
}

/* ---- tests ---------------------------------------------------------------------- */

static const char *const strs[] = {"a", "b,c", "say \"hi\"", "", "two\nlines", "zz"};

static void random_case(int left, uint64_t seed)
{
    char path[128];
    snprintf(path, sizeof path, "%s/table.csv", tmpdir);
    uint64_t s = seed;
    int nt = 1 + (int)(rnd(&s) % 300), keys = 1 + (int)(rnd(&s) % 60);
    trow *t = calloc((size_t)nt, sizeof *t);
    for (int i = 0; i < nt; i++) {
        t[i].k = rnd(&s) % 10 == 0 ? -1 : (int64_t)(rnd(&s) % (uint64_t)keys);
        t[i].vnull = rnd(&s) % 8 == 0;
        snprintf(t[i].v, sizeof t[i].v, "%s%d", strs[rnd(&s) % 6], i);
        t[i].n = (int)(rnd(&s) % 1000) - 500;
    }
    write_table(path, t, nt);
    harness h;
    CHECK(plan(&h, 0, "{\"join-type\": \"%s\", \"left-keys\": [\"k\"], \"right-keys\": [\"tk\"], "
               "\"path\": \"%s\", \"format\": \"csv\"}", left ? "left" : "inner", path));
    CHECK(open_op(&h) == SL_OK);
    outlog want = {0};
    int nrows = 1 + (int)(rnd(&s) % 2000);
    for (int i = 0; i < nrows; i++) {
        int64_t k = rnd(&s) % 12 == 0 ? -1 : (int64_t)(rnd(&s) % (uint64_t)(keys + 5));
        int64_t ts = 1000 + i;
        CHECK(feed(&h, i, k, ts, 0) == SL_OK);
        int matched = 0;
        for (int r = 0; k >= 0 && r < nt; r++)
            if (t[r].k == k) {
                model_row(&want, i, k, ts, &t[r]);
                matched = 1;
            }
        if (!matched && left) model_row(&want, i, k, ts, NULL);
        if (i % 100 == 99) {
            CHECK(sl_rt_watermark(&h.op, 0, ts - 10) == SL_OK);
            CHECK_EQ_INT(h.log.wm, ts - 10);
        }
    }
    int ok = same_text(&h.log, &want);
    if (!ok) fprintf(stderr, "seed %llu, %s join\n", (unsigned long long)seed, left ? "left" : "inner");
    free(want.text);
    free(t);
    teardown(&h);
    unlink(path);
    CHECK(ok);
}

static void test_lookup_random_model(void)
{
    for (uint64_t seed = 1; seed <= 20; seed++) {
        random_case(0, seed);
        if (sl_test_failed_) return;
        random_case(1, seed);
        if (sl_test_failed_) return;
    }
}

/* A computed key column (kk, as the SQL planner appends one) is joined on
 * and dropped. */
static void test_lookup_computed_key_dropped(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/t.csv", tmpdir);
    write_text(path, "7,seven,1\n3,three,2\n7,again,3\n");
    harness h;
    CHECK(plan(&h, 1, "{\"join-type\": \"left\", \"left-keys\": [\"kk\"], \"right-keys\": [\"tk\"], "
               "\"left-columns\": 3, \"path\": \"%s\", \"format\": \"csv\"}", path));
    CHECK_EQ_INT(h.v.out.n, 6);
    CHECK_EQ_STR(h.v.out.fields[2].name, "ts");
    CHECK_EQ_STR(h.v.out.fields[3].name, "tk");
    CHECK(open_op(&h) == SL_OK);
    CHECK(feed(&h, 1, 17, 5, 7) == SL_OK);
    CHECK(feed(&h, 2, 13, 6, 3) == SL_OK);
    CHECK(feed(&h, 3, 11, 7, 1) == SL_OK);
    CHECK_EQ_STR(h.log.text, "+I|1|17|5|7|'seven'|1@5\n+I|1|17|5|7|'again'|3@5\n"
                             "+I|2|13|6|3|'three'|2@6\n+I|3|11|7|null|null|null@7\n");
    teardown(&h);
    unlink(path);
}

/* After lookup.join.cache.ttl the file is read again. */
static void test_lookup_reload_after_ttl(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/r.json", tmpdir);
    write_text(path, "{\"tk\": 1, \"tv\": \"old\", \"tn\": 1}\n");
    harness h;
    CHECK(plan(&h, 0, "{\"left-keys\": [\"k\"], \"right-keys\": [\"tk\"], \"path\": \"%s\", "
               "\"format\": \"json\", \"lookup.join.cache.ttl\": \"10 min\"}", path));
    CHECK(open_op(&h) == SL_OK);
    int64_t at = sl_rt_next_proc(&h.op);
    CHECK(at != INT64_MAX);
    CHECK(at >= sl_op_processing_time(&h.op) + 9 * 60 * 1000);
    CHECK(feed(&h, 1, 1, 5, 0) == SL_OK);
    write_text(path, "{\"tk\": 1, \"tv\": \"new\", \"tn\": 2}\n{\"tk\": 2, \"tv\": \"two\", \"tn\": 3}\n");
    CHECK(sl_rt_fire_proc(&h.op, at - 1) == SL_OK); /* not yet */
    CHECK(feed(&h, 2, 1, 6, 0) == SL_OK);
    CHECK(sl_rt_fire_proc(&h.op, at) == SL_OK);
    CHECK(sl_rt_next_proc(&h.op) > at);
    CHECK(feed(&h, 3, 1, 7, 0) == SL_OK);
    CHECK(feed(&h, 4, 2, 8, 0) == SL_OK);
    CHECK_EQ_STR(h.log.text, "+I|1|1|5|1|'old'|1@5\n+I|2|1|6|1|'old'|1@6\n"
                             "+I|3|1|7|1|'new'|2@7\n+I|4|2|8|2|'two'|3@8\n");
    teardown(&h);
    unlink(path);
}

static void test_lookup_missing_file(void)
{
    harness h;
    CHECK(plan(&h, 0, "{\"left-keys\": [\"k\"], \"right-keys\": [\"tk\"], \"table\": \"dim\", "
               "\"path\": \"%s/nope.csv\", \"format\": \"csv\"}", tmpdir));
    CHECK(open_op(&h) == SL_ERR);
    char want[256];
    snprintf(want, sizeof want, "lookup join 'lj': table 'dim': cannot read '%s/nope.csv': No such "
             "file or directory", tmpdir);
    CHECK_EQ_STR(h.op.err, want);
    teardown(&h);
}

static void test_lookup_malformed_row(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/bad.csv", tmpdir);
    write_text(path, "1,a,1\n2,b,2\nthree,c,3\n");
    harness h;
    CHECK(plan(&h, 0, "{\"left-keys\": [\"k\"], \"right-keys\": [\"tk\"], \"table\": \"dim\", "
               "\"path\": \"%s\", \"format\": \"csv\"}", path));
    CHECK(open_op(&h) == SL_ERR);
    char want[256];
    snprintf(want, sizeof want, "lookup join 'lj': table 'dim': %s:3: cannot decode the csv record",
             path);
    if (strncmp(h.op.err, want, strlen(want))) fprintf(stderr, "got: %s\n", h.op.err);
    CHECK(!strncmp(h.op.err, want, strlen(want)));
    teardown(&h);
    /* skipped with csv.ignore-parse-errors */
    CHECK(plan(&h, 0, "{\"left-keys\": [\"k\"], \"right-keys\": [\"tk\"], \"path\": \"%s\", "
               "\"format\": \"csv\", \"csv.ignore-parse-errors\": \"true\"}", path));
    CHECK(open_op(&h) == SL_OK);
    CHECK(feed(&h, 1, 2, 5, 0) == SL_OK);
    CHECK_EQ_STR(h.log.text, "+I|1|2|5|2|'b'|2@5\n");
    teardown(&h);
    unlink(path);
}

static void test_lookup_memory_limit(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/big.csv", tmpdir);
    FILE *f = fopen(path, "w");
    CHECK(f);
    for (int i = 0; i < 5000; i++) fprintf(f, "%d,value-%d,%d\n", i, i, i);
    fclose(f);
    harness h;
    CHECK(plan(&h, 0, "{\"left-keys\": [\"k\"], \"right-keys\": [\"tk\"], \"table\": \"dim\", "
               "\"path\": \"%s\", \"format\": \"csv\", \"lookup.max-memory\": \"64 kb\"}", path));
    CHECK(open_op(&h) == SL_ERR);
    CHECK(strstr(h.op.err, "lookup join 'lj': table 'dim': the table needs more than 65536 bytes"));
    CHECK(strstr(h.op.err, "lookup.max-memory"));
    teardown(&h);
    CHECK(plan(&h, 0, "{\"left-keys\": [\"k\"], \"right-keys\": [\"tk\"], \"path\": \"%s\", "
               "\"format\": \"csv\", \"lookup.max-memory\": \"4 mb\"}", path));
    CHECK(open_op(&h) == SL_OK);
    CHECK(feed(&h, 1, 4999, 5, 0) == SL_OK);
    CHECK_EQ_STR(h.log.text, "+I|1|4999|5|4999|'value-4999'|4999@5\n");
    teardown(&h);
    unlink(path);
}

static void test_lookup_plan_errors(void)
{
    harness h;
    CHECK(!plan(&h, 0, "{\"join-type\": \"full\", \"left-keys\": [\"k\"], \"right-keys\": [\"tk\"], "
                "\"path\": \"/x\", \"format\": \"csv\"}"));
    CHECK(strstr(h.err, "a lookup join is inner or left, not 'full'"));
    teardown(&h);
    CHECK(!plan(&h, 0, "{\"left-keys\": [\"k\"], \"right-keys\": [\"tv\"], \"path\": \"/x\", "
                "\"format\": \"csv\"}"));
    CHECK(strstr(h.err, "pairs k BIGINT with tv STRING"));
    teardown(&h);
    CHECK(!plan(&h, 0, "{\"left-keys\": [\"k\"], \"right-keys\": [\"tk\"], \"path\": \"/x\", "
                "\"format\": \"avro\"}"));
    CHECK(strstr(h.err, "option 'format' must be json or csv, not 'avro'"));
    teardown(&h);
}

/* ---- planning from SQL ------------------------------------------------------------ */

static void fmt_result(const sl_sql_result *r, char *out, size_t cap)
{
    if (r->kind == SL_SQL_TEXT) snprintf(out, cap, "%s", r->text);
    else if (r->kind == SL_SQL_JOB) snprintf(out, cap, "%s", r->job);
    else snprintf(out, cap, "OK");
}

static const char *run_sql(sl_sql_session *s, const char *script)
{
    static char out[65536];
    return sql_run_script(s, script, out, sizeof out, fmt_result);
}

static const char *const LOOKUP_TABLES =
    "CREATE TABLE bid (auction BIGINT, price INT, ts TIMESTAMP(3), pt AS PROCTIME(),"
    " WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen');\n"
    "CREATE TABLE side_input (`key` BIGINT, `value` STRING) WITH ('connector' = 'filesystem',"
    " 'path' = '/data/side', 'format' = 'csv', 'lookup.join.cache.ttl' = '5 min');\n"
    "CREATE TABLE k (`key` BIGINT, `value` STRING) WITH ('connector' = 'kafka', 'topic' = 't',"
    " 'properties.bootstrap.servers' = 'localhost:1', 'format' = 'json');\n"
    "CREATE TABLE `out` (auction BIGINT, v STRING) WITH ('connector' = 'blackhole');\n";

#define CHECK_HAS(text, what)                                                                   \
    do {                                                                                        \
        if (!strstr((text), (what))) {                                                          \
            fprintf(stderr, "missing <%s> in:\n%s\n", (what), (text));                          \
            CHECK(0);                                                                           \
        }                                                                                       \
    } while (0)

static void test_lookup_sql_plans(void)
{
    sl_sql_session *s = sl_sql_session_new();
    CHECK_EQ_STR(run_sql(s, LOOKUP_TABLES), "OK");
    /* q13: PROCTIME() in a subquery, MOD(...) computed in a calc, no source for side_input */
    const char *x = run_sql(s, "EXPLAIN INSERT INTO `out` SELECT B.auction, S.`value` FROM "
                               "(SELECT *, PROCTIME() AS p_time FROM bid) B JOIN side_input FOR "
                               "SYSTEM_TIME AS OF B.p_time AS S ON MOD(B.auction, 10000) = S.`key`;");
    CHECK_HAS(x, "CURRENT_TIMESTAMP AS p_time");
    /* MOD(BIGINT, INT) is an INT (Flink's type), cast to the BIGINT key */
    CHECK_HAS(x, "CAST(MOD(`auction`, 10000) AS BIGINT) AS lookup_key0\"]}");
    CHECK_HAS(x, "lookup-join[lookup_join] uid=join-lookup-");
    CHECK_HAS(x, "{\"join-type\":\"inner\",\"left-keys\":[\"lookup_key0\"],\"right-keys\":"
                 "[\"key\"],\"left-columns\":5,\"table\":\"side_input\",\"path\":\"/data/side\","
                 "\"format\":\"csv\",\"lookup.join.cache.ttl\":\"5 min\"}");
    CHECK(!strstr(x, "side_input[file-source]"));
    /* a table's PROCTIME() column and a plain key of the table's type: no calc before */
    x = run_sql(s, "EXPLAIN INSERT INTO `out` SELECT b.auction, d.`value` FROM bid AS b LEFT JOIN "
                   "side_input FOR SYSTEM_TIME AS OF b.pt AS d ON b.auction = d.`key`;");
    CHECK_HAS(x, "{\"join-type\":\"left\",\"left-keys\":[\"auction\"],\"right-keys\":[\"key\"],"
                 "\"table\"");
    CHECK(!strstr(x, "lookup-keys"));
    /* an INT key cast to the table's BIGINT; another condition filters after the join */
    x = run_sql(s, "EXPLAIN INSERT INTO `out` SELECT b.auction, d.`value` FROM bid AS b JOIN "
                   "side_input FOR SYSTEM_TIME AS OF b.pt AS d ON b.price = d.`key` AND "
                   "d.`value` <> 'x';");
    CHECK_HAS(x, "CAST(`price` AS BIGINT) AS lookup_key0");
    CHECK_HAS(x, "join-filter[calc] uid=join-filter {\"filter\":\"`value` <> 'x'\"}");
    /* a view's PROCTIME() item is a processing-time attribute for a window too */
    CHECK_EQ_STR(run_sql(s, "CREATE VIEW v AS SELECT auction, PROCTIME() AS p FROM bid;"), "OK");
    x = run_sql(s, "EXPLAIN SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE v, "
                   "DESCRIPTOR(p), INTERVAL '1' SECOND)) GROUP BY window_start, window_end;");
    CHECK_HAS(x, "\"time\":\"processing\",\"window\":\"TUMBLE(INTERVAL '1' SECOND)\"");
    sl_sql_session_destroy(s);
}

static void test_lookup_sql_refusals(void)
{
    sl_sql_session *s = sl_sql_session_new();
    CHECK_EQ_STR(run_sql(s, LOOKUP_TABLES), "OK");
    static const struct {
        const char *from, *err;
    } cases[] = {
        {"bid AS b JOIN k FOR SYSTEM_TIME AS OF b.pt AS d ON b.auction = d.`key`",
         "FOR SYSTEM_TIME AS OF b.pt (processing time) makes a lookup "
         "join, and table 'k' (connector 'kafka') cannot serve lookups"},
        {"bid AS b RIGHT JOIN side_input FOR SYSTEM_TIME AS OF b.pt AS d ON b.auction = d.`key`",
         "a lookup join (FOR SYSTEM_TIME AS OF a processing-time attribute) is an inner or LEFT "
         "join, not RIGHT"},
        {"bid AS b LEFT JOIN side_input FOR SYSTEM_TIME AS OF b.pt AS d ON b.auction = d.`key` "
         "AND d.`value` <> 'x'",
         "LEFT lookup join: the condition d.`value` <> 'x' is not an equality"},
        {"bid AS b JOIN side_input FOR SYSTEM_TIME AS OF b.pt AS d ON b.auction > d.`key`",
         "a lookup join needs an equality between the left side and a column of 'side_input'"},
        {"bid AS b JOIN side_input FOR SYSTEM_TIME AS OF b.pt AS d ON CAST(b.auction AS STRING) "
         "= d.`key`",
         "compares STRING with BIGINT; CAST one side"},
        {"bid AS b JOIN side_input FOR SYSTEM_TIME AS OF b.ts AS d ON b.auction = d.`key`",
         "FOR SYSTEM_TIME AS OF: 'side_input' is not a versioned table"},
        {"bid AS b JOIN side_input FOR SYSTEM_TIME AS OF b.auction AS d ON b.auction = d.`key`",
         "FOR SYSTEM_TIME AS OF needs a time attribute of the left side: its processing-time "
         "attribute (a lookup join"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char q[1024];
        snprintf(q, sizeof q, "INSERT INTO `out` SELECT b.auction, d.`value` FROM %s;", cases[i].from);
        const char *got = run_sql(s, q);
        if (!strstr(got, cases[i].err)) fprintf(stderr, "case %zu: %s\n", i, got);
        CHECK(strstr(got, cases[i].err));
    }
    CHECK_HAS(run_sql(s, "INSERT INTO `out` SELECT auction, 'x' FROM bid WHERE PROCTIME() IS NOT "
                         "NULL;"),
              "PROCTIME() makes a processing-time attribute as a SELECT item of its own");
    CHECK_HAS(run_sql(s, "INSERT INTO `out` SELECT auction, CAST(PROCTIME() AS STRING) FROM bid;"),
              "it cannot be used inside an expression");
    sl_sql_session_destroy(s);
}

static void setup(void)
{
    if (tmpdir[0]) return;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sl_test_lookup_XXXXXX");
    if (!mkdtemp(tmpdir)) abort();
}

static void t_random(void) { setup(); test_lookup_random_model(); }
static void t_computed(void) { setup(); test_lookup_computed_key_dropped(); }
static void t_reload(void) { setup(); test_lookup_reload_after_ttl(); }
static void t_missing(void) { setup(); test_lookup_missing_file(); }
static void t_malformed(void) { setup(); test_lookup_malformed_row(); }
static void t_memory(void) { setup(); test_lookup_memory_limit(); }
static void t_plan(void) { setup(); test_lookup_plan_errors(); }
static void t_sql_plans(void) { test_lookup_sql_plans(); }
static void t_sql_refusals(void) { test_lookup_sql_refusals(); }

SL_TEST_MAIN({"test_lookup_random_model", t_random}, {"test_lookup_computed_key_dropped", t_computed},
             {"test_lookup_reload_after_ttl", t_reload}, {"test_lookup_missing_file", t_missing},
             {"test_lookup_malformed_row", t_malformed}, {"test_lookup_memory_limit", t_memory},
             {"test_lookup_plan_errors", t_plan}, {"test_lookup_sql_plans", t_sql_plans},
             {"test_lookup_sql_refusals", t_sql_refusals})
