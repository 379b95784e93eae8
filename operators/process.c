/*
 * process.c -- `process` and `keyed_process`: hosts for user process
 * functions written against api/datastream.h (Flink's ProcessFunction
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

#include "dsfn.h"
#include "jobgraph.h"
#include "runtime.h"
#include "userfn.h"
#include "bytes.h"

extern const sl_op_def sl_op_process, sl_op_keyed_process;

typedef struct proc_plan {
    char *vid;
    char *library;
    char *function;
    int bcast;                  /* the broadcast input, -1 none */
} proc_plan;

struct sl_bstate {
    struct sl_bstate *next;
    struct proc_state *owner;
    sl_op *op;
    char name[64];
    struct bentry *e;           /* sorted by key */
    int n, cap;
};

typedef struct bentry {
    uint8_t *k, *v;             /* one allocation: key then value */
    size_t klen, vlen;
} bentry;

typedef struct proc_state {
    void *dl;
    const sl_process_fn *fn;
    void *user;                 /* op->priv while the user's callbacks run */
    sl_bstate *bstates;
    int in_broadcast;           /* process_broadcast_element is running */
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
static int plan_keys(sl_plan_ctx *pc, json_t *kb, int bcast, const char *what, char *err, size_t errlen)
{
    int per_input = json_is_array(json_array_get(kb, 0));
    int nkeyed = pc->nin - (bcast >= 0);
    if (per_input && json_array_size(kb) != (size_t)nkeyed)
        return sl_seterr(err, errlen, "%s: 'key-by' has %zu lists for %d keyed inputs", what,
                         json_array_size(kb), nkeyed);
    for (int in = 0; in < pc->nin; in++) {
        if (in == bcast) continue; /* the broadcast side has no key */
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
    int64_t bcast = -1;
    if (sl_vconf_int(v, "broadcast-input", -1, &bcast, err, errlen) != SL_OK) return NULL;
    if (bcast != -1 && (bcast < 1 || bcast >= pc->nin)) {
        sl_seterr(err, errlen, "%s: 'broadcast-input' must be 1 (the second input of a connected stream)", what);
        return NULL;
    }
    if (bcast > 0 && pc->in[bcast].parallel && pc->in[bcast].strategy != SL_PART_BROADCAST) {
        sl_seterr(err, errlen, "%s: input %d is the broadcast side: its edges must have \"strategy\": \"broadcast\"",
                  what, (int)bcast);
        return NULL;
    }
    json_t *kb = sl_vconf_array(v, "key-by");
    if (keyed) {
        if (plan_keys(pc, kb, (int)bcast, what, err, errlen) != SL_OK) return NULL;
    } else if (kb) {
        sl_seterr(err, errlen, "%s: 'key-by' belongs to keyed_process", what);
        return NULL;
    }
    proc_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id);
    pl->library = sl_strdup(sl_vconf_str(v, "library", ""));
    pl->function = sl_strdup(sl_vconf_str(v, "function", ""));
    pl->bcast = (int)bcast;
    return pl;
}

static void *process_plan(sl_plan_ctx *pc, char *err, size_t errlen) { return plan_common(pc, 0, err, errlen); }
static void *keyed_plan(sl_plan_ctx *pc, char *err, size_t errlen) { return plan_common(pc, 1, err, errlen); }

/* The user's callbacks see their own op->priv; ours is kept aside. */
/* The host of the user callback running on this thread (for the context
 * calls that need our side, such as sl_ds_broadcast_state). */
static __thread proc_state *cur_host;
#define ENTER(op, st) ((op)->priv = (st)->user, cur_host = (st))
#define LEAVE(op, st) ((st)->user = (op)->priv, (op)->priv = (st), cur_host = NULL)

static int proc_open(sl_op *op)
{
    const proc_plan *pl = op->plan;
    proc_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->fn = sl_ds_load_user(op, pl->library, pl->function, &st->dl);
    if (!st->fn) return SL_ERR;
    if (!st->fn->process_element && !st->fn->process_element1)
        return sl_op_fail(op, "vertex '%s': '%s' has no process_element", pl->vid, pl->function);
    if (op->nin > 1 && pl->bcast == 1 && !st->fn->process_element && !st->fn->process_broadcast_element)
        return sl_op_fail(op, "vertex '%s': '%s' has no process_broadcast_element for its broadcast input",
                          pl->vid, pl->function);
    if (op->nin > 1 && pl->bcast != 1 && !st->fn->process_element && !st->fn->process_element2)
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
    const proc_plan *pl = op->plan;
    if (input == pl->bcast) {
        st->in_broadcast = 1;
        rc = fn->process_broadcast_element ? fn->process_broadcast_element(op, row)
             : fn->process_element        ? fn->process_element(op, input, row)
                                          : sl_op_fail(op, "%s: '%s' has no process_broadcast_element",
                                                       op->task_name, pl->function);
        st->in_broadcast = 0;
    } else if (input == 0 && fn->process_element1) rc = fn->process_element1(op, row);
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
    for (sl_bstate *b = st->bstates; b;) {
        sl_bstate *next = b->next;
        for (int i = 0; i < b->n; i++) free(b->e[i].k);
        free(b->e);
        free(b);
        b = next;
    }
    free(st);
    op->priv = NULL;
}

/* ---- broadcast state ----------------------------------------------------------- */

static sl_bstate *bstate_make(sl_op *op, proc_state *st, const char *name)
{
    for (sl_bstate *b = st->bstates; b; b = b->next)
        if (!strcmp(b->name, name)) return b;
    sl_bstate *b = sl_calloc(1, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    b->owner = st;
    b->op = op;
    b->next = st->bstates;
    st->bstates = b;
    return b;
}

sl_bstate *sl_ds_broadcast_state(sl_op *ctx, const char *name)
{
    if (!cur_host || (ctx->def != &sl_op_process && ctx->def != &sl_op_keyed_process)) {
        sl_op_fail(ctx, "%s: broadcast state belongs to process functions (make it in open)", ctx->task_name);
        return NULL;
    }
    if (!name || !*name || strlen(name) >= sizeof ((sl_bstate *)0)->name) {
        sl_op_fail(ctx, "%s: a broadcast state needs a name of 1-63 characters", ctx->task_name);
        return NULL;
    }
    /* called from the user's open(): op->priv is theirs, ours is kept in rt */
    return bstate_make(ctx, cur_host, name);
}

static int kcmp(const uint8_t *a, size_t al, const void *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

/* The index of key k, or -(insertion point) - 1. */
static int bfind(const sl_bstate *s, const void *k, size_t klen)
{
    int lo = 0, hi = s->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = kcmp(s->e[mid].k, s->e[mid].klen, k, klen);
        if (!c) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid - 1;
    }
    return -lo - 1;
}

int sl_bstate_get(sl_bstate *s, const void *k, size_t klen, const void **v, size_t *vlen)
{
    if (!s) return SL_ERR;
    int i = bfind(s, k, klen);
    if (i < 0) return SL_DONE;
    *v = s->e[i].v;
    *vlen = s->e[i].vlen;
    return SL_OK;
}

static int writable(sl_bstate *s)
{
    if (s->owner->in_broadcast) return 1;
    sl_op_fail(s->op, "%s: broadcast state '%s' is read-only here (write it in process_broadcast_element)",
               s->op->task_name, s->name);
    return 0;
}

static void bput(sl_bstate *s, const void *k, size_t klen, const void *v, size_t vlen)
{
    int i = bfind(s, k, klen);
    uint8_t *mem = sl_malloc(klen + vlen + 1);
    memcpy(mem, k, klen);
    memcpy(mem + klen, v, vlen);
    if (i >= 0) {
        free(s->e[i].k);
    } else {
        i = -i - 1;
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 8;
            s->e = sl_realloc(s->e, (size_t)s->cap * sizeof *s->e);
        }
        memmove(&s->e[i + 1], &s->e[i], (size_t)(s->n - i) * sizeof *s->e);
        s->n++;
    }
    s->e[i] = (bentry){mem, mem + klen, klen, vlen};
}

int sl_bstate_put(sl_bstate *s, const void *k, size_t klen, const void *v, size_t vlen)
{
    if (!s || !writable(s)) return SL_ERR;
    bput(s, k, klen, v, vlen);
    return SL_OK;
}

int sl_bstate_remove(sl_bstate *s, const void *k, size_t klen)
{
    if (!s || !writable(s)) return SL_ERR;
    int i = bfind(s, k, klen);
    if (i < 0) return SL_OK;
    free(s->e[i].k);
    memmove(&s->e[i], &s->e[i + 1], (size_t)(s->n - i - 1) * sizeof *s->e);
    s->n--;
    return SL_OK;
}

int sl_bstate_each(sl_bstate *s, int (*fn)(void *ctx, const void *k, size_t klen, const void *v, size_t vlen),
                   void *ctx)
{
    if (!s) return SL_ERR;
    for (int i = 0; i < s->n; i++)
        if (fn(ctx, s->e[i].k, s->e[i].klen, s->e[i].v, s->e[i].vlen)) break;
    return SL_OK;
}

/* Blob: "SLB1", u32 states; per state u16 name length, name, u32 entries;
 * per entry u32 klen, key, u32 vlen, value (little-endian). Every subtask
 * writes the same (it saw the same broadcast elements). */
static int proc_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    proc_state *st = op->priv;
    SL_UNUSED(cpid);
    *blob = NULL;
    *len = 0;
    if (!st->bstates) return SL_OK;
    size_t n = 8;
    int ns = 0;
    for (sl_bstate *b = st->bstates; b; b = b->next, ns++) {
        n += 2 + strlen(b->name) + 4;
        for (int i = 0; i < b->n; i++) n += 8 + b->e[i].klen + b->e[i].vlen;
    }
    uint8_t *p = sl_malloc(n), *w = p;
    memcpy(w, "SLB1", 4);
    sl_put_le32(w + 4, (uint32_t)ns);
    w += 8;
    for (sl_bstate *b = st->bstates; b; b = b->next) {
        size_t nl = strlen(b->name);
        w[0] = (uint8_t)nl;
        w[1] = (uint8_t)(nl >> 8);
        memcpy(w + 2, b->name, nl);
        w += 2 + nl;
        sl_put_le32(w, (uint32_t)b->n);
        w += 4;
        for (int i = 0; i < b->n; i++) {
            sl_put_le32(w, (uint32_t)b->e[i].klen);
            memcpy(w + 4, b->e[i].k, b->e[i].klen);
            w += 4 + b->e[i].klen;
            sl_put_le32(w, (uint32_t)b->e[i].vlen);
            memcpy(w + 4, b->e[i].v, b->e[i].vlen);
            w += 4 + b->e[i].vlen;
        }
    }
    *blob = p;
    *len = n;
    return SL_OK;
}

