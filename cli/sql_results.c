/*
 * sql_results.c -- `sluice sql` showing a plain SELECT's rows as they come.
 *
 * The query's job (a `collect` sink, sql/planner.c) is submitted with POST
 * /jobs; its rows are then read page by page from GET
 * /jobs/:jobid/results?token=N, N being the number of rows taken so far
 * (which acknowledges them: the JobManager drops them and lets the job send
 * more). The client stops when the results end (a bounded query), when the
 * job fails, or on Ctrl-C, which cancels the job. A query with LIMIT n and
 * no ORDER BY (sl_sql_result.limit_rows) ends once its n rows are in: the
 * client then cancels the job, whose unbounded sources would run on, and
 * ends the result normally. Shown as
 * `sql-client.execution.result-mode` says, as Flink's client shows them:
 *
 *   tableau    a boxed table printed as rows arrive, with the row kind in an
 *              `op` column (+I, -U, +U, -D); column widths come from the
 *              types (INT 11, BIGINT 20, BOOLEAN 5, TIMESTAMP(3) 23, others
 *              30), longer values end in "...", NULL is <NULL>; then
 *              "Received a total of N rows".
 *   changelog  the same rows and columns without the box.
 *   table      the changelog applied (-U / -D take back a row, +I / +U add
 *              one) and the final table printed once the results end, as a
 *              batch query's table ("N rows in set"), at most
 *              sql-client.execution.max-table-result.rows rows (oldest first
 *              out).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "cli.h"
#include "sql.h"
#include "sql_results.h"

#define MAX_COL_WIDTH 30
#define NULL_TEXT "<NULL>"
#define POLL_MS 50

typedef struct shown {
    FILE *out;
    const sl_sql_result *r;
    int mode;           /* 0 tableau, 1 changelog, 2 table */
    int *w;             /* per column, [0] the op column */
    long long total;
    /* table mode: the materialized rows, each ncols strings (NULL = SQL NULL) */
    char ***rows;
    long long nrows, cap, max_rows;
} shown;

static int type_width(const char *t)
{
    if (!strcasecmp(t, "INT")) return 11;
    if (!strcasecmp(t, "BIGINT")) return 20;
    if (!strcasecmp(t, "BOOLEAN")) return 5;
    if (!strncasecmp(t, "TIMESTAMP", 9)) return 23;
    return MAX_COL_WIDTH;
}

static void put_cell(shown *s, const char *v, int w, int boxed)
{
    int n = (int)strlen(v);
    if (boxed) fputs(" ", s->out);
    if (n > w) fprintf(s->out, "%.*s...", w - 3 > 0 ? w - 3 : 0, v);
    else fprintf(s->out, "%*s", w, v);
    fputs(boxed ? " |" : " ", s->out);
}

static void border(shown *s)
{
    fputs("+", s->out);
    for (int c = 0; c <= s->r->ncols; c++) {
        for (int i = 0; i < s->w[c] + 2; i++) fputc('-', s->out);
        fputc('+', s->out);
    }
    fputc('\n', s->out);
}

static void header(shown *s)
{
    if (s->mode == 2) return;
    int boxed = s->mode == 0;
    if (boxed) {
        border(s);
        fputs("|", s->out);
    }
    put_cell(s, "op", s->w[0], boxed);
    for (int c = 0; c < s->r->ncols; c++) put_cell(s, s->r->col_names[c], s->w[c + 1], boxed);
    fputc('\n', s->out);
    if (boxed) border(s);
    fflush(s->out);
}

static int same_row(char **a, json_t *row, int ncols)
{
    for (int c = 0; c < ncols; c++) {
        json_t *v = json_array_get(row, (size_t)c + 1);
        const char *t = json_string_value(v);
        if ((a[c] == NULL) != (t == NULL)) return 0;
        if (a[c] && strcmp(a[c], t)) return 0;
    }
    return 1;
}

static void free_row(char **row, int ncols)
{
    for (int c = 0; c < ncols; c++) free(row[c]);
    free(row);
}

/* table mode: apply one changelog row */
static void materialize(shown *s, const char *kind, json_t *row)
{
    int ncols = s->r->ncols;
    if (kind[0] == '-') {
        for (long long i = 0; i < s->nrows; i++)
            if (same_row(s->rows[i], row, ncols)) {
                free_row(s->rows[i], ncols);
                memmove(&s->rows[i], &s->rows[i + 1], sizeof *s->rows * (size_t)(s->nrows - i - 1));
                s->nrows--;
                return;
            }
        return;
    }
    if (s->nrows == s->max_rows && s->nrows > 0) { /* the oldest row makes room */
        free_row(s->rows[0], ncols);
        memmove(&s->rows[0], &s->rows[1], sizeof *s->rows * (size_t)(s->nrows - 1));
        s->nrows--;
    }
    if (s->nrows == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->rows = sl_realloc(s->rows, sizeof *s->rows * (size_t)s->cap);
    }
    char **cells = sl_calloc((size_t)ncols + 1, sizeof(char *));
    for (int c = 0; c < ncols; c++) {
        const char *t = json_string_value(json_array_get(row, (size_t)c + 1));
        cells[c] = t ? sl_strdup(t) : NULL;
    }
    s->rows[s->nrows++] = cells;
}

