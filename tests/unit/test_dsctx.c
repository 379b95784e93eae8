/*
 * test_dsctx.c -- the DataStream context calls as a process function sees
 * them, through the real hosts (operators/process.c on the runtime of
 * runtime/runtime.c), on both state backends: the key, the element's
 * timestamp, the watermark, processing time, event and processing timers
 * (registered, deleted, fired with their key), value / list / map state,
 * the collector, side outputs, function parameters, and broadcast state
 * (read-write on the broadcast side, read-only on the data side, no key
 * there, snapshot and restore). The functions live in a real shared
 * object (tests/plugins/ctx_fns.c) that records what it saw in ctx_trace.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sl_test.h"
#include "datastream.h"
#include "runtime.h"
#include "vstate.h"

static char plugin[PATH_MAX + 64];
static char *trace;             /* ctx_trace in the plugin */

static int find_plugin(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 0;
    exe[n] = 0;
    *strrchr(exe, '/') = 0;
    snprintf(plugin, sizeof plugin, "%s/../plugins/ctx_fns.so", exe);
    void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL); /* the hosts' dlopen shares this copy */
    trace = h ? dlsym(h, "ctx_trace") : NULL;
    if (!trace) fprintf(stderr, "  cannot load %s: %s\n", plugin, dlerror());
    return trace != NULL;
}

typedef struct host {
    sl_jobgraph *g;
    sl_op op;
    char out[4096];             /* what the operator emitted */
    char dir[64];
} host;

static int capture(void *ctx, int output, sl_row *row)
{
    host *h = ctx;
    size_t o = strlen(h->out);
    snprintf(h->out + o, sizeof h->out - o, "%so%d:%lld,%lld", o ? " " : "", output,
             (long long)row->vals[0].v.i, (long long)row->vals[1].v.i);
    return SL_OK;
}

/* Parse the graph and host vertex `vid` as subtask 0 on backend bk. */
static int host_open(host *h, char *json, const char *vid, sl_backend_kind bk)
{
    memset(h, 0, sizeof *h);
    char err[400];
    h->g = sl_jobgraph_parse(json, strlen(json), 1, 0, err, sizeof err);
    free(json);
    if (!h->g) {
        fprintf(stderr, "  %s\n", err);
        return SL_ERR;
    }
    const sl_vertex *v = NULL;
    for (int i = 0; i < h->g->nv; i++)
        if (!strcmp(h->g->v[i].id, vid)) v = &h->g->v[i];
    sl_rt_init(&h->op, v, 0, h->g->max_parallelism);
    h->op.emit = capture;
    h->op.emit_ctx = h;
    for (int o = 0; o < SL_MAX_OUTPUTS; o++) h->op.out_connected[o] = 1;
    h->op.task_name = "p (1/1)";
    if (bk == SL_BACKEND_ROCKSDB) {
        snprintf(h->dir, sizeof h->dir, "/tmp/sl_test_dsctx_XXXXXX");
        SL_ASSERT(mkdtemp(h->dir));
    }
    trace[0] = 0;
    int rc = sl_rt_open(&h->op, bk, h->dir);
    if (rc != SL_OK) fprintf(stderr, "  open: %s\n", h->op.err);
    return rc;
}

static void host_close(host *h)
{
    sl_rt_close(&h->op);
    sl_jobgraph_destroy(h->g);
    if (h->dir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", h->dir);
        if (system(cmd) != 0) fprintf(stderr, "  cannot remove %s\n", h->dir);
    }
}

static int feed(host *h, int input, int64_t k, int64_t x, int64_t ts)
{
    sl_value v[2] = {{.v.i = k}, {.v.i = x}};
    sl_row r = {SL_KIND_INSERT, 2, v, ts};
    return sl_rt_process(&h->op, input, &r);
}

/* source -> key_by k -> process ctx_fn (side output "odd", user.tag) -> sinks */
static char *ctx_graph(void)
{
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_set_library(env, plugin);
    const char *gopt[] = {"fields.k.kind", "sequence", "fields.k.start", "1", "fields.k.end", "2", NULL};
    sl_ds_stream *s = sl_ds_source(env, "gen", "datagen", "k BIGINT, x BIGINT", gopt);
    const char *keys[] = {"k", NULL}, *sides[] = {"odd", NULL, NULL};
    sl_ds_stream *p = sl_ds_process(sl_ds_key_by(s, keys), "p", "ctx_fn", "k BIGINT, n BIGINT", sides);
    sl_ds_option(p, "user.tag", "blue");
    sl_ds_sink(p, "out", "blackhole", NULL);
    sl_ds_sink(sl_ds_side_output(p, "odd"), "odd_out", "blackhole", NULL);
    char err[300];
    char *json = sl_ds_to_json(env, err, sizeof err);
    sl_ds_env_free(env);
    return json;
}

