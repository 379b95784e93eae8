/*
 * expr_coll.c -- the collection functions over ARRAY, MAP and MULTISET
 * values: CARDINALITY, ELEMENT, ARRAY_CONTAINS, ARRAY_DISTINCT,
 * ARRAY_POSITION, ARRAY_REMOVE, ARRAY_REVERSE, ARRAY_SLICE, ARRAY_UNION,
 * ARRAY_CONCAT, ARRAY_JOIN, ARRAY_MAX, ARRAY_MIN, MAP_KEYS, MAP_VALUES,
 * MAP_ENTRIES, MAP_FROM_ARRAYS, STR_TO_MAP.
 *
 * Each is an entry of the function table's kind (sl_fnx) with a typing
 * function of its own: the result's full type follows from the arguments'
 * (ARRAY_DISTINCT of ARRAY<t> is ARRAY<t>, MAP_KEYS of MAP<k, v> is
 * ARRAY<k>), so the checker (expr_check.c) hands the typing to
 * sl_coll_type. Values are read in place with the nested readers of
 * core/row.h and results built with sl_nested_build into the record's
 * scratch arena: no allocation of their own. Elements compare as Java's
 * equals does (a value's type and bits; NULL equals NULL), order as the
 * SQL comparison of their type.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr_int.h"

/* ---- helpers ---------------------------------------------------------------- */

static const sl_dtype *kdt(const node *k) { return k->dt ? k->dt : sl_dtype_basic(k->type); }

static bool is_fixed_nanos(const sl_dtype *dt) { return sl_dtype_has_nanos(dt); }

/* Equal elements of type dt (both non-null). */
static bool val_eq(const sl_dtype *dt, const sl_value *a, const sl_value *b)
{
    switch (dt->kind) {
    case SL_T_DOUBLE:
    case SL_T_FLOAT: return memcmp(&a->v.d, &b->v.d, sizeof a->v.d) == 0 || (a->v.d != a->v.d && b->v.d != b->v.d);
    case SL_T_DECIMAL: return a->v.dec.lo == b->v.dec.lo && a->v.dec.hi == b->v.dec.hi;
    default:
        if (sl_type_is_var(dt->kind))
            return a->v.s.len == b->v.s.len && (!a->v.s.len || !memcmp(a->v.s.p, b->v.s.p, a->v.s.len));
        if (is_fixed_nanos(dt)) return a->v.ts.ms == b->v.ts.ms && a->v.ts.nano == b->v.ts.nano;
        return a->v.i == b->v.i;
    }
}

static bool nval_eq(const sl_dtype *dt, const sl_value *a, const sl_value *b)
{
    if (a->isnull || b->isnull) return a->isnull && b->isnull;
    return val_eq(dt, a, b);
}

/* Order of two non-null elements of an orderable type dt. */
static int val_cmp(const sl_dtype *dt, const sl_value *a, const sl_value *b)
{
    switch (dt->kind) {
    case SL_T_DOUBLE:
    case SL_T_FLOAT: return a->v.d < b->v.d ? -1 : a->v.d > b->v.d;
    case SL_T_DECIMAL:
        if (a->v.dec.hi != b->v.dec.hi) return a->v.dec.hi < b->v.dec.hi ? -1 : 1;
        return a->v.dec.lo < b->v.dec.lo ? -1 : a->v.dec.lo > b->v.dec.lo;
    case SL_T_STRING:
    case SL_T_BYTES: {
        uint32_t m = SL_MIN(a->v.s.len, b->v.s.len);
        int c = m ? memcmp(a->v.s.p, b->v.s.p, m) : 0;
        if (c) return c < 0 ? -1 : 1;
        return a->v.s.len < b->v.s.len ? -1 : a->v.s.len > b->v.s.len;
    }
    default:
        if (a->v.i != b->v.i) return a->v.i < b->v.i ? -1 : 1;
        if (is_fixed_nanos(dt)) return a->v.ts.nano < b->v.ts.nano ? -1 : a->v.ts.nano > b->v.ts.nano;
        return 0;
    }
}

