/*
 * test_sinks.c -- print, file and blackhole driven through their sl_op_def
 * callbacks, plus the operator registry.
 *
 * The expected text is written out by hand from Flink's formats: Row's
 * toString for print, Flink's json and csv formats for the file sink.
 *
 * The file sink's two-phase commit is driven through its checkpoint hooks
 * as the runtime would call them, and judged by what a reader of the
 * directory sees: which visible part files exist and what they hold.
 */
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sl_test.h"
#include "jobgraph.h"
#include "operator.h"

extern const sl_op_def sl_op_print, sl_op_file, sl_op_blackhole, sl_op_datagen, sl_op_calc;

typedef struct fixture {
    sl_vertex v;
    sl_schema in, out;
    void *plan;
    sl_op op;
    char err[512];
} fixture;

/* Plan a sink vertex "snk" of `def` over the schema of sample_rows(). */
static int fixture_plan(fixture *f, const sl_op_def *def, const char *config)
{
    memset(f, 0, sizeof *f);
    f->v.id = "snk";
    f->v.name = "snk";
    f->v.def = def;
    f->v.config = json_loads(config, 0, NULL);
    if (!f->v.config) abort();
    sl_schema_init(&f->v.declared);
    sl_schema_init(&f->in);
    sl_schema_init(&f->out);
    sl_schema_add(&f->in, "id", SL_T_BIGINT);
    sl_schema_add(&f->in, "name", SL_T_STRING);
    sl_schema_add(&f->in, "score", SL_T_DOUBLE);
    sl_schema_add(&f->in, "ok", SL_T_BOOLEAN);
    sl_schema_add(&f->in, "ts", SL_T_TIMESTAMP);
    sl_schema_add(&f->in, "raw", SL_T_BYTES);
    sl_schema_add(&f->in, "n", SL_T_INT);
    f->plan = sl_test_plan(def, &f->v, &f->in, &f->out, f->err, sizeof f->err);
    return f->plan ? SL_OK : SL_ERR;
}

static int fixture_open(fixture *f, int subtask, int parallelism, FILE *out)
{
    sl_op *op = &f->op;
    op->def = f->v.def;
    op->vertex = &f->v;
    op->plan = f->plan;
    op->subtask = subtask;
    op->parallelism = parallelism;
    op->max_parallelism = 128;
    op->in = &f->in;
    op->out_stream = out;
    return op->def->open(op);
}

static void fixture_free(fixture *f)
{
    if (f->op.priv && f->op.def->close) f->op.def->close(&f->op);
    if (f->plan && f->v.def->plan_free) f->v.def->plan_free(f->plan);
    sl_vertex_plan_free(&f->v);
    sl_schema_free(&f->in);
    sl_schema_free(&f->out);
    sl_schema_free(&f->v.declared);
    json_decref(f->v.config);
}

/* Three rows: ordinary values; NULLs and an empty string; awkward text. */
#define NROWS 3
static sl_value vals[NROWS][7];
static sl_row rows[NROWS];

static void sample_rows(void)
{
    memset(vals, 0, sizeof vals);
    static const char raw[] = {'h', 'i', (char)0xFF};
    vals[0][0].v.i = 2;
    vals[0][1].v.s.p = "alice";
    vals[0][1].v.s.len = 5;
    vals[0][2].v.d = 2.5;
    vals[0][3].v.i = 1;
    vals[0][4].v.i = 1767225600020LL; /* 2026-01-01 00:00:00.020 */
    vals[0][5].v.s.p = raw;
    vals[0][5].v.s.len = 3;
    vals[0][6].v.i = -7;

    vals[1][0].v.i = 3;
    vals[1][1].v.s.p = "";
    vals[1][2].v.d = 3.0;
    vals[1][3].v.i = 0;
    vals[1][4].v.i = 1767225600000LL;
    for (int i = 5; i < 7; i++) vals[1][i].isnull = true;

    vals[2][0].isnull = true;
    vals[2][1].v.s.p = "say \"hi\", bob\nbye\\";
    vals[2][1].v.s.len = (uint32_t)strlen(vals[2][1].v.s.p);
    vals[2][2].v.d = 0.1;
    vals[2][3].isnull = true;
    vals[2][4].v.i = 1767225610500LL;
    vals[2][5].v.s.p = "";
    vals[2][6].v.i = 0;

    for (int r = 0; r < NROWS; r++) {
        rows[r].kind = SL_KIND_INSERT;
        rows[r].n = 7;
        rows[r].vals = vals[r];
        rows[r].ts = SL_TS_NONE;
    }
}

static char *slurp(FILE *fp)
{
    fflush(fp);
    long n = ftell(fp);
    rewind(fp);
    char *s = calloc(1, (size_t)n + 1);
    if (n > 0 && fread(s, 1, (size_t)n, fp) != (size_t)n) s[0] = '\0';
    return s;
}

static char *read_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    char *s = slurp(fp);
    fclose(fp);
    return s;
}

/* ---- print -------------------------------------------------------------- */

/* Print the sample rows through a print vertex and return the text. */
static char *print_rows(const char *config, int subtask, int parallelism, sl_rowkind kind0)
{
    fixture f;
    if (fixture_plan(&f, &sl_op_print, config) != SL_OK) return NULL;
    FILE *out = tmpfile();
    if (fixture_open(&f, subtask, parallelism, out) != SL_OK) return NULL;
    sample_rows();
    rows[0].kind = kind0;
    for (int r = 0; r < NROWS; r++)
        if (f.op.def->process(&f.op, 0, &rows[r]) != SL_OK) return NULL;
    if (f.op.def->end_input(&f.op, 0) != SL_OK) return NULL;
    fixture_free(&f);
    char *s = slurp(out);
    fclose(out);
    return s;
}

