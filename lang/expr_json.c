/*
 * expr_json.c -- the JSON functions: IS JSON [VALUE | SCALAR | ARRAY |
 * OBJECT], JSON_EXISTS, JSON_VALUE (RETURNING, ON EMPTY, ON ERROR),
 * JSON_QUERY (wrappers, ON EMPTY, ON ERROR), JSON_STRING, JSON_OBJECT and
 * JSON_ARRAY (NULL / ABSENT ON NULL).
 *
 * Text is parsed with jansson; paths are the SQL/JSON subset: an optional
 * mode (`lax`, the default, or `strict`), `$`, then steps `.name`,
 * `."name"`, `['name']`, `[n]`, `[*]` (an array's elements, an object's
 * member values) and `.*`. In lax mode a step that does not apply (a
 * missing member, an index past the end or of a non-array, a member of a
 * non-object) gives no item; in strict mode it is an error. The grammar
 * turns the clause forms into calls of internal entries (SL_JSON_VALUE,
 * SL_JSON_QUERY, SL_JSON_OBJECT, SL_JSON_ARRAY, SL_IS_JSON) whose leading
 * literal arguments carry the clauses, so a planned expression's text
 * reads back the same. Results are written into the record's scratch
 * arena; numbers are written as Java's Double.toString / Long.toString
 * write them (`2.5`, `100.0`, `1.0E7`), as Flink's JSON functions do.
 * jansson allocates while it parses (a cost per call of these functions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "expr_int.h"
#include "temporal.h"

/* ---- a string written into the scratch arena ------------------------------ */

typedef struct jout {
    sl_arena *a;
    char *p;
    size_t len, cap;
    bool fail;
} jout;

static void jput(jout *o, const char *s, size_t n)
{
    if (o->fail) return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 64;
        while (cap < o->len + n) cap *= 2;
        char *p = cap <= UINT32_MAX ? sl_arena_alloc(o->a, cap) : NULL;
        if (!p) {
            o->fail = true;
            return;
        }
        if (o->len) memcpy(p, o->p, o->len);
        o->p = p;
        o->cap = cap;
    }
    if (n) memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void jputs(jout *o, const char *s) { jput(o, s, strlen(s)); }

static void jput_str(jout *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    jput(o, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char u[7];
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        else if (c == '\b') esc = "\\b";
        else if (c == '\f') esc = "\\f";
        else if (c < 0x20) {
            snprintf(u, sizeof u, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
            esc = u;
        }
        if (esc) {
            jput(o, s + run, i - run);
            jputs(o, esc);
            run = i + 1;
        }
    }
    jput(o, s + run, n - run);
    jput(o, "\"", 1);
}

static void jput_double(jout *o, double d)
{
    char buf[64];
    sl_value v = {.v.d = d};
    sl_value_format(buf, sizeof buf, &v, SL_T_DOUBLE);
    jputs(o, buf);
}

/* A jansson value as compact JSON text (Jackson's layout: no blanks). */
static void jput_json(jout *o, const json_t *j)
{
    char buf[32];
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *k;
        json_t *v;
        bool first = true;
        jput(o, "{", 1);
        json_object_foreach((json_t *)j, k, v) {
            if (!first) jput(o, ",", 1);
            first = false;
            jput_str(o, k, strlen(k));
            jput(o, ":", 1);
            jput_json(o, v);
        }
        jput(o, "}", 1);
        break;
    }
    case JSON_ARRAY:
        jput(o, "[", 1);
        for (size_t i = 0; i < json_array_size(j); i++) {
            if (i) jput(o, ",", 1);
            jput_json(o, json_array_get(j, i));
        }
        jput(o, "]", 1);
        break;
    case JSON_STRING: jput_str(o, json_string_value(j), json_string_length(j)); break;
    case JSON_INTEGER:
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(j));
        jputs(o, buf);
        break;
    case JSON_REAL: jput_double(o, json_real_value(j)); break;
    case JSON_TRUE: jputs(o, "true"); break;
    case JSON_FALSE: jputs(o, "false"); break;
    default: jputs(o, "null"); break;
    }
}

