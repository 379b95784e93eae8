/*
 * match_recognize.c -- the `match_recognize` operator: Flink SQL's
 * MATCH_RECOGNIZE (row pattern recognition), ONE ROW PER MATCH, keyed by
 * the PARTITION BY columns.
 *
 * Config (docs/OPERATORS.md has the table):
 *   "partition-keys": ["sym"]        the key columns (first output columns)
 *   "time": "ts", "time-domain": "event" | "processing"
 *   "pattern": "S D+ U"              the PATTERN clause (match_recognize.h)
 *   "define": [{"var": "D", "condition": "price < `mr$0`",
 *               "refs": [{"name": "mr$0", "fn": "LAST", "var": "D", "col": "price", "n": 1}]}]
 *   "measures": [{"name": "start", "fn": "FIRST", "var": "S", "col": "price", "n": 0}, ...]
 *                                    (an aggregate over an expression: "expr": "price * qty")
 *   "order-by": ["price DESC", "id"] further columns sorting the rows of one event time
 *   "skip": "past-last-row" | "to-next-row" | "to-first" | "to-last", "skip-var": "D"
 *   "within": duration, "max-rows-per-key": n
 * A condition is an expression (lang/expr.h) over the input row extended
 * with its references, which the operator computes for the row being
 * classified from the rows of the match so far: the row the condition
 * sees carries PREV/LAST/FIRST/aggregate values as ordinary columns, so
 * the expression engine needs no notion of a match. A variable without a
 * condition is TRUE. The output row is the partition key (from the match's
 * first row) and each measure; its timestamp is the match's last row's.
 * A C job's pattern (sl_ds_cep) may also hold `!v` (the next row must not
 * be v; it is looked at, not taken), `$` (the WITHIN window is over) and
 * hidden "__" variables that take no row the variables "skip-unless" lists
 * for them would take.
 *
 * Ordering: in event time a row waits in "mr-pending" (a map from its time
 * to the rows of that time, in arrival order) with an event-time timer at
 * its time; when the watermark passes it the rows of that time (sorted by
 * "order-by", stably) join the key's sequence "mr-rows" (one value: [i64 time][u32 len][row]* from the
 * start of the current match attempt on). A row at or behind the watermark
 * is late: dropped and counted in numLateRecordsDropped. In processing time
 * a row joins the sequence when it arrives, with the wall clock as its time.
 *
 * Matching (SQL's semantics, one start row at a time, matches in the order
 * of their first rows): from the sequence's first row the compiled pattern
 * is run by a backtracking program in preference order. The first branch
 * that completes is the match; a more preferred branch that needs a row not
 * yet in the sequence makes the attempt pending (it is retried when rows
 * come); when every branch fails the start moves one row on. After a match
 * the AFTER MATCH SKIP strategy picks the next start, and the rows before it
 * leave the state. WITHIN: a branch may not take a row whose time is the
 * first row's + the interval or later; when the key is pending an event
 * (processing) time timer at that moment retries it, so a partial match that
 * ran out of time frees its rows without waiting for a row. Everything is
 * keyed state and timers, so snapshots, restores and rescaling go by key
 * group like every keyed operator, on both backends. A key whose sequence
 * would hold more than "max-rows-per-key" rows (a partial match that never
 * completes nor fails) fails the task naming the option.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bytes.h"
#include "buf.h"
#include "expr.h"
#include "jobgraph.h"
#include "operator.h"
#include "match_pattern.h"
#include "dsfn.h"
#include "userfn.h"

/* ---- the plan ------------------------------------------------------------------- */

typedef struct mr_ref {
    sl_mr_fn fn;
    int var;                 /* -1: any variable */
    int col;                 /* input column, -1 for none */
    int n;                   /* offset */
    sl_type type;
    sl_expr *arg;            /* an aggregate over an expression of the row ("expr"), or NULL */
} mr_ref;

typedef struct mr_define {
    sl_expr *cond;           /* NULL: TRUE */
    mr_ref *refs;
    int nrefs;
    sl_schema ext;           /* the input + its references */
} mr_define;

enum { SKIP_PAST_LAST, SKIP_NEXT_ROW, SKIP_TO_FIRST, SKIP_TO_LAST };

#define SL_MR_MAX_ORDER 16

typedef struct mr_plan {
    const char *vid;
    sl_schema in;
    int keys[SL_MAX_KEY_COLS], nkeys;
    int tcol, proctime;
    int ocol[SL_MR_MAX_ORDER], odesc[SL_MR_MAX_ORDER], norder; /* ORDER BY's further columns */
    sl_mr_pattern *pat;
    mr_define defs[SL_MR_MAX_VARS]; /* by variable */
    mr_ref *measures;
    int nmeasures;
    int skip, skip_var;
    int64_t within;          /* ms, 0 = none */
    int64_t max_rows;
    /* a C job's pattern (sl_ds_cep): conditions, select and timeout from an
     * sl_cep_fn; variables named "__..." (followed_by's skipped rows) are TRUE
     * and hidden from the match the functions see */
    int user;
    char *library, *function;
    unsigned char hidden[SL_MR_MAX_VARS];
    uint64_t unless[SL_MR_MAX_VARS]; /* a hidden variable takes no row these variables would take */
    sl_schema tout;          /* the "timeout" side output's columns */
    int has_timeout;
    char *zone;              /* the session time zone the expressions evaluate in; NULL: UTC */
} mr_plan;

static void mr_plan_free(void *pv)
{
    mr_plan *pl = pv;
    if (!pl) return;
    for (int i = 0; i < SL_MR_MAX_VARS; i++) {
        sl_expr_destroy(pl->defs[i].cond);
        for (int k = 0; k < pl->defs[i].nrefs; k++) sl_expr_destroy(pl->defs[i].refs[k].arg);
        free(pl->defs[i].refs);
        sl_schema_free(&pl->defs[i].ext);
    }
    for (int m = 0; m < pl->nmeasures; m++) sl_expr_destroy(pl->measures[m].arg);
    free(pl->measures);
    free(pl->library);
    free(pl->function);
    free(pl->zone);
    sl_schema_free(&pl->tout);
    sl_mr_pattern_free(pl->pat);
    sl_schema_free(&pl->in);
    free(pl);
}