static void test_print_format(void)
{
    char *s = print_rows("{}", 0, 1, SL_KIND_INSERT);
    CHECK_EQ_STR(s, "+I[2, alice, 2.5, true, 2026-01-01T00:00:00.020, [104, 105, -1], -7]\n"
                    "+I[3, , 3.0, false, 2026-01-01T00:00, null, null]\n"
                    "+I[null, say \"hi\", bob\nbye\\, 0.1, null, 2026-01-01T00:00:10.500, [], 0]\n");
    free(s);
}

static void test_print_prefixes(void)
{
    /* Flink: identifier "ident> ", parallel "2> ", both "ident:2> ". */
    char *s = print_rows("{\"print-identifier\": \"ident\"}", 1, 3, SL_KIND_UPDATE_BEFORE);
    CHECK(s != NULL);
    CHECK(strncmp(s, "ident:2> -U[2, alice, ", 22) == 0);
    CHECK(strstr(s, "\nident:2> +I[3, , 3.0, false,") != NULL);
    free(s);
    s = print_rows("{\"print-identifier\": \"ident\"}", 0, 1, SL_KIND_DELETE);
    CHECK(strncmp(s, "ident> -D[2, alice, ", 20) == 0);
    free(s);
    s = print_rows("{}", 2, 3, SL_KIND_UPDATE_AFTER);
    CHECK(strncmp(s, "3> +U[2, alice, ", 16) == 0);
    CHECK(strstr(s, "\n3> +I[3, , ") != NULL);
    free(s);
    /* An empty identifier is no identifier. */
    s = print_rows("{\"print-identifier\": \"\"}", 0, 2, SL_KIND_INSERT);
    CHECK(strncmp(s, "1> +I[2, alice, ", 16) == 0);
    free(s);
}

static void test_print_long_values(void)
{
    /* A row far longer than the initial line buffer. */
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_print, "{}"), SL_OK);
    FILE *out = tmpfile();
    CHECK_EQ_INT(fixture_open(&f, 0, 1, out), SL_OK);
    sample_rows();
    char *big = malloc(5000);
    memset(big, 'x', 5000);
    vals[0][1].v.s.p = big;
    vals[0][1].v.s.len = 5000;
    static char bytes[400];
    memset(bytes, 0x7F, sizeof bytes);
    vals[0][5].v.s.p = bytes;
    vals[0][5].v.s.len = sizeof bytes;
    CHECK_EQ_INT(f.op.def->process(&f.op, 0, &rows[0]), SL_OK);
    CHECK_EQ_INT(f.op.def->end_input(&f.op, 0), SL_OK);
    fixture_free(&f);
    char *s = slurp(out);
    fclose(out);
    /* "+I[2, " + 5000 x + ", 2.5, true, <ts>, [" + 400 * "127" joined by ", " + "], -7]\n" */
    size_t want = 6 + 5000 + 2 + 3 + 2 + 4 + 2 + 23 + 2 + 1 + 400 * 3 + 399 * 2 + 1 + 6;
    CHECK_EQ_INT(strlen(s), want);
    CHECK(strstr(s, "xxx, 2.5, true, 2026-01-01T00:00:00.020, [127, 127") != NULL);
    CHECK_EQ_STR(s + strlen(s) - 12, ", 127], -7]\n");
    free(s);
    free(big);
}

static void test_print_plan_errors(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_print, "{\"print-identifier\": 5}"), SL_ERR);
    CHECK(strstr(f.err, "'snk'") && strstr(f.err, "print-identifier"));
    fixture_free(&f);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_print, "{\"standard-error\": \"perhaps\"}"), SL_ERR);
    CHECK(strstr(f.err, "standard-error"));
    fixture_free(&f);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_print, "{\"standard-error\": \"false\"}"), SL_OK);
    fixture_free(&f);
}

/* ---- file --------------------------------------------------------------- */

static char tmproot[64];

static void cleanup(void)
{
    if (!tmproot[0]) return;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmproot);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmproot);
}

static const char *tmpdir(void)
{
    if (!tmproot[0]) {
        strcpy(tmproot, "/tmp/sluice-test-sinks-XXXXXX");
        if (!mkdtemp(tmproot)) abort();
        atexit(cleanup);
    }
    return tmproot;
}

/* Write the sample rows through a file vertex; returns part-<subtask>. */
static char *file_rows(const char *format, const char *sub, int subtask, sl_rowkind kind0)
{
    char config[512], path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir(), sub);
    snprintf(config, sizeof config, "{\"path\": \"%s\", \"format\": \"%s\"}", path, format);
    fixture f;
    if (fixture_plan(&f, &sl_op_file, config) != SL_OK) return NULL;
    if (fixture_open(&f, subtask, 2, NULL) != SL_OK) {
        fprintf(stderr, "open: %s\n", f.op.err);
        return NULL;
    }
    sample_rows();
    rows[0].kind = kind0;
    for (int r = 0; r < NROWS; r++)
        if (f.op.def->process(&f.op, 0, &rows[r]) != SL_OK) {
            fprintf(stderr, "process: %s\n", f.op.err);
            fixture_free(&f);
            return NULL;
        }
    if (f.op.def->end_input(&f.op, 0) != SL_OK) return NULL;
    fixture_free(&f);
    char file[300];
    snprintf(file, sizeof file, "%s/part-%d", path, subtask);
    return read_file(file);
}