static int jresult(const node *n, sl_fnx_cx *cx, jout *o, sl_value *out)
{
    if (o->fail) return sl_fnx_err(n, cx, "%s: result too large (scratch space exhausted)", n->fx->name);
    fnx_set_s(out, o->len ? o->p : "", o->len);
    return SL_OK;
}

/* ---- paths ------------------------------------------------------------------- */

#define JP_MAX_ITEMS 256 /* items a path may select ([*] over a large array: an error) */

typedef struct jpath_res {
    json_t *items[JP_MAX_ITEMS];
    int n;
    bool strict;
    char err[160]; /* a path or structural error (strict mode, bad path) */
} jpath_res;

static void jp_add(jpath_res *r, json_t *j)
{
    if (r->n < JP_MAX_ITEMS) r->items[r->n++] = j;
    else if (!r->err[0]) snprintf(r->err, sizeof r->err, "the path selects more than %d items", JP_MAX_ITEMS);
}

/* Apply the steps at p to j, adding what they select to r. */
static void jp_walk(const char *p, const char *end, json_t *j, jpath_res *r, int depth)
{
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (r->err[0]) return;
    if (p >= end) {
        jp_add(r, j);
        return;
    }
    if (depth > 64) {
        snprintf(r->err, sizeof r->err, "path too deep");
        return;
    }
    char name[256];
    size_t nl = 0;
    if (*p == '.') {
        p++;
        if (p < end && *p == '*') {
            if (!json_is_object(j)) {
                if (r->strict) snprintf(r->err, sizeof r->err, "'.*' of a non-object");
                return;
            }
            const char *k;
            json_t *v;
            json_object_foreach(j, k, v) jp_walk(p + 1, end, v, r, depth + 1);
            return;
        }
        if (p < end && (*p == '"')) {
            const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
            if (!q) goto bad;
            nl = (size_t)(q - p - 1);
            if (nl >= sizeof name) goto bad;
            memcpy(name, p + 1, nl);
            p = q + 1;
        } else {
            const char *s = p;
            while (p < end && *p != '.' && *p != '[' && *p != ' ') p++;
            nl = (size_t)(p - s);
            if (!nl || nl >= sizeof name) goto bad;
            memcpy(name, s, nl);
        }
        name[nl] = 0;
        json_t *v = json_is_object(j) ? json_object_get(j, name) : NULL;
        if (!v) {
            if (r->strict)
                snprintf(r->err, sizeof r->err, json_is_object(j) ? "no member '%.100s'"
                         : "member '%.100s' of a non-object", name);
            return;
        }
        jp_walk(p, end, v, r, depth + 1);
        return;
    }
    if (*p == '[') {
        p++;
        while (p < end && *p == ' ') p++;
        if (p < end && (*p == '\'' || *p == '"')) {
            char qc = *p;
            const char *q = memchr(p + 1, qc, (size_t)(end - p - 1));
            if (!q) goto bad;
            nl = (size_t)(q - p - 1);
            if (nl >= sizeof name) goto bad;
            memcpy(name, p + 1, nl);
            name[nl] = 0;
            p = q + 1;
            while (p < end && *p == ' ') p++;
            if (p >= end || *p != ']') goto bad;
            json_t *v = json_is_object(j) ? json_object_get(j, name) : NULL;
            if (!v) {
                if (r->strict) snprintf(r->err, sizeof r->err, "no member '%.100s'", name);
                return;
            }
            jp_walk(p + 1, end, v, r, depth + 1);
            return;
        }
        if (p < end && *p == '*') {
            p++;
            while (p < end && *p == ' ') p++;
            if (p >= end || *p != ']') goto bad;
            if (json_is_object(j)) { /* the members' values, in order */
                const char *k;
                json_t *m;
                json_object_foreach(j, k, m) jp_walk(p + 1, end, m, r, depth + 1);
                return;
            }
            if (!json_is_array(j)) {
                if (r->strict) snprintf(r->err, sizeof r->err, "'[*]' of a scalar");
                return;
            }
            for (size_t i = 0; i < json_array_size(j); i++)
                jp_walk(p + 1, end, json_array_get(j, i), r, depth + 1);
            return;
        }
        char *e;
        long long idx = strtoll(p, &e, 10);
        if (e == p || e > end) goto bad;
        p = e;
        while (p < end && *p == ' ') p++;
        if (p >= end || *p != ']' || idx < 0) goto bad;
        json_t *v = NULL;
        if (json_is_array(j)) v = json_array_get(j, (size_t)idx);
        if (!v) {
            if (r->strict) snprintf(r->err, sizeof r->err, "array index %lld out of bounds", idx);
            return;
        }
        jp_walk(p + 1, end, v, r, depth + 1);
        return;
    }
bad:
    snprintf(r->err, sizeof r->err, "bad JSON path step at '%.*s'", (int)SL_MIN(end - p, 20), p);
    r->strict = true; /* a malformed path is an error in either mode */
}

