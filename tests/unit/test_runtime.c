/*
 * test_runtime.c -- the runtime's side of the operator contract
 * (runtime/runtime.c) and the typed state handles (core/vstate.c):
 * per-input watermarks and their minimum, idle and ended inputs, timers
 * fired with their key set, end of input after the final watermark, the key
 * context's checks, and value/list/map state with TTL on both backends.
 * A two-input keyed test operator records every callback as text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sl_test.h"
#include "runtime.h"
#include "vstate.h"
#include "keygroup.h"

static char trace[4096];

static void say(const char *fmt, long long a, long long b)
{
    size_t o = strlen(trace);
    snprintf(trace + o, sizeof trace - o, o ? " " : "");
    o = strlen(trace);
    snprintf(trace + o, sizeof trace - o, fmt, a, b);
}

/* "t2": two inputs (k BIGINT, ts BIGINT), keyed by k on both; each row
 * registers an event timer at its ts in namespace "w". */
static void *t2_plan(sl_plan_ctx *pc, char *err, size_t errlen)
{
    int k = 0;
    for (int i = 0; i < pc->nin; i++)
        if (sl_plan_key(pc, i, &k, 1, err, errlen) != SL_OK) return NULL;
    sl_schema_copy(pc->out, pc->in[0].schema);
    return sl_calloc(1, 1);
}

static int t2_process(sl_op *op, int input, sl_row *row)
{
    say("p%lld:%lld", input, row->vals[0].v.i);
    return sl_op_timer_register(op, SL_TIME_EVENT, row->vals[1].v.i, "w", 1);
}

static int t2_timer(sl_op *op, sl_time_domain d, int64_t time, const void *ns, size_t nslen)
{
    int64_t k;
    memcpy(&k, (const uint8_t *)op->key + 1, 8); /* non-null marker, then the BIGINT */
    say("t%lld@%lld", k, time);
    return nslen == 1 && !memcmp(ns, "w", 1) && d == SL_TIME_EVENT ? SL_OK : SL_ERR;
}

static int t2_end(sl_op *op, int input)
{
    say("end%lld wm=%lld", input, op->current_watermark == INT64_MAX ? -1 : op->current_watermark);
    return SL_OK;
}

static const sl_op_def t2 = {
    .abi = SL_OP_ABI_VERSION, .name = "t2", .flags = SL_OPF_KEYED, .max_inputs = 2,
    .plan = t2_plan, .plan_free = free, .process = t2_process, .on_timer = t2_timer,
    .end_input = t2_end,
};

static int on_wm(void *ctx, int64_t wm)
{
    SL_UNUSED(ctx);
    say("wm%lld", wm == INT64_MAX ? -1 : wm, 0);
    return SL_OK;
}

static int on_row(void *ctx, int output, sl_row *row)
{
    SL_UNUSED(ctx);
    SL_UNUSED(output);
    SL_UNUSED(row);
    return SL_OK;
}

typedef struct fixture {
    sl_vertex v;
    sl_op op;
    sl_schema in[2];
    char err[400];
} fixture;

static void fx_open(fixture *f, int parallelism, int subtask)
{
    memset(f, 0, sizeof *f);
    trace[0] = 0;
    f->v.id = (char *)"t";
    f->v.def = &t2;
    f->v.parallelism = parallelism;
    for (int i = 0; i < 2; i++) {
        sl_schema_init(&f->in[i]);
        sl_schema_add(&f->in[i], "k", SL_T_BIGINT);
        sl_schema_add(&f->in[i], "ts", SL_T_BIGINT);
    }
    SL_ASSERT(sl_vertex_plan(&f->v, 2, f->in, NULL, f->err, sizeof f->err) == SL_OK);
    sl_rt_init(&f->op, &f->v, subtask, 128);
    f->op.emit = on_row;
    f->op.emit_wm = on_wm;
    f->op.task_name = "t (1/1)";
    SL_ASSERT(sl_rt_open(&f->op, SL_BACKEND_HASHMAP, NULL) == SL_OK);
}

