/*
 * sl_test.h -- the unit-test harness: a test is a void function, a file
 * lists its tests with SL_TEST_MAIN. `./test_x` runs all and prints
 * "N passed, N failed"; `./test_x --list` prints the names; `./test_x NAME`
 * runs one (tests/test_unit.py runs each case that way under pytest).
 */
#ifndef SL_TEST_H
#define SL_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operator.h"
#include "jobgraph.h"
#include "keygroup.h"
#include "runtime.h"

static int sl_test_failed_;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            sl_test_failed_ = 1;                                               \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                     \
    do {                                                                       \
        long long a_ = (long long)(a), b_ = (long long)(b);                    \
        if (a_ != b_) {                                                        \
            fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s == %lld, expected %s == %lld\n", \
                    __FILE__, __LINE__, #a, a_, #b, b_);                      \
            sl_test_failed_ = 1;                                               \
            return;                                                            \
        }                                                                      \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                     \
    do {                                                                       \
        const char *a_ = (a), *b_ = (b);                                       \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                               \
            fprintf(stderr, "%s:%d: CHECK_EQ_STR failed: %s == \"%s\", expected \"%s\"\n", \
                    __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
            sl_test_failed_ = 1;                                               \
            return;                                                            \
        }                                                                      \
    } while (0)

typedef struct {
    const char *name;
    void (*fn)(void);
} sl_test_case;

#define SL_TEST(fn) {#fn, fn}

static inline int sl_test_run(const sl_test_case *tests, size_t n, int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        for (size_t i = 0; i < n; i++) printf("%s\n", tests[i].name);
        return 0;
    }
    int passed = 0, failed = 0;
    sl_ops_register_builtin();
    for (size_t i = 0; i < n; i++) {
        if (argc > 1 && strcmp(argv[1], tests[i].name) != 0) continue;
        sl_test_failed_ = 0;
        tests[i].fn();
        if (sl_test_failed_) { printf("FAIL %s\n", tests[i].name); failed++; }
        else { printf("ok   %s\n", tests[i].name); passed++; }
    }
    if (passed + failed == 0) { fprintf(stderr, "no such test\n"); return 2; }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

/* plan() as the job graph parser calls it, for a lone vertex v (id, def and
 * config set) with one input of schema `in` (NULL: a source). The main
 * output schema is copied to *out; the plan is returned to the caller, who
 * frees it with def->plan_free, and the rest (v->pc, v->in) with
 * sl_vertex_plan_free(v). NULL with err when plan() refuses. */
static inline void *sl_test_plan(const sl_op_def *def, sl_vertex *v, const sl_schema *in,
                                 sl_schema *out, char *err, size_t errlen)
{
    v->def = def;
    if (!v->parallelism) v->parallelism = 1;
    int rc = sl_vertex_plan(v, in ? 1 : 0, in, NULL, err, errlen);
    sl_schema_init(out);
    sl_schema_copy(out, &v->out);
    void *plan = rc == SL_OK ? v->plan : NULL;
    v->plan = NULL; /* the caller's now */
    return plan;
}

/* A test's operator config from JSON text; a malformed one is the test's
 * own bug, so it aborts naming jansson's reason. */
static inline json_t *sl_test_config(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j) {
        fprintf(stderr, "bad test config: %s\n", jerr.text);
        abort();
    }
    return j;
}

/* Restore one snapshot entry into the subtask of ops[] (p of them, max
 * parallelism maxkg) that owns its key group, as a rescaled restore does.
 * 0, or 1 after printing the backend's message. */
static inline int sl_test_restore_entry(sl_op *ops, int p, int maxkg, const sl_kentry *e)
{
    sl_op *op = &ops[sl_kg_operator_index(e->kg, p, maxkg)];
    char err[256];
    if (sl_kstate_restore(op->kstate, e, err, sizeof err) != SL_OK) {
        fprintf(stderr, "restore: %s\n", err);
        return 1;
    }
    return 0;
}

typedef struct sl_test_deal {
    sl_op *to;
    int p, maxkg, failed;
    uint64_t entries;
} sl_test_deal;