static void context_calls(sl_backend_kind bk)
{
    CHECK(find_plugin());
    host h;
    CHECK_EQ_INT(host_open(&h, ctx_graph(), "p", bk), SL_OK);
    CHECK_EQ_STR(trace, "open tag=blue");
    trace[0] = 0;
    CHECK_EQ_INT(feed(&h, 0, 1, 5, 100), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 2, 4, 100), SL_OK);
    CHECK_EQ_INT(sl_rt_watermark(&h.op, 0, 104), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 1, 3, 105), SL_OK);
    CHECK_EQ_STR(trace, "p0 k=1 ts=100 wm=-1 p0 k=2 ts=100 wm=-1 p0 k=1 ts=105 wm=104");
    /* the collector and the side output (odd x only) */
    CHECK_EQ_STR(h.out, "o1:1,5 o0:1,1 o0:2,1 o1:1,3 o0:1,2");
    /* every processing timer was deleted again */
    CHECK(sl_rt_next_proc(&h.op) == INT64_MAX);
    trace[0] = 0;
    h.out[0] = 0;
    /* 112 passes both keys' timers at 110, each fired with its key set */
    CHECK_EQ_INT(sl_rt_watermark(&h.op, 0, 112), SL_OK);
    CHECK_EQ_STR(trace, "t k=1 @110 d=0 map=2 t k=2 @110 d=0 map=1");
    CHECK_EQ_STR(h.out, "o0:1,1008 o0:2,1004");
    trace[0] = 0;
    h.out[0] = 0;
    /* the end: the maximum watermark fires key 1's timer at 115, whose
     * list and map were cleared by the timer before */
    CHECK_EQ_INT(sl_rt_end_all(&h.op), SL_OK);
    CHECK_EQ_STR(trace, "t k=1 @115 d=0 map=0");
    CHECK_EQ_STR(h.out, "o0:1,1000");
    /* the value state outlived the timers: a third row of key 1 counts 3 */
    h.out[0] = 0;
    trace[0] = 0;
    CHECK_EQ_INT(feed(&h, 0, 1, 2, 200), SL_OK);
    CHECK_EQ_STR(h.out, "o0:1,3");
    /* its processing-time timer (at wall-clock 1) fires with the key set */
    CHECK_EQ_INT(sl_rt_next_proc(&h.op), 1);
    CHECK_EQ_INT(sl_rt_fire_proc(&h.op, sl_now_ms()), SL_OK);
    CHECK_EQ_STR(trace, "p0 k=1 ts=200 wm=9223372036854775807 t k=1 @1 d=1 map=1"); /* after the end */
    CHECK_EQ_STR(h.out, "o0:1,3 o0:1,1002");
    CHECK(sl_rt_next_proc(&h.op) == INT64_MAX);
    host_close(&h);
}

static void test_context_calls_hashmap(void) { context_calls(SL_BACKEND_HASHMAP); }
static void test_context_calls_rocksdb(void) { context_calls(SL_BACKEND_ROCKSDB); }

/* data keyed by k, connected with the broadcast rules -> process bc_fn */
static char *bc_graph(void)
{
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_set_library(env, plugin);
    const char *gopt[] = {"fields.k.kind", "sequence", "fields.k.start", "1", "fields.k.end", "2", NULL};
    sl_ds_stream *d = sl_ds_source(env, "data", "datagen", "k BIGINT, x BIGINT", gopt);
    sl_ds_stream *r = sl_ds_source(env, "rules", "datagen", "k BIGINT, x BIGINT", gopt);
    const char *keys[] = {"k", NULL};
    sl_ds_stream *p = sl_ds_process(sl_ds_connect(sl_ds_key_by(d, keys), sl_ds_broadcast(r)), "b", "bc_fn",
                                    "k BIGINT, n BIGINT", NULL);
    sl_ds_sink(p, "out", "blackhole", NULL);
    char err[300];
    char *json = sl_ds_to_json(env, err, sizeof err);
    sl_ds_env_free(env);
    return json;
}

