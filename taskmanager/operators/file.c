/*
 * file.c -- the `file` sink: rows as JSON lines or CSV, one file per subtask.
 *
 *   path     a directory, created (with its parents) when missing
 *   format   json | csv
 *
 * Subtask i writes `<path>/part-<i>`, replacing what a previous run left.
 * The encodings are Flink's json and csv formats:
 *   json  one object per line, keys = column names in schema order:
 *         {"id":1,"name":"a","ts":"2026-01-01 00:00:00.02"}; a row whose
 *         kind is not +I also carries "op":"-U" (last key). TIMESTAMP uses
 *         Flink's SQL form (date, space, time, fraction without trailing
 *         zeros), DOUBLE Java's Double.toString (non-finite values as the
 *         strings "NaN", "Infinity"), BYTES base64, NULL null.
 *   csv   RFC-4180: a field holding a comma, quote, CR or LF is quoted with
 *         inner quotes doubled; NULL is an empty field, an empty string is
 *         "" so the two stay apart; no header. CSV carries no row kind, so
 *         a row that is not +I fails the task (as Flink refuses an updating
 *         stream into this format) rather than silently losing retractions.
 *
 * Output goes through a 64 KiB buffer owned by the subtask and reaches the
 * file with one write(2) per full buffer; end of input writes the rest and
 * fsyncs, so a finished job's files are complete on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobgraph.h"
#include "operator.h"

#define FILE_BUF (64 * 1024)

typedef enum { FMT_JSON = 0, FMT_CSV } file_format;

typedef struct file_plan {
    char *path;
    file_format format;
} file_plan;

typedef struct file_state {
    int fd;
    char *fname;    /* "<path>/part-<i>" */
    char *buf;      /* FILE_BUF bytes */
    size_t len;     /* 0 <= len <= FILE_BUF */
    char **keys;    /* json: per column, the escaped `"name":` */
    size_t *keylen;
    int ncols;
} file_state;

/* ---- plan ------------------------------------------------------------- */

static void file_plan_free(void *p)
{
    file_plan *pl = p;
    if (!pl) return;
    free(pl->path);
    free(pl);
}

static void *file_plan_new(const sl_vertex *v, const sl_schema *in, sl_schema *out, char *err,
                           size_t errlen)
{
    json_t *jp = json_object_get(v->config, "path");
    if (!json_is_string(jp) || json_string_value(jp)[0] == '\0') {
        sl_seterr(err, errlen, "vertex '%s': option 'path' (the output directory) is required",
                  v->id);
        return NULL;
    }
    const char *fmt = sl_vconf_str(v, "format", NULL);
    file_format f;
    if (!fmt) {
        sl_seterr(err, errlen, "vertex '%s': option 'format' (json or csv) is required", v->id);
        return NULL;
    }
    if (!strcasecmp(fmt, "json")) f = FMT_JSON;
    else if (!strcasecmp(fmt, "csv")) f = FMT_CSV;
    else {
        sl_seterr(err, errlen, "vertex '%s': option 'format': '%s' is not json or csv", v->id, fmt);
        return NULL;
    }
    file_plan *pl = sl_calloc(1, sizeof *pl);
    pl->path = sl_strdup(json_string_value(jp));
    pl->format = f;
    return pl;
}

/* ---- output buffer ---------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return SL_ERR;
        }
        p += w;
        n -= (size_t)w;
    }
    return SL_OK;
}

static int out_flush(sl_op *op, file_state *st)
{
    if (st->len == 0) return SL_OK;
    if (write_all(st->fd, st->buf, st->len) != SL_OK)
        return sl_op_fail(op, "file sink: cannot write '%s': %s", st->fname, strerror(errno));
    st->len = 0;
    return SL_OK;
}

static int out_put(sl_op *op, file_state *st, const char *p, size_t n)
{
    if (n > FILE_BUF - st->len) {
        if (out_flush(op, st) != SL_OK) return SL_ERR;
        if (n > FILE_BUF) {
            if (write_all(st->fd, p, n) != SL_OK)
                return sl_op_fail(op, "file sink: cannot write '%s': %s", st->fname,
                                  strerror(errno));
            return SL_OK;
        }
    }
    memcpy(st->buf + st->len, p, n);
    st->len += n;
    return SL_OK;
}

static inline int out_c(sl_op *op, file_state *st, char c)
{
    if (st->len < FILE_BUF) {
        st->buf[st->len++] = c;
        return SL_OK;
    }
    return out_put(op, st, &c, 1);
}

/* ---- value encodings -------------------------------------------------- */

/* JSON string contents (without the quotes). */
static int put_json_escaped(sl_op *op, file_state *st, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        if (out_put(op, st, s + run, i - run)) return SL_ERR;
        run = i + 1;
        char esc[6] = {'\\', 0};
        size_t en = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            en = 6;
        }
        if (out_put(op, st, esc, en)) return SL_ERR;
    }
    return out_put(op, st, s + run, n - run);
}