static const char json_expected[] =
    "{\"id\":2,\"name\":\"alice\",\"score\":2.5,\"ok\":true,"
                 "\"ts\":\"2026-01-01 00:00:00.02\",\"raw\":\"aGn/\",\"n\":-7}\n"
                 "{\"id\":3,\"name\":\"\",\"score\":3.0,\"ok\":false,"
                 "\"ts\":\"2026-01-01 00:00:00\",\"raw\":null,\"n\":null}\n"
                 "{\"id\":null,\"name\":\"say \\\"hi\\\", bob\\nbye\\\\\",\"score\":0.1,"
                 "\"ok\":null,\"ts\":\"2026-01-01 00:00:10.5\",\"raw\":\"\",\"n\":0}\n";

static void test_file_json(void)
{
    char *s = file_rows("json", "a/b/json", 1, SL_KIND_INSERT);
    CHECK_EQ_STR(s, json_expected);
    free(s);
    /* A second run replaces the file; a changelog row carries "op". */
    s = file_rows("json", "a/b/json", 1, SL_KIND_UPDATE_BEFORE);
    CHECK(strncmp(s, "{\"id\":2,", 8) == 0);
    CHECK(strstr(s, "\"n\":-7,\"op\":\"-U\"}\n{\"id\":3,") != NULL);
    CHECK(strstr(s, "\"n\":0}\n") != NULL);
    CHECK_EQ_INT(strlen(s), strlen(json_expected) + strlen(",\"op\":\"-U\""));
    free(s);
}

static void test_file_csv(void)
{
    char *s = file_rows("csv", "csv", 0, SL_KIND_INSERT);
    CHECK_EQ_STR(s, "2,alice,2.5,true,2026-01-01 00:00:00.02,aGn/,-7\n"
                    "3,\"\",3.0,false,2026-01-01 00:00:00,,\n"
                    ",\"say \"\"hi\"\", bob\nbye\\\",0.1,,2026-01-01 00:00:10.5,,0\n");
    free(s);
}

static void test_file_csv_refuses_changelog(void)
{
    char config[512];
    snprintf(config, sizeof config, "{\"path\": \"%s/csv2\", \"format\": \"csv\"}", tmpdir());
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file, config), SL_OK);
    CHECK_EQ_INT(fixture_open(&f, 0, 1, NULL), SL_OK);
    sample_rows();
    rows[0].kind = SL_KIND_DELETE;
    CHECK_EQ_INT(f.op.def->process(&f.op, 0, &rows[0]), SL_ERR);
    CHECK(strstr(f.op.err, "-D") && strstr(f.op.err, "csv") && strstr(f.op.err, "part-0"));
    fixture_free(&f);
}

static void test_file_large_output(void)
{
    /* Enough rows to pass through the 64 KiB buffer many times. */
    char config[512], file[300];
    snprintf(config, sizeof config, "{\"path\": \"%s/big\", \"format\": \"csv\"}", tmpdir());
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file, config), SL_OK);
    CHECK_EQ_INT(fixture_open(&f, 0, 1, NULL), SL_OK);
    sample_rows();
    static char name[300];
    memset(name, 'n', sizeof name); /* longer rows, and one > 64 KiB below */
    vals[0][1].v.s.p = name;
    vals[0][1].v.s.len = sizeof name;
    size_t expect = 0;
    for (int i = 0; i < 2000; i++) {
        vals[0][0].v.i = i;
        CHECK_EQ_INT(f.op.def->process(&f.op, 0, &rows[0]), SL_OK);
        char num[16];
        expect += (size_t)snprintf(num, sizeof num, "%d", i) +
                  strlen(",,2.5,true,2026-01-01 00:00:00.02,aGn/,-7\n") + sizeof name;
    }
    char *huge = malloc(100000);
    memset(huge, 'h', 100000);
    vals[0][1].v.s.p = huge;
    vals[0][1].v.s.len = 100000;
    vals[0][0].v.i = 0;
    CHECK_EQ_INT(f.op.def->process(&f.op, 0, &rows[0]), SL_OK);
    expect += 1 + strlen(",,2.5,true,2026-01-01 00:00:00.02,aGn/,-7\n") + 100000;
    CHECK_EQ_INT(f.op.def->end_input(&f.op, 0), SL_OK);
    fixture_free(&f);
    snprintf(file, sizeof file, "%s/big/part-0", tmpdir());
    struct stat sb;
    CHECK_EQ_INT(stat(file, &sb), 0);
    CHECK_EQ_INT(sb.st_size, expect);
    char *s = read_file(file);
    CHECK(strncmp(s, "0,nnn", 5) == 0);
    CHECK(strstr(s, "\n1999,nnn") != NULL);
    free(s);
    free(huge);
}

static void test_file_errors(void)
{
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file, "{\"format\": \"json\"}"), SL_ERR);
    CHECK(strstr(f.err, "'snk'") && strstr(f.err, "'path'"));
    fixture_free(&f);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file, "{\"path\": \"/tmp/x\"}"), SL_ERR);
    CHECK(strstr(f.err, "'format'"));
    fixture_free(&f);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file, "{\"path\": \"/tmp/x\", \"format\": \"xml\"}"),
                 SL_ERR);
    CHECK(strstr(f.err, "xml"));
    fixture_free(&f);

    /* The directory cannot be made: a regular file is in the way. */
    char blocker[300], config[600], target[400];
    snprintf(blocker, sizeof blocker, "%s/blocker", tmpdir());
    FILE *fp = fopen(blocker, "w");
    CHECK(fp != NULL);
    fclose(fp);
    snprintf(target, sizeof target, "%s/sub", blocker);
    snprintf(config, sizeof config, "{\"path\": \"%s\", \"format\": \"csv\"}", target);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file, config), SL_OK);
    CHECK_EQ_INT(fixture_open(&f, 0, 1, NULL), SL_ERR);
    CHECK(strstr(f.op.err, "cannot create directory") && strstr(f.op.err, target));
    fixture_free(&f);
    /* The path itself is a file. */
    snprintf(config, sizeof config, "{\"path\": \"%s\", \"format\": \"csv\"}", blocker);
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file, config), SL_OK);
    CHECK_EQ_INT(fixture_open(&f, 0, 1, NULL), SL_ERR);
    CHECK(strstr(f.op.err, "not a directory") && strstr(f.op.err, blocker));
    fixture_free(&f);
}