/* One reference {"name", "fn", "var", "col", "n"}; its output name into *name. */
static int parse_ref(const mr_plan *pl, const json_t *j, mr_ref *r, const char **name, char *err,
                     size_t errlen)
{
    const char *fn = json_string_value(json_object_get(j, "fn"));
    const char *var = json_string_value(json_object_get(j, "var"));
    const char *col = json_string_value(json_object_get(j, "col"));
    json_t *n = json_object_get(j, "n");
    *name = json_string_value(json_object_get(j, "name"));
    int f = fn ? sl_mr_fn_parse(fn) : -1;
    if (!json_is_object(j) || f < 0 || !*name || !**name)
        return sl_seterr(err, errlen, "vertex '%s': a reference needs \"name\" and \"fn\" (one of "
                         "PREV, LAST, FIRST, SUM, COUNT, AVG, MIN, MAX, CLASSIFIER, MATCH_ROWTIME, "
                         "MATCH_PROCTIME)", pl->vid);
    r->fn = (sl_mr_fn)f;
    r->var = -1;
    if (var && *var && (r->var = sl_mr_pattern_find_var(pl->pat, var)) < 0)
        return sl_seterr(err, errlen, "vertex '%s': reference '%s': '%s' is not a variable of the "
                         "pattern", pl->vid, *name, var);
    r->col = -1;
    const char *expr = json_string_value(json_object_get(j, "expr"));
    if (expr && r->fn >= SL_MR_SUM && r->fn <= SL_MR_MAX) { /* SUM(A.price * A.qty) */
        char eerr[256];
        if (!(r->arg = sl_expr_parse(expr, &pl->in, eerr, sizeof eerr)) ||
            sl_expr_set_zone(r->arg, pl->zone, eerr, sizeof eerr))
            return sl_seterr(err, errlen, "vertex '%s': reference '%s': %s", pl->vid, *name, eerr);
        r->n = 0;
        r->type = sl_mr_fn_type(r->fn, sl_expr_type(r->arg));
        if (r->type == SL_T_NULL) {
            sl_seterr(err, errlen, "vertex '%s': reference '%s': %s does not take a %s argument",
                      pl->vid, *name, fn, sl_type_name(sl_expr_type(r->arg)));
            sl_expr_destroy(r->arg);
            r->arg = NULL;
            return SL_ERR;
        }
        return SL_OK;
    }
    int needs_col = r->fn <= SL_MR_MAX && !(r->fn == SL_MR_COUNT && (!col || !*col));
    if (needs_col && (!col || (r->col = sl_schema_find(&pl->in, col)) < 0))
        return sl_seterr(err, errlen, "vertex '%s': reference '%s': unknown column '%s'", pl->vid,
                         *name, col ? col : "");
    r->n = n ? (int)json_integer_value(n) : 0;
    if (r->n < 0 || r->n > 100000)
        return sl_seterr(err, errlen, "vertex '%s': reference '%s': offset %d out of range", pl->vid,
                         *name, r->n);
    r->type = sl_mr_fn_type(r->fn, r->col >= 0 ? pl->in.fields[r->col].type : SL_T_NULL);
    if (r->type == SL_T_NULL && r->col >= 0)
        return sl_seterr(err, errlen, "vertex '%s': reference '%s': %s does not take a %s column",
                         pl->vid, *name, fn, sl_type_name(pl->in.fields[r->col].type));
    return SL_OK;
}

static int plan_defines(sl_plan_ctx *pc, mr_plan *pl, char *err, size_t errlen)
{
    const json_t *defs = sl_plan_opt_json(pc, "define");
    if (defs && !json_is_array(defs))
        return sl_seterr(err, errlen, "vertex '%s': 'define' must be a list", pl->vid);
    size_t i;
    const json_t *d;
    json_array_foreach(defs, i, d) {
        const char *var = json_string_value(json_object_get(d, "var"));
        const char *cond = json_string_value(json_object_get(d, "condition"));
        int v = var ? sl_mr_pattern_find_var(pl->pat, var) : -1;
        if (v < 0 || !cond)
            return sl_seterr(err, errlen, "vertex '%s': define #%zu needs \"var\" (a variable of the "
                             "pattern) and \"condition\"", pl->vid, i + 1);
        mr_define *df = &pl->defs[v];
        if (df->cond)
            return sl_seterr(err, errlen, "vertex '%s': variable '%s' is defined twice", pl->vid, var);
        sl_schema_copy(&df->ext, &pl->in);
        const json_t *refs = json_object_get(d, "refs");
        size_t nr = json_array_size(refs);
        df->refs = sl_calloc(nr + 1, sizeof *df->refs);
        for (size_t k = 0; k < nr; k++) {
            const char *name;
            if (parse_ref(pl, json_array_get(refs, k), &df->refs[k], &name, err, errlen) != SL_OK)
                return SL_ERR;
            if (df->refs[k].fn == SL_MR_ROWTIME || df->refs[k].fn == SL_MR_PROCTIME)
                return sl_seterr(err, errlen, "vertex '%s': %s is not allowed in a condition",
                                 pl->vid, sl_mr_fn_name(df->refs[k].fn));
            sl_schema_add(&df->ext, name, df->refs[k].type);
            df->nrefs++;
        }
        char eerr[512];
        df->cond = sl_expr_parse(cond, &df->ext, eerr, sizeof eerr);
        if (!df->cond || sl_expr_set_zone(df->cond, pl->zone, eerr, sizeof eerr))
            return sl_seterr(err, errlen, "vertex '%s': the condition of '%s': %s", pl->vid, var, eerr);
        if (sl_expr_type(df->cond) != SL_T_BOOLEAN && sl_expr_type(df->cond) != SL_T_NULL)
            return sl_seterr(err, errlen, "vertex '%s': the condition of '%s' is %s, not BOOLEAN",
                             pl->vid, var, sl_type_name(sl_expr_type(df->cond)));
    }
    return SL_OK;
}

/* A C job's "skip-unless": [["__skip1", "b", ...], ...], the variables whose
 * rows each hidden variable may not take. */