/* Evaluate path (not NUL-terminated) on doc. SL_ERR: a malformed path (err set). */
static void jp_eval(const char *path, size_t len, json_t *doc, jpath_res *r)
{
    const char *p = path, *end = path + len;
    r->n = 0;
    r->err[0] = 0;
    r->strict = false;
    while (p < end && *p == ' ') p++;
    if (end - p >= 6 && !strncasecmp(p, "strict", 6) && (end - p == 6 || p[6] == ' ')) {
        r->strict = true;
        p += 6;
    } else if (end - p >= 3 && !strncasecmp(p, "lax", 3) && (end - p == 3 || p[3] == ' ')) {
        p += 3;
    }
    while (p < end && *p == ' ') p++;
    if (p >= end || *p != '$') {
        snprintf(r->err, sizeof r->err, "a JSON path starts with '$' (after lax or strict)");
        r->strict = true;
        return;
    }
    jp_walk(p + 1, end, doc, r, 0);
}

static json_t *jparse(const sl_value *v)
{
    return json_loadb(v->v.s.p, v->v.s.len, JSON_DECODE_ANY, NULL);
}

static bool jscalar(const json_t *j) { return !json_is_object(j) && !json_is_array(j); }

/* ---- IS JSON, JSON_EXISTS ----------------------------------------------------------- */

/* SL_IS_JSON(s, 'VALUE' | 'SCALAR' | 'ARRAY' | 'OBJECT'): NULL is not JSON. */
static int fx_is_json(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    (void)cx;
    bool ok = false;
    if (!v[0].isnull) {
        json_t *j = jparse(&v[0]);
        char k = v[1].isnull ? 'V' : v[1].v.s.p[0];
        if (j)
            ok = k == 'V' || (k == 'S' && jscalar(j)) || (k == 'A' && json_is_array(j)) ||
                 (k == 'O' && json_is_object(j));
        json_decref(j);
    }
    (void)n;
    *out = (sl_value){.v.i = ok};
    return SL_OK;
}

/* JSON_EXISTS(s, path [, 'FALSE' | 'TRUE' | 'UNKNOWN' | 'ERROR' on error]). */
static int fx_json_exists(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (v[0].isnull || v[1].isnull) {
        *out = (sl_value){.isnull = true};
        return SL_OK;
    }
    char onerr = n->nkids > 2 && !v[2].isnull ? v[2].v.s.p[0] : 'F';
    json_t *j = jparse(&v[0]);
    jpath_res r;
    if (j) jp_eval(v[1].v.s.p, v[1].v.s.len, j, &r);
    bool err = !j || (r.err[0] && r.strict);
    if (err) {
        json_decref(j);
        if (onerr == 'E') return sl_fnx_err(n, cx, "JSON_EXISTS: %s", j ? r.err : "the text is not JSON");
        *out = onerr == 'U' ? (sl_value){.isnull = true} : (sl_value){.v.i = onerr == 'T'};
        return SL_OK;
    }
    bool found = false; /* a member whose value is JSON null does not count, as Flink */
    for (int i = 0; i < r.n && !found; i++) found = !json_is_null(r.items[i]);
    *out = (sl_value){.v.i = found};
    json_decref(j);
    return SL_OK;
}

