/*
 * test_file_source.c -- the file source and the nexmark source driven
 * through their sl_op_def callbacks, as a task thread would.
 *
 * file-source: files written here; decoded rows compared with what was
 * written (JSON lines, RFC-4180 CSV with quoted commas, quotes and line
 * breaks, CRLF, blank lines, records across the 256 KiB buffer's refills);
 * a bad record's error names the file and line, or the record is skipped
 * with ignore-parse-errors. Checkpoints: a run cut at a snapshot and
 * restored gives the rest exactly; restored at another parallelism with
 * every old blob (union state), the new subtasks read every remaining
 * record exactly once.
 *
 * nexmark: the proportions (1 person, 3 auctions, 46 bids in every 50
 * events), the id rules (person and auction ids count their kind, bids
 * name existing-or-near auctions and persons), event time from the rate,
 * one event's values independent of the subtask making it, and a restore
 * at another parallelism giving the same events.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sl_test.h"
#include "jobgraph.h"
#include "operator.h"
#include "row_text.h"

extern const sl_op_def sl_op_file_source;
extern const sl_op_def sl_op_nexmark;

typedef struct fixture {
    sl_vertex v;
    sl_schema out;
    void *plan;
    const sl_op_def *def;
    char err[512];
} fixture;

static int fixture_plan(fixture *f, const sl_op_def *def, const char *schema, const char *config)
{
    memset(f, 0, sizeof *f);
    f->def = def;
    f->v.id = "src";
    f->v.name = "src";
    f->v.type = (char *)def->name;
    f->v.def = def;
    json_error_t je;
    f->v.config = json_loads(config, 0, &je);
    if (!f->v.config) abort();
    sl_schema_init(&f->v.declared);
    sl_schema_init(&f->out);
    char *copy = sl_strdup(schema), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        char *sp = strchr(tok, ' ');
        *sp = '\0';
        sl_type t;
        if (sl_type_parse(sp + 1, &t) != SL_OK) abort();
        sl_schema_add(&f->v.declared, tok, t);
    }
    free(copy);
    f->plan = sl_test_plan(def, &f->v, NULL, &f->out, f->err, sizeof f->err);
    return f->plan ? SL_OK : SL_ERR;
}

static void fixture_free(fixture *f)
{
    if (f->plan) f->def->plan_free(f->plan);
    sl_vertex_plan_free(&f->v);
    sl_schema_free(&f->v.declared);
    sl_schema_free(&f->out);
    json_decref(f->v.config);
}

/* Rows as text lines "a|b|c\n". */
typedef struct sink {
    const sl_schema *schema;
    char *text;
    size_t len, cap, n;
} sink;

static int sink_emit(void *ctx, int output, sl_row *row)
{
    sink *s = ctx;
    row_text_row(&s->text, &s->len, &s->cap, row, s->schema);
    s->n++;
    return SL_OK;
}

static void op_init(sl_op *op, fixture *f, int sub, int p, sink *s)
{
    memset(op, 0, sizeof *op);
    op->def = f->def;
    op->vertex = &f->v;
    op->plan = f->plan;
    op->subtask = sub;
    op->parallelism = p;
    op->max_parallelism = 128;
    op->out = &f->out;
    op->emit = sink_emit;
    op->emit_ctx = s;
    s->schema = &f->out;
}

/* run() until SL_DONE, or `calls` times (> 0); the last rc. */
static int run_op(sl_op *op, int calls)
{
    int rc = SL_OK;
    for (int k = 0; calls <= 0 || k < calls; k++) {
        rc = op->def->run(op);
        if (rc != SL_OK) break;
    }
    return rc;
}

/* Open and run subtask sub of p to the end, restoring blobs first if any. */
static int run_all(fixture *f, int sub, int p, sink *s, const void *const *blobs,
                   const size_t *lens, int nblobs, char *err, size_t errlen)
{
    sl_op op;
    op_init(&op, f, sub, p, s);
    int rc = op.def->open(&op);
    if (rc == SL_OK && nblobs) rc = op.def->restore_state(&op, blobs, lens, nblobs);
    if (rc == SL_OK) rc = run_op(&op, 0);
    if (err) snprintf(err, errlen, "%s", op.err);
    op.def->close(&op);
    return rc;
}

static char tmpdir[256];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sl-test-fsrc-XXXXXX");
    if (!mkdtemp(tmpdir)) abort();
}

static void rm_tmpdir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

static void write_file(const char *name, const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *fp = fopen(path, "w");
    fputs(text, fp);
    fclose(fp);
}