static int plan_unless(sl_plan_ctx *pc, mr_plan *pl, char *err, size_t errlen)
{
    const json_t *su = sl_plan_opt_json(pc, "skip-unless"), *ent;
    size_t i;
    if (su && !json_is_array(su)) goto bad;
    json_array_foreach(su, i, ent) {
        const char *hv = json_string_value(json_array_get(ent, 0));
        int v = hv ? sl_mr_pattern_find_var(pl->pat, hv) : -1;
        if (v < 0 || !pl->hidden[v]) goto bad;
        for (size_t k = 1; k < json_array_size(ent); k++) {
            const char *nm = json_string_value(json_array_get(ent, k));
            int w = nm ? sl_mr_pattern_find_var(pl->pat, nm) : -1;
            if (w < 0 && nm && *nm && strncmp(nm, "__", 2) && pl->pat->nvars < SL_MR_MAX_VARS) {
                w = pl->pat->nvars++; /* a not_followed_by element: a variable no row is given */
                pl->pat->vars[w] = sl_strdup(nm);
            }
            if (w < 0) goto bad;
            pl->unless[v] |= UINT64_C(1) << w;
        }
    }
    return SL_OK;
bad:
    return sl_seterr(err, errlen, "vertex '%s': 'skip-unless' must be a list of [\"__hidden\", \"v\", "
                     "...]: a hidden variable of the pattern, then the variables whose rows it may "
                     "not take", pl->vid);
}

static void *mr_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    mr_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = pc->v->id;
    const char *zone = sl_plan_opt_str(pc, SL_OPT_LOCAL_TIME_ZONE);
    pl->zone = zone ? sl_strdup(zone) : NULL;
    const sl_schema *in = pc->in[0].schema;
    sl_schema_copy(&pl->in, in);
    const json_t *keys = sl_plan_opt_json(pc, "partition-keys");
    const json_t *k;
    size_t i;
    if (!json_is_array(keys) || !json_array_size(keys) || json_array_size(keys) > SL_MAX_KEY_COLS) {
        sl_seterr(err, errlen, "vertex '%s': 'partition-keys' must list the key columns", pl->vid);
        goto fail;
    }
    json_array_foreach(keys, i, k) {
        int c = json_is_string(k) ? sl_schema_find(in, json_string_value(k)) : -1;
        if (c < 0) {
            sl_seterr(err, errlen, "vertex '%s': unknown partition key column '%s'", pl->vid,
                      json_is_string(k) ? json_string_value(k) : "?");
            goto fail;
        }
        pl->keys[pl->nkeys++] = c;
    }
    if (sl_plan_key(pc, 0, pl->keys, pl->nkeys, err, errlen) != SL_OK) goto fail;
    pl->proctime = sl_plan_opt_int(pc, "time-domain") == 1;
    const char *tc = sl_plan_opt_str(pc, "time");
    pl->tcol = -1;
    if (!pl->proctime) {
        pl->tcol = tc ? sl_schema_find(in, tc) : -1;
        if (pl->tcol < 0 || (in->fields[pl->tcol].type != SL_T_TIMESTAMP &&
                             in->fields[pl->tcol].type != SL_T_BIGINT)) {
            sl_seterr(err, errlen, "vertex '%s': 'time' must name the TIMESTAMP event-time column "
                      "the rows are ordered by", pl->vid);
            goto fail;
        }
    }
    const json_t *ob = sl_plan_opt_json(pc, "order-by");
    if (ob && (!json_is_array(ob) || json_array_size(ob) > SL_MR_MAX_ORDER || pl->proctime)) {
        sl_seterr(err, errlen, "vertex '%s': 'order-by' must list at most %d columns (each \"col\" "
                  "or \"col DESC\") sorting the rows of one event time", pl->vid, SL_MR_MAX_ORDER);
        goto fail;
    }
    json_array_foreach(ob, i, k) {
        const char *item = json_string_value(k);
        char name[256];
        if (!item || strlen(item) >= sizeof name) goto bad_order;
        snprintf(name, sizeof name, "%s", item);
        char *sp = strchr(name, ' ');
        int desc = 0;
        if (sp) {
            if (!strcasecmp(sp + 1, "DESC")) desc = 1;
            else if (strcasecmp(sp + 1, "ASC")) goto bad_order;
            *sp = 0;
        }
        if ((pl->ocol[pl->norder] = sl_schema_find(in, name)) < 0) goto bad_order;
        pl->odesc[pl->norder++] = desc;
        continue;
    bad_order:
        sl_seterr(err, errlen, "vertex '%s': order-by item %zu must be a column of the input, "
                  "optionally followed by ASC or DESC", pl->vid, i + 1);
        goto fail;
    }
    char perr_[300];
    pl->pat = sl_mr_pattern_compile(sl_plan_opt_str(pc, "pattern"), perr_, sizeof perr_);
    if (!pl->pat) {
        sl_seterr(err, errlen, "vertex '%s': %s", pl->vid, perr_);
        goto fail;
    }
    const char *lib = sl_plan_opt_str(pc, "library");
    if (lib && *lib) { /* a C job's pattern: its functions give conditions and rows */
        pl->user = 1;
        if (sl_plan_opt_json(pc, "define") || sl_plan_opt_json(pc, "measures")) {
            sl_seterr(err, errlen, "vertex '%s': a pattern with a 'library' takes its conditions and "
                      "rows from its functions, not from 'define' / 'measures'", pl->vid);
            goto fail;
        }
        if (sl_ds_plan_user(pc, "pattern functions (sl_cep_fn)", err, errlen) != SL_OK) goto fail;
        pl->library = sl_strdup(lib);
        pl->function = sl_strdup(sl_plan_opt_str(pc, "function"));
        for (int v = 0; v < pl->pat->nvars; v++) pl->hidden[v] = !strncmp(pl->pat->vars[v], "__", 2);
        if (plan_unless(pc, pl, err, errlen) != SL_OK) goto fail;
        const char *ts = sl_plan_opt_str(pc, "timeout-schema");
        if (ts) {
            if (sl_schema_parse(ts, &pl->tout, err, errlen) != SL_OK ||
                sl_plan_output(pc, "timeout", &pl->tout, err, errlen) < 0)
                goto fail;
            pl->has_timeout = 1;
        }
    }
    if (plan_defines(pc, pl, err, errlen) != SL_OK) goto fail;
    pl->skip = (int)sl_plan_opt_int(pc, "skip");
    pl->skip_var = -1;
    if (pl->skip == SKIP_TO_FIRST || pl->skip == SKIP_TO_LAST) {
        const char *sv = sl_plan_opt_str(pc, "skip-var");
        if (!sv || (pl->skip_var = sl_mr_pattern_find_var(pl->pat, sv)) < 0) {
            sl_seterr(err, errlen, "vertex '%s': 'skip-var' must name a variable of the pattern",
                      pl->vid);
            goto fail;
        }
    }
    pl->within = sl_plan_opt_int(pc, "within");
    if (pl->pat->wend && pl->within <= 0) {
        sl_seterr(err, errlen, "vertex '%s': a pattern with '$' (the end of the window) needs 'within'",
                  pl->vid);
        goto fail;
    }
    pl->max_rows = sl_plan_opt_int(pc, "max-rows-per-key");
    if (pl->max_rows < 1) {
        sl_seterr(err, errlen, "vertex '%s': 'max-rows-per-key' must be positive", pl->vid);
        goto fail;
    }
    if (pl->user) return pl;
    /* output: the partition key, then the measures */
    for (int c = 0; c < pl->nkeys; c++)
        sl_schema_add_dt(pc->out, in->fields[pl->keys[c]].name, in->fields[pl->keys[c]].dt);
    const json_t *ms = sl_plan_opt_json(pc, "measures");
    pl->nmeasures = (int)json_array_size(ms);
    pl->measures = sl_calloc((size_t)pl->nmeasures + 1, sizeof *pl->measures);
    for (int m = 0; m < pl->nmeasures; m++) {
        const char *name;
        if (parse_ref(pl, json_array_get(ms, (size_t)m), &pl->measures[m], &name, err, errlen) != SL_OK)
            goto fail;
        if (pl->measures[m].fn == SL_MR_PREV) {
            sl_seterr(err, errlen, "vertex '%s': PREV is not supported in measures yet", pl->vid);
            goto fail;
        }
        if (sl_schema_find(pc->out, name) >= 0) {
            sl_seterr(err, errlen, "vertex '%s': output column '%s' twice", pl->vid, name);
            goto fail;
        }
        sl_schema_add(pc->out, name, pl->measures[m].type);
    }
    return pl;