static void fx_close(fixture *f)
{
    sl_rt_close(&f->op);
    sl_vertex_plan_free(&f->v);
    for (int i = 0; i < 2; i++) sl_schema_free(&f->in[i]);
}

static int feed(fixture *f, int input, int64_t k, int64_t ts)
{
    sl_value v[2] = {{.v.i = k}, {.v.i = ts}};
    sl_row r = {SL_KIND_INSERT, 2, v, ts};
    return sl_rt_process(&f->op, input, &r);
}

/* The combined watermark is the minimum of the inputs; timers fire as it
 * passes them, each with its own key set; an ended input stops holding the
 * others back; the last end brings the maximum watermark before end_input. */
static void test_two_inputs_watermarks_and_timers(void)
{
    static fixture f;
    fx_open(&f, 1, 0);
    CHECK_EQ_INT(feed(&f, 0, 7, 100), SL_OK);
    CHECK_EQ_INT(feed(&f, 1, 8, 150), SL_OK);
    CHECK_EQ_INT(feed(&f, 1, 9, 300), SL_OK);
    CHECK_EQ_INT(sl_rt_watermark(&f.op, 0, 200), SL_OK); /* input 1 still at MIN */
    CHECK_EQ_INT(f.op.current_watermark, INT64_MIN);
    CHECK_EQ_INT(sl_rt_watermark(&f.op, 1, 160), SL_OK);
    CHECK_EQ_INT(f.op.current_watermark, 160);
    CHECK_EQ_INT(sl_rt_watermark(&f.op, 1, 150), SL_OK); /* not an advance: ignored */
    CHECK_EQ_INT(sl_rt_end_input(&f.op, 1), SL_OK);      /* now input 0 alone: 200 */
    CHECK_EQ_INT(f.op.current_watermark, 200);
    CHECK_EQ_INT(sl_rt_end_input(&f.op, 0), SL_OK);
    CHECK_EQ_STR(trace, "p0:7 p1:8 p1:9 t7@100 t8@150 wm160 wm200 end1 wm=200 t9@300 wm-1 end0 wm=-1");
    fx_close(&f);
}

/* An idle input does not hold the minimum back; when it speaks again its
 * own watermark counts from then on. */
static void test_idle_input_is_excluded(void)
{
    static fixture f;
    fx_open(&f, 1, 0);
    CHECK_EQ_INT(sl_rt_watermark(&f.op, 0, 500), SL_OK);
    CHECK_EQ_INT(f.op.current_watermark, INT64_MIN);
    CHECK_EQ_INT(sl_rt_input_idle(&f.op, 1, 1), SL_OK);
    CHECK_EQ_INT(f.op.current_watermark, 500);
    CHECK_EQ_INT(sl_rt_input_idle(&f.op, 0, 1), SL_OK); /* both idle: time stands still */
    CHECK_EQ_INT(f.op.current_watermark, 500);
    CHECK_EQ_INT(sl_rt_input_idle(&f.op, 0, 0), SL_OK);
    CHECK_EQ_INT(sl_rt_input_idle(&f.op, 1, 0), SL_OK);
    CHECK_EQ_INT(sl_rt_watermark(&f.op, 0, 900), SL_OK);
    CHECK_EQ_INT(sl_rt_watermark(&f.op, 1, 700), SL_OK);
    CHECK_EQ_INT(f.op.current_watermark, 700);
    CHECK_EQ_STR(trace, "wm500 wm700");
    fx_close(&f);
}

/* The key context refuses a row whose key group the subtask does not own
 * (its input was not hashed on the key). */
static void test_foreign_key_group_fails(void)
{
    static fixture f;
    fx_open(&f, 2, 0); /* owns key groups 0-63 */
    int64_t k = 0;
    for (;; k++) {
        uint8_t key[9] = {1};
        memcpy(key + 1, &k, 8);
        if ((int)(sl_murmur3_32(key, 9, 0) % 128) >= 64) break;
    }
    CHECK_EQ_INT(feed(&f, 1, k, 1), SL_ERR);
    CHECK(strstr(f.op.err, "reached the subtask owning key groups 0-63 (input 1 is not partitioned "
                           "by its key)") != NULL);
    fx_close(&f);
}

