/*
 * changelog_normalize.c -- the `changelog-normalize` operator: turns an
 * upsert stream (a row per key that replaces the key's previous row, and
 * deletes) into a full changelog, as Flink's ChangelogNormalize does after
 * an upsert source (upsert-kafka).
 *
 * Config:
 *   "key":       ["id"] or "id;region"   the primary key's columns
 *   "state.ttl" / "table.exec.state.ttl" idle-state retention (processing
 *                time; absent or 0 = forever)
 * Output: the input's columns.
 *
 * Per key the operator keeps the key's current row. For each input row:
 *   +I / +U   no current row: +I[row]; the same row again: nothing (only
 *             without a TTL: with one Flink re-emits the pair so that
 *             downstream state that expires is refreshed, and so does this);
 *             another row: -U[current] +U[row]. The row becomes current.
 *   -D / -U   a current row: -D[current] (the full stored row: a tombstone
 *             carries the key's columns only) and the key is forgotten; no
 *             current row: nothing.
 * Emitted rows carry the input row's event time.
 *
 * State, in op->kstate (the runtime opens it for the owned key groups and
 * snapshots, restores and re-deals it by key group, on either backend):
 *   "row"  per key, empty namespace: the current row, sl_row_encode of the
 *          input schema with kind +I, so equality with a new row is a
 *          memcmp of two encodings.
 * The encoding buffer grows to the largest row seen and is reused: no
 * allocation per record.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobgraph.h"
#include "operator.h"
#include "sl.h"

typedef struct cn_plan {
    char *vid;
    int nkeys;
    int keys[SL_MAX_KEY_COLS];
    int64_t ttl_ms;
} cn_plan;

typedef struct cn_state {
    sl_vstate *row;        /* "row": the key's current row */
    uint8_t *buf;          /* the new row's encoding */
    size_t cap;
    sl_value *vals;        /* the current row, decoded */
} cn_state;

static void cn_plan_free(void *p)
{
    cn_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl);
}

/* "key": an array of column names or one string "a;b". */
static int cn_parse_key(const sl_vertex *v, const sl_schema *in, cn_plan *pl, char *err,
                        size_t errlen)
{
    json_t *j = json_object_get(v->config, "key");
    char list[1024] = "";
    if (json_is_string(j)) {
        snprintf(list, sizeof list, "%s", json_string_value(j));
    } else if (json_is_array(j)) {
        size_t i, o = 0;
        json_t *x;
        json_array_foreach(j, i, x) {
            if (!json_is_string(x))
                return sl_seterr(err, errlen, "vertex '%s': 'key' item %zu must be a column name",
                                 pl->vid, i + 1);
            o += (size_t)snprintf(list + o, o < sizeof list ? sizeof list - o : 0, "%s%s",
                                  i ? ";" : "", json_string_value(x));
        }
        if (o >= sizeof list) return sl_seterr(err, errlen, "vertex '%s': 'key' is too long", pl->vid);
    } else {
        return sl_seterr(err, errlen, "vertex '%s': option 'key' is required: the primary key's "
                         "columns, an array of names or \"a;b\"", pl->vid);
    }
    char *save = NULL;
    for (char *tok = strtok_r(list, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        while (*tok == ' ') tok++;
        size_t l = strlen(tok);
        while (l && tok[l - 1] == ' ') tok[--l] = '\0';
        int c = sl_schema_find(in, tok);
        if (c < 0)
            return sl_seterr(err, errlen, "vertex '%s': key: unknown column '%s'", pl->vid, tok);
        for (int q = 0; q < pl->nkeys; q++)
            if (pl->keys[q] == c)
                return sl_seterr(err, errlen, "vertex '%s': key: column '%s' is listed twice",
                                 pl->vid, tok);
        if (pl->nkeys == SL_MAX_KEY_COLS)
            return sl_seterr(err, errlen, "vertex '%s': key has more than %d columns", pl->vid,
                             SL_MAX_KEY_COLS);
        pl->keys[pl->nkeys++] = c;
    }
    if (!pl->nkeys) return sl_seterr(err, errlen, "vertex '%s': 'key' names no column", pl->vid);
    return SL_OK;
}

static void *cn_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    const sl_schema *in = pc->in[0].schema;
    cn_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    sl_schema_init(pc->out);
    if (cn_parse_key(v, in, pl, err, errlen) != SL_OK) goto fail;
    const char *ttl_key = json_object_get(v->config, "state.ttl") ? "state.ttl"
                                                                   : "table.exec.state.ttl";
    if (json_object_get(v->config, "state.ttl") && json_object_get(v->config, "table.exec.state.ttl")) {
        sl_seterr(err, errlen, "vertex '%s': set either 'state.ttl' or its alias "
                  "'table.exec.state.ttl', not both", pl->vid);
        goto fail;
    }
    if (sl_vconf_duration(v, ttl_key, 0, &pl->ttl_ms, err, errlen) != SL_OK) goto fail;
    if (pl->ttl_ms <= 0)
        sl_plan_unbounded_cols(pc, "changelog normalization", in, pl->keys, pl->nkeys,
                               "table.exec.state.ttl");
    sl_schema_copy(pc->out, in);
    if (sl_plan_key(pc, 0, pl->keys, pl->nkeys, err, errlen) != SL_OK) goto fail;
    return pl;
fail:
    sl_schema_free(pc->out);
    cn_plan_free(pl);
    return NULL;
}