static bool orderable(sl_type t)
{
    return !sl_type_is_nested(t) && t != SL_T_BOOLEAN && t != SL_T_NULL;
}

/* A needle of type `from` read as an element of type `to` (integers of any
 * width share v.i; an integer into a DOUBLE/FLOAT element is converted). */
static sl_value as_elem(const sl_dtype *to, sl_type from, sl_value v)
{
    if (!v.isnull && (to->kind == SL_T_DOUBLE || to->kind == SL_T_FLOAT) &&
        from != SL_T_DOUBLE && from != SL_T_FLOAT)
        v.v.d = (double)v.v.i;
    return v;
}

static int int_rank(sl_type t)
{
    return t == SL_T_TINYINT ? 1 : t == SL_T_SMALLINT ? 2 : t == SL_T_INT ? 3 : 4;
}

static bool int_kind(sl_type t)
{
    return t == SL_T_TINYINT || t == SL_T_SMALLINT || t == SL_T_INT || t == SL_T_BIGINT;
}

/* Can a needle of type t be looked for among elements of type e? */
static bool needle_ok(const sl_dtype *e, sl_type t)
{
    if (t == SL_T_NULL || t == e->kind) return true;
    if (int_kind(t) && (int_kind(e->kind) || e->kind == SL_T_DOUBLE || e->kind == SL_T_FLOAT)) return true;
    if (t == SL_T_FLOAT && e->kind == SL_T_DOUBLE) return true;
    return false;
}

/* All n elements of an array (or the keys and values of a map) into arena
 * space; NULL with the error set. */
static sl_value *read_all(const node *n, sl_fnx_cx *cx, const sl_dtype *dt, const sl_value *v,
                          uint32_t *cnt, sl_value **mapvals)
{
    sl_nested_reader r;
    uint32_t c = sl_nested_open(&r, dt, v);
    *cnt = c;
    size_t need = ((size_t)c + 1) * sizeof(sl_value) * (mapvals ? 2 : 1) + _Alignof(sl_value);
    char *raw = sl_arena_alloc(cx->scratch, need);
    if (!raw) {
        sl_fnx_err(n, cx, "%s: scratch space exhausted (%u elements)", n->fx->name, c);
        return NULL;
    }
    sl_value *vals = (sl_value *)(void *)(raw + (_Alignof(sl_value) - (uintptr_t)raw % _Alignof(sl_value)) % _Alignof(sl_value));
    sl_value *mv = mapvals ? vals + c + 1 : NULL;
    for (uint32_t i = 0; i < c; i++) sl_nested_next(&r, &vals[i], mv ? &mv[i] : NULL);
    if (mapvals) *mapvals = mv;
    return vals;
}

static int build(const node *n, sl_fnx_cx *cx, const sl_dtype *dt, const sl_value *vals,
                 uint32_t c, const sl_value *mapvals, sl_value *out)
{
    if (sl_nested_build(dt, vals, c, mapvals, cx->scratch, out) != SL_OK)
        return sl_fnx_err(n, cx, "%s: result too large (scratch space exhausted)", n->fx->name);
    out->isnull = false;
    return SL_OK;
}

static void set_null(sl_value *out) { *out = (sl_value){.isnull = true}; }

/* ---- the functions ------------------------------------------------------------ */

static int fx_cardinality(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    const sl_dtype *dt = kdt(n->kids[0]);
    sl_nested_reader r;
    uint32_t c = sl_nested_open(&r, dt, &v[0]);
    int64_t total = c;
    if (dt->kind == SL_T_MULTISET) {
        sl_value e, cnt;
        total = 0;
        while (sl_nested_next(&r, &e, &cnt)) total += cnt.isnull ? 0 : cnt.v.i;
    }
    *out = (sl_value){.v.i = total};
    return SL_OK;
}

