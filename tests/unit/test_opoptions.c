/* Operator options as a typed table (core/opregistry.c): defaults, types,
 * unknown keys with did-you-mean, prefix keys, bad values; and the
 * check_job hook the JobManager calls at submission (jm_job_graph_check). */
#include <string.h>

#include "sl_test.h"
#include "jobgraph.h"
#include "jm.h"
#include "operator.h"

static const sl_op_option t_options[] = {
    {"name", SL_CT_STRING, "anon", NULL, "a string"},
    {"count", SL_CT_INT, "3", NULL, "an integer"},
    {"on", SL_CT_BOOL, "false", NULL, "a boolean"},
    {"every", SL_CT_DURATION, "1 s", NULL, "a duration"},
    {"ratio", SL_CT_DOUBLE, NULL, NULL, "a number"},
    {"mode", SL_CT_ENUM, "fast", "fast,slow", "an enum"},
    {"cols", SL_CT_JSON, NULL, NULL, "a list"},
    {"user.*", SL_CT_INT, NULL, NULL, "a prefix"},
    SL_OP_OPTIONS_END,
};

typedef struct { char name[32]; int64_t count, every; int on, mode, cols_set; double ratio; } t_seen;
static t_seen seen;

static void *t_plan(sl_plan_ctx *pc, char *err, size_t errlen)
{
    snprintf(seen.name, sizeof seen.name, "%s", sl_plan_opt_str(pc, "name"));
    seen.count = sl_plan_opt_int(pc, "count");
    seen.on = sl_plan_opt_bool(pc, "on");
    seen.every = sl_plan_opt_int(pc, "every");
    seen.ratio = sl_plan_opt_double(pc, "ratio");
    seen.mode = (int)sl_plan_opt_int(pc, "mode");
    seen.cols_set = sl_plan_opt_json(pc, "cols") != NULL;
    return sl_calloc(1, 1);
}

static int t_check(const sl_vertex *v, const void *plan, const sl_job_check *jc, char *err,
                   size_t errlen)
{
    if (jc->checkpoint_interval_ms > 0 && jc->checkpoint_interval_ms < 5000)
        return sl_seterr(err, errlen, "vertex '%s': checkpoints every %lld ms are too often",
                         v->id, (long long)jc->checkpoint_interval_ms);
    return SL_OK;
}

static int t_run(sl_op *op) { return SL_DONE; }

static const sl_op_def t_def = {
    .abi = SL_OP_ABI_VERSION, .name = "t-opts", .flags = SL_OPF_SOURCE, .options = t_options,
    .plan = t_plan, .plan_free = free, .check_job = t_check, .run = t_run,
};

static int plan_with(const char *config, char *err, size_t errlen)
{
    char g[1024];
    snprintf(g, sizeof g,
             "{\"vertices\": [{\"id\": \"t\", \"type\": \"t-opts\", \"schema\": [{\"name\": \"a\", "
             "\"type\": \"BIGINT\"}], \"config\": %s}, {\"id\": \"s\", \"type\": \"blackhole\"}],"
             " \"edges\": [{\"from\": \"t\", \"to\": \"s\"}]}", config);
    memset(&seen, 0, sizeof seen);
    sl_jobgraph *jg = sl_jobgraph_parse(g, strlen(g), 1, 0, err, errlen);
    sl_jobgraph_destroy(jg);
    return jg ? SL_OK : SL_ERR;
}

static void setup(void)
{
    char err[256];
    sl_ops_register_builtin();
    sl_op_register(&t_def, err, sizeof err);
}

static void test_defaults_and_types(void)
{
    char err[512];
    setup();
    CHECK_EQ_INT(plan_with("{}", err, sizeof err), SL_OK);
    CHECK_EQ_STR(seen.name, "anon");
    CHECK_EQ_INT(seen.count, 3);
    CHECK_EQ_INT(seen.on, 0);
    CHECK_EQ_INT(seen.every, 1000);
    CHECK_EQ_INT(seen.mode, 0);
    CHECK_EQ_INT(seen.cols_set, 0);
    CHECK_EQ_INT(plan_with("{\"name\": \"x\", \"count\": 7, \"on\": true, \"every\": \"2 min\","
                           " \"ratio\": 0.25, \"mode\": \"SLOW\", \"cols\": [\"a\"], \"user.k\": \"9\"}",
                           err, sizeof err), SL_OK);
    CHECK_EQ_STR(seen.name, "x");
    CHECK_EQ_INT(seen.count, 7);
    CHECK_EQ_INT(seen.on, 1);
    CHECK_EQ_INT(seen.every, 120000);
    CHECK(seen.ratio == 0.25);
    CHECK_EQ_INT(seen.mode, 1);
    CHECK_EQ_INT(seen.cols_set, 1);
    CHECK_EQ_INT(plan_with("{\"count\": \"12\"}", err, sizeof err), SL_OK); /* text of a number */
    CHECK_EQ_INT(seen.count, 12);
}