static int put_base64(sl_op *op, file_state *st, const unsigned char *p, size_t n)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char chunk[64];
    size_t cn = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t x = (uint32_t)p[i] << 16;
        if (i + 1 < n) x |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) x |= p[i + 2];
        chunk[cn++] = b64[x >> 18 & 63];
        chunk[cn++] = b64[x >> 12 & 63];
        chunk[cn++] = i + 1 < n ? b64[x >> 6 & 63] : '=';
        chunk[cn++] = i + 2 < n ? b64[x & 63] : '=';
        if (cn == sizeof chunk) {
            if (out_put(op, st, chunk, cn)) return SL_ERR;
            cn = 0;
        }
    }
    return out_put(op, st, chunk, cn);
}

/* Flink's SQL timestamp text: "2026-01-01 00:00:00.02". */
static size_t sql_timestamp(char *dst, size_t cap, int64_t ms)
{
    int n = sl_ts_format(dst, cap, ms); /* ...THH:MM:SS.mmm */
    if (n < 0 || (size_t)n >= cap) return 0;
    char *t = strchr(dst, 'T');
    if (t) *t = ' ';
    size_t len = (size_t)n;
    while (dst[len - 1] == '0') len--;
    if (dst[len - 1] == '.') len--;
    dst[len] = '\0';
    return len;
}

/* Values whose text needs no quoting or escaping in either format. */
static int put_plain(sl_op *op, file_state *st, const sl_value *v, sl_type t)
{
    char buf[64];
    int n = sl_value_format(buf, sizeof buf, v, t);
    if (n < 0 || (size_t)n >= sizeof buf) return sl_op_fail(op, "file sink: value too long");
    return out_put(op, st, buf, (size_t)n);
}

static int put_json_value(sl_op *op, file_state *st, const sl_value *v, sl_type t)
{
    char buf[64];
    if (v->isnull) return out_put(op, st, "null", 4);
    switch (t) {
    case SL_T_STRING:
        if (out_c(op, st, '"') || put_json_escaped(op, st, v->v.s.p, v->v.s.len)) return SL_ERR;
        return out_c(op, st, '"');
    case SL_T_BYTES:
        if (out_c(op, st, '"') || put_base64(op, st, (const unsigned char *)v->v.s.p, v->v.s.len))
            return SL_ERR;
        return out_c(op, st, '"');
    case SL_T_TIMESTAMP: {
        size_t n = sql_timestamp(buf + 1, sizeof buf - 2, v->v.i);
        buf[0] = '"';
        buf[n + 1] = '"';
        return out_put(op, st, buf, n + 2);
    }
    case SL_T_DOUBLE:
        if (!isfinite(v->v.d)) {
            /* JSON has no NaN or Infinity: quoted, as Jackson writes them. */
            if (out_c(op, st, '"') || put_plain(op, st, v, t)) return SL_ERR;
            return out_c(op, st, '"');
        }
        return put_plain(op, st, v, t);
    default: return put_plain(op, st, v, t);
    }
}

static int put_csv_value(sl_op *op, file_state *st, const sl_value *v, sl_type t)
{
    char buf[64];
    if (v->isnull) return SL_OK;
    switch (t) {
    case SL_T_STRING: {
        const char *s = v->v.s.p;
        size_t n = v->v.s.len;
        bool quote = n == 0;
        for (size_t i = 0; i < n && !quote; i++)
            if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n') quote = true;
        if (!quote) return out_put(op, st, s, n);
        if (out_c(op, st, '"')) return SL_ERR;
        size_t run = 0;
        for (size_t i = 0; i < n; i++) {
            if (s[i] != '"') continue;
            if (out_put(op, st, s + run, i + 1 - run)) return SL_ERR; /* through the quote */
            run = i; /* the quote again: doubled */
        }
        if (out_put(op, st, s + run, n - run)) return SL_ERR;
        return out_c(op, st, '"');
    }
    case SL_T_BYTES: return put_base64(op, st, (const unsigned char *)v->v.s.p, v->v.s.len);
    case SL_T_TIMESTAMP: {
        size_t n = sql_timestamp(buf, sizeof buf, v->v.i);
        return out_put(op, st, buf, n);
    }
    default: return put_plain(op, st, v, t);
    }
}

/* ---- operator --------------------------------------------------------- */

/* mkdir -p: create path and its missing parents. */
static int make_dirs(const char *path, char *err, size_t errlen)
{
    char *p = sl_strdup(path);
    int rc = SL_OK;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rc = sl_seterr(err, errlen, "file sink: cannot create directory '%s': %s", p,
                           strerror(errno));
            break;
        }
        *s = saved;
        if (saved == '\0') break;
    }
    free(p);
    if (rc != SL_OK) return rc;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return sl_seterr(err, errlen, "file sink: cannot use directory '%s': %s", path,
                         strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return sl_seterr(err, errlen, "file sink: '%s' exists and is not a directory", path);
    return SL_OK;
}