static char *config(const char *path, const char *fmt, const char *extra)
{
    return sl_sprintf("{\"path\": \"%s%s\", \"format\": \"%s\"%s}", tmpdir, path, fmt,
                      extra ? extra : "");
}

/* ---- file source ---------------------------------------------------------- */

static void test_json_directory_in_name_order(void)
{
    make_tmpdir();
    write_file("b.json", "{\"id\": 3, \"s\": \"c\"}\r\n\n   \n{\"s\": \"d\\n\\u00e9\", \"id\": 4}");
    write_file("a.json", "{\"id\": 1, \"s\": \"a\", \"other\": [1, {\"x\": 2}]}\n"
                         "{\"id\": 2, \"s\": null, \"ts\": \"2026-01-01 00:00:01.5\"}\n");
    write_file(".hidden", "junk\n");
    write_file("_inprogress", "junk\n");
    fixture f;
    char *cfg = config("", "json", NULL);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file_source, "id BIGINT, s STRING, ts TIMESTAMP(3)", cfg),
                 SL_OK);
    sink s = {0};
    CHECK_EQ_INT(run_all(&f, 0, 1, &s, NULL, NULL, 0, NULL, 0), SL_DONE);
    CHECK_EQ_STR(s.text, "1|a|null\n2|null|2026-01-01T00:00:01.500\n3|c|null\n4|d\n\xc3\xa9|null\n");
    free(s.text);
    /* two subtasks: a.json to 0, b.json to 1 */
    sink s0 = {0}, s1 = {0};
    CHECK_EQ_INT(run_all(&f, 0, 2, &s0, NULL, NULL, 0, NULL, 0), SL_DONE);
    CHECK_EQ_INT(run_all(&f, 1, 2, &s1, NULL, NULL, 0, NULL, 0), SL_DONE);
    CHECK_EQ_INT(s0.n, 2);
    CHECK_EQ_INT(s1.n, 2);
    free(s0.text);
    free(s1.text);
    fixture_free(&f);
    free(cfg);
    rm_tmpdir();
}

static void test_csv_quoted_fields_across_lines(void)
{
    make_tmpdir();
    write_file("in.csv", "1,plain,1.5\r\n2,\"a,b\",\n3,\"say \"\"hi\"\"\",2\n"
                         "4,\"two\nlines\",3\n5,\"\",4\n6,,5");
    fixture f;
    char *cfg = config("/in.csv", "csv", NULL);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file_source, "id INT, t STRING, x DOUBLE", cfg), SL_OK);
    sink s = {0};
    CHECK_EQ_INT(run_all(&f, 0, 1, &s, NULL, NULL, 0, NULL, 0), SL_DONE);
    CHECK_EQ_STR(s.text, "1|plain|1.5\n2|a,b|null\n3|say \"hi\"|2.0\n4|two\nlines|3.0\n5||4.0\n"
                         "6|null|5.0\n");
    free(s.text);
    fixture_free(&f);
    free(cfg);
    rm_tmpdir();
}

static void test_bad_record_names_file_and_line(void)
{
    make_tmpdir();
    write_file("in.csv", "1,a\n2,\"b\nc\"\n3x,d\n4,e\n");
    fixture f;
    char *cfg = config("/in.csv", "csv", NULL);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file_source, "id INT, t STRING", cfg), SL_OK);
    sink s = {0};
    char err[512];
    CHECK_EQ_INT(run_all(&f, 0, 1, &s, NULL, NULL, 0, err, sizeof err), SL_ERR);
    char *want = sl_sprintf("file source 'src': %s/in.csv:4: cannot decode the csv record", tmpdir);
    CHECK(strstr(err, want) != NULL);
    CHECK(strstr(err, "csv.ignore-parse-errors") != NULL);
    free(want);
    free(s.text);
    fixture_free(&f);
    free(cfg);

    cfg = config("/in.csv", "csv", ", \"csv.ignore-parse-errors\": \"true\"");
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file_source, "id INT, t STRING", cfg), SL_OK);
    memset(&s, 0, sizeof s);
    CHECK_EQ_INT(run_all(&f, 0, 1, &s, NULL, NULL, 0, NULL, 0), SL_DONE);
    CHECK_EQ_STR(s.text, "1|a\n2|b\nc\n4|e\n");
    free(s.text);
    fixture_free(&f);
    free(cfg);

    cfg = config("/in.csv", "avro", NULL);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file_source, "id INT", cfg), SL_ERR);
    CHECK(strstr(f.err, "option 'format' must be json or csv, not 'avro'") != NULL);
    fixture_free(&f);
    free(cfg);
    rm_tmpdir();
}

