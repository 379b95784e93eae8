/*
 * process.c -- `process` and `keyed_process`: hosts for user process
 * functions written against common/datastream.h (Flink's ProcessFunction
 * and KeyedProcessFunction).
 *
 * Config (written by the DataStream builder, or by hand):
 *   "library":      "/path/job.so"   the shared object holding the function
 *   "function":     "detector"       an sl_process_fn in it
 *   "schema":       "k BIGINT, ts TIMESTAMP(3)"   the main output's columns
 *   "side-outputs": ["late", "gaps: k BIGINT"]    named outputs; a bare name
 *                                    carries the input's schema
 *   "key-by":       ["k"]            keyed_process: the key columns (the
 *                                    input must be hashed on them); with
 *                                    two inputs, names found in both or
 *                                    [["a"], ["b"]], one list per input
 *
 * Two inputs are a connected stream (Flink's CoProcessFunction and
 * KeyedCoProcessFunction): input 0 goes to process_element1, input 1 to
 * process_element2 (or both to process_element). Keyed, the two keys must
 * have the same column types, so they encode alike and share state.
 *
 * plan() reads only the configuration: the JobManager never loads user
 * code. The TaskManager loads the library when a subtask opens (dlopen
 * counts references, so subtasks share one copy) and checks the function
 * table's ABI version. keyed_process is keyed: state handles and timers
 * work, with the key set by the runtime; process is not (no keyed state,
 * no timers), so it runs at any parallelism on any input.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "datastream.h"
#include "jobgraph.h"
#include "runtime.h"
#include "userfn.h"

typedef struct proc_plan {
    char *vid;
    char *library;
    char *function;
} proc_plan;

typedef struct proc_state {
    void *dl;
    const sl_process_fn *fn;
    void *user;                 /* op->priv while the user's callbacks run */
} proc_state;

static void proc_plan_free(void *p)
{
    proc_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->library);
    free(pl->function);
    free(pl);
}

/* "name TYPE, name TYPE" into s; SL_ERR with `what` before the problem. */
static int parse_columns(const char *text, sl_schema *s, const char *what, char *err, size_t errlen)
{
    char why[300];
    if (sl_schema_parse(text, s, why, sizeof why) == SL_OK) return SL_OK;
    return sl_seterr(err, errlen, "%s: %s", what, why);
}

/* "key-by": ["k"] names the key columns of every input (by name in each);
 * [["a"], ["b"]] names them per input. Every input's key must have the same
 * types, column by column, so that one key encodes to the same bytes
 * whichever input it came from: connected inputs share the key's state. */
