/*
 * sql_remote.c -- `sluice sql --endpoint host:8083`: the SQL client's
 * statements run in a session of a SQL gateway (cli/sql_gateway.c, or
 * Flink's own), as Flink's `sql-client.sh gateway --endpoint` does. The
 * session is opened with the first statement and closed at the end; each
 * statement is an operation whose results are fetched page by page
 * (PLAIN_TEXT rows) and shown the way the local client shows them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "cli.h"
#include "sql.h"
#include "sql_remote.h"
#include "sql_results.h"

static json_t *call(sl_cli_http *h, const char *method, const char *uri, json_t *body, char *err,
                    size_t errlen)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    sl_cli_response resp;
    int rc = sl_cli_http_request(h, method, uri, text, &resp, err, errlen);
    free(text);
    if (rc != SL_OK) return NULL;
    json_error_t je;
    json_t *j = resp.len ? json_loadb(resp.body, resp.len, 0, &je) : json_object();
    int status = resp.status;
    sl_cli_response_clear(&resp);
    if (status < 200 || status > 299) {
        json_t *errs = json_object_get(j, "errors");
        const char *e0 = json_string_value(json_array_get(errs, 0));
        snprintf(err, errlen, "%s", e0 ? e0 : "the gateway refused the request");
        json_decref(j);
        return NULL;
    }
    if (!j) snprintf(err, errlen, "the gateway's answer to %s %s is not JSON", method, uri);
    return j;
}

static int open_session(sl_cli_http *h, char **sid, char *err, size_t errlen)
{
    if (*sid) return SL_OK;
    json_t *j = call(h, "POST", "/v1/sessions", NULL, err, errlen);
    if (!j) return SL_ERR;
    const char *s = json_string_value(json_object_get(j, "sessionHandle"));
    if (s) *sid = sl_strdup(s);
    json_decref(j);
    return s ? SL_OK : sl_seterr(err, errlen, "the gateway opened no session");
}

void sl_sql_remote_close(sl_cli_http *h, char **sid)
{
    if (!*sid) return;
    char uri[128], err[256];
    snprintf(uri, sizeof uri, "/v1/sessions/%s", *sid);
    json_decref(call(h, "DELETE", uri, NULL, err, sizeof err));
    free(*sid);
    *sid = NULL;
}

/* Sluice's type name of a gateway column. */
static const char *type_of(json_t *col)
{
    const char *t = json_string_value(json_object_get(json_object_get(col, "logicalType"), "type"));
    if (!t) return "STRING";
    if (!strcmp(t, "INTEGER")) return "INT";
    if (!strncmp(t, "TIMESTAMP", 9)) return "TIMESTAMP(3)";
    if (!strcmp(t, "VARCHAR") || !strcmp(t, "CHAR")) return "STRING";
    if (!strcmp(t, "VARBINARY") || !strcmp(t, "BINARY")) return "BYTES";
    return t;
}

/* A page's data as ["+I", "v", ...] rows. */
static json_t *rows_of(json_t *page)
{
    json_t *out = json_array(), *row;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(page, "results"), "data"), i, row) {
        const char *k = json_string_value(json_object_get(row, "kind"));
        const char *op = !k ? "+I" : !strcmp(k, "UPDATE_BEFORE") ? "-U"
                         : !strcmp(k, "UPDATE_AFTER") ? "+U" : !strcmp(k, "DELETE") ? "-D" : "+I";
        json_t *r = json_pack("[s]", op), *f;
        size_t c;
        json_array_foreach(json_object_get(row, "fields"), c, f) {
            if (json_is_string(f)) json_array_append(r, f);
            else if (json_is_null(f)) json_array_append_new(r, json_null());
            else {
                char *t = json_dumps(f, JSON_ENCODE_ANY);
                json_array_append_new(r, json_string(t ? t : ""));
                free(t);
            }
        }
        json_array_append_new(out, r);
    }
    return out;
}

typedef struct remote_src {
    sl_cli_http *h;
    const char *sid, *oh;
    json_t *first;     /* the page already fetched, shown first */
    char *next_uri;    /* NULL after EOS */
    json_t *rows;      /* the page handed out */
} remote_src;

static int take_page(remote_src *s, json_t *page, json_t **rows, int *end)
{
    json_decref(s->rows);
    s->rows = rows_of(page);
    *rows = s->rows;
    const char *type = json_string_value(json_object_get(page, "resultType"));
    const char *next = json_string_value(json_object_get(page, "nextResultUri"));
    free(s->next_uri);
    s->next_uri = next ? sl_strdup(next) : NULL;
    *end = (type && !strcmp(type, "EOS")) || !next;
    return SL_OK;
}

static int remote_next(void *ctx, json_t **rows, int *end, char *err, size_t errlen)
{
    remote_src *s = ctx;
    if (s->first) {
        json_t *p = s->first;
        s->first = NULL;
        int rc = take_page(s, p, rows, end);
        json_decref(p);
        return rc;
    }
    if (!s->next_uri) {
        *rows = NULL;
        *end = 1;
        return SL_OK;
    }
    json_t *p = call(s->h, "GET", s->next_uri, NULL, err, errlen);
    if (!p) return SL_ERR;
    int rc = take_page(s, p, rows, end);
    json_decref(p);
    return rc;
}

static void remote_cancel(void *ctx)
{
    remote_src *s = ctx;
    char uri[160], err[256];
    snprintf(uri, sizeof uri, "/v1/sessions/%s/operations/%s/cancel", s->sid, s->oh);
    json_decref(call(s->h, "POST", uri, NULL, err, sizeof err));
}