/* ---- JSON_VALUE ---------------------------------------------------------------------- */

/* The scalar j as the result type t (STRING: its text); false when it does not convert. */
static bool jconvert(const node *n, sl_fnx_cx *cx, const json_t *j, sl_type t, sl_value *out)
{
    jout o = {.a = cx->scratch};
    if (t == SL_T_STRING) {
        if (json_is_string(j)) jput(&o, json_string_value(j), json_string_length(j));
        else jput_json(&o, j);
        return jresult(n, cx, &o, out) == SL_OK;
    }
    if (t == SL_T_BOOLEAN) {
        if (json_is_boolean(j)) *out = (sl_value){.v.i = json_is_true(j)};
        else if (json_is_string(j) && !strcasecmp(json_string_value(j), "true")) *out = (sl_value){.v.i = 1};
        else if (json_is_string(j) && !strcasecmp(json_string_value(j), "false")) *out = (sl_value){.v.i = 0};
        else return false;
        return true;
    }
    if (t == SL_T_DECIMAL) { /* a number as CAST of its DOUBLE / BIGINT, text as CAST of a STRING */
        sl_dec_type dt = {(uint8_t)n->dt->p, (uint8_t)n->dt->s};
        sl_dec r;
        int st = json_is_integer(j) ? sl_dec_from_i64((int64_t)json_integer_value(j), dt, &r)
                 : json_is_real(j) ? sl_dec_from_double(json_real_value(j), dt, &r)
                 : json_is_string(j) ? sl_dec_parse(json_string_value(j), json_string_length(j), dt, &r)
                 : SL_DEC_NOT_FINITE;
        if (st == SL_DEC_OVERFLOW && !json_is_string(j)) { /* a numeric CAST's overflow: NULL */
            *out = (sl_value){.isnull = true};
            return true;
        }
        if (st != SL_DEC_OK) return false;
        *out = (sl_value){.v.dec = {r.lo, r.hi}};
        return true;
    }
    if (t == SL_T_DATE) {
        int32_t days;
        if (!json_is_string(j) ||
            sl_date_parse(json_string_value(j), json_string_length(j), &days) != SL_OK)
            return false;
        *out = (sl_value){.v.i = days};
        return true;
    }
    if (t == SL_T_DOUBLE) {
        if (json_is_number(j)) *out = (sl_value){.v.d = json_number_value(j)};
        else if (json_is_string(j)) {
            char *e;
            double d = strtod(json_string_value(j), &e);
            if (e == json_string_value(j) || *e) return false;
            *out = (sl_value){.v.d = d};
        } else return false;
        return true;
    }
    /* INT / BIGINT */
    long long x;
    if (json_is_integer(j)) x = (long long)json_integer_value(j);
    else if (json_is_real(j)) {
        double d = json_real_value(j);
        if (!(d >= -9.2e18 && d <= 9.2e18)) return false;
        x = (long long)d;
    } else if (json_is_string(j)) {
        char *e;
        x = strtoll(json_string_value(j), &e, 10);
        if (e == json_string_value(j) || *e) return false;
    } else return false;
    if (t == SL_T_INT && (x < INT32_MIN || x > INT32_MAX)) return false;
    *out = (sl_value){.v.i = x};
    return true;
}