fail:
    mr_plan_free(pl);
    return NULL;
}

/* ---- per subtask ---------------------------------------------------------------- */

#define MAX_STEPS 2000000L  /* backtracking steps of one attempt */

typedef struct thread_ {
    int pc, pos;
} thread_;

typedef struct mr_state {
    sl_vstate *rows, *pending;
    sl_buf blob;             /* the key's sequence, copied out of state */
    sl_buf entry;            /* a pending entry */
    size_t *offs;            /* byte offset of each row in blob */
    int64_t *ts;             /* each row's time */
    sl_value *vals;          /* decoded rows, in.n values each */
    int *labels;             /* the variable of each row of the attempt */
    int cap;
    thread_ *stack;
    int scap;
    sl_value *ext;           /* the row a condition sees */
    int next;
    sl_value *outv;
    int64_t now;             /* processing time of this run (MATCH_PROCTIME) */
    sl_arena arena;
    const sl_cep_fn *fn;     /* a C job's functions, or NULL */
    void *dl;
    int cut;                 /* the first row a branch could not take for WITHIN, -1 none */
    int *tlabels;            /* the labels of that branch */
    sl_row *crows;           /* what sl_cep_row / sl_cep_at return, one per row */
} mr_state;

struct sl_cep_match {
    sl_op *op;
    int s, end;              /* rows [s, end) */
    const int *labels;       /* indexed by row */
};

static int mr_open(sl_op *op)
{
    const mr_plan *pl = op->plan;
    if (!op->kstate || !op->event_timers)
        return sl_op_fail(op, "vertex '%s': match_recognize needs keyed state and timers", pl->vid);
    mr_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->rows = sl_op_state(op, "mr-rows", SL_STATE_VALUE, 0);
    st->pending = sl_op_state(op, "mr-pending", SL_STATE_MAP, 0);
    if (!st->rows || !st->pending) return SL_ERR;
    int maxext = pl->in.n;
    for (int v = 0; v < SL_MR_MAX_VARS; v++)
        if (pl->defs[v].ext.n > maxext) maxext = pl->defs[v].ext.n;
    st->ext = sl_calloc((size_t)maxext + 1, sizeof *st->ext);
    int nout = pl->nkeys + pl->nmeasures;
    if (op->out && op->out->n > nout) nout = op->out->n;
    if (pl->tout.n > nout) nout = pl->tout.n;
    st->outv = sl_calloc((size_t)nout + 1, sizeof *st->outv);
    if (pl->user && !(st->fn = sl_ds_load_user(op, pl->library, pl->function, &st->dl))) return SL_ERR;
    sl_arena_init(&st->arena, 1 << 20);
    return SL_OK;
}

static void mr_close(sl_op *op)
{
    mr_state *st = op->priv;
    if (!st) return;
    sl_buf_free(&st->blob);
    sl_buf_free(&st->entry);
    free(st->offs);
    free(st->ts);
    free(st->vals);
    free(st->labels);
    free(st->stack);
    free(st->ext);
    free(st->outv);
    free(st->tlabels);
    free(st->crows);
    if (st->dl) dlclose(st->dl);
    sl_arena_free(&st->arena);
    free(st);
    op->priv = NULL;
}

static void ensure_rows(mr_state *st, const mr_plan *pl, int n)
{
    if (n <= st->cap) return;
    int cap = st->cap ? st->cap : 64;
    while (cap < n) cap *= 2;
    st->offs = sl_realloc(st->offs, (size_t)cap * sizeof *st->offs);
    st->ts = sl_realloc(st->ts, (size_t)cap * sizeof *st->ts);
    st->vals = sl_realloc(st->vals, (size_t)cap * (size_t)(pl->in.n + 1) * sizeof *st->vals);
    st->labels = sl_realloc(st->labels, (size_t)cap * sizeof *st->labels);
    st->tlabels = sl_realloc(st->tlabels, (size_t)cap * sizeof *st->tlabels);
    st->crows = sl_realloc(st->crows, (size_t)cap * sizeof *st->crows);
    st->cap = cap;
}

static inline sl_value *row_vals(const mr_state *st, const mr_plan *pl, int i)
{
    return st->vals + (size_t)i * (size_t)(pl->in.n + 1);
}