/* Three files of n rows "id,text" with texts long enough that the files
 * span several buffer refills. */
static int64_t write_big(int nfiles, int n)
{
    int64_t id = 0;
    for (int k = 0; k < nfiles; k++) {
        char path[400];
        snprintf(path, sizeof path, "%s/part-%d", tmpdir, k);
        FILE *fp = fopen(path, "w");
        for (int i = 0; i < n; i++) {
            id++;
            fprintf(fp, "{\"id\":%lld,\"t\":\"%0*d\"}\n", (long long)id, (int)(id % 300) + 1, 7);
        }
        fclose(fp);
    }
    return id;
}

/* Every id of 1..total in the texts exactly once. */
static void check_ids(sink *const *sinks, int n, int64_t total)
{
    char *seen = calloc((size_t)total + 1, 1);
    for (int k = 0; k < n; k++) {
        const char *p = sinks[k]->text;
        while (p && *p) {
            long long id = strtoll(p, NULL, 10);
            CHECK(id >= 1 && id <= total);
            if (id >= 1 && id <= total) seen[id]++;
            p = strchr(p, '\n');
            if (p) p++;
        }
    }
    for (int64_t i = 1; i <= total; i++)
        if (seen[i] != 1) {
            fprintf(stderr, "id %lld seen %d times\n", (long long)i, seen[i]);
            CHECK_EQ_INT(seen[i], 1);
            break;
        }
    free(seen);
}

static void test_snapshot_restore_same_and_rescaled(void)
{
    make_tmpdir();
    int64_t total = write_big(5, 4000); /* about 0.9 MB each */
    fixture f;
    char *cfg = config("", "json", NULL);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file_source, "id BIGINT, t STRING", cfg), SL_OK);

    /* p = 2, each cut after a few batches, snapshot */
    sink before[2] = {{0}}, after[3] = {{0}};
    void *blob[2];
    size_t len[2];
    for (int i = 0; i < 2; i++) {
        sl_op op;
        op_init(&op, &f, i, 2, &before[i]);
        CHECK_EQ_INT(op.def->open(&op), SL_OK);
        CHECK_EQ_INT(run_op(&op, 5 + i), SL_OK);
        CHECK_EQ_INT(op.def->snapshot_state(&op, 1, &blob[i], &len[i]), SL_OK);
        op.def->close(&op);
    }
    /* same parallelism: each its own blob (and, union state, the other's too) */
    sink same[2] = {{0}};
    const void *const blobs[2] = {blob[0], blob[1]};
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(run_all(&f, i, 2, &same[i], blobs, len, 2, NULL, 0), SL_DONE);
    sink *all1[4] = {&before[0], &before[1], &same[0], &same[1]};
    check_ids(all1, 4, total);
    /* rescaled to 3: every old blob to every new subtask */
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(run_all(&f, i, 3, &after[i], blobs, len, 2, NULL, 0), SL_DONE);
    sink *all2[5] = {&before[0], &before[1], &after[0], &after[1], &after[2]};
    check_ids(all2, 5, total);
    /* restored at 3 and snapshotted before reading anything, then restored
     * at 2: each file is in one of the three blobs, at its old position */
    void *blob3[3];
    size_t len3[3];
    sink none = {0}, again[2] = {{0}};
    for (int i = 0; i < 3; i++) {
        sl_op op;
        op_init(&op, &f, i, 3, &none);
        CHECK_EQ_INT(op.def->open(&op), SL_OK);
        CHECK_EQ_INT(op.def->restore_state(&op, blobs, len, 2), SL_OK);
        CHECK_EQ_INT(op.def->snapshot_state(&op, 2, &blob3[i], &len3[i]), SL_OK);
        op.def->close(&op);
    }
    CHECK_EQ_INT(none.n, 0);
    const void *const blobs3[3] = {blob3[0], blob3[1], blob3[2]};
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(run_all(&f, i, 2, &again[i], blobs3, len3, 3, NULL, 0), SL_DONE);
    sink *all3[4] = {&before[0], &before[1], &again[0], &again[1]};
    check_ids(all3, 4, total);
    for (int i = 0; i < 3; i++) free(blob3[i]);
    free(again[0].text);
    free(again[1].text);

    /* a damaged blob is refused */
    ((unsigned char *)blob[0])[7] ^= 1;
    sink bad = {0};
    char err[512];
    CHECK_EQ_INT(run_all(&f, 0, 2, &bad, blobs, len, 2, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "cannot restore state 1 of 2: damaged") != NULL);
    /* a file of the state that is gone fails the restore */
    ((unsigned char *)blob[0])[7] ^= 1;
    char path[400];
    snprintf(path, sizeof path, "%s/part-1", tmpdir);
    unlink(path);
    CHECK_EQ_INT(run_all(&f, 1, 2, &bad, blobs, len, 2, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "/part-1' of the restored state is gone") != NULL);

    for (int i = 0; i < 2; i++) {
        free(blob[i]);
        free(before[i].text);
        free(same[i].text);
    }
    for (int i = 0; i < 3; i++) free(after[i].text);
    free(bad.text);
    fixture_free(&f);
    free(cfg);
    rm_tmpdir();
}

