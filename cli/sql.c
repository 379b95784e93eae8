/*
 * sql.c -- `sluice sql`, Flink's SQL client on Sluice.
 *
 * Statements end at ';' (outside quotes, comments and EXECUTE STATEMENT SET
 * BEGIN ... END; see sql_split). Each one runs in a session (sql/sql.h)
 * whose catalog lives in this process: DDL, SET, SHOW and DESCRIBE answer
 * locally; INSERT INTO and statement sets are planned here into a JSON job
 * graph and submitted with POST /jobs, as `sluice run` does. The messages
 * are Flink's:
 *
 *   [INFO] Submitting SQL update statement to the cluster...
 *   [INFO] SQL update statement has been successfully submitted to the cluster:
 *   Job ID: <id>
 *   [INFO] Execute statement succeed.
 *   [ERROR] Could not execute SQL statement. Reason:
 *   <reason>
 *
 * `-i FILE` runs a script first (its statements must all succeed);
 * `-f FILE` runs a script and stops at the first failing statement (exit
 * status 1); without -f statements are read from stdin ("Flink SQL> "
 * prompt when stdin is a terminal), errors do not end the session, and
 * QUIT; or EXIT; or end of input does. On a terminal, lines are edited
 * with libedit (history in ~/.sluice-sql-history) when libedit2 is
 * installed; SLUICE_SQL_NO_EDITLINE=1 turns it off. Ctrl-C drops the
 * statement being typed instead of ending the session.
 *
 * SHOW JOBS and STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN] are answered
 * here over REST (GET /jobs/overview; POST /jobs/:id/stop and its
 * operation, or a cancel without a savepoint), as Flink's client does.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/http.h>
#include <jansson.h>

#include "cli.h"
#include "jobgraph.h"
#include "operator.h"
#include "parse.h"
#include "sql.h"
#include "sql_remote.h"
#include "sql_results.h"
#include "text.h"

typedef struct client {
    sl_cli_http *http;
    sl_sql_session *session;
    int echo;        /* print each statement of a script before running it */
    sl_cli_http *gw; /* --endpoint: statements go to this SQL gateway (sql_remote.c) */
    char *gw_session;
} client;

static void print_error(const char *reason)
{
    printf("[ERROR] Could not execute SQL statement. Reason:\n");
    /* the JobManager's lines come as "Error: ..." (sl_cli_error_text) */
    for (const char *l = reason; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        if (n >= 7 && !strncmp(l, "Error: ", 7)) l += 7, n -= 7;
        printf("%.*s\n", (int)n, l);
        l += n;
        if (*l == '\n') l++;
    }
    printf("\n");
    fflush(stdout);
}

/* "[WARNING] ..." for each entry of a warnings array (unbounded state). */
static void print_warnings(const json_t *ws)
{
    size_t i;
    json_t *w;
    json_array_foreach(ws, i, w) {
        const char *m = json_string_value(json_object_get(w, "message"));
        if (m) printf("[WARNING] %s\n", m);
    }
}

/* The warnings the job graph's operators declare, as the JobManager will
 * answer them (EXPLAIN prints them before the plan). */
static void print_plan_warnings(const char *job)
{
    static int registered;
    if (!registered) sl_ops_register_builtin(), registered = 1;
    char err[512];
    sl_jobgraph *g = sl_jobgraph_parse(job, strlen(job), 1, 0, err, sizeof err);
    if (!g) return; /* a plugin operator the client lacks; the submission tells */
    json_t *ws = sl_jobgraph_warnings(g);
    print_warnings(ws);
    json_decref(ws);
    sl_jobgraph_destroy(g);
}