static int fx_element(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    const sl_dtype *dt = kdt(n->kids[0]);
    uint32_t c = sl_nested_get(dt, &v[0], 0, out, NULL) ? 1 : 0;
    sl_value dummy;
    if (c && sl_nested_get(dt, &v[0], 1, &dummy, NULL))
        return sl_fnx_err(n, cx, "ELEMENT: the collection has more than one element");
    if (!c) set_null(out);
    return SL_OK;
}

static int fx_contains_position(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    if (v[0].isnull) {
        set_null(out);
        return SL_OK;
    }
    const sl_dtype *dt = kdt(n->kids[0]);
    bool pos = n->fx->name[6] == 'P';
    if (pos && v[1].isnull) { /* ARRAY_POSITION of NULL is NULL; ARRAY_CONTAINS looks for it */
        set_null(out);
        return SL_OK;
    }
    sl_value needle = as_elem(dt->elem, n->kids[1]->type, v[1]);
    sl_nested_reader r;
    sl_nested_open(&r, dt, &v[0]);
    sl_value e;
    int64_t i = 0, found = 0;
    while (sl_nested_next(&r, &e, NULL)) {
        i++;
        if (nval_eq(dt->elem, &e, &needle)) {
            found = i;
            break;
        }
    }
    *out = (sl_value){.v.i = pos ? found : found > 0};
    return SL_OK;
}

static int fx_distinct(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    const sl_dtype *dt = kdt(n->kids[0]);
    uint32_t c, k = 0;
    sl_value *vals = read_all(n, cx, dt, &v[0], &c, NULL);
    if (!vals) return SL_ERR;
    for (uint32_t i = 0; i < c; i++) { /* quadratic: arrays are small; no allocation */
        bool seen = false;
        for (uint32_t j = 0; j < k && !seen; j++) seen = nval_eq(dt->elem, &vals[j], &vals[i]);
        if (!seen) vals[k++] = vals[i];
    }
    return build(n, cx, n->dt, vals, k, NULL, out);
}

static int fx_remove(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (v[0].isnull) {
        set_null(out);
        return SL_OK;
    }
    const sl_dtype *dt = kdt(n->kids[0]);
    sl_value needle = as_elem(dt->elem, n->kids[1]->type, v[1]);
    uint32_t c, k = 0;
    sl_value *vals = read_all(n, cx, dt, &v[0], &c, NULL);
    if (!vals) return SL_ERR;
    for (uint32_t i = 0; i < c; i++)
        if (!nval_eq(dt->elem, &vals[i], &needle)) vals[k++] = vals[i];
    return build(n, cx, n->dt, vals, k, NULL, out);
}

static int fx_reverse(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    const sl_dtype *dt = kdt(n->kids[0]);
    uint32_t c;
    sl_value *vals = read_all(n, cx, dt, &v[0], &c, NULL);
    if (!vals) return SL_ERR;
    for (uint32_t i = 0; i < c / 2; i++) {
        sl_value t = vals[i];
        vals[i] = vals[c - 1 - i];
        vals[c - 1 - i] = t;
    }
    return build(n, cx, n->dt, vals, c, NULL, out);
}

/* ARRAY_SLICE(a, start [, end]): 1-based, both ends included; a negative
 * position counts from the end (-1 the last); 0 means 1; positions outside
 * are clamped; an empty range gives an empty array. */
static int fx_slice(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    const sl_dtype *dt = kdt(n->kids[0]);
    uint32_t c;
    sl_value *vals = read_all(n, cx, dt, &v[0], &c, NULL);
    if (!vals) return SL_ERR;
    int64_t len = c, s = v[1].v.i, e = n->nkids > 2 ? v[2].v.i : len;
    if (s < 0) s += len + 1;
    if (e < 0) e += len + 1;
    if (s < 1) s = 1;
    if (e > len) e = len;
    if (s > e || len == 0) return build(n, cx, n->dt, vals, 0, NULL, out);
    return build(n, cx, n->dt, vals + (s - 1), (uint32_t)(e - s + 1), NULL, out);
}