/* ---- file: two-phase commit -------------------------------------------- */

/* The names in `dir`, sorted, space-separated: the visible ones, or the
 * hidden ones (leading dot, without "." and ".."). Caller frees. */
static char *list_dir(const char *dir, int hidden)
{
    char *names[64];
    int n = 0;
    DIR *d = opendir(dir);
    if (!d) return strdup("(no directory)");
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if ((e->d_name[0] == '.') != (hidden != 0)) continue;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    for (int a = 1; a < n; a++) /* insertion sort: a handful of names */
        for (int b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
            char *t = names[b];
            names[b] = names[b - 1];
            names[b - 1] = t;
        }
    size_t len = 1;
    for (int k = 0; k < n; k++) len += strlen(names[k]) + 1;
    char *out = calloc(1, len);
    for (int k = 0; k < n; k++) {
        if (k) strcat(out, " ");
        strcat(out, names[k]);
        free(names[k]);
    }
    return out;
}

static int check_names(const char *dir, int hidden, const char *want)
{
    char *got = list_dir(dir, hidden);
    int ok = !strcmp(got, want);
    if (!ok) fprintf(stderr, "%s (%s): \"%s\", expected \"%s\"\n", dir,
                     hidden ? "hidden" : "visible", got, want);
    free(got);
    return ok;
}

/* The contents of dir/name equal `want`. */
static int check_file(const char *dir, const char *name, const char *want)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *got = read_file(path);
    int ok = got && !strcmp(got, want);
    if (!ok) fprintf(stderr, "%s: \"%s\", expected \"%s\"\n", path, got ? got : "(missing)", want);
    free(got);
    return ok;
}

/* Line r (0..2) of json_expected, the sample rows in json. */
static char jline[NROWS][256];

static void json_lines(void)
{
    const char *p = json_expected;
    for (int r = 0; r < NROWS; r++) {
        const char *nl = strchr(p, '\n');
        snprintf(jline[r], sizeof jline[r], "%.*s", (int)(nl - p + 1), p);
        p = nl + 1;
    }
}

static char *cat2(const char *a, const char *b)
{
    static char buf[2][600];
    static int which;
    which ^= 1;
    snprintf(buf[which], sizeof buf[which], "%s%s", a, b);
    return buf[which];
}

/* A json file sink over `dir` with checkpointing on (the runtime's flag). */
static int open_2pc(fixture *f, const char *dir, int subtask, int parallelism)
{
    char config[512];
    snprintf(config, sizeof config, "{\"path\": \"%s\", \"format\": \"json\"}", dir);
    if (fixture_plan(f, &sl_op_file, config) != SL_OK) return SL_ERR;
    f->op.checkpointing = 1;
    int rc = fixture_open(f, subtask, parallelism, NULL);
    if (rc != SL_OK) fprintf(stderr, "open: %s\n", f->op.err);
    return rc;
}

typedef struct fblob {
    void *p;
    size_t len;
} fblob;

static int fsnap(fixture *f, int64_t cpid, fblob *b)
{
    fblob tmp = {0};
    if (!b) b = &tmp;
    int rc = f->op.def->snapshot_state(&f->op, cpid, &b->p, &b->len);
    if (rc != SL_OK) fprintf(stderr, "snapshot: %s\n", f->op.err);
    free(tmp.p);
    return rc;
}

static int frestore(fixture *f, const fblob *bs, int n)
{
    const void *ptrs[8];
    size_t lens[8];
    for (int k = 0; k < n; k++) {
        ptrs[k] = bs[k].p;
        lens[k] = bs[k].len;
    }
    return f->op.def->restore_state(&f->op, ptrs, lens, n);
}

static int put_row(fixture *f, int r)
{
    return f->op.def->process(&f->op, 0, &rows[r]);
}