/* ---- nexmark ------------------------------------------------------------------ */

#define NX_SCHEMA                                                                       \
    "event_type INT, dateTime TIMESTAMP(3), person_id BIGINT, auction_id BIGINT, "      \
    "auction_seller BIGINT, bid_auction BIGINT, bid_bidder BIGINT, bid_price BIGINT, "  \
    "person_state STRING, bid_channel STRING"

typedef struct nx_ev {
    int type;
    long long ts, pid, aid, seller, bauction, bidder, price;
} nx_ev;

/* Parse the sink's lines into events, indexed by event number from ts. */
static int parse_events(const char *text, nx_ev *out, int max)
{
    int n = 0;
    const char *p = text;
    while (p && *p && n < max) {
        nx_ev e = {0};
        char f[10][64];
        int k = 0;
        const char *q = p;
        while (k < 10) {
            const char *end = strpbrk(q, "|\n");
            size_t l = (size_t)(end - q);
            snprintf(f[k], sizeof f[k], "%.*s", (int)SL_MIN(l, 63), q);
            k++;
            q = end + 1;
            if (*end == '\n') break;
        }
        e.type = atoi(f[0]);
        e.pid = atoll(f[2]);
        e.aid = atoll(f[3]);
        e.seller = atoll(f[4]);
        e.bauction = atoll(f[5]);
        e.bidder = atoll(f[6]);
        e.price = atoll(f[7]);
        /* "2026-01-01 00:00:00.123": ms within the first minute */
        e.ts = atoll(f[1] + 17) * 1000 + (f[1][19] == '.' ? atoll(f[1] + 20) *
               (strlen(f[1] + 20) == 1 ? 100 : strlen(f[1] + 20) == 2 ? 10 : 1) : 0);
        out[n++] = e;
        p = q;
    }
    return n;
}