static void broadcast_state(sl_backend_kind bk)
{
    CHECK(find_plugin());
    host h;
    CHECK_EQ_INT(host_open(&h, bc_graph(), "b", bk), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, 1, 10, 0), SL_OK);
    CHECK_EQ_INT(feed(&h, 1, 2, 20, 0), SL_OK);
    /* the broadcast side has no key: sl_ds_key and timers refuse */
    CHECK_EQ_STR(trace, "rule k=1 key=-1 timer=-1 rule k=2 key=-1 timer=-1");
    trace[0] = 0;
    CHECK_EQ_INT(feed(&h, 0, 1, 0, 0), SL_OK);
    CHECK_EQ_STR(trace, "data k=1 rule=10 put=-1 err=p (1/1): broadcast state 'rules' is read-only here "
                        "(write it in process_broadcast_element) 1=10 2=20");
    trace[0] = 0;
    CHECK_EQ_INT(feed(&h, 1, 2, -1, 0), SL_OK); /* a removal */
    trace[0] = 0;
    CHECK_EQ_INT(feed(&h, 0, 2, 0, 0), SL_OK);
    CHECK_EQ_STR(trace, "data k=2 rule=-1 put=-1 err=p (1/1): broadcast state 'rules' is read-only here "
                        "(write it in process_broadcast_element) 1=10");
    CHECK_EQ_INT(feed(&h, 1, 3, 30, 0), SL_OK);
    void *blob = NULL;
    size_t len = 0;
    CHECK_EQ_INT(h.op.def->snapshot_state(&h.op, 1, &blob, &len), SL_OK);
    CHECK(blob && len > 8);
    host_close(&h);
    /* a restored subtask (any index: every one gets every copy) has it */
    host r;
    CHECK_EQ_INT(host_open(&r, bc_graph(), "b", bk), SL_OK);
    const void *blobs[2] = {blob, blob};
    size_t lens[2] = {len, len};
    CHECK_EQ_INT(r.op.def->restore_state(&r.op, blobs, lens, 2), SL_OK);
    trace[0] = 0;
    CHECK_EQ_INT(feed(&r, 0, 3, 0, 0), SL_OK);
    CHECK_EQ_STR(trace, "data k=3 rule=30 put=-1 err=p (1/1): broadcast state 'rules' is read-only here "
                        "(write it in process_broadcast_element) 1=10 3=30");
    /* a damaged copy is refused with what it is */
    size_t cut = len - 3;
    CHECK_EQ_INT(r.op.def->restore_state(&r.op, blobs, &cut, 1), SL_ERR);
    CHECK_EQ_STR(r.op.err, "p (1/1): broadcast state 1 of 1 is damaged");
    free(blob);
    host_close(&r);
}

static void test_broadcast_state_hashmap(void) { broadcast_state(SL_BACKEND_HASHMAP); }
static void test_broadcast_state_rocksdb(void) { broadcast_state(SL_BACKEND_ROCKSDB); }

/* ---- async I/O ------------------------------------------------------------------ */

static int capture_wm(void *ctx, int64_t wm)
{
    host *h = ctx;
    size_t o = strlen(h->out);
    snprintf(h->out + o, sizeof h->out - o, "%swm%lld", o ? " " : "", wm == INT64_MAX ? -1LL : (long long)wm);
    return SL_OK;
}

static char *async_graph(const char *mode)
{
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_set_library(env, plugin);
    sl_ds_stream *s = sl_ds_source(env, "gen", "datagen", "k BIGINT, x BIGINT", NULL);
    const char *opts[] = {"mode", mode, "capacity", "8", "timeout", "1 h", "retry-strategy", "fixed-delay",
                          "retry.delay", "0 ms", "retry.max-attempts", "2", NULL};
    sl_ds_stream *a = sl_ds_async(s, "a", "async_fn", "k BIGINT, y BIGINT", opts);
    sl_ds_sink(a, "out", "blackhole", NULL);
    char err[300];
    char *json = sl_ds_to_json(env, err, sizeof err);
    sl_ds_env_free(env);
    return json;
}

static void (*async_finish)(const int *, int, int *);
static int *async_n, *async_fail_first;

static int async_open(host *h, const char *mode)
{
    if (host_open(h, async_graph(mode), "a", SL_BACKEND_HASHMAP) != SL_OK) return SL_ERR;
    h->op.emit_wm = capture_wm;
    void *dl = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    *(void **)&async_finish = dlsym(dl, "ctx_async_finish");
    async_n = dlsym(dl, "ctx_async_n");
    async_fail_first = dlsym(dl, "ctx_async_fail_first");
    *async_n = 0;
    *async_fail_first = 0;
    return async_finish && async_n ? SL_OK : SL_ERR;
}