/* Decode the sequence in st->blob into st->offs/ts/vals; returns rows or -1. */
static int decode_rows(sl_op *op)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    int n = 0;
    for (size_t pos = 0; pos < st->blob.len;) {
        if (st->blob.len - pos < 12) goto bad;
        uint32_t len = sl_get_le32(sl_buf_u8(&st->blob) + pos + 8);
        if (len > st->blob.len - pos - 12) goto bad;
        ensure_rows(st, pl, n + 1);
        st->offs[n] = pos;
        st->ts[n] = (int64_t)sl_get_le64(sl_buf_u8(&st->blob) + pos);
        sl_row r = {.vals = row_vals(st, pl, n)};
        char derr[200];
        if (sl_row_decode(sl_buf_u8(&st->blob) + pos + 12, len, &pl->in, &r, derr, sizeof derr) != SL_OK)
            goto bad;
        pos += 12 + len;
        n++;
    }
    return n;
bad:
    sl_op_fail(op, "vertex '%s': damaged match_recognize state", pl->vid);
    return -1;
}

static void put_row(sl_buf *b, int64_t ts, const sl_row *row, const sl_schema *s)
{
    size_t need = sl_row_size(row, s);
    sl_buf_reserve(b, 12 + need);
    uint8_t *p = sl_buf_u8(b) + b->len;
    sl_put_le64(p, (uint64_t)ts);
    sl_put_le32(p + 8, (uint32_t)need);
    sl_row_encode(row, s, p + 12, need);
    b->len += 12 + need;
}

/* ---- references ------------------------------------------------------------- */

/* The value of reference r over the rows [s, cur] of the attempt (labels set
 * up to cur), into *out. */
static int ref_value(sl_op *op, const mr_ref *r, int s, int cur, sl_value *out)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    out->isnull = true;
    switch (r->fn) {
    case SL_MR_PREV: {
        int i = cur - r->n;
        if (i >= s) *out = row_vals(st, pl, i)[r->col];
        return SL_OK;
    }
    case SL_MR_LAST:
    case SL_MR_FIRST: {
        int seen = 0, last = r->fn == SL_MR_LAST;
        for (int k = 0; k <= cur - s; k++) {
            int i = last ? cur - k : s + k;
            if (r->var >= 0 && st->labels[i] != r->var) continue;
            if (seen++ == r->n) {
                *out = row_vals(st, pl, i)[r->col];
                return SL_OK;
            }
        }
        return SL_OK;
    }
    case SL_MR_CLASSIFIER: {
        const char *v = pl->pat->vars[st->labels[cur]];
        out->isnull = false;
        out->v.s.p = v;
        out->v.s.len = (uint32_t)strlen(v);
        return SL_OK;
    }
    case SL_MR_ROWTIME:
        out->isnull = false;
        out->v.i = st->ts[cur];
        return SL_OK;
    case SL_MR_PROCTIME:
        out->isnull = false;
        out->v.i = st->now;
        return SL_OK;
    default: break;
    }
    /* aggregates over the rows of r->var (NULL values skipped) */
    int64_t cnt = 0, isum = 0;
    double dsum = 0;
    sl_value best = {.isnull = true};
    sl_type t = r->arg ? sl_expr_type(r->arg) : r->col >= 0 ? pl->in.fields[r->col].type : SL_T_BIGINT;
    static const sl_value row_counted = {.isnull = false};
    sl_value av;
    for (int i = s; i <= cur; i++) {
        if (r->var >= 0 && st->labels[i] != r->var) continue;
        const sl_value *v = r->col >= 0 ? &row_vals(st, pl, i)[r->col] : &row_counted; /* COUNT(*) */
        if (r->arg) { /* SUM(A.price * A.qty): the expression over row i */
            sl_row row = {.n = pl->in.n, .vals = row_vals(st, pl, i), .ts = st->ts[i]};
            char eerr[256];
            if (sl_expr_eval(r->arg, &row, &st->arena, &av, eerr, sizeof eerr) != SL_OK)
                return sl_op_fail(op, "vertex '%s': the argument of %s: %s", pl->vid,
                                  sl_mr_fn_name(r->fn), eerr);
            v = &av;
        }
        if (v->isnull) continue;
        cnt++;
        if (t == SL_T_DOUBLE) dsum += v->v.d;
        else isum += v->v.i;
        if (r->fn == SL_MR_MIN || r->fn == SL_MR_MAX) {
            int less = t == SL_T_DOUBLE ? v->v.d < best.v.d : v->v.i < best.v.i;
            int more = t == SL_T_DOUBLE ? v->v.d > best.v.d : v->v.i > best.v.i;
            if (best.isnull || (r->fn == SL_MR_MIN ? less : more)) best = *v;
        }
    }
    if (r->fn == SL_MR_COUNT) {
        out->isnull = false;
        out->v.i = cnt;
    } else if (!cnt) {
        return SL_OK;
    } else if (r->fn == SL_MR_MIN || r->fn == SL_MR_MAX) {
        *out = best;
    } else {
        out->isnull = false;
        if (t == SL_T_DOUBLE) out->v.d = r->fn == SL_MR_SUM ? dsum : dsum / (double)cnt;
        else if (r->fn == SL_MR_SUM) out->v.i = t == SL_T_INT ? (int64_t)(int32_t)isum : isum;
        else out->v.i = isum / cnt;
    }
    return SL_OK;
}

/* Does row cur (as variable v, the rows [s, cur) labelled) satisfy v's condition? */
static int condition(sl_op *op, int v, int s, int cur, bool *pass)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    const mr_define *df = &pl->defs[v];
    st->labels[cur] = v;
    if (pl->user) {
        *pass = true;
        if (!st->fn->condition) return SL_OK;
        sl_cep_match m = {op, s, cur, st->labels};
        sl_row r = {SL_KIND_INSERT, pl->in.n, row_vals(st, pl, cur), st->ts[cur]};
        if (!pl->hidden[v]) {
            *pass = st->fn->condition(pl->pat->vars[v], &r, &m);
            return SL_OK;
        }
        /* a skipped row (followed_by, not_followed_by): none of its variables may take it */
        for (int w = 0; *pass && w < pl->pat->nvars; w++) {
            if (!(pl->unless[v] >> w & 1)) continue;
            st->labels[cur] = w;
            *pass = !st->fn->condition(pl->pat->vars[w], &r, &m);
        }
        st->labels[cur] = v;
        return SL_OK;
    }
    if (!df->cond) {
        *pass = true;
        return SL_OK;
    }
    memcpy(st->ext, row_vals(st, pl, cur), (size_t)pl->in.n * sizeof *st->ext);
    sl_arena_reset(&st->arena);
    for (int i = 0; i < df->nrefs; i++)
        if (ref_value(op, &df->refs[i], s, cur, &st->ext[pl->in.n + i]) != SL_OK) return SL_ERR;
    sl_row r = {.n = df->ext.n, .vals = st->ext, .ts = st->ts[cur]};
    char eerr[256];
    if (sl_expr_eval_bool(df->cond, &r, &st->arena, pass, eerr, sizeof eerr) != SL_OK)
        return sl_op_fail(op, "vertex '%s': the condition of '%s': %s", pl->vid, pl->pat->vars[v], eerr);
    return SL_OK;
}