static void test_nexmark_rules(void)
{
    fixture f;
    /* 1000 events per second: event n at n ms */
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_nexmark, NX_SCHEMA,
                              "{\"first-event.rate\": \"1000\", \"events.num\": \"5000\","
                              " \"seed\": \"7\"}"),
                 SL_OK);
    sink s = {0};
    CHECK_EQ_INT(run_all(&f, 0, 1, &s, NULL, NULL, 0, NULL, 0), SL_DONE);
    CHECK_EQ_INT(s.n, 5000);
    nx_ev *ev = calloc(5000, sizeof *ev);
    CHECK_EQ_INT(parse_events(s.text, ev, 5000), 5000);
    long long persons = 0, auctions = 0;
    for (int n = 0; n < 5000; n++) {
        const nx_ev *e = &ev[n];
        CHECK_EQ_INT(e->ts, n); /* within the first 5 s */
        int want = n % 50 == 0 ? 0 : n % 50 < 4 ? 1 : 2;
        CHECK_EQ_INT(e->type, want);
        if (e->type == 0) {
            CHECK_EQ_INT(e->pid, 1000 + persons);
            persons++;
        } else if (e->type == 1) {
            CHECK_EQ_INT(e->aid, 1000 + auctions);
            auctions++;
            /* a seller is an existing person or one of the next 10 */
            CHECK(e->seller >= 1000 && e->seller < 1000 + persons + 10);
        } else {
            CHECK(e->bauction >= 1000 && e->bauction < 1000 + auctions + 10);
            CHECK(e->bidder >= 1000 && e->bidder < 1000 + persons + 10);
            CHECK(e->price >= 100 && e->price <= 100000000);
        }
    }
    CHECK_EQ_INT(persons, 100);
    CHECK_EQ_INT(auctions, 300);

    /* p = 3: subtask i makes events i, i+3, ...: together exactly the same lines */
    sink p3[3] = {{0}};
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(run_all(&f, i, 3, &p3[i], NULL, NULL, 0, NULL, 0),
                                             SL_DONE);
    CHECK_EQ_INT(p3[0].n + p3[1].n + p3[2].n, 5000);
    const char *lines[3] = {p3[0].text, p3[1].text, p3[2].text};
    const char *ref = s.text;
    for (int n = 0; n < 5000; n++) {
        const char *a = lines[n % 3], *ae = strchr(a, '\n'), *re = strchr(ref, '\n');
        CHECK((ae - a) == (re - ref) && memcmp(a, ref, (size_t)(re - ref)) == 0);
        lines[n % 3] = ae + 1;
        ref = re + 1;
    }
    /* restored at p = 2 from p = 3's blobs, cut mid-way: the same multiset */
    void *blob[3];
    size_t len[3];
    sink cut[3] = {{0}}, rest[2] = {{0}};
    for (int i = 0; i < 3; i++) {
        sl_op op;
        op_init(&op, &f, i, 3, &cut[i]);
        CHECK_EQ_INT(op.def->open(&op), SL_OK);
        CHECK_EQ_INT(run_op(&op, 1), SL_OK);
        CHECK_EQ_INT(op.def->snapshot_state(&op, 1, &blob[i], &len[i]), SL_OK);
        op.def->close(&op);
    }
    const void *b0[2] = {blob[0], blob[2]}, *b1[1] = {blob[1]};
    size_t l0[2] = {len[0], len[2]}, l1[1] = {len[1]};
    CHECK_EQ_INT(run_all(&f, 0, 2, &rest[0], b0, l0, 2, NULL, 0), SL_DONE);
    CHECK_EQ_INT(run_all(&f, 1, 2, &rest[1], b1, l1, 1, NULL, 0), SL_DONE);
    size_t total = cut[0].n + cut[1].n + cut[2].n + rest[0].n + rest[1].n;
    CHECK_EQ_INT(total, 5000);
    size_t bytes = cut[0].len + cut[1].len + cut[2].len + rest[0].len + rest[1].len;
    CHECK_EQ_INT(bytes, s.len);
    for (int i = 0; i < 3; i++) {
        free(blob[i]);
        free(cut[i].text);
        free(p3[i].text);
    }
    free(rest[0].text);
    free(rest[1].text);

    /* another seed, other values; the same seed, the same values */
    fixture g;
    CHECK_EQ_INT(fixture_plan(&g, &sl_op_nexmark, NX_SCHEMA,
                              "{\"first-event.rate\": \"1000\", \"events.num\": \"5000\","
                              " \"seed\": \"8\"}"),
                 SL_OK);
    sink s2 = {0}, s3 = {0};
    CHECK_EQ_INT(run_all(&g, 0, 1, &s2, NULL, NULL, 0, NULL, 0), SL_DONE);
    CHECK(strcmp(s.text, s2.text) != 0);
    CHECK_EQ_INT(run_all(&f, 0, 1, &s3, NULL, NULL, 0, NULL, 0), SL_DONE);
    CHECK_EQ_STR(s.text, s3.text);
    free(s.text);
    free(s2.text);
    free(s3.text);
    free(ev);
    fixture_free(&g);
    fixture_free(&f);
}

static void test_nexmark_refusals(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_nexmark, "bid_prize BIGINT", "{}"), SL_ERR);
    CHECK(strstr(f.err, "column 'bid_prize' is not a nexmark field") != NULL);
    fixture_free(&f);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_nexmark, "bid_price INT", "{}"), SL_ERR);
    CHECK(strstr(f.err, "column 'bid_price' is INT, the nexmark field is BIGINT") != NULL);
    fixture_free(&f);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_nexmark, "bid_price BIGINT",
                              "{\"first-event.rate\": \"10\", \"next-event.rate\": \"20\"}"),
                 SL_ERR);
    CHECK(strstr(f.err, "constant rate") != NULL);
    fixture_free(&f);
}

SL_TEST_MAIN(SL_TEST(test_json_directory_in_name_order), SL_TEST(test_csv_quoted_fields_across_lines),
             SL_TEST(test_bad_record_names_file_and_line),
             SL_TEST(test_snapshot_restore_same_and_rescaled), SL_TEST(test_nexmark_rules),
             SL_TEST(test_nexmark_refusals))