/* POST the job; prints Flink's lines. Returns 0 or 1. */
static int submit(client *c, const sl_sql_result *r)
{
    if (r->warning) printf("[WARNING] %s\n", r->warning);
    printf("[INFO] Submitting SQL update statement to the cluster...\n");
    fflush(stdout);
    if (!c->http) {
        print_error("no JobManager to submit to");
        return 1;
    }
    char *uri;
    if (r->savepoint) {
        char *enc = evhttp_uriencode(r->savepoint, -1, 0);
        uri = sl_sprintf("/jobs?savepointPath=%s%s", enc ? enc : "",
                         r->allow_nonrestored ? "&allowNonRestoredState=true" : "");
        free(enc);
    } else {
        uri = sl_strdup("/jobs");
    }
    char err[512];
    sl_cli_response resp;
    int rc = 0;
    if (sl_cli_http_request(c->http, "POST", uri, r->job, &resp, err, sizeof err) != SL_OK) {
        print_error(err);
        free(uri);
        return 1;
    }
    free(uri);
    if (resp.status < 200 || resp.status > 299) {
        char *text = sl_cli_error_text(resp.status, resp.body, resp.len);
        size_t n = strlen(text);
        while (n && text[n - 1] == '\n') text[--n] = '\0';
        print_error(text);
        free(text);
        rc = 1;
    } else {
        json_error_t jerr;
        json_t *j = json_loadb(resp.body, resp.len, 0, &jerr);
        const char *jid = json_string_value(json_object_get(j, "jobid"));
        if (!jid) jid = json_string_value(json_object_get(j, "jid"));
        if (!jid) {
            print_error("unexpected answer to POST /jobs: no \"jobid\"");
            rc = 1;
        } else {
            print_warnings(json_object_get(j, "warnings"));
            printf("[INFO] SQL update statement has been successfully submitted to the "
                   "cluster:\nJob ID: %s\n\n", jid);
        }
        json_decref(j);
    }
    sl_cli_response_clear(&resp);
    fflush(stdout);
    return rc;
}

/* GET uri and decode; prints the failure and returns NULL. */
static json_t *get_json(client *c, const char *method, const char *uri, const char *body)
{
    char err[512];
    sl_cli_response resp;
    if (!c->http) {
        print_error("no JobManager to ask");
        return NULL;
    }
    if (sl_cli_http_request(c->http, method, uri, body, &resp, err, sizeof err) != SL_OK) {
        print_error(err);
        return NULL;
    }
    json_t *j = NULL;
    if (resp.status < 200 || resp.status > 299) {
        char *text = sl_cli_error_text(resp.status, resp.body, resp.len);
        size_t n = strlen(text);
        while (n && text[n - 1] == '\n') text[--n] = '\0';
        print_error(text);
        free(text);
    } else {
        json_error_t jerr;
        j = resp.len ? json_loadb(resp.body, resp.len, 0, &jerr) : json_object();
        if (!j) print_error("the JobManager's answer is not JSON");
    }
    sl_cli_response_clear(&resp);
    return j;
}

/* SHOW JOBS: Flink's table of job id, name, status and start time. */
static int show_jobs(client *c)
{
    json_t *ov = get_json(c, "GET", "/jobs/overview", NULL);
    if (!ov) return 1;
    json_t *jobs = json_object_get(ov, "jobs");
    size_t n = json_array_size(jobs);
    char ***rows = sl_calloc(n + 1, sizeof(char **));
    char **cells = sl_calloc(n * 4 + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        json_t *j = json_array_get(jobs, i);
        char **row = &cells[i * 4];
        rows[i] = row;
        const char *id = json_string_value(json_object_get(j, "jid"));
        const char *name = json_string_value(json_object_get(j, "name"));
        const char *state = json_string_value(json_object_get(j, "state"));
        long long start = (long long)json_integer_value(json_object_get(j, "start-time"));
        char when[64] = "";
        if (start > 0) sl_ts_text(when, sizeof when, start, SL_TS_ISO);
        row[0] = sl_strdup(id ? id : "");
        row[1] = sl_strdup(name ? name : "");
        row[2] = sl_strdup(state ? state : "");
        row[3] = sl_strdup(when);
    }
    const char *head[] = {"job id", "job name", "status", "start time"};
    char *text = sl_sql_tableau(head, 4, rows, (int)n);
    printf("%s\n", text);
    free(text);
    for (size_t i = 0; i < n * 4; i++) free(cells[i]);
    free(cells);
    free(rows);
    json_decref(ov);
    return 0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN]: stop-with-savepoint through
 * POST /jobs/:id/stop and its operation; without a savepoint, a cancel. */