/* ---- matching --------------------------------------------------------------------- */

enum { R_FAIL, R_MATCH, R_PENDING };

static int push(mr_state *st, int *sp, int pc, int pos)
{
    if (*sp == st->scap) {
        st->scap = st->scap ? st->scap * 2 : 256;
        st->stack = sl_realloc(st->stack, (size_t)st->scap * sizeof *st->stack);
    }
    st->stack[(*sp)++] = (thread_){pc, pos};
    return SL_OK;
}

/* One attempt from row s over rows [s, n): R_MATCH with *end (exclusive) and
 * the rows' labels, R_PENDING, R_FAIL; -1 on error. next_min: the earliest
 * time a row not yet in the sequence can have. */
static int attempt(sl_op *op, int s, int n, int64_t next_min, int *end)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    const inst *prog = pl->pat->prog;
    int sp = 0;
    long steps = 0;
    st->cut = -1;
    push(st, &sp, 0, s);
    while (sp > 0) {
        thread_ t = st->stack[--sp];
        for (;;) {
            if (++steps > MAX_STEPS)
                return sl_op_fail(op, "vertex '%s': matching the pattern from one row took more than "
                                  "%ld steps; simplify the pattern or bound it with WITHIN",
                                  pl->vid, MAX_STEPS), -1;
            const inst *in = &prog[t.pc];
            if (in->op == OP_MATCH) {
                *end = t.pos;
                return R_MATCH;
            }
            if (in->op == OP_JMP) {
                t.pc = in->x;
                continue;
            }
            if (in->op == OP_SPLIT) {
                push(st, &sp, in->y, t.pos);
                t.pc = in->x;
                continue;
            }
            if (in->op == OP_WEND) { /* only once the WITHIN window is over: by a row or by time */
                int64_t at = t.pos < n ? st->ts[t.pos] : next_min;
                if (at - st->ts[s] >= pl->within) {
                    t.pc++;
                    continue;
                }
                if (t.pos == n) return R_PENDING;
                break;
            }
            /* OP_CHAR, OP_NOT: both read row t.pos */
            if (t.pos == n && !(pl->within > 0 && next_min - st->ts[s] >= pl->within))
                return R_PENDING;
            if (pl->within > 0 && (t.pos == n || st->ts[t.pos] - st->ts[s] >= pl->within)) {
                if (st->cut < 0) { /* the first branch WITHIN ended: a timeout's partial match */
                    st->cut = t.pos;
                    memcpy(st->tlabels + s, st->labels + s, (size_t)(t.pos - s) * sizeof *st->labels);
                }
                break;
            }
            bool pass;
            if (condition(op, in->var, s, t.pos, &pass) != SL_OK) return -1;
            if (in->op == OP_NOT) { /* the row must not be in->var; it stays for what follows */
                if (pass) break;
                t.pc++;
                continue;
            }
            if (!pass) break;
            t.pos++;
            t.pc++;
        }
    }
    return R_FAIL;
}

static int emit_match(sl_op *op, int s, int end)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    if (pl->user) {
        sl_cep_match m = {op, s, end, st->labels};
        memset(st->outv, 0, (size_t)op->out->n * sizeof *st->outv);
        sl_row out = {.kind = SL_KIND_INSERT, .n = op->out->n, .vals = st->outv, .ts = st->ts[end - 1]};
        sl_arena_reset(&st->arena);
        if (st->fn->select && st->fn->select(&m, &out, &st->arena) != SL_OK)
            return sl_op_fail(op, "vertex '%s': the select function failed", pl->vid);
        return sl_op_emit(op, &out);
    }
    const sl_value *first = row_vals(st, pl, s);
    for (int k = 0; k < pl->nkeys; k++) st->outv[k] = first[pl->keys[k]];
    sl_arena_reset(&st->arena);
    for (int m = 0; m < pl->nmeasures; m++)
        if (ref_value(op, &pl->measures[m], s, end - 1, &st->outv[pl->nkeys + m]) != SL_OK) return SL_ERR;
    sl_row out = {.kind = SL_KIND_INSERT, .n = pl->nkeys + pl->nmeasures, .vals = st->outv,
                  .ts = st->ts[end - 1]};
    return sl_op_emit(op, &out);
}

/* The partial match from s that WITHIN ended (the rows of the first branch
 * it cut, st->tlabels) to the "timeout" side output. */
static int emit_timeout(sl_op *op, int s)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    int idx = sl_op_output(op, "timeout");
    if (idx < 0 || !op->out_connected[idx]) return SL_OK;
    sl_cep_match m = {op, s, st->cut, st->tlabels};
    memset(st->outv, 0, (size_t)pl->tout.n * sizeof *st->outv);
    sl_row out = {.kind = SL_KIND_INSERT, .n = pl->tout.n, .vals = st->outv, .ts = st->ts[s] + pl->within};
    sl_arena_reset(&st->arena);
    if (st->fn->timeout(&m, st->ts[s] + pl->within, &out, &st->arena) != SL_OK)
        return sl_op_fail(op, "vertex '%s': the timeout function failed", pl->vid);
    return sl_op_emit_to(op, idx, &out) == SL_ERR ? SL_ERR : SL_OK;
}

/* ---- the C API's view of a match (dsfn.h) ------------------------------------------ */

static const sl_row *cep_row(const sl_cep_match *m, int i)
{
    const mr_plan *pl = m->op->plan;
    mr_state *st = m->op->priv;
    st->crows[i] = (sl_row){SL_KIND_INSERT, pl->in.n, row_vals(st, pl, i), st->ts[i]};
    return &st->crows[i];
}

int sl_cep_count(const sl_cep_match *m, const char *name)
{
    const mr_plan *pl = m->op->plan;
    int v = sl_mr_pattern_find_var(pl->pat, name), n = 0;
    for (int i = m->s; v >= 0 && i < m->end; i++) n += m->labels[i] == v;
    return n;
}