static void test_file_2pc_visibility(void)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/tp/vis", tmpdir());
    sample_rows();
    json_lines();
    fixture f;
    CHECK_EQ_INT(open_2pc(&f, dir, 0, 1), SL_OK);
    CHECK(check_names(dir, 0, "") && check_names(dir, 1, ""));

    CHECK_EQ_INT(put_row(&f, 0), SL_OK);
    CHECK_EQ_INT(put_row(&f, 1), SL_OK);
    CHECK(check_names(dir, 0, "") && check_names(dir, 1, ".part-0-1.inprogress"));
    fblob b1;
    CHECK_EQ_INT(fsnap(&f, 1, &b1), SL_OK);
    CHECK(b1.len > 0 && ((unsigned char *)b1.p)[0] == 2); /* format version 2 */
    free(b1.p);
    /* Staged, written out and synced, but not visible. */
    CHECK(check_file(dir, ".part-0-1.inprogress", cat2(jline[0], jline[1])));
    CHECK(check_names(dir, 0, ""));

    CHECK_EQ_INT(put_row(&f, 2), SL_OK); /* after the barrier of 1 */
    CHECK(check_names(dir, 1, ".part-0-1.inprogress .part-0-2.inprogress"));
    CHECK_EQ_INT(f.op.def->checkpoint_complete(&f.op, 1), SL_OK);
    CHECK(check_names(dir, 0, "part-0-0"));
    CHECK(check_file(dir, "part-0-0", cat2(jline[0], jline[1])));
    CHECK(check_names(dir, 1, ".part-0-2.inprogress"));

    /* Checkpoint 2 fails: its rows wait for the next completion. */
    CHECK_EQ_INT(fsnap(&f, 2, NULL), SL_OK);
    CHECK_EQ_INT(f.op.def->checkpoint_abort(&f.op, 2), SL_OK);
    CHECK(check_names(dir, 0, "part-0-0"));
    CHECK_EQ_INT(put_row(&f, 0), SL_OK);
    CHECK_EQ_INT(fsnap(&f, 3, NULL), SL_OK);
    CHECK(check_names(dir, 0, "part-0-0"));
    CHECK_EQ_INT(f.op.def->checkpoint_complete(&f.op, 3), SL_OK);
    CHECK(check_names(dir, 0, "part-0-0 part-0-1 part-0-2"));
    CHECK(check_file(dir, "part-0-1", jline[2]));
    CHECK(check_file(dir, "part-0-2", jline[0]));
    CHECK(check_names(dir, 1, ""));

    /* No row since: no empty file. */
    CHECK_EQ_INT(fsnap(&f, 4, NULL), SL_OK);
    CHECK_EQ_INT(f.op.def->checkpoint_complete(&f.op, 4), SL_OK);
    CHECK(check_names(dir, 0, "part-0-0 part-0-1 part-0-2") && check_names(dir, 1, ""));

    /* End of input commits what is left. */
    CHECK_EQ_INT(put_row(&f, 1), SL_OK);
    CHECK_EQ_INT(put_row(&f, 2), SL_OK);
    CHECK_EQ_INT(fsnap(&f, 5, NULL), SL_OK);
    CHECK_EQ_INT(put_row(&f, 0), SL_OK);
    CHECK(check_names(dir, 0, "part-0-0 part-0-1 part-0-2"));
    CHECK_EQ_INT(f.op.def->end_input(&f.op, 0), SL_OK);
    CHECK(check_names(dir, 0, "part-0-0 part-0-1 part-0-2 part-0-3 part-0-4"));
    CHECK(check_file(dir, "part-0-3", cat2(jline[1], jline[2])));
    CHECK(check_file(dir, "part-0-4", jline[0]));
    CHECK(check_names(dir, 1, ""));
    fixture_free(&f);

    /* A later run into the same directory starts above what is there. */
    CHECK_EQ_INT(open_2pc(&f, dir, 0, 1), SL_OK);
    CHECK_EQ_INT(put_row(&f, 2), SL_OK);
    CHECK_EQ_INT(f.op.def->end_input(&f.op, 0), SL_OK);
    fixture_free(&f);
    CHECK(check_names(dir, 0, "part-0-0 part-0-1 part-0-2 part-0-3 part-0-4 part-0-5"));
    CHECK(check_file(dir, "part-0-0", cat2(jline[0], jline[1])));
    CHECK(check_file(dir, "part-0-5", jline[2]));
}

static void append_to(const char *dir, const char *name, const char *text)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "ab");
    if (!fp) abort();
    fputs(text, fp);
    fclose(fp);
}

static void test_file_2pc_restore(void)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/tp/rst", tmpdir());
    sample_rows();
    json_lines();
    fixture f;
    fblob b1, b2;
    CHECK_EQ_INT(open_2pc(&f, dir, 0, 1), SL_OK);
    CHECK_EQ_INT(put_row(&f, 0), SL_OK);
    CHECK_EQ_INT(put_row(&f, 1), SL_OK);
    CHECK_EQ_INT(fsnap(&f, 1, &b1), SL_OK);
    CHECK_EQ_INT(put_row(&f, 2), SL_OK);
    CHECK_EQ_INT(fsnap(&f, 2, &b2), SL_OK); /* never completes */
    CHECK_EQ_INT(put_row(&f, 0), SL_OK);
    fixture_free(&f); /* the task dies here */
    CHECK(check_names(dir, 0, ""));
    CHECK(check_names(dir, 1, ".part-0-1.inprogress .part-0-2.inprogress .part-0-3.inprogress"));
    /* A torn write past what checkpoint 1 recorded; another subtask's file
     * and an unrelated file, which are not this subtask's to touch. */
    append_to(dir, ".part-0-1.inprogress", "{\"torn");
    append_to(dir, ".part-1-7.inprogress", "other subtask\n");
    append_to(dir, "notes.txt", "keep\n");

    /* Restore from checkpoint 1 (it completed; the notification was lost). */
    CHECK_EQ_INT(open_2pc(&f, dir, 0, 1), SL_OK);
    CHECK_EQ_INT(frestore(&f, &b1, 1), SL_OK);
    CHECK(check_names(dir, 0, "notes.txt part-0-0"));
    CHECK(check_file(dir, "part-0-0", cat2(jline[0], jline[1]))); /* truncated */
    CHECK(check_names(dir, 1, ".part-1-7.inprogress"));
    /* The job goes on: rows after checkpoint 1 are produced again. */
    CHECK_EQ_INT(put_row(&f, 2), SL_OK);
    CHECK(check_names(dir, 1, ".part-0-2.inprogress .part-1-7.inprogress"));
    CHECK_EQ_INT(fsnap(&f, 2, NULL), SL_OK);
    CHECK_EQ_INT(f.op.def->checkpoint_complete(&f.op, 2), SL_OK);
    CHECK(check_names(dir, 0, "notes.txt part-0-0 part-0-1"));
    CHECK(check_file(dir, "part-0-1", jline[2]));
    fixture_free(&f);

    /* Restoring checkpoint 1 again: its file is committed already; the
     * new output goes to a new name, nothing is overwritten. */
    CHECK_EQ_INT(open_2pc(&f, dir, 0, 1), SL_OK);
    CHECK_EQ_INT(frestore(&f, &b1, 1), SL_OK);
    CHECK(check_names(dir, 0, "notes.txt part-0-0 part-0-1"));
    CHECK(check_file(dir, "part-0-0", cat2(jline[0], jline[1])));
    CHECK_EQ_INT(put_row(&f, 1), SL_OK);
    CHECK_EQ_INT(f.op.def->end_input(&f.op, 0), SL_OK);
    fixture_free(&f);
    CHECK(check_names(dir, 0, "notes.txt part-0-0 part-0-1 part-0-2"));
    CHECK(check_file(dir, "part-0-1", jline[2]));
    CHECK(check_file(dir, "part-0-2", jline[1]));
    CHECK(check_names(dir, 1, ".part-1-7.inprogress"));
    free(b1.p);
    free(b2.p);
}

