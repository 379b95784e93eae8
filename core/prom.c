/*
 * prom.c -- see prom.h. The server is one libmicrohttpd thread; every path
 * answers the latest published text (Flink's reporter serves /metrics, and
 * Prometheus scrapes that), with the exposition format's content type.
 * Metric names are Flink's: "flink_" + scope + "_" + name, with characters
 * outside [A-Za-z0-9_:] turned into '_', all exported as gauges, as Flink's
 * reporter does.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <microhttpd.h>
#include "buf.h"
#include "http_reply.h"
#include "http_server.h"

#include "prom.h"


struct sl_prom {
    struct MHD_Daemon *http;
    int port;
    pthread_mutex_t lock;   /* leaf: guards text only */
    char *text;             /* latest published, owned */
};

int sl_prom_enabled(const sl_config *c)
{
    const char *f = sl_config_str(c, "metrics.reporter.prom.factory.class");
    return f && *f;
}

static MHD_RESULT on_request(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version, const char *upload_data,
                             size_t *upload_size, void **con_cls)
{
    sl_prom *p = cls;
    if (!*con_cls) { /* first call: headers only */
        *con_cls = p;
        return MHD_YES;
    }
    *upload_size = 0;
    pthread_mutex_lock(&p->lock);
    const char *t = p->text ? p->text : "";
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(t), (void *)t, MHD_RESPMEM_MUST_COPY);
    pthread_mutex_unlock(&p->lock);
    MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    MHD_RESULT ret = MHD_queue_response(conn, strcmp(method, "GET") && strcmp(method, "HEAD")
                                                  ? MHD_HTTP_METHOD_NOT_ALLOWED : MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ret;
}

sl_prom *sl_prom_start(const sl_config *c, char *err, size_t errlen)
{
    const char *spec = sl_config_str(c, "metrics.reporter.prom.port");
    long lo, hi;
    char *end;
    lo = strtol(spec, &end, 10);
    hi = lo;
    if (*end == '-') hi = strtol(end + 1, &end, 10);
    if (end == spec || *end || lo < 0 || hi > 65535 || hi < lo) {
        sl_seterr(err, errlen, "metrics.reporter.prom.port: '%s' is not a port or a range like "
                  "9250-9260", spec);
        return NULL;
    }
    sl_prom *p = sl_calloc(1, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    for (long port = lo; port <= hi && !p->http; port++) {
        sl_http_conf hc = {
            .what = "the Prometheus reporter",
            .bind_key = "metrics.reporter.prom.port",
            .bind = "0.0.0.0", /* Prometheus scrapes from elsewhere */
            .port = (int)port,
            .idle_timeout_s = 30,
            .connection_limit = 64,
            .handler = on_request,
            .handler_cls = p,
        };
        p->http = sl_http_start(&hc, &p->port, NULL, 0);
    }
    if (!p->http) {
        sl_seterr(err, errlen, "metrics.reporter.prom.port: no free port in '%s'", spec);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    return p;
}

int sl_prom_port(const sl_prom *p)
{
    return p->port;
}

void sl_prom_publish(sl_prom *p, char *text)
{
    pthread_mutex_lock(&p->lock);
    char *old = p->text;
    p->text = text;
    pthread_mutex_unlock(&p->lock);
    free(old);
}

void sl_prom_stop(sl_prom *p)
{
    if (!p) return;
    MHD_stop_daemon(p->http);
    pthread_mutex_destroy(&p->lock);
    free(p->text);
    free(p);
}

/* ---- the text ------------------------------------------------------------ */

/* The text grows as an sl_buf (buf.h). prom.h keeps its own {s, len, cap}
 * fields rather than an sl_buf member: the TaskManager's reporter includes
 * prom.h beside taskmanager/buffer.h, whose network buffer is also named
 * struct sl_buf, so buf.h cannot be included there. The fields are those
 * of an sl_buf, moved in and out around each append (in registers). */
static inline void put(sl_prom_text *t, const char *s, size_t n)
{
    sl_buf b = {t->s, t->len, t->cap};
    sl_buf_put(&b, s, n);
    t->s = b.p;
    t->len = b.len;
    t->cap = b.cap;
}

static inline void puts_(sl_prom_text *t, const char *s) { put(t, s, strlen(s)); }

/* "flink_" + name, with what Prometheus does not allow as '_'. */
static void put_name(sl_prom_text *t, const char *name)
{
    puts_(t, "flink_");
    for (const char *c = name; *c; c++) {
        char ch = *c;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == ':';
        put(t, ok ? &ch : "_", 1);
    }
}

static void put_head(sl_prom_text *t, const char *name, const char *type)
{
    if (t->last && !strcmp(t->last, name)) return;
    const char *own = strrchr(name, '_'); /* the metric's own name, after its scope */
    puts_(t, "# HELP ");
    put_name(t, name);
    puts_(t, " ");
    puts_(t, own ? own + 1 : name);
    puts_(t, "\n# TYPE ");
    put_name(t, name);
    puts_(t, " ");
    puts_(t, type);
    puts_(t, "\n");
    t->last = name;
}

static void put_value(sl_prom_text *t, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\') puts_(t, "\\\\");
        else if (*v == '"') puts_(t, "\\\"");
        else if (*v == '\n') puts_(t, "\\n");
        else put(t, v, 1);
    }
}

/* name{labels[,extra="xval"]} */
static void put_series(sl_prom_text *t, const char *name, const char *suffix, const char *const *labels,
                       const char *extra, const char *xval)
{
    put_name(t, name);
    if (suffix) puts_(t, suffix);
    int n = 0;
    for (int i = 0; labels && labels[i]; i += 2, n++) {
        put(t, n ? "," : "{", 1);
        puts_(t, labels[i]);
        puts_(t, "=\"");
        put_value(t, labels[i + 1] ? labels[i + 1] : "");
        put(t, "\"", 1);
    }
    if (extra) {
        put(t, n ? "," : "{", 1);
        puts_(t, extra);
        puts_(t, "=\"");
        put_value(t, xval);
        put(t, "\"", 1);
        n++;
    }
    if (n) put(t, "}", 1);
}

static void put_number(sl_prom_text *t, double value)
{
    char num[64];
    if (value <= (double)INT64_MIN) { /* Flink's "no watermark yet" */
        puts_(t, " -9223372036854775808\n");
        return;
    }
    if (value > -9.2e18 && value < 9.2e18 && value == (double)(long long)value) snprintf(num, sizeof num, " %lld\n", (long long)value);
    else snprintf(num, sizeof num, " %.6g\n", value);
    puts_(t, num);
}

void sl_prom_sample(sl_prom_text *t, const char *name, double value, const char *const *labels)
{
    put_head(t, name, "gauge");
    put_series(t, name, NULL, labels, NULL, NULL);
    put_number(t, value);
}

void sl_prom_summary(sl_prom_text *t, const char *name, uint64_t count, const double *quantiles,
                     const char *const *labels)
{
    static const char *const qs[] = {"0.5", "0.75", "0.95", "0.98", "0.99", "0.999"};
    put_head(t, name, "summary");
    for (size_t i = 0; i < SL_ARRAY_LEN(qs); i++) {
        put_series(t, name, NULL, labels, "quantile", qs[i]);
        put_number(t, quantiles[i]);
    }
    put_series(t, name, "_count", labels, NULL, NULL);
    put_number(t, (double)count);
}

char *sl_prom_text_take(sl_prom_text *t)
{
    sl_buf b = {t->s, t->len, t->cap};
    char *s = sl_buf_take(&b);
    memset(t, 0, sizeof *t);
    return s;
}