static inline int sl_test_deal_entry(void *ctx, const sl_kentry *e)
{
    sl_test_deal *d = ctx;
    d->entries++;
    if (d->to && sl_test_restore_entry(d->to, d->p, d->maxkg, e)) {
        d->failed = 1;
        return 1;
    }
    return 0;
}

static inline void sl_test_deal_event_timer(void *ctx, const sl_timer *tm)
{
    sl_test_deal *d = ctx;
    sl_timers_add(d->to[sl_kg_operator_index(tm->kg, d->p, d->maxkg)].event_timers, tm);
}

static inline void sl_test_deal_proc_timer(void *ctx, const sl_timer *tm)
{
    sl_test_deal *d = ctx;
    sl_timers_add(d->to[sl_kg_operator_index(tm->kg, d->p, d->maxkg)].proc_timers, tm);
}

/* A snapshot of every subtask of from[] (pfrom of them): its keyed state
 * and timers dealt by key group into to[] (pto of them, max parallelism
 * maxkg), then def's restore_state on each, as a rescaled restore does; to
 * NULL only counts the entries into *entries (may be NULL). */
static inline int sl_test_redeal(sl_op *from, int pfrom, sl_op *to, int pto, int maxkg,
                                 const sl_op_def *def, uint64_t *entries)
{
    sl_test_deal d = {to, pto, maxkg, 0, 0};
    char err[256];
    for (int i = 0; i < pfrom && !d.failed; i++) {
        sl_op *op = &from[i];
        sl_ksnap *snap = sl_kstate_snapshot(op->kstate, err, sizeof err);
        if (!snap) return SL_ERR;
        for (int kg = op->kg_first; kg <= op->kg_last && !d.failed; kg++) {
            if (sl_ksnap_each(snap, kg, sl_test_deal_entry, &d, err, sizeof err) != SL_OK)
                d.failed = 1;
            if (to && op->event_timers)
                sl_timers_each(op->event_timers, kg, sl_test_deal_event_timer, &d);
            if (to && op->proc_timers)
                sl_timers_each(op->proc_timers, kg, sl_test_deal_proc_timer, &d);
        }
        sl_ksnap_release(snap);
    }
    for (int j = 0; to && !d.failed && j < pto; j++)
        if (def->restore_state && def->restore_state(&to[j], NULL, NULL, 0) != SL_OK) d.failed = 1;
    if (entries) *entries = d.entries;
    return d.failed ? SL_ERR : SL_OK;
}

/* Subtask i of planned vertex v as the runtime makes it (max parallelism
 * maxkg), its main output connected and going to emit/emit_wm (emit_wm may
 * be NULL) with ctx. */
static inline void sl_test_rt_init(sl_op *op, const sl_vertex *v, int i, int maxkg,
                                   sl_emit_fn emit, sl_emit_wm_fn emit_wm, void *ctx,
                                   const char *task_name)
{
    sl_rt_init(op, v, i, maxkg);
    op->emit = emit;
    if (emit_wm) op->emit_wm = emit_wm;
    op->emit_ctx = ctx;
    op->out_connected[0] = 1;
    op->task_name = task_name;
}

/* Open it on backend bk; RocksDB gets a fresh directory
 * /tmp/sl_test_<tag>_XXXXXX in dir, which sl_test_rt_close removes. On
 * failure the operator's message is copied to err. */
static inline int sl_test_rt_open(sl_op *op, sl_backend_kind bk, char *dir, size_t dirlen,
                                  const char *tag, char *err, size_t errlen)
{
    if (bk == SL_BACKEND_ROCKSDB) {
        snprintf(dir, dirlen, "/tmp/sl_test_%s_XXXXXX", tag);
        if (!mkdtemp(dir)) abort();
    }
    int rc = sl_rt_open(op, bk, dir);
    if (rc != SL_OK && err) snprintf(err, errlen, "%s", op->err);
    return rc;
}

static inline void sl_test_rt_close(sl_op *op, const char *dir)
{
    sl_rt_close(op);
    if (dir[0]) rmdir(dir);
}

#define SL_TEST_MAIN(...)                                                      \
    int main(int argc, char **argv)                                            \
    {                                                                          \
        static const sl_test_case tests_[] = {__VA_ARGS__};                    \
        return sl_test_run(tests_, sizeof tests_ / sizeof tests_[0], argc, argv); \
    }

#endif