const sl_row *sl_cep_row(const sl_cep_match *m, const char *name, int i)
{
    int n = sl_cep_count(m, name), v = sl_mr_pattern_find_var(((const mr_plan *)m->op->plan)->pat, name);
    if (i < 0) i += n;
    if (i < 0 || i >= n) return NULL;
    for (int k = m->s; k < m->end; k++)
        if (m->labels[k] == v && i-- == 0) return cep_row(m, k);
    return NULL;
}

int sl_cep_length(const sl_cep_match *m)
{
    const mr_plan *pl = m->op->plan;
    int n = 0;
    for (int i = m->s; i < m->end; i++) n += !pl->hidden[m->labels[i]];
    return n;
}

/* The row index of the i-th row not skipped, or -1. */
static int visible(const sl_cep_match *m, int i)
{
    const mr_plan *pl = m->op->plan;
    for (int k = m->s; k < m->end; k++)
        if (!pl->hidden[m->labels[k]] && i-- == 0) return k;
    return -1;
}

const sl_row *sl_cep_at(const sl_cep_match *m, int i)
{
    int k = i >= 0 ? visible(m, i) : -1;
    return k < 0 ? NULL : cep_row(m, k);
}

const char *sl_cep_name(const sl_cep_match *m, int i)
{
    int k = i >= 0 ? visible(m, i) : -1;
    return k < 0 ? NULL : ((const mr_plan *)m->op->plan)->pat->vars[m->labels[k]];
}

/* The WITHIN timer of a pending attempt whose first row is at time first. */
static int arm_within(sl_op *op, int64_t first)
{
    const mr_plan *pl = op->plan;
    uint8_t ns[9];
    ns[0] = 'W';
    int64_t at = pl->proctime ? first + pl->within : first + pl->within - 1;
    sl_put_be64(ns + 1, (uint64_t)at);
    return sl_op_timer_register(op, pl->proctime ? SL_TIME_PROCESSING : SL_TIME_EVENT, at, ns, sizeof ns);
}

/* Run attempts over the key's sequence (already in st->blob) and store what
 * remains of it. */
static int run_key(sl_op *op, int64_t next_min)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    int n = decode_rows(op);
    if (n < 0) return SL_ERR;
    st->now = sl_op_processing_time(op);
    int s = 0, r = R_FAIL;
    while (s < n) {
        int end = 0;
        r = attempt(op, s, n, next_min, &end);
        if (r < 0) return SL_ERR;
        if (r == R_PENDING) break;
        if (r == R_FAIL) {
            if (st->cut > s && pl->has_timeout && st->fn->timeout && emit_timeout(op, s) != SL_OK)
                return SL_ERR;
            s++;
            continue;
        }
        if (emit_match(op, s, end) != SL_OK) return SL_ERR;
        int next = end;
        if (pl->skip == SKIP_NEXT_ROW) {
            next = s + 1;
        } else if (pl->skip == SKIP_TO_FIRST || pl->skip == SKIP_TO_LAST) {
            next = -1;
            for (int i = s; i < end; i++)
                if (st->labels[i] == pl->skip_var && (next < 0 || pl->skip == SKIP_TO_LAST)) next = i;
            if (next < 0) /* the SQL standard's exception, as Flink fails the job */
                return sl_op_fail(op, "vertex '%s': Could not skip to %s. No such element in the "
                                  "found match (the match of the rows at %lld .. %lld ms)", pl->vid,
                                  pl->pat->vars[pl->skip_var], (long long)st->ts[s],
                                  (long long)st->ts[end - 1]);
            if (next == s)
                return sl_op_fail(op, "vertex '%s': Could not skip to first element of a match "
                                  "(AFTER MATCH SKIP TO %s %s would find the same match again)",
                                  pl->vid, pl->skip == SKIP_TO_FIRST ? "FIRST" : "LAST",
                                  pl->pat->vars[pl->skip_var]);
        }
        s = next;
    }
    if (s >= n) {
        st->blob.len = 0;
        return sl_state_clear(st->rows, NULL, 0);
    }
    if (n - s > pl->max_rows)
        return sl_op_fail(op, "vertex '%s': a partial match of one key holds more than %lld rows "
                          "(option 'max-rows-per-key'); bound the pattern with WITHIN or raise the "
                          "limit", pl->vid, (long long)pl->max_rows);
    if (s > 0) {
        size_t off = st->offs[s];
        memmove(st->blob.p, st->blob.p + off, st->blob.len - off);
        st->blob.len -= off;
    }
    if (pl->within > 0 && r == R_PENDING && arm_within(op, st->ts[s]) != SL_OK) return SL_ERR;
    return sl_value_put(st->rows, NULL, 0, st->blob.p, st->blob.len);
}

static int load_rows(sl_op *op)
{
    mr_state *st = op->priv;
    const void *v;
    size_t len;
    st->blob.len = 0;
    int rc = sl_value_get(st->rows, NULL, 0, &v, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK) sl_buf_put(&st->blob, v, len);
    return SL_OK;
}

static int mr_process(sl_op *op, int input, sl_row *row)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    SL_UNUSED(input);
    if (SL_UNLIKELY(row->kind != SL_KIND_INSERT))
        return sl_op_fail(op, "vertex '%s': MATCH_RECOGNIZE reads an append-only input, got a %s row",
                          pl->vid, sl_rowkind_short(row->kind));
    if (pl->proctime) {
        if (load_rows(op) != SL_OK) return SL_ERR;
        int64_t now = sl_op_processing_time(op);
        put_row(&st->blob, now, row, &pl->in);
        return run_key(op, now);
    }
    const sl_value *tv = &row->vals[pl->tcol];
    if (SL_UNLIKELY(tv->isnull))
        return sl_op_fail(op, "vertex '%s': the time column '%s' is NULL in a row", pl->vid,
                          pl->in.fields[pl->tcol].name);
    int64_t t = tv->v.i;
    if (t <= op->current_watermark) {
        op->metrics.late_dropped++;
        return SL_OK;
    }
    uint8_t k[8], ns[9];
    sl_put_be64(k, (uint64_t)t ^ UINT64_C(0x8000000000000000));
    const void *v;
    size_t len;
    st->entry.len = 0;
    int rc = sl_map_get(st->pending, NULL, 0, k, 8, &v, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK) sl_buf_put(&st->entry, v, len);
    put_row(&st->entry, t, row, &pl->in);
    if (sl_map_put(st->pending, NULL, 0, k, 8, st->entry.p, st->entry.len) != SL_OK) return SL_ERR;
    if (rc == SL_OK) return SL_OK;
    ns[0] = 'R';
    memcpy(ns + 1, k, 8);
    return sl_op_timer_register(op, SL_TIME_EVENT, t, ns, sizeof ns);
}

