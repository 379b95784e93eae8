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

void sl_fmt_json_fields(sl_buf *out, const kf_codec *c, const sl_row *row)
{
    for (int i = 0; i < c->n && c->slot[i] < row->n; i++) {
        if (i) sl_buf_putc(out, ',');
        sl_buf_putc(out, '"');
        sl_json_escape(out, c->name[i], c->namelen[i]);
        sl_buf_put(out, "\":", 2);
        sl_fmt_json_value(out, &row->vals[c->slot[i]], c->type[i]);
    }
}

void sl_fmt_json_client_row(sl_buf *out, const sl_row *row, const sl_schema *s)
{
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
        } else {
            char tmp[64];
            int n = t == SL_T_TIMESTAMP ? sl_ts_text(tmp, sizeof tmp, v->v.i, SL_TS_SPACE)
                                        : sl_value_format(tmp, sizeof tmp, v, t);
            if (n < 0) n = 0;
            if ((size_t)n >= sizeof tmp) n = (int)sizeof tmp - 1;
            sl_json_escape(out, tmp, (size_t)n);
        }
        sl_buf_putc(out, '"');
    }
    sl_buf_putc(out, ']');
}