static void show_row(shown *s, json_t *row)
{
    const char *kind = json_string_value(json_array_get(row, 0));
    if (!kind) kind = "+I";
    s->total++;
    if (s->mode == 2) {
        materialize(s, kind, row);
        return;
    }
    int boxed = s->mode == 0;
    if (boxed) fputs("|", s->out);
    put_cell(s, kind, s->w[0], boxed);
    for (int c = 0; c < s->r->ncols; c++) {
        const char *t = json_string_value(json_array_get(row, (size_t)c + 1));
        put_cell(s, t ? t : NULL_TEXT, s->w[c + 1], boxed);
    }
    fputc('\n', s->out);
}

/* table mode: the final table, widths from the data */
static void table_border(shown *s, const int *w)
{
    fputs("+", s->out);
    for (int c = 0; c < s->r->ncols; c++) {
        for (int k = 0; k < w[c] + 2; k++) fputc('-', s->out);
        fputc('+', s->out);
    }
    fputc('\n', s->out);
}

static void print_table(shown *s)
{
    int ncols = s->r->ncols;
    if (s->nrows == 0) {
        fputs("Empty set\n", s->out);
        return;
    }
    int *w = sl_calloc((size_t)ncols + 1, sizeof(int));
    for (int c = 0; c < ncols; c++) w[c] = (int)strlen(s->r->col_names[c]);
    for (long long i = 0; i < s->nrows; i++)
        for (int c = 0; c < ncols; c++) {
            int n = (int)strlen(s->rows[i][c] ? s->rows[i][c] : NULL_TEXT);
            if (n > w[c]) w[c] = n;
        }
    table_border(s, w);
    for (long long i = -1; i < s->nrows; i++) {
        fputs("|", s->out);
        for (int c = 0; c < ncols; c++) {
            const char *v = i < 0 ? s->r->col_names[c] : s->rows[i][c];
            fprintf(s->out, " %*s |", w[c], v ? v : NULL_TEXT);
        }
        fputc('\n', s->out);
        if (i < 0) table_border(s, w);
    }
    table_border(s, w);
    fprintf(s->out, "%lld row%s in set\n", s->nrows, s->nrows == 1 ? "" : "s");
    free(w);
}

static void footer(shown *s, int terminated)
{
    if (s->mode == 2) print_table(s);
    else if (s->mode == 0) border(s);
    if (terminated)
        fprintf(s->out, "Query terminated, received a total of %lld row%s\n", s->total,
                s->total == 1 ? "" : "s");
    else if (s->mode != 2)
        fprintf(s->out, "Received a total of %lld row%s\n", s->total, s->total == 1 ? "" : "s");
    fputc('\n', s->out);
    fflush(s->out);
}

static void wait_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* a signal (Ctrl-C) ends it early, which is what we want */
}

/* One REST call; the decoded answer, or NULL with the reason in err. */
static json_t *call(sl_cli_http *http, const char *method, const char *uri, const char *body,
                    char *err, size_t errlen)
{
    sl_cli_response resp;
    if (sl_cli_http_request(http, method, uri, body, &resp, err, errlen) != SL_OK) return NULL;
    json_t *j = NULL;
    if (resp.status < 200 || resp.status > 299) {
        char *text = sl_cli_error_text(resp.status, resp.body, resp.len);
        size_t n = strlen(text);
        while (n && text[n - 1] == '\n') text[--n] = '\0';
        snprintf(err, errlen, "%s", text);
        free(text);
    } else {
        json_error_t je;
        j = resp.len ? json_loadb(resp.body, resp.len, 0, &je) : json_object();
        if (!j) snprintf(err, errlen, "the JobManager's answer to %s %s is not JSON", method, uri);
    }
    sl_cli_response_clear(&resp);
    return j;
}

static void cancel_job(sl_cli_http *http, const char *jid)
{
    char uri[96], err[256];
    snprintf(uri, sizeof uri, "/jobs/%s?mode=cancel", jid);
    json_decref(call(http, "PATCH", uri, NULL, err, sizeof err));
}

/* The job's root exception, for a failed query. */
static char *failure_of(sl_cli_http *http, const char *jid)
{
    char uri[96], err[256];
    snprintf(uri, sizeof uri, "/jobs/%s/exceptions", jid);
    json_t *j = call(http, "GET", uri, NULL, err, sizeof err);
    const char *root = json_string_value(json_object_get(j, "root-exception"));
    char *out = sl_sprintf("the query's job %s failed%s%s", jid, root ? ": " : "",
                           root ? root : "");
    json_decref(j);
    return out;
}