static void test_file_2pc_rescale(void)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/tp/resc", tmpdir());
    sample_rows();
    json_lines();
    /* Three subtasks each stage one row at checkpoint 5, then write more. */
    fblob b[3];
    for (int i = 0; i < 3; i++) {
        fixture f;
        CHECK_EQ_INT(open_2pc(&f, dir, i, 3), SL_OK);
        CHECK_EQ_INT(put_row(&f, i), SL_OK);
        CHECK_EQ_INT(fsnap(&f, 5, &b[i]), SL_OK);
        CHECK_EQ_INT(put_row(&f, (i + 1) % 3), SL_OK);
        fixture_free(&f);
    }
    /* In-progress files are named after the checkpoint expected to stage
     * them: the first 1 (this job has taken none before), then 6. */
    CHECK(check_names(dir, 1, ".part-0-1.inprogress .part-0-6.inprogress .part-1-1.inprogress "
                              ".part-1-6.inprogress .part-2-1.inprogress .part-2-6.inprogress"));
    append_to(dir, ".part-2-9.inprogress", "stale\n");

    /* 3 -> 2: subtask 0 gets blobs 0 and 2, subtask 1 gets blob 1. */
    fixture g0, g1;
    CHECK_EQ_INT(open_2pc(&g0, dir, 0, 2), SL_OK);
    fblob mine[2] = {b[0], b[2]};
    CHECK_EQ_INT(frestore(&g0, mine, 2), SL_OK);
    CHECK(check_names(dir, 0, "part-0-0 part-2-0"));
    CHECK(check_names(dir, 1, ".part-1-1.inprogress .part-1-6.inprogress"));
    CHECK_EQ_INT(open_2pc(&g1, dir, 1, 2), SL_OK);
    CHECK_EQ_INT(frestore(&g1, &b[1], 1), SL_OK);
    CHECK(check_names(dir, 0, "part-0-0 part-1-0 part-2-0"));
    CHECK(check_names(dir, 1, ""));
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "part-%d-0", i);
        CHECK(check_file(dir, name, jline[i]));
    }
    /* The new subtasks go on under their own names. */
    CHECK_EQ_INT(put_row(&g0, 1), SL_OK);
    CHECK_EQ_INT(put_row(&g1, 2), SL_OK);
    CHECK_EQ_INT(g0.op.def->end_input(&g0.op, 0), SL_OK);
    CHECK_EQ_INT(g1.op.def->end_input(&g1.op, 0), SL_OK);
    fixture_free(&g0);
    fixture_free(&g1);
    CHECK(check_names(dir, 0, "part-0-0 part-0-1 part-1-0 part-1-1 part-2-0"));
    CHECK(check_file(dir, "part-0-1", jline[1]));
    CHECK(check_file(dir, "part-1-1", jline[2]));

    /* A subtask dealt no blob (say 2 -> 3) still clears its own leftovers. */
    append_to(dir, ".part-2-9.inprogress", "stale\n");
    fixture g2;
    CHECK_EQ_INT(open_2pc(&g2, dir, 2, 3), SL_OK);
    CHECK_EQ_INT(frestore(&g2, NULL, 0), SL_OK);
    CHECK(check_names(dir, 1, ""));
    CHECK_EQ_INT(put_row(&g2, 0), SL_OK);
    CHECK_EQ_INT(g2.op.def->end_input(&g2.op, 0), SL_OK);
    fixture_free(&g2);
    CHECK(check_names(dir, 0, "part-0-0 part-0-1 part-1-0 part-1-1 part-2-0 part-2-1"));
    for (int i = 0; i < 3; i++) free(b[i].p);
}

static uint64_t test_fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static void seal(unsigned char *p, size_t len)
{
    uint64_t h = test_fnv1a(p, len - 8);
    for (int b = 0; b < 8; b++) p[len - 8 + b] = (unsigned char)(h >> (8 * b));
}

/* A version-1 file sink blob of subtask 0 at checkpoint 1 with one
 * pending file, written out here from the documented layout. */