/* What an ON EMPTY / ON ERROR clause gives: mode 'N' NULL, 'E' ERROR, 'D' DEFAULT dflt. */
static int jfallback(const node *n, sl_fnx_cx *cx, char mode, const sl_value *dflt, int di,
                     const char *why, sl_value *out)
{
    if (mode == 'E') return sl_fnx_err(n, cx, "JSON_VALUE: %s", why);
    if (mode == 'D') {
        *out = *dflt;
        /* a DECIMAL DEFAULT into a DOUBLE or another DECIMAL type (its CAST) */
        const node *d = n->kids[di];
        if (!out->isnull && d->type == SL_T_DECIMAL) {
            sl_dec x = {dflt->v.dec.lo, dflt->v.dec.hi}, r;
            sl_dec_type dt = {(uint8_t)d->dt->p, (uint8_t)d->dt->s};
            if (n->type == SL_T_DOUBLE) {
                *out = (sl_value){.v.d = sl_dec_to_double(x, dt)};
            } else if (n->type == SL_T_DECIMAL) {
                sl_dec_type rt = {(uint8_t)n->dt->p, (uint8_t)n->dt->s};
                if (sl_dec_rescale(x, dt.s, rt, &r) != SL_DEC_OK) *out = (sl_value){.isnull = true};
                else *out = (sl_value){.v.dec = {r.lo, r.hi}};
            }
        }
        return SL_OK;
    }
    *out = (sl_value){.isnull = true};
    return SL_OK;
}

/* JSON_VALUE(s, path) and SL_JSON_VALUE(s, path, 'TYPE', 'ON EMPTY mode', default,
 * 'ON ERROR mode', default). */
static int fx_json_value(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (v[0].isnull || v[1].isnull) {
        *out = (sl_value){.isnull = true};
        return SL_OK;
    }
    bool full = n->nkids > 2;
    char em = full ? v[3].v.s.p[0] : 'N', erm = full ? v[5].v.s.p[0] : 'N';
    const sl_value *ed = full ? &v[4] : NULL, *erd = full ? &v[6] : NULL;
    json_t *j = jparse(&v[0]);
    if (!j) return jfallback(n, cx, erm, erd, 6, "the text is not JSON", out);
    jpath_res r;
    jp_eval(v[1].v.s.p, v[1].v.s.len, j, &r);
    int rc;
    char why[200];
    if (r.err[0] && r.strict) {
        snprintf(why, sizeof why, "%s", r.err);
        rc = jfallback(n, cx, erm, erd, 6, why, out);
    } else if (r.n == 0 || (r.n == 1 && json_is_null(r.items[0]))) {
        rc = jfallback(n, cx, r.n ? 'N' : em, ed, 4, "the path selects no item", out);
    } else if (r.n > 1 || !jscalar(r.items[0])) {
        rc = jfallback(n, cx, erm, erd, 6, r.n > 1 ? "the path selects more than one item"
                       : "the path selects an object or array, not a scalar", out);
    } else if (!jconvert(n, cx, r.items[0], n->type, out)) {
        snprintf(why, sizeof why, "the item cannot be read as %s", sl_type_name(n->type));
        rc = jfallback(n, cx, erm, erd, 6, why, out);
    } else {
        rc = SL_OK;
    }
    json_decref(j);
    return rc;
}

/* ---- JSON_QUERY ---------------------------------------------------------------------- */

/* JSON_QUERY(s, path) and SL_JSON_QUERY(s, path, wrapper 'WITHOUT' | 'UNCONDITIONAL' |
 * 'CONDITIONAL', on empty, on error: 'NULL' | 'ERROR' | 'EMPTY ARRAY' | 'EMPTY OBJECT'). */
static int jq_fallback(const node *n, sl_fnx_cx *cx, const sl_value *mode, const char *why,
                       sl_value *out)
{
    const char *m = mode ? mode->v.s.p : "NULL";
    size_t ml = mode ? mode->v.s.len : 4;
    if (ml >= 5 && !strncmp(m, "ERROR", 5)) return sl_fnx_err(n, cx, "JSON_QUERY: %s", why);
    if (ml == 11 && !strncmp(m, "EMPTY ARRAY", 11)) {
        fnx_set_s(out, "[]", 2);
        return SL_OK;
    }
    if (ml == 12 && !strncmp(m, "EMPTY OBJECT", 12)) {
        fnx_set_s(out, "{}", 2);
        return SL_OK;
    }
    *out = (sl_value){.isnull = true};
    return SL_OK;
}