/* Ordered: answers completed from another thread in reverse order go out
 * in input order, a watermark waits behind the record before it; a handle
 * completed twice is stale. */
static void test_async_ordered(void)
{
    CHECK(find_plugin());
    host h;
    CHECK_EQ_INT(async_open(&h, "ordered"), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 1, 0, 10), SL_OK);
    CHECK_EQ_INT(sl_rt_watermark(&h.op, 0, 15), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 2, 0, 20), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 3, 0, 30), SL_OK);
    CHECK_EQ_STR(trace, "ask 1 ask 2 ask 3");
    CHECK_EQ_STR(h.out, "");
    int order[4] = {2, 1, 0, 0}, rc[4];
    async_finish(order, 4, rc);
    CHECK(rc[0] == SL_OK && rc[1] == SL_OK && rc[2] == SL_OK && rc[3] == SL_DONE);
    CHECK_EQ_STR(h.out, ""); /* nothing is emitted from the user's thread */
    CHECK(h.op.nwatch == 1);
    CHECK_EQ_INT(sl_rt_ready(&h.op), SL_OK);
    CHECK_EQ_STR(h.out, "o0:1,10 wm15 o0:2,20 o0:3,30");
    host_close(&h);
}

/* Unordered: a completed answer goes out at once, but never past a
 * watermark that came before its input. */
static void test_async_unordered(void)
{
    CHECK(find_plugin());
    host h;
    CHECK_EQ_INT(async_open(&h, "unordered"), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 1, 0, 10), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 2, 0, 11), SL_OK);
    CHECK_EQ_INT(sl_rt_watermark(&h.op, 0, 15), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 3, 0, 20), SL_OK);
    int order[2] = {2, 1}, rc[2];
    async_finish(order, 2, rc); /* 3 (behind the watermark) and 2 */
    CHECK_EQ_INT(sl_rt_ready(&h.op), SL_OK);
    CHECK_EQ_STR(h.out, "o0:2,20");
    int first[1] = {0};
    async_finish(first, 1, rc);
    CHECK_EQ_INT(sl_rt_ready(&h.op), SL_OK);
    CHECK_EQ_STR(h.out, "o0:2,20 o0:1,10 wm15 o0:3,30");
    host_close(&h);
}

/* A failed attempt is retried (fixed delay 0: as soon as the failure is
 * seen); the in-flight inputs are the snapshot, re-issued on restore. */
static void test_async_retry_and_restore(void)
{
    CHECK(find_plugin());
    host h;
    CHECK_EQ_INT(async_open(&h, "ordered"), SL_OK);
    *async_fail_first = 1;
    CHECK_EQ_INT(feed(&h, 0, 1, 0, 10), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 2, 0, 20), SL_OK);
    int order[2] = {0, 1}, rc[2];
    async_finish(order, 2, rc); /* 1 answered, 2 failed */
    CHECK_EQ_INT(sl_rt_ready(&h.op), SL_OK);
    CHECK_EQ_STR(h.out, "o0:1,10");
    CHECK_EQ_STR(trace, "ask 1 ask 2 ask 2"); /* the retry, due at once */
    void *blob = NULL;
    size_t len = 0;
    CHECK_EQ_INT(h.op.def->snapshot_state(&h.op, 1, &blob, &len), SL_OK);
    CHECK(blob != NULL);
    host_close(&h);
    host r;
    CHECK_EQ_INT(async_open(&r, "ordered"), SL_OK);
    const void *blobs[1] = {blob};
    CHECK_EQ_INT(r.op.def->restore_state(&r.op, blobs, &len, 1), SL_OK);
    CHECK_EQ_INT(sl_rt_fire_proc(&r.op, sl_now_ms()), SL_OK);
    CHECK_EQ_STR(trace, "ask 2"); /* issued again, before any new input */
    int one[1] = {0};
    *async_fail_first = 0;
    async_finish(one, 1, rc);
    CHECK_EQ_INT(sl_rt_end_all(&r.op), SL_OK);
    CHECK_EQ_STR(r.out, "o0:2,20 wm-1");
    free(blob);
    host_close(&r);
}