static void cn_close(sl_op *op)
{
    cn_state *st = op->priv;
    if (!st) return;
    free(st->buf);
    free(st->vals);
    free(st);
    op->priv = NULL;
}

static int cn_open(sl_op *op)
{
    const cn_plan *pl = op->plan;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened", pl->vid);
    cn_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->row = sl_op_state(op, "row", SL_STATE_VALUE, pl->ttl_ms);
    if (!st->row) return SL_ERR;
    st->vals = sl_calloc((size_t)op->in->n + 1, sizeof *st->vals);
    return SL_OK;
}

/* The current row of the key into *cur (values borrowed from the state
 * until its next call); SL_DONE when there is none. */
static int cn_current(sl_op *op, sl_row *cur, const void **enc, size_t *enclen)
{
    const cn_plan *pl = op->plan;
    cn_state *st = op->priv;
    int rc = sl_value_get(st->row, NULL, 0, enc, enclen);
    if (rc != SL_OK) return rc;
    char err[256];
    *cur = (sl_row){.vals = st->vals};
    if (sl_row_decode(*enc, *enclen, op->in, cur, err, sizeof err) != SL_OK)
        return sl_op_fail(op, "vertex '%s': a stored row is damaged: %s", pl->vid, err);
    return SL_OK;
}

static int cn_process(sl_op *op, int input, sl_row *row)
{
    const cn_plan *pl = op->plan;
    cn_state *st = op->priv;
    SL_UNUSED(input);
    sl_row cur;
    const void *enc;
    size_t enclen;
    int have = cn_current(op, &cur, &enc, &enclen);
    if (have == SL_ERR) return SL_ERR;
    if (row->kind == SL_KIND_DELETE || row->kind == SL_KIND_UPDATE_BEFORE) {
        if (have != SL_OK) return SL_OK; /* removing a key that is not there */
        cur.kind = SL_KIND_DELETE;
        cur.ts = row->ts;
        int rc = sl_op_emit(op, &cur);
        if (rc != SL_OK) return rc;
        return sl_state_clear(st->row, NULL, 0);
    }
    sl_rowkind kind = row->kind;
    row->kind = SL_KIND_INSERT; /* stored, and compared, as +I */
    size_t need = sl_row_size(row, op->in);
    if (need > st->cap) {
        st->cap = need * 2;
        st->buf = sl_realloc(st->buf, st->cap);
    }
    size_t n = sl_row_encode(row, op->in, st->buf, st->cap);
    row->kind = kind;
    if (n != need) return sl_op_fail(op, "vertex '%s': cannot encode a row", pl->vid);
    sl_row out = *row;
    if (have != SL_OK) {
        out.kind = SL_KIND_INSERT;
    } else {
        if (pl->ttl_ms <= 0 && enclen == n && !memcmp(enc, st->buf, n)) return SL_OK;
        cur.kind = SL_KIND_UPDATE_BEFORE;
        cur.ts = row->ts;
        int rc = sl_op_emit(op, &cur);
        if (rc != SL_OK) return rc;
        out.kind = SL_KIND_UPDATE_AFTER;
    }
    int rc = sl_op_emit(op, &out);
    if (rc != SL_OK) return rc;
    return sl_value_put(st->row, NULL, 0, st->buf, n);
}

static const sl_op_option cn_options[] = {
    {"key", SL_CT_JSON, NULL, NULL,
     "Key columns (a list or a comma-separated string)."},
    {"state.ttl", SL_CT_STRING, NULL, NULL,
     "Time-to-live of a key's state (a duration or interval; 0: none)."},
    {"table.exec.state.ttl", SL_CT_STRING, NULL, NULL,
     "Flink's name of state.ttl, as the SQL planner writes it."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_changelog_normalize = {
    .abi = SL_OP_ABI_VERSION,
    .name = "changelog-normalize",
    .flags = SL_OPF_KEYED,
    .options = cn_options,
    .plan = cn_plan_new,
    .plan_free = cn_plan_free,
    .open = cn_open,
    .process = cn_process,
    .close = cn_close,
};
