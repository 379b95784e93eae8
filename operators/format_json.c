/*
 * format_json.c -- the JSON row encoders (see format_json.h).
 *
 * Numbers and booleans take their text from sl_value_format (core/row.c,
 * Java's forms), timestamps from sl_ts_text (lib/text.c); strings go
 * through the one escaper and bytes through the one base64, each a single
 * call below. Nothing here allocates beyond growing the caller's buffer.
 */
#include <math.h>
#include <string.h>

#include "base64.h"
#include "decimal.h"
#include "format_json.h"
#include "json_escape.h"
#include "text.h"

/* A number or boolean as Java writes it (never longer than 63 chars). */
static void put_plain(sl_buf *b, const sl_value *v, sl_type t)
{
    char tmp[64];
    int n = sl_value_format(tmp, sizeof tmp, v, t);
    if (n > 0) sl_buf_put(b, tmp, SL_MIN((size_t)n, sizeof tmp - 1));
}

/* The text of a value as sl_value_format_dt writes it, appended. */
static void put_text_dt(sl_buf *b, const sl_value *v, const sl_dtype *dt)
{
    char *room = sl_buf_room(b, 64);
    int n = sl_value_format_dt(room, b->cap - b->len, v, dt);
    if ((size_t)n >= b->cap - b->len) {
        room = sl_buf_room(b, (size_t)n + 1);
        n = sl_value_format_dt(room, b->cap - b->len, v, dt);
    }
    sl_buf_added(b, (size_t)n);
}

/* TIME / TIMESTAMP's fraction for the json format: the digits up to the
 * last non-zero one (none when it is zero). */
static void put_fraction(sl_buf *out, int64_t ms_of_sec, int32_t nano)
{
    int64_t ns = ms_of_sec * 1000000 + nano;
    if (!ns) return;
    char f[16];
    int n = snprintf(f, sizeof f, ".%09lld", (long long)ns);
    while (n > 1 && f[n - 1] == '0') n--;
    sl_buf_put(out, f, (size_t)n);
}

/* json.timestamp-format.standard = ISO-8601: the blank between the date
 * and the time written from `from` on becomes a 'T'. */
static void iso_t(sl_buf *out, size_t from)
{
    for (size_t k = from; k < out->len; k++)
        if (out->p[k] == ' ') {
            out->p[k] = 'T';
            return;
        }
}

/* The options of callers without a table (the csv format's nested text):
 * a NULL MAP key is written as null, as before the options. */
static const kf_json_opts plain_opts = {.map_null = KF_MAPNULL_LITERAL, .null_literal = "null"};

/* A TIMESTAMP(p) / TIMESTAMP_LTZ(p) string written from `from` on (its
 * closing quote last) into the json format's form, as Flink writes it:
 * ISO-8601's 'T' (json.timestamp-format.standard), and for a TIMESTAMP_LTZ
 * -- an instant, written in UTC whatever the session zone -- a trailing 'Z'
 * in either standard (`2026-01-01 00:00:00.5Z`, `2026-01-01T00:00:00.5Z`).
 * Callers without a table (plain_opts) keep the bare text. */
static void ts_form(sl_buf *out, size_t from, const sl_dtype *dt, const kf_json_opts *o)
{
    if (o->ts_iso) iso_t(out, from);
    if (dt->variant == SL_DV_LTZ && o != &plain_opts && out->len > from) {
        out->len--; /* the closing quote */
        sl_buf_put(out, "Z\"", 2);
    }
}

static int put_value(sl_buf *out, const sl_value *v, const sl_dtype *dt, const kf_json_opts *o,
                     char *why, size_t whylen);

void sl_fmt_json_value_dt(sl_buf *out, const sl_value *v, const sl_dtype *dt)
{
    put_value(out, v, dt, &plain_opts, NULL, 0);
}