/* A connect of a keyed and an unkeyed stream, and keys of two types. */
static void test_connect_mistakes(void)
{
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_set_library(env, "/x.so");
    sl_ds_stream *a = sl_ds_source(env, "a", "datagen", "k BIGINT", NULL);
    sl_ds_stream *b = sl_ds_source(env, "b", "datagen", "k INT", NULL);
    const char *keys[] = {"k", NULL};
    sl_ds_process(sl_ds_connect(sl_ds_key_by(a, keys), b), "p", "f", "k BIGINT", NULL);
    char err[400];
    CHECK(sl_ds_to_json(env, err, sizeof err) == NULL);
    CHECK_EQ_STR(err, "connect: key_by both streams or neither (the second of 'a' is not)");
    sl_ds_env_free(env);
    env = sl_ds_env_new("t");
    sl_ds_set_library(env, "/x.so");
    a = sl_ds_source(env, "a", "datagen", "k BIGINT", NULL);
    b = sl_ds_source(env, "b", "datagen", "k INT", NULL);
    sl_ds_stream *p = sl_ds_process(sl_ds_connect(sl_ds_key_by(a, keys), sl_ds_key_by(b, keys)), "p", "f",
                                    "k BIGINT", NULL);
    sl_ds_sink(p, "out", "blackhole", NULL);
    char *json = sl_ds_to_json(env, err, sizeof err);
    CHECK(json != NULL);
    sl_jobgraph *g = sl_jobgraph_parse(json, strlen(json), 1, 0, err, sizeof err);
    CHECK(g == NULL);
    CHECK_EQ_STR(err, "vertex 'p': key column 1 is BIGINT in input 0 but INT in input 1");
    free(json);
    sl_ds_env_free(env);
}

/* ---- timestamp assigner, key selector, flat map ------------------------------------- */

/* gen (k, x) -> `build` adds what is tested as vertex "t" -> blackhole */
static char *one_vertex_graph(void (*build)(sl_ds_stream *gen))
{
    sl_ds_env *env = sl_ds_env_new("t");
    sl_ds_set_library(env, plugin);
    sl_ds_stream *s = sl_ds_source(env, "gen", "datagen", "k BIGINT, x BIGINT", NULL);
    build(s);
    char err[300];
    char *json = sl_ds_to_json(env, err, sizeof err);
    if (!json) fprintf(stderr, "  %s\n", err);
    sl_ds_env_free(env);
    return json;
}

static void build_assigner(sl_ds_stream *gen)
{
    sl_ds_stream *w = sl_ds_watermarks_with_assigner(gen, "t", "ts_fn", "1 s", NULL);
    sl_ds_option(w, "interval", "0 ms");
    sl_ds_sink(w, "out", "blackhole", NULL);
}

static void build_key_select(sl_ds_stream *gen)
{
    sl_ds_stream *k = sl_ds_key_by_fn(gen, "t", "key_fn", "parity STRING, decade BIGINT");
    sl_ds_stream *p = sl_ds_process(k, "p", "ctx_fn", "k BIGINT, n BIGINT", NULL);
    sl_ds_sink(p, "out", "blackhole", NULL);
}

static void build_flat_map(sl_ds_stream *gen)
{
    sl_ds_sink(sl_ds_flat_map(gen, "t", "flat_fn", "k BIGINT, i BIGINT"), "out", "blackhole", NULL);
}

static int capture_ts(void *ctx, int output, sl_row *row)
{
    host *h = ctx;
    size_t o = strlen(h->out);
    snprintf(h->out + o, sizeof h->out - o, "%sr%d:%lld@%lld", o ? " " : "", output,
             (long long)row->vals[0].v.i, (long long)row->ts);
    return SL_OK;
}

static int capture_key(void *ctx, int output, sl_row *row)
{
    host *h = ctx;
    size_t o = strlen(h->out);
    snprintf(h->out + o, sizeof h->out - o, "%s%lld,%lld,%.*s,%lld", o ? " " : "",
             (long long)row->vals[0].v.i, (long long)row->vals[1].v.i, (int)row->vals[2].v.s.len,
             row->vals[2].v.s.p, (long long)row->vals[3].v.i);
    (void)output;
    return SL_OK;
}

static void timestamp_assigner(sl_backend_kind bk)
{
    CHECK(find_plugin());
    host h;
    CHECK_EQ_INT(host_open(&h, one_vertex_graph(build_assigner), "t", bk), SL_OK);
    h.op.emit = capture_ts;
    h.op.emit_wm = capture_wm;
    CHECK_EQ_INT(feed(&h, 0, 1, 5, 7), SL_OK);  /* 5 s + 7 ms */
    CHECK_EQ_INT(feed(&h, 0, 2, 3, 0), SL_OK);  /* behind: no new watermark */
    CHECK_EQ_INT(feed(&h, 0, 3, 9, 0), SL_OK);
    /* each row stamped with what the assigner said; watermark = max - 1 s - 1 ms */
    CHECK_EQ_STR(h.out, "r0:1@5007 wm4006 r0:2@3000 r0:3@9000 wm7999");
    host_close(&h);
}