static size_t forge_blob(unsigned char *p, const char *dir, const char *stage, const char *final,
                         uint64_t len)
{
    size_t n = 0;
    p[n++] = 2;
    memcpy(p + n, "SLFS", 4);
    n += 4;
    memset(p + n, 0, 4 + 8 + 8 + 4);
    p[n + 4] = 1;      /* cpid 1 */
    p[n + 12] = 4;     /* next file number 4 */
    p[n + 20] = 1;     /* one pending file */
    n += 24;
    size_t dl = strlen(dir) + 1; /* the directory, with its trailing '/' */
    p[n++] = (unsigned char)dl;
    p[n++] = (unsigned char)(dl >> 8);
    memcpy(p + n, dir, dl - 1);
    p[n + dl - 1] = '/';
    n += dl;
    memset(p + n, 0, 16);
    p[n] = 1;          /* staged at 1 */
    for (int b = 0; b < 8; b++) p[n + 8 + b] = (unsigned char)(len >> (8 * b));
    n += 16;
    const char *names[2] = {stage, final};
    for (int k = 0; k < 2; k++) {
        size_t l = strlen(names[k]);
        p[n++] = (unsigned char)l;
        p[n++] = 0;
        memcpy(p + n, names[k], l);
        n += l;
    }
    n += 8;
    seal(p, n);
    return n;
}

/* Restoring `b` into subtask 0 over `dir` fails naming the vertex and
 * `needle`. */
static int restore_fails(const char *dir, const fblob *b, const char *needle)
{
    fixture f;
    if (open_2pc(&f, dir, 0, 1) != SL_OK) return 0;
    int rc = frestore(&f, b, 1);
    int ok = rc == SL_ERR && strstr(f.op.err, needle);
    if (!ok) fprintf(stderr, "restore: rc %d, \"%s\", wanted \"%s\"\n", rc, f.op.err, needle);
    fixture_free(&f);
    return ok;
}

static void test_file_2pc_restore_errors(void)
{
    char dir[300];
    snprintf(dir, sizeof dir, "%s/tp/err", tmpdir());
    sample_rows();
    fixture f;
    fblob b;
    CHECK_EQ_INT(open_2pc(&f, dir, 0, 1), SL_OK);
    CHECK_EQ_INT(put_row(&f, 0), SL_OK);
    CHECK_EQ_INT(fsnap(&f, 1, &b), SL_OK);
    fixture_free(&f);
    char staged[400];
    snprintf(staged, sizeof staged, "%s/.part-0-1.inprogress", dir);

    /* The pending file shrank: rows of a completed checkpoint are gone. */
    CHECK_EQ_INT(truncate(staged, 5), 0);
    CHECK(restore_fails(dir, &b, "has 5 bytes, but"));
    CHECK(restore_fails(dir, &b, staged));
    /* ...or vanished without being committed. */
    CHECK_EQ_INT(unlink(staged), 0);
    CHECK(restore_fails(dir, &b, "is gone"));

    /* Damaged and foreign blobs. */
    unsigned char *bad = malloc(b.len + 256);
    fblob x = {bad, b.len};
    memcpy(bad, b.p, b.len);
    bad[b.len / 2] ^= 1;
    CHECK(restore_fails(dir, &x, "'snk' subtask 0: cannot restore state 1 of 1: damaged"));
    memcpy(bad, b.p, b.len);
    bad[0] = 9;
    CHECK(restore_fails(dir, &x, "format version 9"));
    memcpy(bad, "\001SLDG", 5);
    CHECK(restore_fails(dir, &x, "not file sink state"));
    x.len = 3;
    CHECK(restore_fails(dir, &x, "too short"));

    /* Well sealed, but naming a file that is not the sink's own. */
    x.len = forge_blob(bad, dir, "../../x", "part-0-0", 0);
    CHECK(restore_fails(dir, &x, "damaged (pending file 0 has names '../../x', 'part-0-0')"));
    x.len = forge_blob(bad, dir, ".part-1-7.inprogress", "part-1-0", 0); /* subtask 1's, in 0's */
    CHECK(restore_fails(dir, &x, "damaged (pending file 0 has names"));
    x.len = forge_blob(bad, dir, ".part-0-7.inprogress", "part-0-3x", 0);
    CHECK(restore_fails(dir, &x, "damaged (pending file 0 has names"));
    CHECK(check_names(dir, 0, ""));
    /* The format as written out here is the sink's: with its own names the
     * forged blob restores. */
    append_to(dir, ".part-0-7.inprogress", "{}\n{\"after\":1}\n");
    x.len = forge_blob(bad, dir, ".part-0-7.inprogress", "part-0-3", 3);
    CHECK_EQ_INT(open_2pc(&f, dir, 0, 1), SL_OK);
    CHECK_EQ_INT(frestore(&f, &x, 1), SL_OK);
    fixture_free(&f);
    CHECK(check_names(dir, 0, "part-0-3") && check_names(dir, 1, ""));
    CHECK(check_file(dir, "part-0-3", "{}\n"));
    free(bad);
    free(b.p);
}

static void test_file_2pc_off(void)
{
    /* Without checkpointing the sink writes part-<i> straight out; a
     * savepoint syncs it and records nothing. */
    char dir[300], config[512];
    snprintf(dir, sizeof dir, "%s/tp/off", tmpdir());
    snprintf(config, sizeof config, "{\"path\": \"%s\", \"format\": \"json\"}", dir);
    sample_rows();
    json_lines();
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_file, config), SL_OK);
    CHECK_EQ_INT(fixture_open(&f, 1, 2, NULL), SL_OK);
    CHECK_EQ_INT(put_row(&f, 0), SL_OK);
    fblob b = {(void *)1, 99};
    CHECK_EQ_INT(fsnap(&f, 1, &b), SL_OK);
    CHECK(b.p == NULL && b.len == 0);
    CHECK(check_file(dir, "part-1", jline[0]));
    CHECK_EQ_INT(put_row(&f, 1), SL_OK);
    CHECK_EQ_INT(f.op.def->end_input(&f.op, 0), SL_OK);
    fixture_free(&f);
    CHECK(check_names(dir, 0, "part-1") && check_names(dir, 1, ""));
    CHECK(check_file(dir, "part-1", cat2(jline[0], jline[1])));
}