static int put_value(sl_buf *out, const sl_value *v, const sl_dtype *dt, const kf_json_opts *o,
                     char *why, size_t whylen)
{
    if (v->isnull || (sl_type_is_classic(dt->kind) && !sl_dtype_has_nanos(dt))) {
        size_t at = out->len;
        sl_fmt_json_value(out, v, dt->kind);
        if (dt->kind == SL_T_TIMESTAMP && !v->isnull) ts_form(out, at, dt, o);
        return SL_OK;
    }
    char tmp[64];
    switch (dt->kind) {
    case SL_T_DATE:
        sl_buf_putc(out, '"');
        put_text_dt(out, v, dt);
        sl_buf_putc(out, '"');
        break;
    case SL_T_TIME: { /* HH:mm:ss[.fraction] */
        int64_t ms = v->v.i;
        int n = snprintf(tmp, sizeof tmp, "\"%02d:%02d:%02d", (int)(ms / 3600000),
                         (int)(ms / 60000 % 60), (int)(ms / 1000 % 60));
        sl_buf_put(out, tmp, (size_t)n);
        put_fraction(out, ms % 1000, dt->p > 3 ? v->v.ts.nano : 0);
        sl_buf_putc(out, '"');
        break;
    }
    case SL_T_TIMESTAMP: { /* p > 3: yyyy-MM-dd HH:mm:ss[.fraction] */
        int64_t msec = (v->v.i % 1000 + 1000) % 1000; /* the ms within the second */
        int n = sl_ts_text(tmp, sizeof tmp, v->v.i - msec, SL_TS_SQL);
        size_t at = out->len;
        sl_buf_putc(out, '"');
        sl_buf_put(out, tmp, SL_MIN((size_t)n, sizeof tmp - 1));
        put_fraction(out, msec, v->v.ts.nano);
        sl_buf_putc(out, '"');
        ts_form(out, at, dt, o);
        break;
    }
    case SL_T_ARRAY:
    case SL_T_MAP:
    case SL_T_MULTISET:
    case SL_T_ROW: {
        sl_nested_reader r;
        sl_value e, mv;
        uint32_t n = sl_nested_open(&r, dt, v);
        bool arr = dt->kind == SL_T_ARRAY;
        sl_buf_putc(out, arr ? '[' : '{');
        bool any = false;
        for (uint32_t i = 0; i < n && sl_nested_next(&r, &e, &mv); i++) {
            const sl_dtype *et = sl_nested_elem_type(dt, i);
            if (!arr && dt->kind != SL_T_ROW && e.isnull) { /* json.map-null-key.mode */
                if (o->map_null == KF_MAPNULL_DROP) continue;
                if (o->map_null == KF_MAPNULL_FAIL)
                    return sl_seterr(why, whylen, "a %s has a NULL key, which the json format "
                                     "cannot write (set 'json.map-null-key.mode' to 'DROP' or "
                                     "'LITERAL')", dt->text);
            }
            if (any) sl_buf_putc(out, ',');
            any = true;
            int rc = SL_OK;
            if (dt->kind == SL_T_ROW) {
                sl_buf_putc(out, '"');
                sl_json_escape(out, dt->names[i], strlen(dt->names[i]));
                sl_buf_put(out, "\":", 2);
                rc = put_value(out, &e, et, o, why, whylen);
            } else if (arr) {
                rc = put_value(out, &e, et, o, why, whylen);
            } else { /* a key as its text, then the value */
                sl_buf_putc(out, '"');
                if (e.isnull) {
                    sl_json_escape(out, o->null_literal, strlen(o->null_literal));
                } else {
                    size_t at = out->len;
                    put_text_dt(out, &e, et);
                    if (et->kind == SL_T_STRING) { /* escape the raw text */
                        out->len = at;
                        sl_json_escape(out, e.v.s.p, e.v.s.len);
                    }
                }
                sl_buf_put(out, "\":", 2);
                rc = put_value(out, &mv, dt->kind == SL_T_MAP ? dt->val : sl_dtype_basic(SL_T_INT),
                               o, why, whylen);
            }
            if (rc != SL_OK) return rc;
        }
        sl_buf_putc(out, arr ? ']' : '}');
        break;
    }
    case SL_T_DECIMAL:
        if (o->dec_plain) { /* json.encode.decimal-as-plain-number: BigDecimal.toPlainString */
            char d[SL_DEC_TEXT_MAX + 1];
            sl_dec x = {v->v.dec.lo, v->v.dec.hi};
            int n = sl_dec_format(d, sizeof d, x, dt->s);
            sl_buf_put(out, d, (size_t)n);
            break;
        }
        put_text_dt(out, v, dt); /* BigDecimal.toString, as Jackson writes it: 1E-7, 0E-10 */
        break;
    case SL_T_FLOAT:
        if (!isfinite(v->v.d)) {
            sl_buf_putc(out, '"');
            put_text_dt(out, v, dt);
            sl_buf_putc(out, '"');
            break;
        }
        put_text_dt(out, v, dt);
        break;
    case SL_T_INTERVAL_YM: /* Flink's json format has none: months, milliseconds */
    case SL_T_INTERVAL_DT: {
        int n = snprintf(tmp, sizeof tmp, "%lld", (long long)v->v.i);
        sl_buf_put(out, tmp, (size_t)n);
        break;
    }
    default: put_text_dt(out, v, dt); /* TINYINT, SMALLINT: numbers */
    }
    return SL_OK;
}

