/*
 * test_udf_agg.c -- user-defined aggregate functions in the aggregate
 * library (operators/agg.c: parsing an item that calls one, the slot's
 * created flag, add / retract / merge / result through the table, errors
 * with the arguments), and the Python decorator reader (core/udf_py.c).
 * Every expected value is written out by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agg.h"
#include "sl_test.h"
#include "udf_sig.h"

/* ---- a C aggregate, linked into the test: sum of a * b, count, fails on 13 -- */

typedef struct { int64_t sum, n; } acc_t;

static int creates;

static int t_create(sl_udf_ctx *c, void *acc)
{
    (void)c;
    creates++;
    memset(acc, 0, sizeof(acc_t));
    return 0;
}

static int t_add(sl_udf_ctx *c, void *acc, const sl_value *a, int n)
{
    (void)n;
    if (a[0].v.i == 13) {
        snprintf(c->err, sizeof c->err, "no thirteens");
        return 1;
    }
    acc_t *x = acc;
    x->sum += a[0].v.i * a[1].v.i;
    x->n++;
    return 0;
}

static int t_sub(sl_udf_ctx *c, void *acc, const sl_value *a, int n)
{
    (void)c, (void)n;
    acc_t *x = acc;
    x->sum -= a[0].v.i * a[1].v.i;
    x->n--;
    return 0;
}

static int t_merge(sl_udf_ctx *c, void *acc, const void *o)
{
    (void)c;
    acc_t *x = acc;
    const acc_t *y = o;
    x->sum += y->sum;
    x->n += y->n;
    return 0;
}

static int t_value(sl_udf_ctx *c, const void *acc, sl_value *out)
{
    (void)c;
    const acc_t *x = acc;
    out->isnull = x->n == 0;
    out->v.i = x->sum;
    return 0;
}

static const sl_udf_aggregate wsum = {SL_UDF_ABI_VERSION, 16, t_create, t_add, t_sub, t_merge,
                                      t_value};

typedef struct fixture {
    sl_schema in, out;
    sl_agg_list l;
    char err[512];
} fixture;

/* Input l BIGINT, i INT, s STRING, f BOOLEAN; items NULL-terminated. */
static int setup(fixture *f, const char *flags, const char *const *items)
{
    sl_schema_init(&f->in);
    sl_schema_init(&f->out);
    sl_schema_add(&f->in, "l", SL_T_BIGINT);
    sl_schema_add(&f->in, "i", SL_T_INT);
    sl_schema_add(&f->in, "s", SL_T_STRING);
    sl_schema_add(&f->in, "f", SL_T_BOOLEAN);
    sl_agg_list_init(&f->l);
    char decl[200];
    snprintf(decl, sizeof decl, "sluice-udf 1|aggregate|wsum|BIGINT|BIGINT, BIGINT|%s "
             "accumulator=16", flags);
    sl_udf_sig *s = sl_udf_parse_decl(decl, f->err, sizeof f->err);
    if (!s) return SL_ERR;
    atomic_store(&s->fn, (void *)&wsum);
    f->l.udfs = sl_udf_set_new();
    sl_udf_set_add(f->l.udfs, s);
    for (int i = 0; items[i]; i++)
        if (sl_agg_list_add(&f->l, items[i], i + 1, &f->in, &f->out, f->err, sizeof f->err) !=
            SL_OK)
            return SL_ERR;
    return SL_OK;
}

static void teardown(fixture *f)
{
    sl_agg_list_free(&f->l);
    sl_schema_free(&f->in);
    sl_schema_free(&f->out);
}

static sl_row *row(sl_value v[4], int64_t l, int64_t i, bool lnull, bool flag)
{
    static sl_row r;
    memset(v, 0, 4 * sizeof *v);
    v[0].v.i = l;
    v[0].isnull = lnull;
    v[1].v.i = i;
    v[2].v.s.p = "x";
    v[2].v.s.len = 1;
    v[3].v.i = flag;
    r = (sl_row){.kind = SL_KIND_INSERT, .n = 4, .vals = v};
    return &r;
}