/* Every old subtask's blob arrives (SL_OPF_UNION_STATE); they are copies
 * of one state, so the first that holds any is taken. */
static int proc_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    proc_state *st = op->priv;
    for (int k = 0; k < nblobs; k++) {
        const uint8_t *p = blobs[k], *end = p + lens[k];
        if (!lens[k]) continue;
#define NEED(n) do { if ((size_t)(end - p) < (size_t)(n)) goto bad; } while (0)
        NEED(8);
        if (memcmp(p, "SLB1", 4)) goto bad;
        uint32_t ns = sl_get_le32(p + 4);
        p += 8;
        for (uint32_t i = 0; i < ns; i++) {
            NEED(2);
            size_t nl = (size_t)p[0] | (size_t)p[1] << 8;
            NEED(2 + nl + 4);
            char name[64];
            if (nl == 0 || nl >= sizeof name) goto bad;
            memcpy(name, p + 2, nl);
            name[nl] = 0;
            p += 2 + nl;
            uint32_t ne = sl_get_le32(p);
            p += 4;
            sl_bstate *b = bstate_make(op, st, name);
            for (uint32_t e = 0; e < ne; e++) {
                NEED(4);
                uint32_t kl = sl_get_le32(p);
                NEED(4 + (size_t)kl + 4);
                const uint8_t *key = p + 4;
                p += 4 + kl;
                uint32_t vl = sl_get_le32(p);
                NEED(4 + (size_t)vl);
                bput(b, key, kl, p + 4, vl);
                p += 4 + vl;
            }
        }
#undef NEED
        return SL_OK;
    bad:
        return sl_op_fail(op, "%s: broadcast state %d of %d is damaged", op->task_name, k + 1, nblobs);
    }
    return SL_OK;
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