static int fx_concat_union(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    bool uni = n->fx->name[6] == 'U';
    const sl_dtype *dt = n->dt;
    uint32_t total = 0;
    for (int i = 0; i < n->nkids; i++) {
        if (v[i].isnull) {
            set_null(out);
            return SL_OK;
        }
        sl_nested_reader r;
        total += sl_nested_open(&r, kdt(n->kids[i]), &v[i]);
    }
    size_t al = _Alignof(sl_value);
    char *raw = sl_arena_alloc(cx->scratch, ((size_t)total + 1) * sizeof(sl_value) + al);
    if (!raw) return sl_fnx_err(n, cx, "%s: scratch space exhausted", n->fx->name);
    sl_value *vals = (sl_value *)(void *)(raw + (al - (uintptr_t)raw % al) % al);
    uint32_t k = 0;
    for (int i = 0; i < n->nkids; i++) {
        const sl_dtype *adt = kdt(n->kids[i]);
        sl_nested_reader r;
        sl_nested_open(&r, adt, &v[i]);
        sl_value e;
        while (sl_nested_next(&r, &e, NULL)) {
            e = as_elem(dt->elem, adt->elem->kind, e);
            bool seen = false;
            for (uint32_t j = 0; uni && j < k && !seen; j++) seen = nval_eq(dt->elem, &vals[j], &e);
            if (!seen) vals[k++] = e;
        }
    }
    return build(n, cx, dt, vals, k, NULL, out);
}

/* ARRAY_JOIN(a, delimiter [, null_replacement]): NULL elements are left
 * out unless a replacement is given. */
static int fx_join(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (v[0].isnull || v[1].isnull || (n->nkids > 2 && v[2].isnull)) {
        set_null(out);
        return SL_OK;
    }
    const sl_dtype *dt = kdt(n->kids[0]);
    bool repl = n->nkids > 2;
    for (int pass = 0; pass < 2; pass++) {
        size_t len = 0;
        char *p = pass ? (char *)out->v.s.p : NULL;
        bool first = true;
        sl_nested_reader r;
        sl_nested_open(&r, dt, &v[0]);
        sl_value e;
        while (sl_nested_next(&r, &e, NULL)) {
            if (e.isnull && !repl) continue;
            const sl_value *s = e.isnull ? &v[2] : &e;
            if (!first) {
                if (p) memcpy(p + len, v[1].v.s.p, v[1].v.s.len);
                len += v[1].v.s.len;
            }
            first = false;
            if (p && s->v.s.len) memcpy(p + len, s->v.s.p, s->v.s.len);
            len += s->v.s.len;
        }
        if (!pass) {
            char *buf = sl_fnx_alloc(n, cx, len);
            if (!buf) return SL_ERR;
            fnx_set_s(out, buf, len);
        }
    }
    return SL_OK;
}

static int fx_max_min(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    bool max = n->fx->name[7] == 'A';
    const sl_dtype *dt = kdt(n->kids[0]);
    sl_nested_reader r;
    sl_nested_open(&r, dt, &v[0]);
    sl_value e;
    set_null(out);
    while (sl_nested_next(&r, &e, NULL)) {
        if (e.isnull) continue;
        if (out->isnull || (max ? val_cmp(dt->elem, &e, out) > 0 : val_cmp(dt->elem, &e, out) < 0))
            *out = e;
    }
    return SL_OK;
}

static int fx_map_part(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    const sl_dtype *dt = kdt(n->kids[0]);
    uint32_t c;
    sl_value *mv;
    sl_value *keys = read_all(n, cx, dt, &v[0], &c, &mv);
    if (!keys) return SL_ERR;
    char which = n->fx->name[4]; /* K, V, E */
    if (which == 'K') return build(n, cx, n->dt, keys, c, NULL, out);
    if (which == 'V') return build(n, cx, n->dt, mv, c, NULL, out);
    for (uint32_t i = 0; i < c; i++) {
        sl_value kv[2] = {keys[i], mv[i]};
        if (build(n, cx, n->dt->elem, kv, 2, NULL, &keys[i]) != SL_OK) return SL_ERR;
    }
    return build(n, cx, n->dt, keys, c, NULL, out);
}