static int stop_job(client *c, const sl_sql_result *r)
{
    char uri[160];
    if (!r->with_savepoint && !r->drain) {
        snprintf(uri, sizeof uri, "/jobs/%s?mode=cancel", r->jobid);
        json_t *j = get_json(c, "PATCH", uri, NULL);
        if (!j) return 1;
        json_decref(j);
        printf("[INFO] Execute statement succeed.\n\n");
        return 0;
    }
    json_t *req = json_object();
    if (r->target_dir) json_object_set_new(req, "targetDirectory", json_string(r->target_dir));
    json_object_set_new(req, "drain", json_boolean(r->drain));
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    snprintf(uri, sizeof uri, "/jobs/%s/stop", r->jobid);
    json_t *resp = get_json(c, "POST", uri, body);
    free(body);
    if (!resp) return 1;
    const char *trig = json_string_value(json_object_get(resp, "request-id"));
    if (!trig) {
        json_decref(resp);
        print_error("unexpected answer to POST /jobs/:jobid/stop: no \"request-id\"");
        return 1;
    }
    snprintf(uri, sizeof uri, "/jobs/%s/savepoints/%s", r->jobid, trig);
    json_decref(resp);
    for (;;) {
        json_t *st = get_json(c, "GET", uri, NULL);
        if (!st) return 1;
        const char *loc;
        char *failure = NULL;
        int rc = sl_cli_async_status(st, &loc, &failure);
        if (rc == SL_OK) {
            const char *head[] = {"savepoint path"};
            char *cell = sl_strdup(loc ? loc : "");
            char **row = &cell, ***rows = &row;
            char *text = sl_sql_tableau(head, 1, rows, 1);
            printf("%s\n", text);
            free(text);
            free(cell);
            json_decref(st);
            return 0;
        }
        json_decref(st);
        if (rc == SL_ERR) {
            print_error(failure ? failure : "the savepoint failed");
            free(failure);
            return 1;
        }
        sleep_ms(200);
    }
}

static int is_word(const char *s, size_t n, const char *w)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    size_t wl = strlen(w);
    if (n - i < wl || strncasecmp(s + i, w, wl) != 0) return 0;
    i += wl;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == ';'))
        i++;
    return i == n;
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* A plain SELECT: its rows as they come (cli/sql_results.c); Ctrl-C stops
 * it and cancels its job. */