/* The JobManager's pages of a query's rows (GET /jobs/:jobid/results). */
typedef struct jm_src {
    sl_cli_http *http;
    char jid[40];
    unsigned long long token;
    json_t *page;
} jm_src;

static int jm_next(void *ctx, json_t **rows, int *end, char *err, size_t errlen)
{
    jm_src *src = ctx;
    json_decref(src->page);
    src->page = NULL;
    char uri[128];
    snprintf(uri, sizeof uri, "/jobs/%s/results?token=%llu", src->jid, src->token);
    json_t *page = call(src->http, "GET", uri, NULL, err, errlen);
    if (!page) return SL_ERR;
    src->page = page;
    json_int_t next = json_integer_value(json_object_get(page, "nextToken"));
    if (next > 0) src->token = (unsigned long long)next;
    const char *broke = json_string_value(json_object_get(page, "error"));
    if (broke) return sl_seterr(err, errlen, "%s", broke);
    *rows = json_object_get(page, "rows");
    *end = json_is_true(json_object_get(page, "end"));
    if (!*end && !json_array_size(*rows)) {
        const char *status = json_string_value(json_object_get(page, "status"));
        if (status && !strcmp(status, "FAILED")) {
            char *why = failure_of(src->http, src->jid);
            sl_seterr(err, errlen, "%s", why);
            free(why);
            return SL_ERR;
        }
        if (status && !strcmp(status, "CANCELED"))
            return sl_seterr(err, errlen, "the query's job %s was canceled", src->jid);
    }
    return SL_OK;
}

static void jm_cancel(void *ctx)
{
    jm_src *src = ctx;
    cancel_job(src->http, src->jid);
}

int sl_sql_show_rows(const sl_sql_result *r, const sl_sql_rows_src *src,
                     volatile sig_atomic_t *stop, FILE *out, char *err, size_t errlen)
{
    shown s = {.out = out, .r = r};
    s.mode = !strcmp(r->result_mode, "tableau") ? 0 : !strcmp(r->result_mode, "changelog") ? 1 : 2;
    s.max_rows = r->max_table_rows > 0 ? r->max_table_rows : 1000000;
    s.w = sl_calloc((size_t)r->ncols + 1, sizeof(int));
    s.w[0] = 2;
    for (int c = 0; c < r->ncols; c++) {
        int n = (int)strlen(r->col_names[c]), t = type_width(r->col_types[c]);
        s.w[c + 1] = SL_MAX(n, SL_MAX(t, (int)strlen(NULL_TEXT)));
    }
    header(&s);
    int rc = SL_OK, terminated = 0;
    for (;;) {
        if (*stop) {
            src->cancel(src->ctx);
            terminated = 1;
            break;
        }
        json_t *rows = NULL;
        int end = 0;
        if (src->next(src->ctx, &rows, &end, err, errlen) != SL_OK) {
            if (*stop) continue; /* the call was cut short by Ctrl-C */
            src->cancel(src->ctx);
            rc = SL_ERR;
            break;
        }
        for (size_t i = 0; i < json_array_size(rows); i++) show_row(&s, json_array_get(rows, i));
        fflush(out);
        if (end) break;
        if (r->limit_rows > 0 && s.total >= r->limit_rows) {
            /* LIMIT n: the result is complete, but unbounded sources would run on */
            src->cancel(src->ctx);
            break;
        }
        if (!json_array_size(rows)) wait_ms(POLL_MS);
    }
    if (rc == SL_OK) footer(&s, terminated);
    for (long long i = 0; i < s.nrows; i++) free_row(s.rows[i], r->ncols);
    free(s.rows);
    free(s.w);
    return rc;
}

int sl_sql_show_query(sl_cli_http *http, const sl_sql_result *r, volatile sig_atomic_t *stop,
                      FILE *out, char *err, size_t errlen)
{
    json_t *posted = call(http, "POST", "/jobs", r->job, err, errlen);
    if (!posted) return SL_ERR;
    const char *j = json_string_value(json_object_get(posted, "jobid"));
    if (!j) j = json_string_value(json_object_get(posted, "jid"));
    if (!j) {
        json_decref(posted);
        return sl_seterr(err, errlen, "unexpected answer to POST /jobs: no \"jobid\"");
    }
    jm_src js = {.http = http};
    snprintf(js.jid, sizeof js.jid, "%s", j);
    json_decref(posted);
    sl_sql_rows_src src = {.next = jm_next, .cancel = jm_cancel, .ctx = &js};
    int rc = sl_sql_show_rows(r, &src, stop, out, err, errlen);
    json_decref(js.page);
    return rc;
}