static int fx_json_query(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (v[0].isnull || v[1].isnull) {
        *out = (sl_value){.isnull = true};
        return SL_OK;
    }
    bool full = n->nkids > 2;
    char wrap = full ? v[2].v.s.p[0] : 'W';
    const sl_value *em = full ? &v[3] : NULL, *erm = full ? &v[4] : NULL;
    json_t *j = jparse(&v[0]);
    if (!j) return jq_fallback(n, cx, erm, "the text is not JSON", out);
    jpath_res r;
    jp_eval(v[1].v.s.p, v[1].v.s.len, j, &r);
    int rc = SL_OK;
    jout o = {.a = cx->scratch};
    if (r.err[0] && r.strict) {
        rc = jq_fallback(n, cx, erm, r.err, out);
    } else if (r.n == 0) {
        rc = jq_fallback(n, cx, em, "the path selects no item", out);
    } else if (wrap == 'U' || (wrap == 'C' && (r.n > 1 || jscalar(r.items[0])))) {
        jput(&o, "[", 1);
        for (int i = 0; i < r.n; i++) {
            if (i) jput(&o, ",", 1);
            jput_json(&o, r.items[i]);
        }
        jput(&o, "]", 1);
        rc = jresult(n, cx, &o, out);
    } else if (r.n > 1 || jscalar(r.items[0])) {
        rc = jq_fallback(n, cx, erm, r.n > 1 ? "the path selects more than one item (use WITH "
                         "WRAPPER)" : "the path selects a scalar (use WITH WRAPPER)", out);
    } else {
        jput_json(&o, r.items[0]);
        rc = jresult(n, cx, &o, out);
    }
    json_decref(j);
    return rc;
}

/* ---- JSON_STRING, JSON_OBJECT, JSON_ARRAY -------------------------------------------- */

static bool is_json_ctor(const node *k)
{
    return k->op == N_FNX && (!strcmp(k->fx->name, "SL_JSON_OBJECT") ||
                              !strcmp(k->fx->name, "SL_JSON_ARRAY"));
}

/* A value as JSON (strings quoted; a JSON_OBJECT / JSON_ARRAY argument as it is). */
static void jput_value(jout *o, const node *k, const sl_value *v)
{
    char buf[64];
    if (v->isnull) {
        jputs(o, "null");
        return;
    }
    switch (k->type) {
    case SL_T_BOOLEAN: jputs(o, v->v.i ? "true" : "false"); break;
    case SL_T_DOUBLE: jput_double(o, v->v.d); break;
    case SL_T_FLOAT: /* Float.toString's digits */
        sl_value_format(buf, sizeof buf, v, SL_T_FLOAT);
        jputs(o, buf);
        break;
    case SL_T_TINYINT:
    case SL_T_SMALLINT:
        snprintf(buf, sizeof buf, "%lld", (long long)v->v.i);
        jputs(o, buf);
        break;
    case SL_T_STRING:
        if (is_json_ctor(k)) jput(o, v->v.s.p, v->v.s.len);
        else jput_str(o, v->v.s.p, v->v.s.len);
        break;
    case SL_T_TIMESTAMP:
        sl_value_format(buf, sizeof buf, v, SL_T_TIMESTAMP);
        jput_str(o, buf, strlen(buf));
        break;
    default:
        if (sl_type_is_classic(k->type) && k->type != SL_T_BYTES) {
            snprintf(buf, sizeof buf, "%lld", (long long)v->v.i);
            jputs(o, buf);
        } else {
            char tmp[512];
            int len = sl_value_format_dt(tmp, sizeof tmp, v, k->dt ? k->dt : sl_dtype_basic(k->type));
            jput_str(o, tmp, (size_t)SL_MIN(len, (int)sizeof tmp - 1));
        }
        break;
    }
}

