/*
 * format_csv.c -- the CSV row encoder (see format_csv.h). A string is
 * scanned once for the characters that force quoting; a quoted one is
 * copied in runs, each quote ending a run and starting the next, so the
 * quote is written twice.
 */
#include <string.h>

#include "base64.h"
#include "format_csv.h"
#include "format_json.h"
#include "text.h"

static void put_string(sl_buf *out, const char *s, size_t n)
{
    bool quote = n == 0;
    for (size_t i = 0; i < n && !quote; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n') quote = true;
    if (!quote) {
        sl_buf_put(out, s, n);
        return;
    }
    sl_buf_putc(out, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '"') continue;
        sl_buf_put(out, s + run, i + 1 - run); /* through the quote */
        run = i;                        /* the quote again: doubled */
    }
    sl_buf_put(out, s + run, n - run);
    sl_buf_putc(out, '"');
}

void sl_fmt_csv_value(sl_buf *out, const sl_value *v, sl_type t)
{
    if (v->isnull) return;
    char tmp[64];
    int n;
    switch (t) {
    case SL_T_STRING: put_string(out, v->v.s.p, v->v.s.len); return;
    case SL_T_BYTES: sl_base64_encode(out, v->v.s.p, v->v.s.len); return;
    case SL_T_TIMESTAMP: n = sl_ts_text(tmp, sizeof tmp, v->v.i, SL_TS_SQL); break;
    default: n = sl_value_format(tmp, sizeof tmp, v, t);
    }
    if (n > 0) sl_buf_put(out, tmp, SL_MIN((size_t)n, sizeof tmp - 1));
}

/* A value of the further scalar types as the json format writes it, without
 * the quotes of the date and time texts (which hold no comma or quote). */
static void put_scalar_dt(sl_buf *out, const sl_value *v, const sl_dtype *dt)
{
    if (v->isnull) return;
    size_t at = out->len;
    sl_fmt_json_value_dt(out, v, dt);
    if (out->len - at >= 2 && out->p[at] == '"') {
        memmove(out->p + at, out->p + at + 1, out->len - at - 2);
        out->len -= 2;
    }
}

void sl_fmt_csv_fields(sl_buf *out, const kf_codec *c, const sl_row *row)
{
    for (int i = 0; i < c->n && c->slot[i] < row->n; i++) {
        if (i) sl_buf_putc(out, ',');
        const sl_dtype *dt = c->dt[i];
        if (sl_type_is_classic(dt->kind) && !sl_dtype_has_nanos(dt))
            sl_fmt_csv_value(out, &row->vals[c->slot[i]], c->type[i]);
        else
            put_scalar_dt(out, &row->vals[c->slot[i]], dt);
    }
}