void sl_fmt_json_value(sl_buf *out, const sl_value *v, sl_type t)
{
    if (v->isnull) {
        sl_buf_put(out, "null", 4);
        return;
    }
    char tmp[64];
    switch (t) {
    case SL_T_STRING:
        sl_buf_putc(out, '"');
        sl_json_escape(out, v->v.s.p, v->v.s.len);
        sl_buf_putc(out, '"');
        break;
    case SL_T_BYTES:
        sl_buf_putc(out, '"');
        sl_base64_encode(out, v->v.s.p, v->v.s.len);
        sl_buf_putc(out, '"');
        break;
    case SL_T_TIMESTAMP: {
        int n = sl_ts_text(tmp, sizeof tmp, v->v.i, SL_TS_SQL);
        sl_buf_putc(out, '"');
        sl_buf_put(out, tmp, SL_MIN((size_t)n, sizeof tmp - 1));
        sl_buf_putc(out, '"');
        break;
    }
    case SL_T_DOUBLE:
        if (!isfinite(v->v.d)) { /* "NaN", "Infinity", "-Infinity" */
            sl_buf_putc(out, '"');
            put_plain(out, v, t);
            sl_buf_putc(out, '"');
            break;
        }
        put_plain(out, v, t);
        break;
    default: put_plain(out, v, t);
    }
}

int sl_fmt_json_fields(sl_buf *out, const kf_codec *c, const sl_row *row, char *why,
                       size_t whylen)
{
    const kf_json_opts *o = c->json.null_literal ? &c->json : &plain_opts;
    for (int i = 0; i < c->n && c->slot[i] < row->n; i++) {
        if (i) sl_buf_putc(out, ',');
        sl_buf_putc(out, '"');
        sl_json_escape(out, c->name[i], c->namelen[i]);
        sl_buf_put(out, "\":", 2);
        if (put_value(out, &row->vals[c->slot[i]], c->dt[i], o, why, whylen) != SL_OK) {
            char inner[300];
            snprintf(inner, sizeof inner, "%s", why ? why : "");
            return sl_seterr(why, whylen, "column '%s': %s", c->name[i], inner);
        }
    }
    return SL_OK;
}

void sl_fmt_json_client_row(sl_buf *out, const sl_row *row, const sl_row *inst,
                            const sl_schema *s)
{
    if (!inst) inst = row;
    const char *kind = sl_rowkind_short(row->kind);
    sl_buf_put(out, "[\"", 2);
    sl_buf_put(out, kind, strlen(kind));
    sl_buf_putc(out, '"');
    for (int i = 0; i < s->n && i < row->n; i++) {
        const sl_value *v = &row->vals[i];
        sl_type t = s->fields[i].type;
        if (v->isnull) {
            sl_buf_put(out, ",null", 5);
            continue;
        }
        sl_buf_put(out, ",\"", 2);
        if (t == SL_T_STRING || t == SL_T_BYTES) {
            sl_json_escape(out, v->v.s.p, v->v.s.len);
        } else if (sl_type_is_classic(t) && !sl_dtype_has_nanos(s->fields[i].dt)) {
            char tmp[64];
            int n = t == SL_T_TIMESTAMP ? sl_ts_text(tmp, sizeof tmp, v->v.i, SL_TS_SPACE)
                                        : sl_value_format(tmp, sizeof tmp, v, t);
            if (n < 0) n = 0;
            if ((size_t)n >= sizeof tmp) n = (int)sizeof tmp - 1;
            sl_json_escape(out, tmp, (size_t)n);
        } else { /* the print text (nested values can be long: format, then escape) */
            sl_buf txt = SL_BUF_INIT;
            put_text_dt(&txt, v, s->fields[i].dt);
            sl_json_escape(out, txt.p, txt.len);
            sl_buf_free(&txt);
        }
        sl_buf_putc(out, '"');
    }
    /* nested values and TIMESTAMP_LTZ instants also as JSON (Flink's gateway rows
     * carry them so): a trailing {"json": {"<column index>": value}}, ISO-8601
     * timestamps (a TIMESTAMP_LTZ in UTC with 'Z'), MAP keys as text */
    static const kf_json_opts gw_opts = {.map_null = KF_MAPNULL_LITERAL, .null_literal = "null",
                                         .ts_iso = true};
    bool open = false;
    for (int i = 0; i < s->n && i < row->n && i < inst->n; i++) {
        const sl_dtype *dt = s->fields[i].dt;
        bool ltz = s->fields[i].type == SL_T_TIMESTAMP && dt && dt->variant == SL_DV_LTZ;
        if ((!sl_type_is_nested(s->fields[i].type) && !ltz) || inst->vals[i].isnull) continue;
        char key[24];
        int kn = snprintf(key, sizeof key, "%s\"%d\":", open ? "," : ",{\"json\":{", i);
        sl_buf_put(out, key, (size_t)kn);
        open = true;
        put_value(out, &inst->vals[i], dt, &gw_opts, NULL, 0);
    }
    if (open) sl_buf_put(out, "}}", 2);
    sl_buf_putc(out, ']');
}