static const sl_op_option proc_options[] = {
    {"library", SL_CT_STRING, NULL, NULL,
     "Shared object (an uploaded C job's id or a path) holding the user function."},
    {"function", SL_CT_STRING, NULL, NULL,
     "Name of the function table the library exports."},
    {"schema", SL_CT_JSON, NULL, NULL,
     "Output columns: a list of {\"name\", \"type\"}."},
    {"side-outputs", SL_CT_JSON, NULL, NULL,
     "Named side outputs with their schemas (a list)."},
    {"broadcast-input", SL_CT_STRING, NULL, NULL,
     "Index of the input that is broadcast (broadcast state)."},
    {"user.*", SL_CT_STRING, NULL, NULL,
     "Passed to the user function as its own configuration."},
    SL_OP_OPTIONS_END,
};
static const sl_op_option keyed_options[] = {
    {"library", SL_CT_STRING, NULL, NULL,
     "Shared object (an uploaded C job's id or a path) holding the user function."},
    {"function", SL_CT_STRING, NULL, NULL,
     "Name of the function table the library exports."},
    {"schema", SL_CT_JSON, NULL, NULL,
     "Output columns: a list of {\"name\", \"type\"}."},
    {"side-outputs", SL_CT_JSON, NULL, NULL,
     "Named side outputs with their schemas (a list)."},
    {"key-by", SL_CT_JSON, NULL, NULL,
     "Key columns of the keyed process function (a list)."},
    {"broadcast-input", SL_CT_STRING, NULL, NULL,
     "Index of the input that is broadcast (broadcast state)."},
    {"user.*", SL_CT_STRING, NULL, NULL,
     "Passed to the user function as its own configuration."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_process = {
    .abi = SL_OP_ABI_VERSION,
    .name = "process",
    .flags = SL_OPF_UNION_STATE,
    .snapshot_state = proc_snapshot,
    .restore_state = proc_restore,
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
    .flags = SL_OPF_KEYED | SL_OPF_UNION_STATE,
    .snapshot_state = proc_snapshot,
    .restore_state = proc_restore,
    .options = keyed_options,
    .max_inputs = 2,
    .plan = keyed_plan,
    .plan_free = proc_plan_free,
    .open = proc_open,
    .process = proc_process,
    .on_timer = proc_timer,
    .close = proc_close,
};