/* ---- blackhole ---------------------------------------------------------- */

static void test_blackhole(void)
{
    /* Unthrottled: swallows everything at once. */
    fixture f;
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_blackhole, "{}"), SL_OK);
    CHECK_EQ_INT(fixture_open(&f, 0, 1, NULL), SL_OK);
    sample_rows();
    int64_t t0 = sl_mono_ms();
    for (int i = 0; i < 100000; i++) CHECK_EQ_INT(f.op.def->process(&f.op, 0, &rows[0]), SL_OK);
    CHECK(sl_mono_ms() - t0 < 5000);
    fixture_free(&f);

    /* 2000 rows/s over 2 subtasks = 1000/s each: 300 rows take >= ~299 ms
     * (a lower bound only: never faster than the rate). */
    CHECK_EQ_INT(fixture_plan(&f, &sl_op_blackhole, "{\"sink.rows-per-second\": 2000}"), SL_OK);
    CHECK_EQ_INT(fixture_open(&f, 1, 2, NULL), SL_OK);
    t0 = sl_mono_ms();
    for (int i = 0; i < 300; i++) CHECK_EQ_INT(f.op.def->process(&f.op, 0, &rows[0]), SL_OK);
    int64_t took = sl_mono_ms() - t0;
    CHECK(took >= 280);
    fixture_free(&f);

    CHECK_EQ_INT(fixture_plan(&f, &sl_op_blackhole, "{\"sink.rows-per-second\": -5}"), SL_ERR);
    CHECK(strstr(f.err, "'snk'") && strstr(f.err, "sink.rows-per-second"));
    fixture_free(&f);
}

/* ---- registry ----------------------------------------------------------- */

static void test_registry(void)
{
    CHECK(sl_op_find("datagen") == &sl_op_datagen);
    CHECK(sl_op_find("calc") == &sl_op_calc);
    CHECK(sl_op_find("print") == &sl_op_print);
    CHECK(sl_op_find("blackhole") == &sl_op_blackhole);
    CHECK(sl_op_find("file") == &sl_op_file);
    CHECK(sl_op_find("kafka-ish") == NULL);
    CHECK(sl_op_find(NULL) == NULL);
    /* the list names every registered type once, in registry order */
    char list[1024];
    CHECK_EQ_INT(sl_op_type_list(list, sizeof list), 45); /* every built-in of operators/builtin.c */
    CHECK(strstr(list, ", collect") != NULL && strstr(list, ", window_tvf") != NULL && strstr(list, ", session_tvf") != NULL &&
          strstr(list, ", changelog-normalize") != NULL && strstr(list, ", key_select") != NULL &&
          strstr(list, ", local_aggregate") != NULL && strstr(list, ", values") != NULL &&
          strstr(list, ", set_op") != NULL && strstr(list, ", match_recognize") != NULL &&
          strstr(list, ", temporal_sort") != NULL && strstr(list, ", limit") != NULL &&
          strstr(list, ", postgres-cdc") != NULL && strstr(list, ", partition_commit") != NULL);
    CHECK(strncmp(list, "datagen, calc, print, blackhole, file", 37) == 0);
    /* registration refuses what the registry could not serve */
    char err[300];
    static const sl_op_def old_abi = {.abi = SL_OP_ABI_VERSION + 1, .name = "old"};
    CHECK(sl_op_register(&old_abi, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "operator ABI") != NULL);
    static const sl_op_def dup = {.abi = SL_OP_ABI_VERSION, .name = "calc"};
    CHECK(sl_op_register(&dup, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "already registered") != NULL);
    CHECK(sl_op_register(&sl_op_calc, err, sizeof err) == SL_OK); /* the same table again */
    CHECK(sl_op_plugins_load("/nonexistent/plugin.so", err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "/nonexistent/plugin.so") != NULL);
    static const char *more[] = {"watermark", "window", "group_aggregate", "union", "interval_join",
                                 "regular_join", "temporal_join",
                                 "window_join", "changelog-normalize"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        if (sl_op_find(more[i])) CHECK(strstr(list, more[i]) != NULL);
    CHECK(sl_op_datagen.flags & SL_OPF_SOURCE);
    CHECK(sl_op_print.flags & SL_OPF_SINK);
    CHECK(sl_op_file.flags & SL_OPF_SINK);
    CHECK(sl_op_blackhole.flags & SL_OPF_SINK);

    sl_op op;
    memset(&op, 0, sizeof op);
    CHECK_EQ_INT(sl_op_fail(&op, "bad %s at %d", "thing", 7), SL_ERR);
    CHECK_EQ_STR(op.err, "bad thing at 7");
}

SL_TEST_MAIN(SL_TEST(test_print_format), SL_TEST(test_print_prefixes),
             SL_TEST(test_print_long_values), SL_TEST(test_print_plan_errors),
             SL_TEST(test_file_json), SL_TEST(test_file_csv),
             SL_TEST(test_file_csv_refuses_changelog), SL_TEST(test_file_large_output),
             SL_TEST(test_file_errors), SL_TEST(test_file_2pc_visibility),
             SL_TEST(test_file_2pc_restore), SL_TEST(test_file_2pc_rescale),
             SL_TEST(test_file_2pc_restore_errors), SL_TEST(test_file_2pc_off),
             SL_TEST(test_blackhole), SL_TEST(test_registry))