static void test_parse(void)
{
    static fixture f;
    const char *items[] = {"wsum(l, i) AS w", "COUNT(*)", "WSUM(`l`, l) FILTER (WHERE f)", NULL};
    CHECK_EQ_INT(setup(&f, "deterministic strict retract merge", items), SL_OK);
    CHECK_EQ_INT(f.l.n, 3);
    CHECK(f.l.aggs[0].fn == SL_AGG_UDF && f.l.aggs[0].nargs == 2);
    CHECK_EQ_INT(f.l.aggs[0].cols[0], 0);
    CHECK_EQ_INT(f.l.aggs[0].cols[1], 1);
    CHECK(f.l.aggs[2].filter == 3);
    CHECK_EQ_STR(f.out.fields[0].name, "w");
    CHECK(f.out.fields[0].type == SL_T_BIGINT);
    /* 8 row count + (8 flag + 16) + 0 + (8 + 16) */
    CHECK_EQ_INT((int)f.l.size, 8 + 24 + 24);
    CHECK(f.l.has_udf && !f.l.udf_nomerge && sl_agg_mergeable(&f.l));
    teardown(&f);

    struct { const char *item, *want; } bad[] = {
        {"wsum(l)", "aggregate 1 'wsum(l)': wsum takes 2 arguments, not 1"},
        {"wsum(l, s)", "aggregate 1 'wsum(l, s)': argument 2 of wsum must be BIGINT; 's' is STRING"},
        {"wsum(l, l, l)", "aggregate 1 'wsum(l, l, l)': wsum takes 2 arguments"},
        {"wsum(l, nope)", "aggregate 1 'wsum(l, nope)': unknown column 'nope'"},
        {"median(l)", "unknown aggregate function 'median' (expected COUNT, SUM, MIN, MAX, AVG or "
                      "one of the vertex's 'functions')"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const char *one[] = {bad[k].item, NULL};
        CHECK_EQ_INT(setup(&f, "strict", one), SL_ERR);
        CHECK(strstr(f.err, bad[k].want) != NULL);
        teardown(&f);
    }
    /* without merge: not mergeable (no slices, no two phases) */
    const char *one[] = {"wsum(l, i)", NULL};
    CHECK_EQ_INT(setup(&f, "strict retract", one), SL_OK);
    CHECK(f.l.udf_nomerge && !sl_agg_mergeable(&f.l));
    teardown(&f);
}

static void test_add_retract_merge_result(void)
{
    static fixture f;
    const char *items[] = {"wsum(l, i) AS w", NULL};
    CHECK_EQ_INT(setup(&f, "deterministic strict retract merge", items), SL_OK);
    uint8_t a[64], b[64], m[64];
    sl_value v[4], out[1];
    sl_agg_init(&f.l, a);
    sl_agg_init(&f.l, b);
    creates = 0;
    CHECK_EQ_INT(sl_agg_result(&f.l, a, out), SL_OK); /* a fresh accumulator: created for it */
    CHECK(out[0].isnull);
    CHECK_EQ_INT(creates, 1);
    CHECK_EQ_INT(sl_agg_add(&f.l, a, row(v, 5, 3, false, true)), SL_OK);   /* 15 */
    CHECK_EQ_INT(sl_agg_add(&f.l, a, row(v, 7, 2, false, true)), SL_OK);   /* 14 */
    CHECK_EQ_INT(sl_agg_add(&f.l, a, row(v, 0, 9, true, true)), SL_OK);    /* NULL: skipped */
    CHECK_EQ_INT(creates, 2);                                               /* once for a */
    CHECK_EQ_INT(sl_agg_result(&f.l, a, out), SL_OK);
    CHECK(!out[0].isnull && out[0].v.i == 29);
    CHECK_EQ_INT((int)sl_agg_rows(a), 3);
    CHECK_EQ_INT(sl_agg_retract(&f.l, a, row(v, 5, 3, false, true)), SL_OK);
    CHECK_EQ_INT(sl_agg_result(&f.l, a, out), SL_OK);
    CHECK(out[0].v.i == 14);
    CHECK_EQ_INT(sl_agg_add(&f.l, b, row(v, 100, 1, false, true)), SL_OK);
    memcpy(m, a, f.l.size);
    CHECK_EQ_INT(sl_agg_merge(&f.l, m, b), SL_OK);
    CHECK_EQ_INT(sl_agg_result(&f.l, m, out), SL_OK);
    CHECK(out[0].v.i == 114);
    /* merging into a never-created accumulator copies the other one */
    uint8_t e[64];
    sl_agg_init(&f.l, e);
    CHECK_EQ_INT(sl_agg_merge(&f.l, e, b), SL_OK);
    CHECK_EQ_INT(sl_agg_result(&f.l, e, out), SL_OK);
    CHECK(out[0].v.i == 100);
    /* a failure names the function, the phase, the message and the arguments */
    CHECK_EQ_INT(sl_agg_add(&f.l, a, row(v, 13, 4, false, true)), SL_ERR);
    CHECK_EQ_STR(sl_agg_error(), "function 'wsum' failed in accumulate: no thirteens "
                                 "(arguments: 13, 4)");
    teardown(&f);
    /* no retract declared: a retraction fails naming it */
    CHECK_EQ_INT(setup(&f, "strict", items), SL_OK);
    sl_agg_init(&f.l, a);
    CHECK_EQ_INT(sl_agg_add(&f.l, a, row(v, 1, 1, false, true)), SL_OK);
    CHECK_EQ_INT(sl_agg_retract(&f.l, a, row(v, 1, 1, false, true)), SL_ERR);
    CHECK(strstr(sl_agg_error(), "function 'wsum' received a retraction but declares no "
                                 "retract") == sl_agg_error());
    teardown(&f);
}

static void test_declarations(void)
{
    char err[400];
    sl_udf_sig *s = sl_udf_parse_decl("sluice-udf 1|aggregate|a|DOUBLE|BIGINT, INT|nullable "
                                      "merge accumulator=24", err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        CHECK(s->kind == SL_UDF_AGG_KIND && s->acc_size == 24 && s->merge && !s->retract &&
              !s->strict && s->result == SL_T_DOUBLE && s->nargs == 2);
        char *t = sl_udf_sig_text(s);
        CHECK_EQ_STR(t, "DOUBLE a(BIGINT, INT)");
        free(t);
        sl_udf_sig *c = sl_udf_sig_copy(s);
        CHECK(c->acc_size == 24 && c->merge && !c->retract);
        sl_udf_sig_free(c);
        sl_udf_sig_free(s);
    }
    struct { const char *decl, *want; } bad[] = {
        {"sluice-udf 1|aggregate|a|BIGINT|BIGINT|strict",
         "an aggregate function declares its accumulator's size"},
        {"sluice-udf 1|aggregate|a|BIGINT|BIGINT|strict accumulator=0",
         "accumulator size '0' must be a decimal number of bytes from 1 to 4096"},
        {"sluice-udf 1|aggregate|a|BIGINT|BIGINT|strict accumulator=4097", "from 1 to 4096"},
        {"sluice-udf 1|aggregate|a|BIGINT|BIGINT|strict accumulator=sizeof(x)",
         "accumulator size 'sizeof(x)' must be a decimal number"},
        {"sluice-udf 1|scalar|a|BIGINT|BIGINT|strict retract",
         "unknown flag 'retract' (deterministic, nondeterministic, strict, nullable)"},
        {"sluice-udf 1|window|a|BIGINT|BIGINT|strict", "unknown kind 'window' (scalar, table or aggregate)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CHECK(sl_udf_parse_decl(bad[k].decl, err, sizeof err) == NULL);
        CHECK(strstr(err, bad[k].want) != NULL);
    }
    /* STRING results and DATE arguments */
    sl_udf_sig *st = sl_udf_parse_decl("sluice-udf 1|aggregate|a|STRING|DATE|strict accumulator=8",
                                       err, sizeof err);
    CHECK(st && st->result == SL_T_STRING && st->args[0] == SL_T_DATE);
    sl_udf_sig_free(st);
}

/* ---- the Python decorator reader ------------------------------------------ */

static char *write_py(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/sl-test-udf-%d.py", (int)getpid());
    FILE *fp = fopen(path, "w");
    fputs(text, fp);
    fclose(fp);
    return path;
}

static void test_python_decorators(void)
{
    char err[600];
    const char *src =
        "\"\"\"A module (docstring with a bracket ( that never closes).\"\"\"\n"
        "from pyflink.table import DataTypes\n"
        "from pyflink.table.udf import udf\n"
        "import functools\n"
        "\n"
        "@udf(result_type=DataTypes.BIGINT(),\n"
        "     input_types=[DataTypes.BIGINT(), DataTypes.INT()])  # a comment (\n"
        "def two(a, b):\n"
        "    return a + b\n"
        "\n"
        "@functools.lru_cache\n"
        "@udf(result_type='STRING', input_types='STRING', deterministic=False, name='x')\n"
        "# a comment between\n"
        "def one(s):\n"
        "    return s\n"
        "\n"
        "@udf(result_type=DataTypes.DOUBLE(), input_types=[])\n"
        "def none_():\n"
        "    return 1.0\n"
        "\n"
        "x = 1\n"
        "def plain(a):\n"
        "    return a\n"
        "\n"
        "@udf(result_type=DataTypes.TIMESTAMP(3), input_types=[DataTypes.BIGINT()])\n"
        "def ts(a):\n"
        "    return None\n"
        "\n"
        "@udf(result_type=DataTypes.BIGINT(), input_types=[DataTypes.DECIMAL(10, 2)])\n"
        "def dec(a):\n"
        "    return 1\n"
        "\n"
        "@udtf(result_types=[DataTypes.STRING(), 'INT'], input_types=DataTypes.STRING())\n"
        "def rows(a):\n"
        "    yield a, 1\n"
        "\n"
        "class Sum(AggregateFunction):\n"
        "    def create_accumulator(self):\n"
        "        return [0]\n"
        "    def accumulate(self, acc, v):\n"
        "        acc[0] += v\n"
        "    def retract(self, acc, v):\n"
        "        acc[0] -= v\n"
        "    def get_value(self, acc):\n"
        "        return acc[0]\n"
        "\n"
        "total = udaf(Sum(), result_type='BIGINT', input_types=[DataTypes.BIGINT()],\n"
        "             accumulator_bytes=100)\n"
        "\n"
        "@udaf(result_type=DataTypes.DOUBLE(), input_types=[DataTypes.DATE()])\n"
        "class Deco(AggregateFunction):\n"
        "    def create_accumulator(self):\n"
        "        return []\n"
        "    def accumulate(self, acc, v):\n"
        "        pass\n"
        "    def merge(self, acc, others):\n"
        "        pass\n"
        "    def get_value(self, acc):\n"
        "        return 1.0\n"
        "\n"
        "@udaf(result_type='BIGINT', input_types=['BIGINT'], func_type='pandas')\n"
        "def pandas_sum(v):\n"
        "    return v.sum()\n"
        "\n"
        "stranger = udaf(Missing(), result_type='BIGINT', input_types=['BIGINT'])\n"
        "\n"
        "@udf(result_type='DECIMAL(40, 2)', input_types=['BIGINT'])\n"
        "def wide(a):\n"
        "    return a\n"
        "\n"
        "@udtf(result_types=[DataTypes.DECIMAL(5, 1), 'INT'],\n"
        "      input_types=[DataTypes.DECIMAL(38, 18), 'DECIMAL'])\n"
        "def drows(a, b):\n"
        "    yield a, 1\n";
    char *path = write_py(src);
    sl_udf_sig *s = sl_udf_python_decl(path, "m", "two", err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_STR(s->decl, "sluice-udf 1|scalar|two|BIGINT|BIGINT, INT|deterministic nullable");
        CHECK(s->python && !s->strict && s->nargs == 2 && s->args[1] == SL_T_INT);
        CHECK_EQ_STR(s->module, "m");
        CHECK_EQ_STR(s->source, src);
        sl_udf_sig_free(s);
    }
    s = sl_udf_python_decl(path, "m", "one", err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_STR(s->decl, "sluice-udf 1|scalar|one|STRING|STRING|nondeterministic nullable");
        sl_udf_sig_free(s);
    }
    s = sl_udf_python_decl(path, "m", "rows", err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_STR(s->decl, "sluice-udf 1|table|rows|f0 STRING, f1 INT|STRING|deterministic nullable");
        CHECK(s->kind == SL_UDF_TABLE_KIND && s->cols.n == 2);
        sl_udf_sig_free(s);
    }
    s = sl_udf_python_decl(path, "m", "dec", err, sizeof err); /* DECIMAL(p, s) arguments */
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_STR(s->decl, "sluice-udf 1|scalar|dec|BIGINT|DECIMAL(10, 2)|deterministic nullable");
        CHECK(s->nargs == 1 && s->args[0] == SL_T_DECIMAL && s->argdt[0]->p == 10 &&
              s->argdt[0]->s == 2);
        sl_udf_sig_free(s);
    }
    s = sl_udf_python_decl(path, "m", "drows", err, sizeof err);
    CHECK(s != NULL);
    if (s) { /* DECIMAL alone is DECIMAL(10, 0); commas inside a type's () are its own */
        CHECK_EQ_STR(s->decl, "sluice-udf 1|table|drows|f0 DECIMAL(5, 1), f1 INT|DECIMAL(38, 18), "
                              "DECIMAL(10, 0)|deterministic nullable");
        CHECK(s->nargs == 2 && s->argdt[0]->p == 38 && s->argdt[0]->s == 18 &&
              s->argdt[1]->p == 10 && s->argdt[1]->s == 0);
        CHECK(s->cols.n == 2 && s->cols.fields[0].dt->p == 5 && s->cols.fields[0].dt->s == 1);
        char *sig = sl_udf_sig_text(s);
        CHECK_EQ_STR(sig, "TABLE(f0 DECIMAL(5, 1), f1 INT) drows(DECIMAL(38, 18), DECIMAL(10, 0))");
        free(sig);
        sl_udf_sig_free(s);
    }
    s = sl_udf_python_decl(path, "m", "none_", err, sizeof err);
    CHECK(s != NULL && s->nargs == 0 && s->result == SL_T_DOUBLE);
    sl_udf_sig_free(s);
    s = sl_udf_python_decl(path, "m", "ts", err, sizeof err);
    CHECK(s != NULL && s->result == SL_T_TIMESTAMP);
    sl_udf_sig_free(s);
    s = sl_udf_python_decl(path, "m", "total", err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_STR(s->decl, "sluice-udf 1|aggregate|total|BIGINT|BIGINT|deterministic nullable "
                              "retract accumulator=104");
        CHECK(s->kind == SL_UDF_AGG_KIND && s->retract && !s->merge && s->acc_size == 104);
        sl_udf_sig_free(s);
    }
    s = sl_udf_python_decl(path, "m", "Deco", err, sizeof err);
    CHECK(s != NULL);
    if (s) {
        CHECK_EQ_STR(s->decl, "sluice-udf 1|aggregate|Deco|DOUBLE|DATE|deterministic nullable "
                              "merge accumulator=1024");
        sl_udf_sig_free(s);
    }
    struct { const char *fn, *want; } bad[] = {
        {"plain", ", line 22: 'plain' has no @udf(result_type=..., input_types=[...]), "
                  "@udtf(result_types=[...], input_types=[...]) or udaf(...) declaration"},
        {"wide", "@udf: type DECIMAL(40, 2): Python functions take BOOLEAN, INT, BIGINT, DOUBLE, "
                 "DECIMAL(p, s)"},
        {"nope", ": no top-level 'def nope(', 'class nope' or 'nope = udf(...)' in the file"},
        {"pandas_sum", "udaf over a function is PyFlink's Pandas aggregate"},
        {"stranger", "udaf's first argument must be an AggregateFunction class of this "
                     "file, as in udaf(Missing(), ...) (no top-level class 'Missing')"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CHECK(sl_udf_python_decl(path, "m", bad[k].fn, err, sizeof err) == NULL);
        CHECK(strstr(err, bad[k].want) != NULL);
    }
    CHECK(sl_udf_python_decl(path, "a-b", "two", err, sizeof err) == NULL);
    CHECK(strstr(err, "'a-b' is not a Python module name") != NULL);
    unlink(path);
    CHECK(sl_udf_python_decl(path, "m", "two", err, sizeof err) == NULL);
    CHECK(strstr(err, "cannot read") != NULL);
}

SL_TEST_MAIN(SL_TEST(test_parse), SL_TEST(test_add_retract_merge_result), SL_TEST(test_declarations),
             SL_TEST(test_python_decorators))