static int fx_json_string(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    if (v[0].isnull) {
        *out = (sl_value){.isnull = true};
        return SL_OK;
    }
    jout o = {.a = cx->scratch};
    jput_value(&o, n->kids[0], &v[0]);
    return jresult(n, cx, &o, out);
}

/* SL_JSON_OBJECT('NULL' | 'ABSENT', k1, v1, ...): a NULL key is an error. */
static int fx_json_object(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    bool absent = v[0].v.s.p[0] == 'A';
    jout o = {.a = cx->scratch};
    jput(&o, "{", 1);
    bool first = true;
    for (int i = 1; i + 1 < n->nkids; i += 2) {
        if (v[i].isnull) return sl_fnx_err(n, cx, "JSON_OBJECT: key %d is NULL", (i + 1) / 2);
        if (v[i + 1].isnull && absent) continue;
        if (!first) jput(&o, ",", 1);
        first = false;
        jput_str(&o, v[i].v.s.p, v[i].v.s.len);
        jput(&o, ":", 1);
        jput_value(&o, n->kids[i + 1], &v[i + 1]);
    }
    jput(&o, "}", 1);
    return jresult(n, cx, &o, out);
}

/* SL_JSON_ARRAY('NULL' | 'ABSENT', v...). */
static int fx_json_array(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx)
{
    bool absent = v[0].v.s.p[0] == 'A';
    jout o = {.a = cx->scratch};
    jput(&o, "[", 1);
    bool first = true;
    for (int i = 1; i < n->nkids; i++) {
        if (v[i].isnull && absent) continue;
        if (!first) jput(&o, ",", 1);
        first = false;
        jput_value(&o, n->kids[i], &v[i]);
    }
    jput(&o, "]", 1);
    return jresult(n, cx, &o, out);
}

/* ---- the table and typing ----------------------------------------------------------- */

#define MANY SL_EXPR_MAX_ARGS
static const sl_fnx json_table[] = {
    {"SL_IS_JSON", 2, 2, "s", 'B', false, fx_is_json},
    {"JSON_EXISTS", 2, 2, "s", 'B', false, fx_json_exists},
    {"SL_JSON_EXISTS", 3, 3, "s", 'B', false, fx_json_exists},
    {"JSON_VALUE", 2, 2, "s", 'S', false, fx_json_value},
    {"SL_JSON_VALUE", 7, 7, "a", 'S', false, fx_json_value},
    {"JSON_QUERY", 2, 2, "s", 'S', false, fx_json_query},
    {"SL_JSON_QUERY", 5, 5, "s", 'S', false, fx_json_query},
    {"JSON_STRING", 1, 1, "a", 'S', false, fx_json_string},
    {"SL_JSON_OBJECT", 1, MANY, "a", 'S', false, fx_json_object},
    {"SL_JSON_ARRAY", 1, MANY, "a", 'S', false, fx_json_array},
};

const sl_fnx *sl_json_fn_find(const char *name)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(json_table); i++)
        if (!strcasecmp(name, json_table[i].name)) return &json_table[i];
    return NULL;
}

static const char *kn(const node *k) { return k->dt ? k->dt->text : sl_type_name(k->type); }

static bool str_or_null(const node *k) { return k->type == SL_T_STRING || k->type == SL_T_NULL; }

static bool lit_str(const node *k) { return k->op == N_LIT && k->type == SL_T_STRING; }