static void key_by_function(sl_backend_kind bk)
{
    CHECK(find_plugin());
    char *json = one_vertex_graph(build_key_select);
    char err[400];
    sl_jobgraph *g = json ? sl_jobgraph_parse(json, strlen(json), 1, 0, err, sizeof err) : NULL;
    CHECK(g != NULL);
    if (g) { /* the process behind is keyed on the key's two columns, hashed */
        const sl_vertex *p = NULL;
        for (int i = 0; i < g->nv; i++)
            if (!strcmp(g->v[i].id, "p")) p = &g->v[i];
        CHECK(p && !strcmp(p->type, "keyed_process") && p->pc->nkeys[0] == 2 && p->in[0].n == 4);
        CHECK(p && g->e[g->v[p->index].in_edges[0]].strategy == SL_PART_HASH);
        sl_jobgraph_destroy(g);
    }
    host h;
    CHECK_EQ_INT(host_open(&h, json, "t", bk), SL_OK);
    h.op.emit = capture_key;
    CHECK_EQ_INT(feed(&h, 0, 13, 1, 0), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 20, 2, 0), SL_OK);
    CHECK_EQ_STR(h.out, "13,1,odd,1 20,2,even,2");
    CHECK_EQ_INT(feed(&h, 0, -1, 0, 0), SL_ERR); /* the function's failure fails the task */
    CHECK(strstr(h.op.err, "vertex 't': key_fn() failed on a row") != NULL);
    host_close(&h);
}

static void flat_map(sl_backend_kind bk)
{
    CHECK(find_plugin());
    host h;
    CHECK_EQ_INT(host_open(&h, one_vertex_graph(build_flat_map), "t", bk), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 7, 3, 0), SL_OK);
    CHECK_EQ_INT(feed(&h, 0, 8, 0, 0), SL_OK); /* none */
    CHECK_EQ_INT(feed(&h, 0, 9, 1, 0), SL_OK);
    CHECK_EQ_STR(h.out, "o0:7,0 o0:7,1 o0:7,2 o0:9,0");
    host_close(&h);
}

static void test_timestamp_assigner_hashmap(void) { timestamp_assigner(SL_BACKEND_HASHMAP); }
static void test_timestamp_assigner_rocksdb(void) { timestamp_assigner(SL_BACKEND_ROCKSDB); }
static void test_key_by_function_hashmap(void) { key_by_function(SL_BACKEND_HASHMAP); }
static void test_key_by_function_rocksdb(void) { key_by_function(SL_BACKEND_ROCKSDB); }
static void test_flat_map_hashmap(void) { flat_map(SL_BACKEND_HASHMAP); }
static void test_flat_map_rocksdb(void) { flat_map(SL_BACKEND_ROCKSDB); }

/* ---- StateTtlConfig: update type, visibility, cleanup ------------------------------ */

static int64_t ttl_now;
static int64_t ttl_clock(void) { return ttl_now; }

static int list_into(void *ctx, const void *val, size_t len)
{
    char *out = ctx;
    size_t o = strlen(out);
    snprintf(out + o, 128 - o, "%s%.*s", o ? "," : "", (int)len, (const char *)val);
    return 0;
}

static int map_into(void *ctx, const void *k, size_t klen, const void *val, size_t len)
{
    char *out = ctx;
    size_t o = strlen(out);
    snprintf(out + o, 128 - o, "%s%.*s=%.*s", o ? "," : "", (int)klen, (const char *)k, (int)len,
             (const char *)val);
    return 0;
}

static const char *list_of(sl_vstate *s, char *out)
{
    out[0] = 0;
    return sl_list_each(s, NULL, 0, list_into, out) == SL_OK ? out : "error";
}

static const char *map_of(sl_vstate *s, char *out)
{
    out[0] = 0;
    return sl_map_each(s, NULL, 0, map_into, out) == SL_OK ? out : "error";
}

/* The value a get returns ("" when absent). */
static const char *value_of(sl_vstate *s, char *out)
{
    const void *v;
    size_t len;
    int rc = sl_value_get(s, NULL, 0, &v, &len);
    snprintf(out, 128, "%.*s", rc == SL_OK ? (int)len : 0, rc == SL_OK ? (const char *)v : "");
    return rc == SL_ERR ? "error" : out;
}

