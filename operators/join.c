/*
 * join.c -- the parts the join operators share (see join.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bytes.h"
#include "join.h"

static const char *const type_names[] = {"inner", "left", "right", "full"};

const char *sl_join_type_name(sl_join_type t) { return type_names[t]; }

static int read_keys(sl_plan_ctx *pc, const char *opt, int side, int *cols, int *n, char *err,
                     size_t errlen)
{
    json_t *a = sl_vconf_array(pc->v, opt);
    size_t i;
    json_t *it;
    *n = 0;
    if (!a || json_array_size(a) == 0)
        return sl_seterr(err, errlen, "vertex '%s': '%s' must list the %s input's key columns",
                         pc->v->id, opt, side ? "right" : "left");
    json_array_foreach(a, i, it) {
        const char *c = json_string_value(it);
        int col = c ? sl_schema_find(pc->in[side].schema, c) : -1;
        if (col < 0)
            return sl_seterr(err, errlen, "vertex '%s': %s column '%s' is not in the %s input", pc->v->id,
                             opt, c ? c : "?", side ? "right" : "left");
        if (*n == SL_MAX_KEY_COLS)
            return sl_seterr(err, errlen, "vertex '%s': more than %d %s", pc->v->id, SL_MAX_KEY_COLS, opt);
        cols[(*n)++] = col;
    }
    return SL_OK;
}

int sl_join_plan(sl_plan_ctx *pc, sl_join_spec *js, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    memset(js, 0, sizeof *js);
    sl_schema_init(&js->left);
    sl_schema_init(&js->right);
    js->vid = sl_strdup(v->id);
    if (pc->nin != 2)
        return sl_seterr(err, errlen, "vertex '%s': a join takes two inputs (edges with \"input\": 0 "
                         "for the left side and 1 for the right), it has %d", v->id, pc->nin);
    const char *t = sl_vconf_str(v, "join-type", "inner");
    int found = 0;
    for (int i = 0; i < 4; i++)
        if (!strcasecmp(t, type_names[i])) js->type = (sl_join_type)i, found = 1;
    if (!found)
        return sl_seterr(err, errlen, "vertex '%s': join-type '%s' is not one of inner, left, right, "
                         "full", v->id, t);
    int nl, nr;
    if (read_keys(pc, "left-keys", 0, js->lkeys, &nl, err, errlen) != SL_OK ||
        read_keys(pc, "right-keys", 1, js->rkeys, &nr, err, errlen) != SL_OK)
        return SL_ERR;
    if (nl != nr)
        return sl_seterr(err, errlen, "vertex '%s': %d left-keys but %d right-keys; they pair up", v->id,
                         nl, nr);
    const sl_schema *ls = pc->in[0].schema, *rs = pc->in[1].schema;
    for (int k = 0; k < nl; k++) {
        sl_type a = ls->fields[js->lkeys[k]].type, b = rs->fields[js->rkeys[k]].type;
        if (a != b)
            return sl_seterr(err, errlen, "vertex '%s': key %d pairs %s %s with %s %s; both sides' key "
                             "columns need the same type (cast one)", v->id, k + 1,
                             ls->fields[js->lkeys[k]].name, sl_type_name(a),
                             rs->fields[js->rkeys[k]].name, sl_type_name(b));
    }
    js->nkeys = nl;
    if (sl_plan_key(pc, 0, js->lkeys, nl, err, errlen) != SL_OK ||
        sl_plan_key(pc, 1, js->rkeys, nr, err, errlen) != SL_OK)
        return SL_ERR;
    if (ls->n + rs->n > SL_MAX_FIELDS)
        return sl_seterr(err, errlen, "vertex '%s': the joined row would have %d columns (at most %d)",
                         v->id, ls->n + rs->n, SL_MAX_FIELDS);
    sl_schema_copy(&js->left, ls);
    sl_schema_copy(&js->right, rs);
    js->nleft = ls->n;
    js->nright = rs->n;
    sl_schema_copy(pc->out, ls);
    for (int i = 0; i < rs->n; i++) {
        const char *name = rs->fields[i].name;
        if (sl_schema_find(pc->out, name) < 0) {
            sl_schema_add_dt(pc->out, name, rs->fields[i].dt);
            continue;
        }
        char alt[300];
        for (int k = 0;; k++) {
            snprintf(alt, sizeof alt, "%s%d", name, k);
            if (sl_schema_find(pc->out, alt) < 0) break;
        }
        sl_schema_add_dt(pc->out, alt, rs->fields[i].dt);
    }
    return SL_OK;
}

void sl_join_spec_free(sl_join_spec *js)
{
    free(js->vid);
    sl_schema_free(&js->left);
    sl_schema_free(&js->right);
}

int sl_join_null_key(const sl_join_spec *js, int side, const sl_row *row)
{
    const int *k = side ? js->rkeys : js->lkeys;
    for (int i = 0; i < js->nkeys; i++)
        if (row->vals[k[i]].isnull) return 1;
    return 0;
}

int sl_join_emit(sl_op *op, const sl_join_spec *js, sl_value *vals, sl_rowkind kind,
                 const sl_row *left, const sl_row *right, int64_t ts)
{
    static const sl_value null = {.isnull = true};
    for (int i = 0; i < js->nleft; i++) vals[i] = left ? left->vals[i] : null;
    for (int i = 0; i < js->nright; i++) vals[js->nleft + i] = right ? right->vals[i] : null;
    sl_row out = {.kind = kind, .n = js->nleft + js->nright, .vals = vals, .ts = ts};
    return sl_op_emit(op, &out);
}

void sl_join_time_key(uint8_t *k, int64_t t) { sl_put_be64(k, (uint64_t)t ^ (UINT64_C(1) << 63)); }
int64_t sl_join_time_of(const uint8_t *k) { return (int64_t)(sl_get_be64(k) ^ (UINT64_C(1) << 63)); }

void sl_jbuf_put_row(sl_buf *b, const sl_row *row, const sl_schema *s)
{
    size_t need = sl_row_size(row, s);
    uint8_t *dst = (uint8_t *)sl_buf_room(b, 4 + need);
    sl_put_le32(dst, (uint32_t)need);
    size_t w = sl_row_encode(row, s, dst + 4, need);
    SL_ASSERT(w == need);
    sl_buf_added(b, 4 + need);
}