int sl_json_fn_type(node *n, char *why, size_t whylen)
{
    const char *name = n->fx->name;
    if (!strcmp(name, "SL_JSON_OBJECT") || !strcmp(name, "SL_JSON_ARRAY")) {
        if (!lit_str(n->kids[0]))
            return sl_seterr(why, whylen, "%s: the first argument is 'NULL' or 'ABSENT'", name);
        bool obj = name[8] == 'O';
        if (obj && n->nkids % 2 == 0)
            return sl_seterr(why, whylen, "JSON_OBJECT takes KEY k VALUE v pairs");
        for (int i = 1; i < n->nkids; i++) {
            const node *k = n->kids[i];
            if (obj && i % 2 == 1 && !str_or_null(k))
                return sl_seterr(why, whylen, "JSON_OBJECT: a key must be a STRING, got %s", kn(k));
            if (k->type == SL_T_BYTES || (!sl_type_is_classic(k->type) && k->type != SL_T_NULL &&
                                          k->type != SL_T_DECIMAL && k->type != SL_T_DATE &&
                                          k->type != SL_T_TIME))
                return sl_seterr(why, whylen, "%s cannot take a value of type %s yet",
                                 obj ? "JSON_OBJECT" : "JSON_ARRAY", kn(k));
        }
        n->type = SL_T_STRING;
        return SL_OK;
    }
    if (!strcmp(name, "JSON_STRING")) {
        const node *k = n->kids[0];
        if (k->type == SL_T_BYTES || sl_type_is_nested(k->type))
            return sl_seterr(why, whylen, "JSON_STRING cannot take a value of type %s yet", kn(k));
        n->type = SL_T_STRING;
        return SL_OK;
    }
    for (int i = 0; i < 2; i++)
        if (!str_or_null(n->kids[i]))
            return sl_seterr(why, whylen, "%s needs a STRING as argument %d, got %s",
                             name[0] == 'S' ? name + 3 : name, i + 1, kn(n->kids[i]));
    if (!strcmp(name, "SL_JSON_VALUE")) {
        if (!lit_str(n->kids[2])) return sl_seterr(why, whylen, "JSON_VALUE: RETURNING takes a type");
        const char *t = n->kids[2]->lit.v.s.p;
        sl_type rt;
        if (!strcasecmp(t, "STRING") || !strcasecmp(t, "VARCHAR")) rt = SL_T_STRING;
        else if (!strcasecmp(t, "INT") || !strcasecmp(t, "INTEGER")) rt = SL_T_INT;
        else if (!strcasecmp(t, "BIGINT")) rt = SL_T_BIGINT;
        else if (!strcasecmp(t, "DOUBLE")) rt = SL_T_DOUBLE;
        else if (!strcasecmp(t, "BOOLEAN")) rt = SL_T_BOOLEAN;
        else if (!strncasecmp(t, "DECIMAL", 7) || !strncasecmp(t, "NUMERIC", 7) ||
                 !strncasecmp(t, "DEC", 3) || !strcasecmp(t, "DATE")) {
            char derr[200];
            if (sl_dtype_parse(t, &n->dt, derr, sizeof derr) != SL_OK)
                return sl_seterr(why, whylen, "JSON_VALUE ... RETURNING %s: %s", t, derr);
            n->dt = sl_dtype_nullable(n->dt, false);
            rt = n->dt->kind;
        } else return sl_seterr(why, whylen, "JSON_VALUE ... RETURNING %s is not supported (STRING, "
                              "INT, BIGINT, DOUBLE, BOOLEAN, DECIMAL(p, s) and DATE are)", t);
        for (int i = 4; i <= 6; i += 2) {
            const node *d = n->kids[i];
            if (d->type == SL_T_DECIMAL && (rt == SL_T_DECIMAL || rt == SL_T_DOUBLE))
                continue; /* converted when it is used (jfallback) */
            if (d->type != SL_T_NULL && d->type != rt &&
                !(rt == SL_T_BIGINT && d->type == SL_T_INT) &&
                !(rt == SL_T_DOUBLE && (d->type == SL_T_INT || d->type == SL_T_BIGINT)))
                return sl_seterr(why, whylen, "JSON_VALUE: the DEFAULT of ON %s is %s, not the "
                                 "RETURNING type %s", i == 4 ? "EMPTY" : "ERROR", kn(d),
                                 n->dt ? n->dt->text : sl_type_name(rt));
        }
        n->type = rt;
        return SL_OK;
    }
    n->type = !strcmp(name, "SL_IS_JSON") || strstr(name, "JSON_EXISTS") ? SL_T_BOOLEAN : SL_T_STRING;
    return SL_OK;
}