/* The session's option `key`, or NULL (caller frees). */
static char *session_option(sl_cli_http *h, const char *sid, const char *key)
{
    char uri[128], err[256];
    snprintf(uri, sizeof uri, "/v1/sessions/%s", sid);
    json_t *j = call(h, "GET", uri, NULL, err, sizeof err);
    const char *v = json_string_value(json_object_get(json_object_get(j, "properties"), key));
    char *out = v ? sl_strdup(v) : NULL;
    json_decref(j);
    return out;
}

int sl_sql_remote_statement(sl_cli_http *h, char **sid, const char *text, size_t len,
                            volatile sig_atomic_t *stop, char *err, size_t errlen)
{
    if (open_session(h, sid, err, errlen) != SL_OK) return SL_ERR;
    char uri[200];
    snprintf(uri, sizeof uri, "/v1/sessions/%s/statements", *sid);
    json_t *body = json_object();
    json_object_set_new(body, "statement", json_stringn(text, len));
    json_t *j = call(h, "POST", uri, body, err, errlen);
    json_decref(body);
    if (!j) return SL_ERR;
    const char *o = json_string_value(json_object_get(j, "operationHandle"));
    char oh[64];
    snprintf(oh, sizeof oh, "%s", o ? o : "");
    json_decref(j);
    if (!oh[0]) return sl_seterr(err, errlen, "the gateway gave no operationHandle");
    snprintf(uri, sizeof uri, "/v1/sessions/%s/operations/%s/result/0?rowFormat=PLAIN_TEXT",
             *sid, oh);
    json_t *page = call(h, "GET", uri, NULL, err, errlen);
    if (!page) return SL_ERR;
    json_t *cols = json_object_get(json_object_get(page, "results"), "columns");
    int query = json_is_true(json_object_get(page, "isQueryResult"));
    const char *kind = json_string_value(json_object_get(page, "resultKind"));
    int rc = SL_OK;
    if (query) {
        sl_sql_result r;
        memset(&r, 0, sizeof r);
        r.ncols = (int)json_array_size(cols);
        r.col_names = sl_calloc((size_t)r.ncols + 1, sizeof(char *));
        r.col_types = sl_calloc((size_t)r.ncols + 1, sizeof(char *));
        for (int i = 0; i < r.ncols; i++) {
            json_t *c = json_array_get(cols, (size_t)i);
            const char *n = json_string_value(json_object_get(c, "name"));
            r.col_names[i] = sl_strdup(n ? n : "");
            r.col_types[i] = sl_strdup(type_of(c));
        }
        r.result_mode = session_option(h, *sid, "sql-client.execution.result-mode");
        if (!r.result_mode) r.result_mode = sl_strdup("table");
        for (char *q = r.result_mode; *q; q++) *q = (char)(*q >= 'A' && *q <= 'Z' ? *q + 32 : *q);
        char *maxr = session_option(h, *sid, "sql-client.execution.max-table-result.rows");
        if (maxr) r.max_table_rows = atoll(maxr);
        free(maxr);
        remote_src s = {.h = h, .sid = *sid, .oh = oh, .first = page};
        page = NULL;
        sl_sql_rows_src src = {.next = remote_next, .cancel = remote_cancel, .ctx = &s};
        rc = sl_sql_show_rows(&r, &src, stop, stdout, err, errlen);
        json_decref(s.first);
        json_decref(s.rows);
        free(s.next_uri);
        sl_sql_result_clear(&r);
    } else {
        json_t *rows = rows_of(page);
        const char *c0 = json_string_value(json_object_get(json_array_get(cols, 0), "name"));
        int ncols = (int)json_array_size(cols);
        const char *v0 = json_string_value(json_array_get(json_array_get(rows, 0), 1));
        if (c0 && !strcmp(c0, "job id") && v0) {
            printf("[INFO] Submitting SQL update statement to the cluster...\n"
                   "[INFO] SQL update statement has been successfully submitted to the cluster:\n"
                   "Job ID: %s\n\n", v0);
        } else if (kind && !strcmp(kind, "SUCCESS")) {
            printf("[INFO] Execute statement succeed.\n\n");
        } else if (c0 && !strcmp(c0, "result") && ncols == 1 && v0) {
            printf("%s\n\n", v0);
        } else { /* a table: SHOW JOBS, the savepoint of STOP JOB */
            size_t n = json_array_size(rows);
            const char **head = sl_calloc((size_t)ncols + 1, sizeof(char *));
            char ***cells = sl_calloc(n + 1, sizeof(char **));
            for (int c = 0; c < ncols; c++)
                head[c] = json_string_value(json_object_get(json_array_get(cols, (size_t)c), "name"));
            for (size_t i = 0; i < n; i++) {
                cells[i] = sl_calloc((size_t)ncols + 1, sizeof(char *));
                for (int c = 0; c < ncols; c++) {
                    const char *v = json_string_value(json_array_get(json_array_get(rows, i),
                                                                     (size_t)c + 1));
                    cells[i][c] = sl_strdup(v ? v : ""); /* NULL shows empty, as Flink's */
                }
            }
            char *t = sl_sql_tableau(head, ncols, cells, (int)n);
            printf("%s\n", t);
            free(t);
            for (size_t i = 0; i < n; i++) {
                for (int c = 0; c < ncols; c++) free(cells[i][c]);
                free(cells[i]);
            }
            free(cells);
            free(head);
        }
        json_decref(rows);
    }
    json_decref(page);
    snprintf(uri, sizeof uri, "/v1/sessions/%s/operations/%s/close", *sid, oh);
    char e2[256];
    json_decref(call(h, "DELETE", uri, NULL, e2, sizeof e2));
    fflush(stdout);
    return rc;
}