/* Plan-time declarations refuse what they cannot hold. */
static void test_plan_declarations(void)
{
    sl_plan_ctx pc;
    memset(&pc, 0, sizeof pc);
    sl_schema s;
    sl_schema_init(&s);
    sl_schema_add(&s, "a", SL_T_INT);
    pc.nin = 1;
    pc.in[0].schema = &s;
    pc.nout = 1;
    char err[200];
    int bad = 3, ok = 0;
    CHECK_EQ_INT(sl_plan_key(&pc, 0, &bad, 1, err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "key column 3 is not a column of input 0");
    CHECK_EQ_INT(sl_plan_key(&pc, 1, &ok, 1, err, sizeof err), SL_ERR);
    CHECK_EQ_INT(sl_plan_key(&pc, 0, &ok, 1, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_plan_output(&pc, "late", &s, err, sizeof err), 1);
    CHECK_EQ_INT(sl_plan_output(&pc, "late", &s, err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "side output 'late' declared twice");
    CHECK_EQ_INT(sl_plan_output(&pc, "", &s, err, sizeof err), SL_ERR);
    sl_schema_free(&pc.outputs[1].schema);
    sl_schema_free(&s);
}

/* ---- state handles ------------------------------------------------------------ */

static int64_t now_ms;
static int64_t fake_clock(void) { return now_ms; }

static int collect(void *ctx, const void *val, size_t len)
{
    char *out = ctx;
    size_t o = strlen(out);
    snprintf(out + o, 256 - o, "%s%.*s", o ? "," : "", (int)len, (const char *)val);
    return 0;
}

static int collect_map(void *ctx, const void *k, size_t klen, const void *val, size_t len)
{
    char *out = ctx;
    size_t o = strlen(out);
    snprintf(out + o, 256 - o, "%s%.*s=%.*s", o ? "," : "", (int)klen, (const char *)k, (int)len,
             (const char *)val);
    return 0;
}

static void state_handles(sl_backend_kind kind)
{
    char dir[64] = "", err[300];
    if (kind == SL_BACKEND_ROCKSDB) {
        snprintf(dir, sizeof dir, "/tmp/sl_test_vstate_XXXXXX");
        SL_ASSERT(mkdtemp(dir));
    }
    sl_kstate *ks = sl_kstate_open(kind, dir, 128, 0, 127, err, sizeof err);
    SL_ASSERT(ks);
    sl_vstate_clock = fake_clock;
    now_ms = 1000;
    sl_vstate *v = sl_vstate_new(ks, "v", SL_STATE_VALUE, 0, err, sizeof err);
    sl_vstate *t = sl_vstate_new(ks, "t", SL_STATE_VALUE, 500, err, sizeof err);
    sl_vstate *l = sl_vstate_new(ks, "l", SL_STATE_LIST, 500, err, sizeof err);
    sl_vstate *m = sl_vstate_new(ks, "m", SL_STATE_MAP, 0, err, sizeof err);
    sl_vstate *all = NULL;
    sl_vstate_link(&all, v);
    sl_vstate_link(&all, t);
    sl_vstate_link(&all, l);
    sl_vstate_link(&all, m);
    const void *val;
    size_t len;
    sl_kstate_set_key(ks, "k1", 2, 5);
    CHECK_EQ_INT(sl_value_get(v, NULL, 0, &val, &len), SL_DONE);
    CHECK_EQ_INT(sl_value_put(v, NULL, 0, "one", 3), SL_OK);
    CHECK_EQ_INT(sl_value_put(v, "ns", 2, "two", 3), SL_OK); /* namespaces apart */
    CHECK_EQ_INT(sl_value_get(v, NULL, 0, &val, &len), SL_OK);
    CHECK(len == 3 && !memcmp(val, "one", 3));
    CHECK_EQ_INT(sl_value_put(t, NULL, 0, "ttl", 3), SL_OK); /* expires at 1500 */
    CHECK_EQ_INT(sl_list_add(l, NULL, 0, "a", 1), SL_OK);
    now_ms = 1200;
    CHECK_EQ_INT(sl_list_add(l, NULL, 0, "b", 1), SL_OK);     /* expires at 1700 */
    CHECK_EQ_INT(sl_map_put(m, NULL, 0, "x", 1, "1", 1), SL_OK);
    CHECK_EQ_INT(sl_map_put(m, NULL, 0, "y", 1, "2", 1), SL_OK);
    CHECK_EQ_INT(sl_map_put(m, "o", 1, "x", 1, "3", 1), SL_OK); /* another namespace */
    /* another key sees none of it */
    sl_kstate_set_key(ks, "k2", 2, 9);
    CHECK_EQ_INT(sl_value_get(v, NULL, 0, &val, &len), SL_DONE);
    CHECK_EQ_INT(sl_map_get(m, NULL, 0, "x", 1, &val, &len), SL_DONE);
    sl_kstate_set_key(ks, "k1", 2, 5);
    char out[256] = "";
    CHECK_EQ_INT(sl_list_each(l, NULL, 0, collect, out), SL_OK);
    CHECK_EQ_STR(out, "a,b");
    now_ms = 1500; /* t and the list's "a" expire: never returned again */
    CHECK_EQ_INT(sl_value_get(t, NULL, 0, &val, &len), SL_DONE);
    out[0] = 0;
    CHECK_EQ_INT(sl_list_each(l, NULL, 0, collect, out), SL_OK);
    CHECK_EQ_STR(out, "b");
    now_ms = 1700;
    out[0] = 0;
    CHECK_EQ_INT(sl_list_each(l, NULL, 0, collect, out), SL_OK);
    CHECK_EQ_STR(out, "");
    out[0] = 0;
    CHECK_EQ_INT(sl_map_each(m, NULL, 0, collect_map, out), SL_OK);
    CHECK_EQ_STR(out, "x=1,y=2");
    CHECK_EQ_INT(sl_map_get(m, "o", 1, "x", 1, &val, &len), SL_OK);
    CHECK(len == 1 && !memcmp(val, "3", 1));
    CHECK_EQ_INT(sl_map_remove(m, NULL, 0, "x", 1), SL_OK);
    CHECK_EQ_INT(sl_map_get(m, NULL, 0, "x", 1, &val, &len), SL_DONE);
    CHECK_EQ_INT(sl_state_clear(m, NULL, 0), SL_OK);
    out[0] = 0;
    CHECK_EQ_INT(sl_map_each(m, NULL, 0, collect_map, out), SL_OK);
    CHECK_EQ_STR(out, "");
    CHECK_EQ_INT(sl_map_get(m, "o", 1, "x", 1, &val, &len), SL_OK); /* the other namespace stays */
    CHECK_EQ_INT(sl_state_clear(v, NULL, 0), SL_OK);
    CHECK_EQ_INT(sl_value_get(v, NULL, 0, &val, &len), SL_DONE);
    CHECK_EQ_INT(sl_value_get(v, "ns", 2, &val, &len), SL_OK);
    sl_vstate_free_all(all);
    sl_kstate_close(ks);
    if (dir[0]) rmdir(dir);
    sl_vstate_clock = sl_now_ms;
}

static void test_state_handles(void) { state_handles(SL_BACKEND_HASHMAP); }
static void test_state_handles_rocksdb(void) { state_handles(SL_BACKEND_ROCKSDB); }

SL_TEST_MAIN(SL_TEST(test_two_inputs_watermarks_and_timers), SL_TEST(test_idle_input_is_excluded),
             SL_TEST(test_foreign_key_group_fails), SL_TEST(test_plan_declarations),
             SL_TEST(test_state_handles), SL_TEST(test_state_handles_rocksdb))