/* The rows of one event time (an mr-pending entry, [time][len][row]* in
 * arrival order) onto the end of the key's sequence, sorted by ORDER BY's
 * further columns: a stable insertion sort, so rows equal on them keep
 * their order of arrival. The decoded rows use the sequence's row slots,
 * which run_key decodes afresh. */
static int append_rows_of_time(sl_op *op, const uint8_t *v, size_t len)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    if (!pl->norder) {
        sl_buf_put(&st->blob, v, len);
        return SL_OK;
    }
    int k = 0;
    char derr[200];
    for (size_t pos = 0; pos < len; k++) {
        uint32_t rl = len - pos >= 12 ? sl_get_le32(v + pos + 8) : 0;
        ensure_rows(st, pl, k + 1);
        sl_row r = {.vals = row_vals(st, pl, k)};
        if (len - pos < 12 || rl > len - pos - 12 ||
            sl_row_decode(v + pos + 12, rl, &pl->in, &r, derr, sizeof derr) != SL_OK)
            return sl_op_fail(op, "vertex '%s': damaged match_recognize state", pl->vid);
        st->offs[k] = pos;
        pos += 12 + rl;
    }
    int *idx = st->tlabels;
    for (int i = 0; i < k; i++) {
        int x = i, j = i - 1;
        for (; j >= 0; j--) {
            int y = idx[j], c = 0;
            for (int o = 0; !c && o < pl->norder; o++) {
                int col = pl->ocol[o];
                c = sl_value_cmp(pl->in.fields[col].dt, &row_vals(st, pl, y)[col], &row_vals(st, pl, x)[col]);
                if (pl->odesc[o]) c = -c;
            }
            if (c <= 0) break;
            idx[j + 1] = y;
        }
        idx[j + 1] = x;
    }
    for (int i = 0; i < k; i++) {
        const uint8_t *r = v + st->offs[idx[i]];
        sl_buf_put(&st->blob, r, 12 + (size_t)sl_get_le32(r + 8));
    }
    return SL_OK;
}

static int mr_on_timer(sl_op *op, sl_time_domain d, int64_t time, const void *nsv, size_t nslen)
{
    const mr_plan *pl = op->plan;
    mr_state *st = op->priv;
    const uint8_t *ns = nsv;
    if (nslen != 9 || (ns[0] != 'R' && ns[0] != 'W'))
        return sl_op_fail(op, "vertex '%s': damaged match_recognize timer", pl->vid);
    if (load_rows(op) != SL_OK) return SL_ERR;
    if (ns[0] == 'R') {
        const void *v;
        size_t len;
        int rc = sl_map_get(st->pending, NULL, 0, ns + 1, 8, &v, &len);
        if (rc == SL_ERR) return SL_ERR;
        if (rc == SL_DONE) return SL_OK;
        if (append_rows_of_time(op, v, len) != SL_OK) return SL_ERR;
        if (sl_map_remove(st->pending, NULL, 0, ns + 1, 8) != SL_OK) return SL_ERR;
    } else if (!st->blob.len) {
        return SL_OK;
    }
    return run_key(op, d == SL_TIME_PROCESSING ? time : time + 1);
}

static const sl_op_option mr_options[] = {
    {"partition-keys", SL_CT_JSON, NULL, NULL, "PARTITION BY: the key columns (a list)."},
    SL_OP_OPTION_LOCAL_TIME_ZONE,
    {"time", SL_CT_STRING, NULL, NULL, "ORDER BY: the event-time column (time-domain event)."},
    {"time-domain", SL_CT_ENUM, "event", "event,processing",
     "Order rows by event time (with the watermark) or by arrival (processing time)."},
    {"pattern", SL_CT_STRING, NULL, NULL, "PATTERN: the row pattern, e.g. \"A B+? C\"."},
    {"define", SL_CT_JSON, NULL, NULL,
     "DEFINE: a list of {\"var\", \"condition\", \"refs\"}; a variable without one is TRUE."},
    {"measures", SL_CT_JSON, NULL, NULL,
     "MEASURES: a list of references {\"name\", \"fn\", \"var\", \"col\", \"n\"}."},
    {"order-by", SL_CT_JSON, NULL, NULL,
     "ORDER BY's further columns, each \"col\" or \"col DESC\": they sort the rows of one event time."},
    {"skip", SL_CT_ENUM, "past-last-row", "past-last-row,to-next-row,to-first,to-last",
     "AFTER MATCH SKIP strategy."},
    {"skip-var", SL_CT_STRING, NULL, NULL, "The variable of SKIP TO FIRST / TO LAST."},
    {"within", SL_CT_DURATION, "0 ms", NULL, "WITHIN: the longest a match may span (0: unbounded)."},
    {"max-rows-per-key", SL_CT_INT, "10000", NULL,
     "Rows one key's partial match may hold before the task fails."},
    {"library", SL_CT_STRING, NULL, NULL,
     "A C job's pattern (sl_ds_cep): its shared object, whose functions give conditions and rows."},
    {"function", SL_CT_STRING, NULL, NULL, "The sl_cep_fn table in the library."},
    {"schema", SL_CT_STRING, NULL, NULL, "With a library: the output's columns."},
    {"skip-unless", SL_CT_JSON, NULL, NULL,
     "With a library: [[\"__skip1\", \"b\"], ...]: the hidden variable takes no row b would take."},
    {"timeout-schema", SL_CT_STRING, NULL, NULL,
     "With a library: the columns of the \"timeout\" side output (partial matches WITHIN ended)."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_match_recognize = {
    .abi = SL_OP_ABI_VERSION,
    .name = "match_recognize",
    .flags = SL_OPF_KEYED,
    .options = mr_options,
    .plan = mr_plan_new,
    .plan_free = mr_plan_free,
    .open = mr_open,
    .process = mr_process,
    .on_timer = mr_on_timer,
    .close = mr_close,
};