/* MAP_FROM_ARRAYS(keys, values): arrays of one length; a key given twice
 * keeps its last value. */
static int fx_map_from_arrays(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    uint32_t nk, nv;
    sl_value *keys = read_all(n, cx, kdt(n->kids[0]), &v[0], &nk, NULL);
    if (!keys) return SL_ERR;
    sl_value *vals = read_all(n, cx, kdt(n->kids[1]), &v[1], &nv, NULL);
    if (!vals) return SL_ERR;
    if (nk != nv)
        return sl_fnx_err(n, cx, "MAP_FROM_ARRAYS: the key array has %u elements, the value "
                          "array %u; they must be of the same length", nk, nv);
    uint32_t k = 0;
    for (uint32_t i = 0; i < nk; i++) {
        uint32_t j = 0;
        while (j < k && !nval_eq(n->dt->elem, &keys[j], &keys[i])) j++;
        keys[j] = keys[i];
        vals[j] = vals[i];
        if (j == k) k++;
    }
    return build(n, cx, n->dt, keys, k, vals, out);
}

/* STR_TO_MAP(s [, list_delimiter [, key_value_delimiter]]): defaults ','
 * and '='; a pair without the key-value delimiter maps to NULL; a later
 * key replaces an earlier one; the empty string is the empty map. The delimiters are plain text here. */
static int fx_str_to_map(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    const char *ld = ",", *kd = "=";
    size_t ll = 1, kl = 1;
    if (n->nkids > 1) { ld = v[1].v.s.p; ll = v[1].v.s.len; }
    if (n->nkids > 2) { kd = v[2].v.s.p; kl = v[2].v.s.len; }
    const char *s = v[0].v.s.p;
    size_t len = v[0].v.s.len;
    if (len == 0) return build(n, cx, n->dt, NULL, 0, NULL, out); /* '' is the empty map */
    uint32_t cnt = 1;
    for (size_t i = 0; ll && i + ll <= len; i++)
        if (!memcmp(s + i, ld, ll)) {
            cnt++;
            i += ll - 1;
        }
    size_t al = _Alignof(sl_value);
    char *raw = sl_arena_alloc(cx->scratch, (size_t)cnt * 2 * sizeof(sl_value) + al);
    if (!raw) return sl_fnx_err(n, cx, "STR_TO_MAP: scratch space exhausted");
    sl_value *keys = (sl_value *)(void *)(raw + (al - (uintptr_t)raw % al) % al), *vals = keys + cnt;
    uint32_t k = 0;
    size_t start = 0;
    for (;;) {
        size_t end = start;
        while (end < len && !(ll && end + ll <= len && !memcmp(s + end, ld, ll))) end++;
        sl_value key = {0}, val = {.isnull = true};
        size_t sep = start;
        while (sep < end && !(kl && sep + kl <= end && !memcmp(s + sep, kd, kl))) sep++;
        fnx_set_s(&key, s + start, sep - start);
        if (sep < end) fnx_set_s(&val, s + sep + kl, end - sep - kl);
        uint32_t j = 0;
        while (j < k && !val_eq(n->dt->elem, &keys[j], &key)) j++;
        keys[j] = key;
        vals[j] = val;
        if (j == k) k++;
        if (end >= len) break;
        start = end + ll;
    }
    return build(n, cx, n->dt, keys, k, vals, out);
}

/* ---- typing ----------------------------------------------------------------------- */

typedef struct coll_fn {
    sl_fnx fx;
    char arg0; /* 'A' ARRAY, 'C' ARRAY/MAP/MULTISET, 'M' MAP, 'S' STRING */
    char result; /* 'I' INT, 'B' BOOLEAN, 'E' the element, 'A' the array's type, 'K' ARRAY of
                  * keys, 'V' ARRAY of values, 'R' ARRAY<ROW<key, value>>, 'M' MAP from two
                  * arrays, 'S' STRING, 'T' MAP<STRING, STRING>, 'U' the arrays' common type */
} coll_fn;