static void file_close(sl_op *op)
{
    file_state *st = op->priv;
    if (!st) return;
    if (st->fd >= 0) {
        if (st->len && write_all(st->fd, st->buf, st->len) != SL_OK) {
            /* close() cannot fail the task; end_input has reported errors. */
        }
        close(st->fd);
    }
    for (int i = 0; st->keys && i < st->ncols; i++) free(st->keys[i]);
    free(st->keys);
    free(st->keylen);
    free(st->fname);
    free(st->buf);
    free(st);
    op->priv = NULL;
}

static int file_open(sl_op *op)
{
    const file_plan *pl = op->plan;
    file_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->fd = -1;
    if (make_dirs(pl->path, op->err, sizeof op->err) != SL_OK) return SL_ERR;
    size_t plen = strlen(pl->path);
    st->fname = sl_sprintf("%s%spart-%d", pl->path,
                           plen && pl->path[plen - 1] == '/' ? "" : "/", op->subtask);
    st->fd = open(st->fname, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (st->fd < 0)
        return sl_op_fail(op, "file sink: cannot create '%s': %s", st->fname, strerror(errno));
    st->buf = sl_malloc(FILE_BUF);

    if (pl->format == FMT_JSON && op->in) {
        /* Build each `"name":` once; column names are fixed for the job. */
        st->ncols = op->in->n;
        st->keys = sl_calloc((size_t)st->ncols + 1, sizeof *st->keys);
        st->keylen = sl_calloc((size_t)st->ncols + 1, sizeof *st->keylen);
        for (int i = 0; i < st->ncols; i++) {
            const char *name = op->in->fields[i].name;
            size_t cap = strlen(name) * 6 + 4, n = 0;
            char *k = sl_malloc(cap);
            k[n++] = '"';
            for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
                if (*c == '"' || *c == '\\') {
                    k[n++] = '\\';
                    k[n++] = (char)*c;
                } else if (*c < 0x20) {
                    n += (size_t)snprintf(k + n, cap - n, "\\u%04x", *c);
                } else {
                    k[n++] = (char)*c;
                }
            }
            k[n++] = '"';
            k[n++] = ':';
            st->keys[i] = k;
            st->keylen[i] = n;
        }
    }
    return SL_OK;
}

static int file_process(sl_op *op, int input, sl_row *row)
{
    const file_plan *pl = op->plan;
    file_state *st = op->priv;
    const sl_schema *s = op->in;
    int n = SL_MIN(row->n, s->n);
    if (pl->format == FMT_JSON) {
        if (out_c(op, st, '{')) return SL_ERR;
        for (int i = 0; i < n; i++) {
            if (i && out_c(op, st, ',')) return SL_ERR;
            if (out_put(op, st, st->keys[i], st->keylen[i])) return SL_ERR;
            if (put_json_value(op, st, &row->vals[i], s->fields[i].type)) return SL_ERR;
        }
        if (row->kind != SL_KIND_INSERT) {
            if (out_put(op, st, n ? ",\"op\":\"" : "\"op\":\"", n ? 7 : 6) ||
                out_put(op, st, sl_rowkind_short(row->kind), 2) || out_c(op, st, '"'))
                return SL_ERR;
        }
        return out_put(op, st, "}\n", 2);
    }
    if (row->kind != SL_KIND_INSERT)
        return sl_op_fail(op,
                          "file sink '%s': format csv holds inserts only, but a %s row arrived "
                          "(the input is a changelog); use format json, which records the kind",
                          st->fname, sl_rowkind_short(row->kind));
    for (int i = 0; i < n; i++) {
        if (i && out_c(op, st, ',')) return SL_ERR;
        if (put_csv_value(op, st, &row->vals[i], s->fields[i].type)) return SL_ERR;
    }
    return out_c(op, st, '\n');
}

static int file_end_input(sl_op *op)
{
    file_state *st = op->priv;
    if (out_flush(op, st) != SL_OK) return SL_ERR;
    if (fsync(st->fd) != 0)
        return sl_op_fail(op, "file sink: cannot sync '%s': %s", st->fname, strerror(errno));
    return SL_OK;
}

static const char *const file_options[] = {"path", "format", NULL};

const sl_op_def sl_op_file = {
    .name = "file",
    .flags = SL_OPF_SINK,
    .options = file_options,
    .plan = file_plan_new,
    .plan_free = file_plan_free,
    .open = file_open,
    .process = file_process,
    .end_input = file_end_input,
    .close = file_close,
};