static int count_entry(void *ctx, const sl_kentry *e)
{
    (void)e;
    ++*(int *)ctx;
    return 0;
}

/* Entries a snapshot taken now carries. */
static int snapshot_entries(sl_kstate *ks)
{
    char err[200];
    sl_ksnap *snap = sl_kstate_snapshot(ks, err, sizeof err);
    int n = 0;
    for (int kg = 0; snap && kg < 128; kg++) sl_ksnap_each(snap, kg, count_entry, &n, err, sizeof err);
    sl_ksnap_release(snap);
    return n;
}

static void state_ttl_config(sl_backend_kind bk)
{
    char dir[64] = "", err[300], out[128];
    if (bk == SL_BACKEND_ROCKSDB) {
        snprintf(dir, sizeof dir, "/tmp/sl_test_ttl_XXXXXX");
        SL_ASSERT(mkdtemp(dir));
    }
    sl_kstate *ks = sl_kstate_open(bk, dir, 128, 0, 127, err, sizeof err);
    SL_ASSERT(ks);
    sl_vstate_clock = ttl_clock;
    ttl_now = 1000;
    sl_state_ttl cw = {.ttl_ms = 100}; /* Flink's defaults */
    sl_state_ttl rw = {.ttl_ms = 100, .update = SL_TTL_ON_READ_AND_WRITE};
    sl_state_ttl ret = {.ttl_ms = 100, .visibility = SL_TTL_RETURN_EXPIRED_IF_NOT_CLEANED_UP};
    sl_vstate *all = NULL, *h[7];
    const char *names[] = {"v-cw", "v-rw", "v-ret", "l-rw", "l-ret", "m-rw", "m-ret"};
    const sl_state_ttl *cfg[] = {&cw, &rw, &ret, &rw, &ret, &rw, &ret};
    const sl_state_kind kinds[] = {SL_STATE_VALUE, SL_STATE_VALUE, SL_STATE_VALUE, SL_STATE_LIST,
                                   SL_STATE_LIST, SL_STATE_MAP, SL_STATE_MAP};
    for (int i = 0; i < 7; i++) {
        h[i] = sl_vstate_new_ttl(ks, names[i], kinds[i], cfg[i], err, sizeof err);
        SL_ASSERT(h[i]);
        sl_vstate_link(&all, h[i]);
    }
    sl_state_ttl bad = {.ttl_ms = 100, .update = 7};
    CHECK(sl_vstate_new_ttl(ks, "bad", SL_STATE_VALUE, &bad, err, sizeof err) == NULL);
    CHECK(strstr(err, "state 'bad': an unknown StateTtlConfig") != NULL);

    sl_kstate_set_key(ks, "k1", 2, 5);
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(sl_value_put(h[i], NULL, 0, "v", 1), SL_OK); /* until 1100 */
    CHECK_EQ_INT(sl_list_add(h[3], NULL, 0, "a", 1), SL_OK);
    CHECK_EQ_INT(sl_list_add(h[4], NULL, 0, "a", 1), SL_OK);
    CHECK_EQ_INT(sl_map_put(h[5], NULL, 0, "x", 1, "1", 1), SL_OK);
    CHECK_EQ_INT(sl_map_put(h[6], NULL, 0, "x", 1, "1", 1), SL_OK);
    ttl_now = 1050;
    CHECK_EQ_INT(sl_list_add(h[3], NULL, 0, "b", 1), SL_OK); /* until 1150 */
    CHECK_EQ_INT(sl_list_add(h[4], NULL, 0, "b", 1), SL_OK);
    ttl_now = 1090; /* reads: OnReadAndWrite renews to 1190, OnCreateAndWrite does not */
    CHECK_EQ_STR(value_of(h[0], out), "v");
    CHECK_EQ_STR(value_of(h[1], out), "v");
    CHECK_EQ_STR(list_of(h[3], out), "a,b");
    CHECK_EQ_STR(map_of(h[5], out), "x=1");
    ttl_now = 1120;
    CHECK_EQ_STR(value_of(h[0], out), "");  /* expired at 1100 */
    CHECK_EQ_STR(value_of(h[1], out), "v"); /* renewed at 1090 */
    /* ReturnExpiredIfNotCleanedUp: returned once more, removed by that read */
    CHECK_EQ_STR(value_of(h[2], out), "v");
    CHECK_EQ_STR(value_of(h[2], out), "");
    CHECK_EQ_STR(list_of(h[4], out), "a,b"); /* "a" expired at 1100: shown this once */
    CHECK_EQ_STR(list_of(h[4], out), "b");
    CHECK_EQ_STR(map_of(h[6], out), "x=1");
    CHECK_EQ_STR(map_of(h[6], out), "");
    ttl_now = 1180;
    CHECK_EQ_STR(list_of(h[3], out), "a,b"); /* both renewed at 1090, again now */
    CHECK_EQ_STR(map_of(h[5], out), "x=1");
    ttl_now = 1280;
    CHECK_EQ_STR(value_of(h[1], out), "");
    CHECK_EQ_STR(list_of(h[3], out), "");
    CHECK_EQ_STR(map_of(h[5], out), "");
    CHECK_EQ_STR(list_of(h[4], out), "b"); /* "b" expired at 1150, never read since: shown once */
    CHECK_EQ_STR(list_of(h[4], out), "");
    sl_vstate_free_all(all);

    /* cleanupFullSnapshot: an expired entry not read since is left out of
     * snapshots; without it, it stays until a read removes it */
    all = NULL;
    sl_state_ttl full = {.ttl_ms = 100, .cleanup = SL_TTL_CLEANUP_FULL_SNAPSHOT};
    sl_vstate *f = sl_vstate_new_ttl(ks, "full", SL_STATE_VALUE, &full, err, sizeof err);
    sl_vstate *fl = sl_vstate_new_ttl(ks, "full-list", SL_STATE_LIST, &full, err, sizeof err);
    sl_vstate *kept = sl_vstate_new_ttl(ks, "kept", SL_STATE_VALUE, &cw, err, sizeof err);
    SL_ASSERT(f && fl && kept);
    sl_vstate_link(&all, f);
    sl_vstate_link(&all, fl);
    sl_vstate_link(&all, kept);
    CHECK_EQ_INT(snapshot_entries(ks), 0); /* everything above was read away */
    ttl_now = 2000;
    sl_kstate_set_key(ks, "k1", 2, 5);
    CHECK_EQ_INT(sl_value_put(f, NULL, 0, "old", 3), SL_OK);   /* until 2100 */
    CHECK_EQ_INT(sl_value_put(kept, NULL, 0, "old", 3), SL_OK);
    CHECK_EQ_INT(sl_list_add(fl, NULL, 0, "a", 1), SL_OK);
    ttl_now = 2060;
    CHECK_EQ_INT(sl_list_add(fl, NULL, 0, "b", 1), SL_OK);     /* the list lives until 2160 */
    sl_kstate_set_key(ks, "k2", 2, 9);
    CHECK_EQ_INT(sl_value_put(f, NULL, 0, "new", 3), SL_OK);   /* until 2160 */
    CHECK_EQ_INT(snapshot_entries(ks), 4); /* k1: full, full-list, kept; k2: full */
    ttl_now = 2120;
    CHECK_EQ_INT(snapshot_entries(ks), 3); /* k1's "full" value is gone */
    ttl_now = 2200;
    CHECK_EQ_INT(snapshot_entries(ks), 1); /* the list and k2's value too; "kept" stays */
    sl_vstate_free_all(all);
    sl_kstate_close(ks);
    if (dir[0]) rmdir(dir);
    sl_vstate_clock = sl_now_ms;
}

static void test_state_ttl_config_hashmap(void) { state_ttl_config(SL_BACKEND_HASHMAP); }
static void test_state_ttl_config_rocksdb(void) { state_ttl_config(SL_BACKEND_ROCKSDB); }

SL_TEST_MAIN(SL_TEST(test_timestamp_assigner_hashmap), SL_TEST(test_timestamp_assigner_rocksdb),
             SL_TEST(test_key_by_function_hashmap), SL_TEST(test_key_by_function_rocksdb),
             SL_TEST(test_flat_map_hashmap), SL_TEST(test_flat_map_rocksdb),
             SL_TEST(test_state_ttl_config_hashmap), SL_TEST(test_state_ttl_config_rocksdb),
             SL_TEST(test_context_calls_hashmap), SL_TEST(test_context_calls_rocksdb),
             SL_TEST(test_broadcast_state_hashmap), SL_TEST(test_broadcast_state_rocksdb),
             SL_TEST(test_connect_mistakes), SL_TEST(test_async_ordered), SL_TEST(test_async_unordered),
             SL_TEST(test_async_retry_and_restore))