#define MANY SL_EXPR_MAX_ARGS
static const coll_fn coll_table[] = {
    {{"CARDINALITY", 1, 1, "a", 'I', true, fx_cardinality}, 'C', 'I'},
    {{"ELEMENT", 1, 1, "a", 'I', true, fx_element}, 'A', 'E'},
    {{"ARRAY_CONTAINS", 2, 2, "a", 'B', false, fx_contains_position}, 'A', 'B'},
    {{"ARRAY_POSITION", 2, 2, "a", 'I', false, fx_contains_position}, 'A', 'I'},
    {{"ARRAY_DISTINCT", 1, 1, "a", '0', true, fx_distinct}, 'A', 'A'},
    {{"ARRAY_REMOVE", 2, 2, "a", '0', false, fx_remove}, 'A', 'A'},
    {{"ARRAY_REVERSE", 1, 1, "a", '0', true, fx_reverse}, 'A', 'A'},
    {{"ARRAY_SLICE", 2, 3, "a", '0', true, fx_slice}, 'A', 'A'},
    {{"ARRAY_UNION", 2, 2, "a", '0', false, fx_concat_union}, 'A', 'U'},
    {{"ARRAY_CONCAT", 1, MANY, "a", '0', false, fx_concat_union}, 'A', 'U'},
    {{"ARRAY_JOIN", 2, 3, "a", 'S', false, fx_join}, 'A', 'S'},
    {{"ARRAY_MAX", 1, 1, "a", '0', true, fx_max_min}, 'A', 'E'},
    {{"ARRAY_MIN", 1, 1, "a", '0', true, fx_max_min}, 'A', 'E'},
    {{"MAP_KEYS", 1, 1, "a", '0', true, fx_map_part}, 'M', 'K'},
    {{"MAP_VALUES", 1, 1, "a", '0', true, fx_map_part}, 'M', 'V'},
    {{"MAP_ENTRIES", 1, 1, "a", '0', true, fx_map_part}, 'M', 'R'},
    {{"MAP_FROM_ARRAYS", 2, 2, "a", '0', true, fx_map_from_arrays}, 'A', 'M'},
    {{"STR_TO_MAP", 1, 3, "s", '0', true, fx_str_to_map}, 'S', 'T'},
};

const sl_fnx *sl_coll_find(const char *name)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(coll_table); i++)
        if (!strcasecmp(name, coll_table[i].fx.name)) return &coll_table[i].fx;
    return NULL;
}

static const char *kname(const node *k) { return k->dt ? k->dt->text : sl_type_name(k->type); }