static int run_query(client *c, const sl_sql_result *r)
{
    if (!c->http) {
        print_error("no JobManager to run the query on");
        return 1;
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint; /* no SA_RESTART: a wait returns */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    interrupted = 0;
    char err[2048];
    int rc = sl_sql_show_query(c->http, r, &interrupted, stdout, err, sizeof err);
    interrupted = 0;
    sigaction(SIGINT, &old, NULL);
    if (rc != SL_OK) {
        print_error(err);
        return 1;
    }
    return 0;
}

/* Run one statement. Returns 0, 1 on failure, or -1 for QUIT/EXIT. */
static int run_statement(client *c, const char *text, size_t len, int line, int col)
{
    if (is_word(text, len, "QUIT") || is_word(text, len, "EXIT")) return -1;
    if (is_word(text, len, "HELP")) {
        printf("The following commands are available:\n\n"
               "HELP             Prints the available commands.\n"
               "QUIT/EXIT        Quits the SQL CLI client.\n"
               "SET              Sets a session property: SET '<key>' = '<value>'; SET; lists them.\n"
               "RESET            Resets a session property: RESET '<key>'; RESET; resets all.\n"
               "CREATE [TEMPORARY] TABLE / VIEW, DROP TABLE / VIEW, SHOW TABLES / VIEWS /\n"
               "FUNCTIONS / JOBS, DESCRIBE, INSERT INTO, EXECUTE STATEMENT SET BEGIN ... END,\n"
               "BEGIN STATEMENT SET; ... END;, EXPLAIN, STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN]\n"
               "\nStatements end with ';'. See docs/SQL.md.\n\n");
        fflush(stdout);
        return 0;
    }
    if (c->echo) { /* from the statement's first token: leading comments are not echoed */
        sql_lexer lx;
        sql_tok t;
        sql_lexer_init(&lx, text, len, 1, 1);
        const char *from = sql_next_token(&lx, &t, NULL, 0) == SL_OK ? t.z : text;
        size_t b = len - (size_t)(from - text);
        while (b && (from[b - 1] == ' ' || from[b - 1] == '\n' || from[b - 1] == '\r')) b--;
        printf("Flink SQL> %.*s\n", (int)b, from);
    }
    char err[2048];
    if (c->gw) { /* through the gateway's session */
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigint; /* no SA_RESTART: a wait returns */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old);
        interrupted = 0;
        int grc = sl_sql_remote_statement(c->gw, &c->gw_session, text, len, &interrupted, err,
                                          sizeof err);
        interrupted = 0;
        sigaction(SIGINT, &old, NULL);
        if (grc != SL_OK) print_error(err);
        return grc == SL_OK ? 0 : 1;
    }
    sl_sql_result r;
    if (sl_sql_execute(c->session, text, len, line, col, &r, err, sizeof err) != SL_OK) {
        print_error(err);
        return 1;
    }
    /* user functions' objects travel with the job (cli/ship.c) */
    if ((r.kind == SL_SQL_JOB || r.kind == SL_SQL_QUERY) &&
        sl_cli_ship_functions(c->http, &r.job, err, sizeof err) != SL_OK) {
        print_error(err);
        sl_sql_result_clear(&r);
        return 1;
    }
    int rc = 0;
    switch (r.kind) {
    case SL_SQL_OK:
        printf("[INFO] %s\n\n", r.message ? r.message : "Execute statement succeed.");
        break;
    case SL_SQL_TEXT:
        if (r.job) print_plan_warnings(r.job); /* EXPLAIN */
        printf("%s\n", r.text);
        break;
    case SL_SQL_JOB: rc = submit(c, &r); break;
    case SL_SQL_NONE: break;
    case SL_SQL_STOP_JOB: rc = stop_job(c, &r); break;
    case SL_SQL_SHOW_JOBS: rc = show_jobs(c); break;
    case SL_SQL_QUERY: rc = run_query(c, &r); break;
    }
    fflush(stdout);
    sl_sql_result_clear(&r);
    return rc;
}

/* Advance line:col over text[0..n). */
static void advance_pos(const char *text, size_t n, int *line, int *col)
{
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* Run every statement of a script; stop at the first failure. */
static int run_script(client *c, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "Error: cannot open %s: %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 65536, len = 0;
    char *buf = sl_malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len < 2) {
            cap *= 2;
            buf = sl_realloc(buf, cap);
        }
    }
    fclose(f);
    buf[len] = '\0';
    size_t pos = 0;
    int line = 1, col = 1, rc = 0;
    if (len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) pos = 3; /* a UTF-8 byte order mark */
    while (pos < len) {
        size_t end;
        int s = sql_split(buf + pos, len - pos, &end);
        if (s < 0) break;
        if (s == 0) end = len - pos; /* the last statement lacks its ';' */
        int r = run_statement(c, buf + pos, end, line, col);
        advance_pos(buf + pos, end, &line, &col);
        pos += end;
        if (r != 0) {
            rc = r < 0 ? 0 : 1;
            break;
        }
    }
    free(buf);
    return rc;
}

/* Line editing and history from libedit when it is installed (libedit2),
 * loaded at run time so that neither the build nor the daemons, which link
 * the same library, depend on it. */
typedef struct editline {
    void *dl;
    char *(*readline)(const char *prompt);
    int (*add_history)(const char *line);
    int (*read_history)(const char *file);
    int (*write_history)(const char *file);
    char *history;   /* ~/.sluice-sql-history */
} editline;