static void test_unknown_keys(void)
{
    char err[512];
    setup();
    CHECK_EQ_INT(plan_with("{\"cont\": 1}", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "vertex 't': unknown option 'cont' for type 't-opts'; did you mean 'count'?");
    CHECK_EQ_INT(plan_with("{\"zzzzzzzz\": 1}", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "vertex 't': unknown option 'zzzzzzzz' for type 't-opts'");
}

static void test_bad_values(void)
{
    char err[512];
    setup();
    CHECK_EQ_INT(plan_with("{\"count\": \"many\"}", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "vertex 't': option 'count': 'many' is not an integer");
    CHECK_EQ_INT(plan_with("{\"on\": \"perhaps\"}", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "vertex 't': option 'on': 'perhaps' is not a boolean (true or false)");
    CHECK_EQ_INT(plan_with("{\"mode\": \"medium\"}", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "vertex 't': option 'mode': 'medium' is not one of: fast, slow");
    CHECK_EQ_INT(plan_with("{\"every\": \"soon\"}", err, sizeof err), SL_ERR);
    CHECK(strstr(err, "vertex 't': option 'every': 'soon' is not a duration") == err);
    CHECK_EQ_INT(plan_with("{\"count\": [1]}", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "vertex 't': option 'count' must be a single value, not a list");
    /* prefix keys: each checked against its row's type */
    CHECK_EQ_INT(plan_with("{\"user.a\": 1, \"user.b\": \"x\"}", err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "vertex 't': option 'user.b': 'x' is not an integer");
}

static void test_bad_tables_refused(void)
{
    char err[512];
    static const sl_op_option bad_dflt[] = {{"n", SL_CT_INT, "ten", NULL, ""}, SL_OP_OPTIONS_END};
    static const sl_op_option no_choices[] = {{"m", SL_CT_ENUM, NULL, NULL, ""}, SL_OP_OPTIONS_END};
    sl_op_def d = t_def;
    d.name = "t-bad";
    d.options = bad_dflt;
    CHECK_EQ_INT(sl_op_register(&d, err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "operator 't-bad': default: option 'n': 'ten' is not an integer");
    d.options = no_choices;
    CHECK_EQ_INT(sl_op_register(&d, err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "operator 't-bad': option 'm' is an enum without choices");
}

static void test_check_job_at_submission(void)
{
    char err[512];
    setup();
    const char *g = "{\"config\": {\"execution.checkpointing.interval\": \"1 s\"}, \"vertices\": "
                    "[{\"id\": \"t\", \"type\": \"t-opts\", \"schema\": [{\"name\": \"a\", \"type\": "
                    "\"BIGINT\"}]}, {\"id\": \"s\", \"type\": \"blackhole\"}], \"edges\": "
                    "[{\"from\": \"t\", \"to\": \"s\"}]}";
    sl_jobgraph *jg = sl_jobgraph_parse(g, strlen(g), 1, 0, err, sizeof err);
    CHECK(jg != NULL);
    jm j;
    memset(&j, 0, sizeof j);
    j.conf = sl_config_new();
    CHECK_EQ_INT(jm_job_graph_check(&j, jg, err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "vertex 't': checkpoints every 1000 ms are too often");
    sl_config_set(j.conf, "execution.checkpointing.interval", "10 s", NULL, NULL, 0);
    sl_jobgraph_destroy(jg);
    /* without the job's own interval, the cluster's 10 s passes */
    const char *g2 = strstr(g, "\"vertices\"");
    char g3[1024];
    snprintf(g3, sizeof g3, "{%s", g2);
    jg = sl_jobgraph_parse(g3, strlen(g3), 1, 0, err, sizeof err);
    CHECK(jg != NULL);
    CHECK_EQ_INT(jm_job_graph_check(&j, jg, err, sizeof err), SL_OK);
    sl_jobgraph_destroy(jg);
    sl_config_destroy(j.conf);
}

SL_TEST_MAIN(SL_TEST(test_defaults_and_types), SL_TEST(test_unknown_keys), SL_TEST(test_bad_values),
             SL_TEST(test_bad_tables_refused), SL_TEST(test_check_job_at_submission))