int sl_coll_type(node *n, char *why, size_t whylen)
{
    const coll_fn *cf = (const coll_fn *)(const void *)n->fx;
    const char *name = n->fx->name;
    const node *a0 = n->kids[0];
    const sl_dtype *d0 = kdt(a0);
    char err[256];
    switch (cf->arg0) {
    case 'A':
        if (a0->type != SL_T_ARRAY)
            return sl_seterr(why, whylen, "%s needs an ARRAY as argument 1, got %s", name, kname(a0));
        break;
    case 'C':
        if (a0->type != SL_T_ARRAY && a0->type != SL_T_MAP && a0->type != SL_T_MULTISET)
            return sl_seterr(why, whylen, "%s needs an ARRAY, MAP or MULTISET, got %s", name,
                             kname(a0));
        break;
    case 'M':
        if (a0->type != SL_T_MAP)
            return sl_seterr(why, whylen, "%s needs a MAP as argument 1, got %s", name, kname(a0));
        break;
    default:
        for (int i = 0; i < n->nkids; i++)
            if (n->kids[i]->type != SL_T_STRING && n->kids[i]->type != SL_T_NULL)
                return sl_seterr(why, whylen, "%s needs a STRING as argument %d, got %s", name,
                                 i + 1, kname(n->kids[i]));
        break;
    }
    /* the further arguments */
    if (!strcmp(name, "ARRAY_CONTAINS") || !strcmp(name, "ARRAY_POSITION") ||
        !strcmp(name, "ARRAY_REMOVE")) {
        if (!needle_ok(d0->elem, n->kids[1]->type))
            return sl_seterr(why, whylen, "%s: %s cannot hold %s", name, d0->text, kname(n->kids[1]));
    } else if (!strcmp(name, "ARRAY_SLICE")) {
        for (int i = 1; i < n->nkids; i++)
            if (!int_kind(n->kids[i]->type) && n->kids[i]->type != SL_T_NULL)
                return sl_seterr(why, whylen, "ARRAY_SLICE needs an integer as argument %d, got %s",
                                 i + 1, kname(n->kids[i]));
    } else if (!strcmp(name, "ARRAY_JOIN")) {
        if (d0->elem->kind != SL_T_STRING)
            return sl_seterr(why, whylen, "ARRAY_JOIN needs an ARRAY of strings, got %s", d0->text);
        for (int i = 1; i < n->nkids; i++)
            if (n->kids[i]->type != SL_T_STRING && n->kids[i]->type != SL_T_NULL)
                return sl_seterr(why, whylen, "ARRAY_JOIN needs a STRING as argument %d, got %s",
                                 i + 1, kname(n->kids[i]));
    } else if (cf->result == 'U' || cf->result == 'M') {
        for (int i = 1; i < n->nkids; i++)
            if (n->kids[i]->type != SL_T_ARRAY)
                return sl_seterr(why, whylen, "%s needs an ARRAY as argument %d, got %s", name,
                                 i + 1, kname(n->kids[i]));
    } else if ((!strcmp(name, "ARRAY_MAX") || !strcmp(name, "ARRAY_MIN")) &&
               !orderable(d0->elem->kind)) {
        return sl_seterr(why, whylen, "%s needs an ARRAY of an orderable type, got %s", name, d0->text);
    }
    const sl_dtype *dt = NULL;
    switch (cf->result) {
    case 'I': dt = sl_dtype_basic(SL_T_INT); break;
    case 'B': dt = sl_dtype_basic(SL_T_BOOLEAN); break;
    case 'S': dt = sl_dtype_basic(SL_T_STRING); break;
    case 'E': dt = sl_dtype_nullable(d0->elem, false); break;
    case 'A': dt = sl_dtype_nullable(d0, false); break;
    case 'K': dt = sl_dtype_array(d0->elem, err, sizeof err); break;
    case 'V': dt = sl_dtype_array(d0->val, err, sizeof err); break;
    case 'R': {
        const char *names[2] = {"key", "value"};
        const sl_dtype *types[2] = {d0->elem, d0->val};
        const sl_dtype *row = sl_dtype_row(2, names, types, err, sizeof err);
        dt = row ? sl_dtype_array(row, err, sizeof err) : NULL;
        break;
    }
    case 'M': dt = sl_dtype_map(d0->elem, kdt(n->kids[1])->elem, err, sizeof err); break;
    case 'T': {
        const sl_dtype *s = sl_dtype_basic(SL_T_STRING);
        dt = sl_dtype_map(s, s, err, sizeof err);
        break;
    }
    default: { /* 'U': every array of one element type (integers widen) */
        const sl_dtype *e = d0->elem;
        for (int i = 1; i < n->nkids; i++) {
            const sl_dtype *f = kdt(n->kids[i])->elem;
            if (f->phys == e->phys) continue;
            if (int_kind(f->kind) && int_kind(e->kind)) {
                if (int_rank(f->kind) > int_rank(e->kind)) e = f;
                continue;
            }
            return sl_seterr(why, whylen, "%s: %s and %s have no common element type", name,
                             d0->text, kdt(n->kids[i])->text);
        }
        dt = sl_dtype_array(sl_dtype_nullable(e, false), err, sizeof err);
        break;
    }
    }
    if (!dt) return sl_seterr(why, whylen, "%s: %s", name, err);
    n->type = dt->kind;
    n->dt = dt;
    return SL_OK;
}