static void editline_open(editline *e)
{
    memset(e, 0, sizeof *e);
    if (getenv("SLUICE_SQL_NO_EDITLINE")) return;
    e->dl = dlopen("libedit.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!e->dl) return;
    *(void **)&e->readline = dlsym(e->dl, "readline");
    *(void **)&e->add_history = dlsym(e->dl, "add_history");
    *(void **)&e->read_history = dlsym(e->dl, "read_history");
    *(void **)&e->write_history = dlsym(e->dl, "write_history");
    if (!e->readline || !e->add_history) {
        dlclose(e->dl);
        memset(e, 0, sizeof *e);
        return;
    }
    const char *home = getenv("HOME");
    if (home && *home) e->history = sl_sprintf("%s/.sluice-sql-history", home);
    if (e->history && e->read_history) e->read_history(e->history);
}

static void editline_close(editline *e)
{
    if (!e->dl) return;
    if (e->history && e->write_history) e->write_history(e->history);
    free(e->history);
    dlclose(e->dl);
}

/* One line of input with its '\n' into *buf; -1 at the end of input, 0 when
 * Ctrl-C interrupted it. */
static ssize_t read_line(editline *e, int tty, int more, char **buf, size_t *cap)
{
    const char *prompt = more ? "> " : "Flink SQL> ";
    interrupted = 0;
    if (e->dl && tty) {
        char *l = e->readline(prompt);
        if (!l && interrupted) {
            printf("\n");
            return 0;
        }
        if (!l) return -1;
        if (*l) e->add_history(l);
        size_t n = strlen(l);
        if (*cap < n + 2) {
            *cap = n + 2;
            *buf = sl_realloc(*buf, *cap);
        }
        memcpy(*buf, l, n);
        (*buf)[n] = '\n';
        (*buf)[n + 1] = '\0';
        free(l);
        return (ssize_t)n + 1;
    }
    if (tty) {
        printf("%s", prompt);
        fflush(stdout);
    }
    ssize_t n = getline(buf, cap, stdin);
    if (n < 0 && interrupted) {
        clearerr(stdin);
        printf("\n");
        return 0;
    }
    return n;
}

static int interactive(client *c)
{
    int tty = isatty(0);
    editline ed;
    if (tty) {
        /* Ctrl-C drops the statement being typed; QUIT; or Ctrl-D ends the session */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_sigint; /* no SA_RESTART: the read returns */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        editline_open(&ed);
        printf("Sluice SQL client (Flink SQL dialect). Statements end with ';'. QUIT; leaves.\n\n");
    } else {
        memset(&ed, 0, sizeof ed);
    }
    size_t cap = 4096, len = 0;
    char *buf = sl_malloc(cap);
    buf[0] = '\0';
    int line = 1, col = 1;
    char *lbuf = NULL;
    size_t lcap = 0;
    for (;;) {
        ssize_t n = read_line(&ed, tty, len > 0, &lbuf, &lcap);
        if (n < 0) break;
        if (n == 0) { /* Ctrl-C: forget the statement typed so far */
            len = 0;
            buf[0] = '\0';
            continue;
        }
        if (len + (size_t)n + 1 > cap) {
            cap = (len + (size_t)n + 1) * 2;
            buf = sl_realloc(buf, cap);
        }
        memcpy(buf + len, lbuf, (size_t)n);
        len += (size_t)n;
        buf[len] = '\0';
        size_t pos = 0;
        int quit = 0;
        for (;;) {
            size_t end;
            int s = sql_split(buf + pos, len - pos, &end);
            if (s <= 0) {
                if (s < 0) { /* only blanks and comments left */
                    advance_pos(buf + pos, len - pos, &line, &col);
                    pos = len;
                }
                break;
            }
            int r = run_statement(c, buf + pos, end, line, col);
            advance_pos(buf + pos, end, &line, &col);
            pos += end;
            if (r < 0) {
                quit = 1;
                break;
            }
        }
        memmove(buf, buf + pos, len - pos);
        len -= pos;
        buf[len] = '\0';
        if (quit) break;
    }
    if (len && sql_split(buf, len, &(size_t){0}) == 0) /* a last statement without ';' */
        run_statement(c, buf, len, line, col);
    if (tty) printf("\nShutting down the session...\ndone.\n");
    editline_close(&ed);
    free(lbuf);
    free(buf);
    return 0;
}

/* --endpoint: host:port, [v6addr]:port, or a URL http://host[:port][/] (as
 * Flink's SQL client takes it; port 80 when the URL names none). */
static int parse_endpoint(const char *ep, char **host, int *port, char *why, size_t whylen)
{
    const char *p = ep;
    bool url = false;
    if (!strncasecmp(p, "https://", 8))
        return sl_seterr(why, whylen, "is https: the SQL client speaks plain HTTP to a gateway");
    if (!strncasecmp(p, "http://", 7)) {
        p += 7;
        url = true;
    }
    const char *end = p + strlen(p);
    if (url) {
        const char *slash = strchr(p, '/');
        if (slash) {
            if (slash[1])
                return sl_seterr(why, whylen, "has a path ('%s'); the gateway's API is at its root",
                                 slash);
            end = slash;
        }
    }
    const char *hs = p, *he, *colon = NULL;
    if (*p == '[') { /* [::1]:8083 */
        he = memchr(p, ']', (size_t)(end - p));
        if (!he) return sl_seterr(why, whylen, "is not host:port (an unclosed '[')");
        hs = p + 1;
        if (he + 1 < end && he[1] == ':') colon = he + 1;
        else if (he + 1 != end) return sl_seterr(why, whylen, "is not host:port");
    } else {
        for (const char *q = p; q < end; q++)
            if (*q == ':') colon = q;
        he = colon ? colon : end;
    }
    if (he == hs) return sl_seterr(why, whylen, "is not host:port (no host)");
    long pn = url && !colon ? 80 : 0;
    if (colon) {
        char *e = NULL;
        pn = strtol(colon + 1, &e, 10);
        if (colon + 1 == end || e != end) pn = 0;
    }
    if (pn < 1 || pn > 65535)
        return sl_seterr(why, whylen, "is not host:port or http://host:port");
    *host = sl_strndup(hs, (size_t)(he - hs));
    *port = (int)pn;
    return SL_OK;
}

int sl_cli_sql_main(sl_cli_http *http, int argc, char **argv)
{
    const char *file = NULL, *init = NULL, *endpoint = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if ((!strcmp(a, "-e") || !strcmp(a, "--endpoint")) && i + 1 < argc) {
            endpoint = argv[++i];
            continue;
        }
        if (!strncmp(a, "--endpoint=", 11)) {
            endpoint = a + 11;
            continue;
        }
        if ((!strcmp(a, "-f") || !strcmp(a, "--file")) && i + 1 < argc) file = argv[++i];
        else if (!strncmp(a, "--file=", 7)) file = a + 7;
        else if ((!strcmp(a, "-i") || !strcmp(a, "--init")) && i + 1 < argc) init = argv[++i];
        else if (!strncmp(a, "--init=", 7)) init = a + 7;
        else {
            fprintf(stderr, "Error: sql: unexpected argument '%s' (sluice sql [-i init.sql] "
                            "[-f script.sql] [--endpoint host:port | http://host:port])\n", a);
            return 2;
        }
    }
    client c = {.http = http, .session = sl_sql_session_new()};
    int rc = 0;
    if (endpoint) {
        char *host = NULL, why[200];
        int port = 0;
        if (parse_endpoint(endpoint, &host, &port, why, sizeof why) != SL_OK) {
            fprintf(stderr, "Error: sql: --endpoint '%s' %s\n", endpoint, why);
            sl_sql_session_destroy(c.session);
            return 2;
        }
        c.gw = sl_cli_http_new(host, port, NULL, 60);
        free(host);
    }
    if (init) {
        c.echo = 0;
        rc = run_script(&c, init);
        if (rc) fprintf(stderr, "Error: the initialization script %s failed\n", init);
    }
    if (rc == 0) {
        if (file) {
            c.echo = 1;
            rc = run_script(&c, file);
        } else {
            rc = interactive(&c);
        }
    }
    if (c.gw) {
        sl_sql_remote_close(c.gw, &c.gw_session);
        sl_cli_http_destroy(c.gw);
    }
    sl_sql_session_destroy(c.session);
    fflush(stdout);
    return rc;
}