static int plan_keys(sl_plan_ctx *pc, json_t *kb, const char *what, char *err, size_t errlen)
{
    int per_input = json_is_array(json_array_get(kb, 0));
    if (per_input && json_array_size(kb) != (size_t)pc->nin)
        return sl_seterr(err, errlen, "%s: 'key-by' has %zu lists for %d inputs", what,
                         json_array_size(kb), pc->nin);
    for (int in = 0; in < pc->nin; in++) {
        json_t *names = per_input ? json_array_get(kb, (size_t)in) : kb;
        int cols[SL_MAX_KEY_COLS], n = 0;
        size_t i;
        json_t *item;
        json_array_foreach(names, i, item) {
            const char *c = json_string_value(item);
            int col = c ? sl_schema_find(pc->in[in].schema, c) : -1;
            if (col < 0 || n == SL_MAX_KEY_COLS)
                return sl_seterr(err, errlen, "%s: key-by column '%s' is not in input %d", what,
                                 c ? c : "?", in);
            cols[n++] = col;
        }
        if (n == 0) return sl_seterr(err, errlen, "%s: keyed_process needs 'key-by' columns", what);
        if (in > 0 && n != pc->nkeys[0])
            return sl_seterr(err, errlen, "%s: input %d has %d key columns, input 0 has %d", what, in,
                             n, pc->nkeys[0]);
        for (int q = 0; in > 0 && q < n; q++) {
            sl_type a = pc->in[0].schema->fields[pc->keys[0][q]].type;
            sl_type b = pc->in[in].schema->fields[cols[q]].type;
            if (a != b)
                return sl_seterr(err, errlen, "%s: key column %d is %s in input 0 but %s in input %d",
                                 what, q + 1, sl_type_name(a), sl_type_name(b), in);
        }
        if (sl_plan_key(pc, in, cols, n, err, errlen) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

int sl_ds_jar_ref_ok(const char *lib)
{
    if (strncmp(lib, "jar:", 4)) return 0;
    const char *id = lib + 4;
    size_t n = strlen(id);
    if (!n || n > 200 || id[0] == '.') return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", id[i])) return 0;
    return 1;
}

int sl_ds_plan_user(sl_plan_ctx *pc, const char *kind, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const char *lib = sl_vconf_str(v, "library", NULL), *fn = sl_vconf_str(v, "function", NULL);
    const char *schema = sl_vconf_str(v, "schema", NULL);
    if (!lib || !*lib || (lib[0] != '/' && !sl_ds_jar_ref_ok(lib)))
        return sl_seterr(err, errlen,
                         "vertex '%s': 'library' must be the absolute path of the job's shared object "
                         "(or jar:<id> of one uploaded with POST /jars/upload)",
                         v->id);
    if (!fn || !*fn)
        return sl_seterr(err, errlen, "vertex '%s': 'function' must name the %s in it", v->id, kind);
    if (!schema)
        return sl_seterr(err, errlen, "vertex '%s': 'schema' (the output's columns) is required", v->id);
    char what[300];
    snprintf(what, sizeof what, "vertex '%s': schema", v->id);
    return parse_columns(schema, pc->out, what, err, errlen);
}

const void *sl_ds_load_user(sl_op *op, const char *library, const char *function, void **dl)
{
    const char *vid = op->vertex->id;
    *dl = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!*dl) {
        sl_op_fail(op, "vertex '%s': cannot load %s: %s", vid, library, dlerror());
        return NULL;
    }
    const unsigned *abi = dlsym(*dl, function);
    if (!abi) {
        sl_op_fail(op, "vertex '%s': %s has no function table '%s'", vid, library, function);
        return NULL;
    }
    if (*abi != SL_DS_ABI_VERSION) {
        sl_op_fail(op, "vertex '%s': '%s' in %s was built for DataStream ABI %u, this Sluice has %u",
                   vid, function, library, *abi, SL_DS_ABI_VERSION);
        return NULL;
    }
    return abi;
}

static void *plan_common(sl_plan_ctx *pc, int keyed, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    char what[160];
    snprintf(what, sizeof what, "vertex '%s'", v->id);
    if (sl_ds_plan_user(pc, "sl_process_fn", err, errlen) != SL_OK) return NULL;
    char w2[300];
    json_t *so = sl_vconf_array(v, "side-outputs");
    size_t i;
    json_t *item;
    json_array_foreach(so, i, item) {
        const char *t = json_string_value(item);
        if (!t) {
            sl_seterr(err, errlen, "%s: side output %zu must be a string", what, i + 1);
            return NULL;
        }
        char name[64];
        const char *colon = strchr(t, ':');
        size_t nl = colon ? (size_t)(colon - t) : strlen(t);
        if (nl == 0 || nl >= sizeof name) {
            sl_seterr(err, errlen, "%s: side output %zu needs a name of 1-31 characters", what, i + 1);
            return NULL;
        }
        memcpy(name, t, nl);
        name[nl] = 0;
        sl_schema s;
        sl_schema_init(&s);
        int rc;
        if (colon) {
            snprintf(w2, sizeof w2, "%s: side output '%s'", what, name);
            rc = parse_columns(colon + 1, &s, w2, err, errlen);
        } else {
            sl_schema_copy(&s, pc->in[0].schema);
            rc = SL_OK;
        }
        if (rc == SL_OK && sl_plan_output(pc, name, &s, err, errlen) < 0) rc = SL_ERR;
        sl_schema_free(&s);
        if (rc != SL_OK) return NULL;
    }
    json_t *kb = sl_vconf_array(v, "key-by");
    if (keyed) {
        if (plan_keys(pc, kb, what, err, errlen) != SL_OK) return NULL;
    } else if (kb) {
        sl_seterr(err, errlen, "%s: 'key-by' belongs to keyed_process", what);
        return NULL;
    }
    proc_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id);
    pl->library = sl_strdup(sl_vconf_str(v, "library", ""));
    pl->function = sl_strdup(sl_vconf_str(v, "function", ""));
    return pl;
}

static void *process_plan(sl_plan_ctx *pc, char *err, size_t errlen) { return plan_common(pc, 0, err, errlen); }
static void *keyed_plan(sl_plan_ctx *pc, char *err, size_t errlen) { return plan_common(pc, 1, err, errlen); }

/* The user's callbacks see their own op->priv; ours is kept aside. */
#define ENTER(op, st) ((op)->priv = (st)->user)
#define LEAVE(op, st) ((st)->user = (op)->priv, (op)->priv = (st))

static int proc_open(sl_op *op)
{
    const proc_plan *pl = op->plan;
    proc_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->fn = sl_ds_load_user(op, pl->library, pl->function, &st->dl);
    if (!st->fn) return SL_ERR;
    if (!st->fn->process_element && !st->fn->process_element1)
        return sl_op_fail(op, "vertex '%s': '%s' has no process_element", pl->vid, pl->function);
    if (op->nin > 1 && !st->fn->process_element && !st->fn->process_element2)
        return sl_op_fail(op, "vertex '%s': '%s' has no process_element2 for its second input",
                          pl->vid, pl->function);
    if (!st->fn->open) return SL_OK;
    ENTER(op, st);
    int rc = st->fn->open(op);
    LEAVE(op, st);
    return rc;
}

static int proc_process(sl_op *op, int input, sl_row *row)
{
    proc_state *st = op->priv;
    const sl_process_fn *fn = st->fn;
    ENTER(op, st);
    int rc;
    if (input == 0 && fn->process_element1) rc = fn->process_element1(op, row);
    else if (input == 1 && fn->process_element2) rc = fn->process_element2(op, row);
    else if (fn->process_element) rc = fn->process_element(op, input, row);
    else rc = sl_op_fail(op, "%s: '%s' has no callback for input %d", op->task_name,
                         ((const proc_plan *)op->plan)->function, input);
    LEAVE(op, st);
    return rc;
}

static int proc_timer(sl_op *op, sl_time_domain d, int64_t time, const void *ns, size_t nslen)
{
    proc_state *st = op->priv;
    SL_UNUSED(ns);
    SL_UNUSED(nslen);
    if (!st->fn->on_timer) return SL_OK;
    ENTER(op, st);
    int rc = st->fn->on_timer(op, d, time);
    LEAVE(op, st);
    return rc;
}

static void proc_close(sl_op *op)
{
    proc_state *st = op->priv;
    if (!st) return;
    if (st->fn && st->fn->close) {
        ENTER(op, st);
        st->fn->close(op);
        LEAVE(op, st);
    }
    if (st->dl) dlclose(st->dl);
    free(st);
    op->priv = NULL;
}

/* ---- the context calls of datastream.h --------------------------------------- */

int sl_ds_key(sl_op *ctx, sl_value *vals, int n)
{
    const sl_vertex *v = ctx->vertex;
    if (!ctx->kstate || !v->pc || v->pc->nkeys[0] == 0 || n < v->pc->nkeys[0])
        return sl_op_fail(ctx, "%s: no key here (a keyed_process with key-by has one)", ctx->task_name);
    return sl_row_key_decode(ctx->key, ctx->klen, &v->in[0], v->pc->keys[0], v->pc->nkeys[0], vals);
}

int sl_ds_output(sl_op *ctx, const char *name, const sl_row *row)
{
    int o = sl_op_output(ctx, name);
    if (o <= 0) return sl_op_fail(ctx, "%s: no side output '%s' was declared", ctx->task_name, name);
    int rc = sl_op_emit_to(ctx, o, (sl_row *)row);
    return rc == SL_DONE ? SL_OK : rc;
}

const char *sl_ds_param(sl_op *ctx, const char *name, const char *dflt)
{
    char key[200];
    snprintf(key, sizeof key, "user.%s", name);
    return sl_vconf_str(ctx->vertex, key, dflt);
}

static const char *const proc_options[] = {"library", "function", "schema", "side-outputs", "user.*",
                                           NULL};
static const char *const keyed_options[] = {"library", "function", "schema", "side-outputs", "key-by",
                                            "user.*", NULL};

const sl_op_def sl_op_process = {
    .abi = SL_OP_ABI_VERSION,
    .name = "process",
    .options = proc_options,
    .max_inputs = 2,
    .plan = process_plan,
    .plan_free = proc_plan_free,
    .open = proc_open,
    .process = proc_process,
    .close = proc_close,
};

const sl_op_def sl_op_keyed_process = {
    .abi = SL_OP_ABI_VERSION,
    .name = "keyed_process",
    .flags = SL_OPF_KEYED,
    .options = keyed_options,
    .max_inputs = 2,
    .plan = keyed_plan,
    .plan_free = proc_plan_free,
    .open = proc_open,
    .process = proc_process,
    .on_timer = proc_timer,
    .close = proc_close,
};
