/*
 * main.c -- `sluice`, the command-line client of the JobManager's REST API.
 *
 * Commands and their wording follow Flink's `flink` CLI (run, list, cancel,
 * stop, savepoint). Each command parses its options, loads the
 * configuration the same way the daemons do (defaults < conf/sluice.yaml or
 * --config FILE < SLUICE_PROPERTIES < -D key=value) to find the JobManager
 * (rest.address:rest.port, or -m host:port) and its token, then speaks REST
 * through the blocking client in cli/http.c.
 *
 * Long operations are polled every 500 ms with no overall client deadline:
 * a savepoint of large state takes as long as it takes, and only a single
 * unanswered request times out.
 *
 * `sluice savepoint check PATH FILE` goes beyond Flink: it sends the job
 * graph to POST /savepoints/check and prints the restore plan the
 * JobManager would follow (see sl_cli_format_check), without running
 * anything.
 *
 * Output: progress on stdout, errors on stderr as "Error: <message>".
 * Exit status: 0 success, 1 failure (server error, no connection, failed
 * job), 2 bad usage.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/http.h>
#include <jansson.h>

#include "zk.h"
#include "cli.h"
#include "datastream.h"
#include "config.h"
#include "kafka_txn.h"

#define EXIT_USAGE 2
#define POLL_MS 500
#define REQUEST_TIMEOUT_S 60

/* ---- usage -------------------------------------------------------------- */

static const char *const usage_run =
    "  run [OPTIONS] FILE          Submit a job graph (JSON) and wait for it to end.\n"
    "      -p, --parallelism N          default parallelism of the job\n"
    "      -d, --detached               return once the job is submitted\n"
    "      -s, --fromSavepoint PATH     restore the job's state from a savepoint\n"
    "      -n, --allowNonRestoredState  skip savepoint state that maps to no operator\n";
static const char *const usage_list =
    "  list [-r|-s|-a]             List running and scheduled jobs.\n"
    "      -r, --running                only running and restarting jobs\n"
    "      -s, --scheduled              only scheduled jobs (waiting for slots)\n"
    "      -a, --all                    all jobs, terminated ones too\n";
static const char *const usage_cancel =
    "  cancel JOBID                Cancel a job.\n";
static const char *const usage_stop =
    "  stop [OPTIONS] JOBID        Stop a job with a savepoint.\n"
    "      -p, --savepointPath DIR      where to write the savepoint (also --savepoint;\n"
    "                                   default: the JobManager's state.savepoints.dir)\n"
    "      -d, --drain                  emit the maximum watermark first, so that all\n"
    "                                   event-time windows and timers fire\n";
static const char *const usage_rescale =
    "  rescale [OPTIONS] JOBID     Change the parallelism of a running job: the\n"
    "                              JobManager stops it with a savepoint and restores\n"
    "                              it at the new parallelism under the same job ID.\n"
    "      -p, --parallelism N          every vertex at N\n"
    "      --vertex ID=N                the vertex with this id or name at N (repeatable;\n"
    "                                   the others keep theirs, or -p's)\n";
static const char *const usage_savepoint =
    "  savepoint JOBID [DIR]       Trigger a savepoint of a running job.\n"
    "  savepoint -d PATH           Dispose of a savepoint (also --dispose).\n"
    "  savepoint check PATH FILE   Show, before anything runs, how the state of a\n"
    "                              savepoint maps to the job in FILE.\n"
    "      -p, --parallelism N          the parallelism the job would run with\n"
    "      -n, --allowNonRestoredState  report state without a matching uid as dropped\n"
    "                                   instead of refusing\n";
static const char *const usage_sql =
    "  sql [-i FILE] [-f FILE]     Flink's SQL client: run statements (from stdin, or a\n"
    "                              script with -f) and submit INSERTs as jobs.\n"
    "      -i, --init FILE              run this script first (e.g. CREATE TABLEs)\n"
    "      -f, --file FILE              run this script and exit\n";
static const char *const usage_sql_gateway =
    "  sql-gateway [-Dkey=value]   Flink's SQL Gateway REST API (sessions, statements,\n"
    "                              results) on sql-gateway.endpoint.rest.address:port\n"
    "                              (127.0.0.1:8083), submitting to the JobManager\n";
static const char *const usage_kafka =
    "  kafka transactions JOBID    List the open and pre-committed transactions of the\n"
    "                              job's exactly-once Kafka sinks (id, checkpoint, age).\n"
    "  kafka abort -b SERVERS ID...  Abort the lingering transactions of these\n"
    "                              transactional ids (a dead job's sink), talking to the\n"
    "                              brokers directly: each id is initialised once, which\n"
    "                              fences its old producer and aborts its transaction.\n"
    "      -b, --bootstrap-servers HOST:PORT[,...]  the brokers\n"
    "      -X name=value                a librdkafka property (e.g. security.protocol)\n";
static const char *const usage_common =
    "Options for every command:\n"
    "  -m, --jobmanager HOST:PORT  the JobManager's REST address\n"
    "                              (default: rest.address:rest.port of the configuration)\n"
    "  --config FILE               configuration file (default: $SLUICE_CONF_DIR/sluice.yaml,\n"
    "                              else conf/sluice.yaml)\n"
    "  -D key=value                override one configuration key\n"
    "  -h, --help                  print this help\n";

static void usage(FILE *f, const char *command)
{
    fprintf(f, "Usage: sluice %s [OPTIONS]%s\n\n", command ? command : "COMMAND",
            command ? "" : " [ARGS]");
    fprintf(f, "%s", command ? "" : "Commands:\n");
    if (!command || !strcmp(command, "run")) fprintf(f, "%s", usage_run);
    if (!command || !strcmp(command, "list")) fprintf(f, "%s", usage_list);
    if (!command || !strcmp(command, "cancel")) fprintf(f, "%s", usage_cancel);
    if (!command || !strcmp(command, "stop")) fprintf(f, "%s", usage_stop);
    if (!command || !strcmp(command, "rescale")) fprintf(f, "%s", usage_rescale);
    if (!command || !strcmp(command, "savepoint")) fprintf(f, "%s", usage_savepoint);
    if (!command || !strcmp(command, "sql")) fprintf(f, "%s", usage_sql);
    if (!command || !strcmp(command, "sql-gateway")) fprintf(f, "%s", usage_sql_gateway);
    if (!command || !strcmp(command, "kafka")) fprintf(f, "%s", usage_kafka);
    fprintf(f, "\n%s", usage_common);
}

static int usage_error(const char *command, const char *fmt, const char *arg)
{
    fprintf(stderr, "Error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n\n");
    usage(stderr, command);
    return EXIT_USAGE;
}

/* ---- options ------------------------------------------------------------ */

/* What every command accepts, collected before the configuration loads. */
typedef struct {
    const char *command;
    const char *jobmanager;  /* -m value, or NULL */
    const char *config_path; /* --config value, or NULL */
    const char *dflags[64];  /* -D values, in order */
    int ndflags;
    int help;
} common_opts;

typedef struct {
    int argc;
    char **argv;
    int i;           /* next argument */
    int only_pos;    /* after "--" */
} arg_iter;

/* Match argv[it->i] against -s / --long. For an option with a value
 * (`val` non-NULL) accept "-s V", "-sV", "--long V" and "--long=V".
 * Returns 1 on a match (advancing), 0 if no match, -1 if the value is
 * missing. */
static int match(arg_iter *it, char s, const char *l, const char **val)
{
    const char *a = it->argv[it->i];
    size_t ll = l ? strlen(l) : 0;
    int is_short = s && a[0] == '-' && a[1] == s;
    int is_long = l && a[0] == '-' && a[1] == '-' && strncmp(a + 2, l, ll) == 0;
    if (!val) {
        if ((is_short && a[2] == '\0') || (is_long && a[2 + ll] == '\0')) {
            it->i++;
            return 1;
        }
        return 0;
    }
    if (is_short && a[2] != '\0') {
        *val = a + 2;
        it->i++;
        return 1;
    }
    if (is_long && a[2 + ll] == '=') {
        *val = a + 3 + ll;
        it->i++;
        return 1;
    }
    if ((is_short && a[2] == '\0') || (is_long && a[2 + ll] == '\0')) {
        if (it->i + 1 >= it->argc) return -1;
        *val = it->argv[it->i + 1];
        it->i += 2;
        return 1;
    }
    return 0;
}

/* Consume one option every command knows. Returns 1 if consumed, 0 if the
 * argument is not one, or an exit status (> 1) after a usage error. */
static int common_option(common_opts *o, arg_iter *it)
{
    const char *v = NULL;
    int r;
    if ((r = match(it, 'm', "jobmanager", &v)) != 0) {
        if (r < 0) return usage_error(o->command, "%s needs HOST:PORT", it->argv[it->i]);
        o->jobmanager = v;
        return 1;
    }
    if ((r = match(it, 0, "config", &v)) != 0) {
        if (r < 0) return usage_error(o->command, "%s needs a file name", it->argv[it->i]);
        o->config_path = v;
        return 1;
    }
    if ((r = match(it, 'D', NULL, &v)) != 0) {
        if (r < 0) return usage_error(o->command, "%s needs key=value", it->argv[it->i]);
        if (o->ndflags == (int)SL_ARRAY_LEN(o->dflags))
            return usage_error(o->command, "too many -D options%s", "");
        o->dflags[o->ndflags++] = v;
        return 1;
    }
    if (match(it, 'h', "help", NULL)) {
        o->help = 1;
        return 1;
    }
    return 0;
}

/* True if the current argument is a positional one; consumes "--". */
static int positional(arg_iter *it)
{
    const char *a = it->argv[it->i];
    if (it->only_pos) return 1;
    if (strcmp(a, "--") == 0) {
        it->only_pos = 1;
        it->i++;
        return 0;
    }
    return a[0] != '-' || a[1] == '\0';
}

/* ---- talking to the JobManager ------------------------------------------ */

typedef struct {
    sl_cli_http *http;
} cli_ctx;

/* Load the configuration and open the client. Returns 0 or an exit status. */
static int connect_jm(cli_ctx *cx, const common_opts *o)
{
    char err[512];
    int rc = 0;
    sl_config *c = sl_config_new();
    const char *dir = getenv("SLUICE_CONF_DIR");
    char *dflt = dir && *dir ? sl_sprintf("%s/sluice.yaml", dir) : sl_strdup("conf/sluice.yaml");
    if (o->config_path ? sl_config_load_file(c, o->config_path, 1, err, sizeof err)
                       : sl_config_load_file(c, dflt, 0, err, sizeof err)) {
        rc = 1;
    } else {
        const char *props = getenv("SLUICE_PROPERTIES");
        if (props && sl_config_load_text(c, props, "SLUICE_PROPERTIES", err, sizeof err))
            rc = 1;
    }
    for (int i = 0; rc == 0 && i < o->ndflags; i++)
        if (sl_config_set_kv(c, o->dflags[i], err, sizeof err)) rc = 1;
    free(dflt);

    char host[256];
    int port = 0;
    if (rc == 0 && o->jobmanager) {
        if (sl_cli_parse_address(o->jobmanager, host, sizeof host, &port, err, sizeof err))
            rc = 1;
    } else if (rc == 0 && sl_ha_enabled(c)) {
        /* high availability: the leader's REST address, from ZooKeeper */
        sl_zk_leader l;
        if (sl_zk_leader_once(c, &l, err, sizeof err) != SL_OK ||
            sl_cli_parse_address(l.rest_url, host, sizeof host, &port, err, sizeof err))
            rc = 1;
    } else if (rc == 0) {
        const char *addr = sl_config_str(c, "rest.address");
        snprintf(host, sizeof host, "%s", *addr ? addr : "localhost");
        port = (int)sl_config_int(c, "rest.port");
        if (port == 0) {
            snprintf(err, sizeof err, "rest.port is 0; give the JobManager's address with -m");
            rc = 1;
        }
    }
    if (rc == 0)
        cx->http = sl_cli_http_new(host, port, sl_config_str(c, "rest.auth-token"),
                                   REQUEST_TIMEOUT_S);
    else
        fprintf(stderr, "Error: %s\n", err);
    sl_config_destroy(c);
    return rc;
}

/* Send a request; on a 2xx answer decode its JSON body into *out (an empty
 * body gives an empty object; out may be NULL). Prints any failure and
 * returns 0 on success, 1 on failure. `*status` gets the HTTP status. */
static int call(cli_ctx *cx, const char *method, const char *uri, const char *body, json_t **out,
                int *status)
{
    char err[512];
    sl_cli_response resp;
    if (out) *out = NULL;
    if (sl_cli_http_request(cx->http, method, uri, body, &resp, err, sizeof err) != SL_OK) {
        fprintf(stderr, "Error: %s\n", err);
        return 1;
    }
    if (status) *status = resp.status;
    if (resp.status < 200 || resp.status > 299) {
        char *text = sl_cli_error_text(resp.status, resp.body, resp.len);
        fputs(text, stderr);
        free(text);
        sl_cli_response_clear(&resp);
        return 1;
    }
    int rc = 0;
    if (out) {
        json_error_t jerr;
        const char *p = resp.body;
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
        *out = *p ? json_loadb(resp.body, resp.len, 0, &jerr) : json_object();
        if (!*out) {
            fprintf(stderr, "Error: unexpected answer from %s %s: not JSON (%s)\n", method, uri,
                    jerr.text);
            rc = 1;
        }
    }
    sl_cli_response_clear(&resp);
    return rc;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Poll an asynchronous operation at `uri` until it completes. Returns 0
 * with *location (caller frees; NULL if the answer had none) or 1 after
 * printing the failure. */
static int wait_operation(cli_ctx *cx, const char *uri, char **location)
{
    *location = NULL;
    for (;;) {
        json_t *resp;
        if (call(cx, "GET", uri, NULL, &resp, NULL)) return 1;
        const char *loc;
        char *failure;
        int rc = sl_cli_async_status(resp, &loc, &failure);
        if (rc == SL_OK && loc) *location = sl_strdup(loc);
        json_decref(resp);
        if (rc == SL_OK) return 0;
        if (rc == SL_ERR) {
            fprintf(stderr, "Error: %s\n", failure);
            free(failure);
            return 1;
        }
        sleep_ms(POLL_MS);
    }
}

/* The "request-id" of a 202 answer, or NULL after printing why not. */
static char *request_id(json_t *resp, const char *what)
{
    const char *id = json_string_value(json_object_get(resp, "request-id"));
    if (!id || !*id) {
        fprintf(stderr, "Error: unexpected answer to %s: no \"request-id\"\n", what);
        return NULL;
    }
    return sl_strdup(id);
}

/* ---- run ---------------------------------------------------------------- */

static int is_terminal(const char *state)
{
    return !strcmp(state, "FINISHED") || !strcmp(state, "FAILED") || !strcmp(state, "CANCELED");
}

static int print_root_exception(cli_ctx *cx, const char *jid)
{
    char uri[128];
    snprintf(uri, sizeof uri, "/jobs/%s/exceptions", jid);
    json_t *exc;
    if (call(cx, "GET", uri, NULL, &exc, NULL)) return 1;
    char *text = sl_cli_root_exception(exc);
    json_decref(exc);
    if (text) fprintf(stderr, "Root exception: %s\n", text);
    else fprintf(stderr, "Error: the JobManager recorded no exception for job %s\n", jid);
    free(text);
    return 0;
}

/* Follow the job until it ends; returns the exit status. */
static int follow_job(cli_ctx *cx, const char *jid)
{
    char uri[64], *last_reason = NULL;
    /* Sluice's view of the job: its state and why it is not running yet */
    snprintf(uri, sizeof uri, "/sluice/jobs/%s", jid);
    int rc = 1;
    for (;;) {
        json_t *job;
        if (call(cx, "GET", uri, NULL, &job, NULL)) break;
        const char *state = json_string_value(json_object_get(job, "state"));
        if (!state) state = json_string_value(json_object_get(job, "status"));
        if (!state) {
            fprintf(stderr, "Error: unexpected answer from GET %s: no \"state\"\n", uri);
            json_decref(job);
            break;
        }
        if (is_terminal(state)) {
            printf("Job %s finished with state %s.\n", jid, state);
            fflush(stdout);
            rc = strcmp(state, "FINISHED") == 0 ? 0 : 1;
            if (strcmp(state, "FAILED") == 0) print_root_exception(cx, jid);
            json_decref(job);
            break;
        }
        /* Why a job is not running yet ("waiting for 4 slots, 3 free"),
         * said once each time it changes. */
        const char *reason = json_string_value(json_object_get(job, "state-reason"));
        if (reason && *reason && (!last_reason || strcmp(reason, last_reason) != 0)) {
            printf("%s: %s\n", state, reason);
            fflush(stdout);
            free(last_reason);
            last_reason = sl_strdup(reason);
        }
        json_decref(job);
        sleep_ms(POLL_MS);
    }
    free(last_reason);
    return rc;
}

/* Read a whole file; NULL with err on failure. Caller frees. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sl_seterr(err, errlen, "cannot read job file '%s': %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 8192, n = 0, got;
    char *buf = sl_malloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) buf = sl_realloc(buf, cap *= 2);
    }
    int bad = ferror(f);
    int saved = errno;
    fclose(f);
    if (bad) {
        sl_seterr(err, errlen, "cannot read job file '%s': %s", path, strerror(saved));
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* A C job: a shared object with a sluice_job_main (api/datastream.h). */
static int is_c_job(const char *file)
{
    size_t n = strlen(file);
    return n > 3 && strcmp(file + n - 3, ".so") == 0;
}

/* Load a C job, run its entry point and return the job graph it built
 * (caller frees), or NULL with err. The object stays loaded: its process
 * functions are named by the graph, and the TaskManagers load it from the
 * same absolute path. */
static char *build_c_job(const char *file, int argc, char **argv, size_t *len, char *err,
                         size_t errlen)
{
    char abs[PATH_MAX];
    if (!realpath(file, abs)) {
        sl_seterr(err, errlen, "%s: %s", file, strerror(errno));
        return NULL;
    }
    char *text = sl_ds_build(abs, NULL, abs, abs, argc, argv, err, errlen);
    if (text) *len = strlen(text);
    return text;
}

static int cmd_run(common_opts *o, arg_iter *it)
{
    const char *par = NULL, *savepoint = NULL, *file = NULL;
    int detached = 0, allow_nonrestored = 0;
    int job_argc = 0;
    char **job_argv = NULL;
    while (it->i < it->argc) {
        int r;
        const char *v = NULL;
        if (positional(it)) {
            if (file) return usage_error("run", "unexpected argument '%s'", it->argv[it->i]);
            file = it->argv[it->i++];
            if (is_c_job(file)) { /* what follows a C job are its own arguments */
                job_argc = it->argc - it->i;
                job_argv = it->argv + it->i;
                it->i = it->argc;
            }
        } else if (it->only_pos || it->i >= it->argc) {
            continue;
        } else if ((r = common_option(o, it)) != 0) {
            if (r > 1) return r;
        } else if ((r = match(it, 'p', "parallelism", &v)) != 0) {
            if (r < 0) return usage_error("run", "%s needs a number", it->argv[it->i]);
            par = v;
        } else if ((r = match(it, 's', "fromSavepoint", &v)) != 0) {
            if (r < 0) return usage_error("run", "%s needs a savepoint path", it->argv[it->i]);
            savepoint = v;
        } else if (match(it, 'd', "detached", NULL)) {
            detached = 1;
        } else if (match(it, 'n', "allowNonRestoredState", NULL)) {
            allow_nonrestored = 1;
        } else {
            return usage_error("run", "unknown option '%s'", it->argv[it->i]);
        }
    }
    if (o->help) { usage(stdout, "run"); return 0; }
    if (!file) return usage_error("run", "run needs a job file%s", "");
    int64_t p = 0;
    if (par && (sl_parse_int(par, &p) != SL_OK || p < 1 || p > 32768))
        return usage_error("run", "'%s' is not a parallelism (1 to 32768)", par);

    char err[512];
    size_t len;
    char *body = is_c_job(file) ? build_c_job(file, job_argc, job_argv, &len, err, sizeof err)
                                : read_file(file, &len, err, sizeof err);
    if (!body) {
        fprintf(stderr, "Error: %s\n", err);
        return 1;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(body, len, 0, &jerr);
    if (!doc) {
        size_t fl = strlen(file);
        if (fl > 4 && strcmp(file + fl - 4, ".sql") == 0)
            fprintf(stderr, "Error: %s is a SQL script: run it with 'sluice sql -f %s'\n", file,
                    file);
        else
            fprintf(stderr, "Error: %s:%d:%d: not valid JSON: %s\n", file, jerr.line,
                    jerr.column, jerr.text);
        free(body);
        return 1;
    }
    json_decref(doc);

    cli_ctx cx = {0};
    int rc = connect_jm(&cx, o);
    if (rc) { free(body); return rc; }

    /* POST /jobs?parallelism=N&savepointPath=...&allowNonRestoredState=true */
    char parq[48] = "", *enc = savepoint ? evhttp_uriencode(savepoint, -1, 0) : NULL;
    if (par) snprintf(parq, sizeof parq, "&parallelism=%lld", (long long)p);
    char *spq = enc ? sl_sprintf("&savepointPath=%s", enc) : sl_strdup("");
    free(enc);
    char *uri = sl_sprintf("/jobs%s%s%s", parq, spq,
                           allow_nonrestored ? "&allowNonRestoredState=true" : "");
    free(spq);
    char *amp = strchr(uri, '&');
    if (amp) *amp = '?'; /* the first parameter opens the query */
    json_t *resp = NULL;
    rc = call(&cx, "POST", uri, body, &resp, NULL);
    free(uri);
    free(body);
    if (rc == 0) {
        const char *jid = json_string_value(json_object_get(resp, "jobid"));
        if (!jid) jid = json_string_value(json_object_get(resp, "jid"));
        if (!jid) {
            fprintf(stderr, "Error: unexpected answer to POST /jobs: no \"jobid\"\n");
            rc = 1;
        } else {
            printf("Job has been submitted with JobID %s\n", jid);
            fflush(stdout);
            if (!detached) rc = follow_job(&cx, jid);
        }
    }
    json_decref(resp);
    sl_cli_http_destroy(cx.http);
    return rc;
}

/* ---- list --------------------------------------------------------------- */

static int cmd_list(common_opts *o, arg_iter *it)
{
    int flags = 0;
    while (it->i < it->argc) {
        int r;
        if (positional(it)) {
            return usage_error("list", "unexpected argument '%s'", it->argv[it->i]);
        } else if (it->only_pos || it->i >= it->argc) {
            continue;
        } else if ((r = common_option(o, it)) != 0) {
            if (r > 1) return r;
        } else if (match(it, 'r', "running", NULL)) {
            flags |= SL_CLI_LIST_RUNNING;
        } else if (match(it, 's', "scheduled", NULL)) {
            flags |= SL_CLI_LIST_SCHEDULED;
        } else if (match(it, 'a', "all", NULL)) {
            flags |= SL_CLI_LIST_ALL;
        } else {
            return usage_error("list", "unknown option '%s'", it->argv[it->i]);
        }
    }
    if (o->help) { usage(stdout, "list"); return 0; }
    cli_ctx cx = {0};
    int rc = connect_jm(&cx, o);
    if (rc) return rc;
    printf("Waiting for response...\n");
    fflush(stdout);
    json_t *overview;
    /* Flink's job list with Sluice's state-reason for each job */
    rc = call(&cx, "GET", "/sluice/jobs/overview", NULL, &overview, NULL);
    if (rc == 0) {
        char *text, err[256];
        if (sl_cli_format_list(overview, flags, &text, err, sizeof err) == SL_OK) {
            fputs(text, stdout);
            free(text);
        } else {
            fprintf(stderr, "Error: %s\n", err);
            rc = 1;
        }
        json_decref(overview);
    }
    sl_cli_http_destroy(cx.http);
    return rc;
}

/* ---- cancel ------------------------------------------------------------- */

/* Parse the single JOBID a command takes, or report a usage error. */
static int take_jobid(const char *command, const char *arg, char jid[33])
{
    char err[256];
    if (!arg) return usage_error(command, "%s needs a job ID", command);
    if (sl_cli_parse_jobid(arg, jid, err, sizeof err) != SL_OK) {
        fprintf(stderr, "Error: %s\n", err);
        return 1;
    }
    return 0;
}

static int cmd_cancel(common_opts *o, arg_iter *it)
{
    const char *arg = NULL;
    while (it->i < it->argc) {
        int r;
        if (positional(it)) {
            if (arg) return usage_error("cancel", "unexpected argument '%s'", it->argv[it->i]);
            arg = it->argv[it->i++];
        } else if (it->only_pos || it->i >= it->argc) {
            continue;
        } else if ((r = common_option(o, it)) != 0) {
            if (r > 1) return r;
        } else {
            return usage_error("cancel", "unknown option '%s'", it->argv[it->i]);
        }
    }
    if (o->help) { usage(stdout, "cancel"); return 0; }
    char jid[33];
    int rc = take_jobid("cancel", arg, jid);
    if (rc) return rc;
    cli_ctx cx = {0};
    if ((rc = connect_jm(&cx, o)) != 0) return rc;
    printf("Cancelling job %s.\n", jid);
    fflush(stdout);
    char uri[80];
    snprintf(uri, sizeof uri, "/jobs/%s?mode=cancel", jid);
    rc = call(&cx, "PATCH", uri, NULL, NULL, NULL);
    if (rc == 0) printf("Cancelled job %s.\n", jid);
    sl_cli_http_destroy(cx.http);
    return rc;
}

/* ---- stop --------------------------------------------------------------- */

static int cmd_stop(common_opts *o, arg_iter *it)
{
    const char *arg = NULL, *dir = NULL;
    int drain = 0;
    while (it->i < it->argc) {
        int r;
        const char *v = NULL;
        if (positional(it)) {
            if (arg) return usage_error("stop", "unexpected argument '%s'", it->argv[it->i]);
            arg = it->argv[it->i++];
        } else if (it->only_pos || it->i >= it->argc) {
            continue;
        } else if ((r = common_option(o, it)) != 0) {
            if (r > 1) return r;
        } else if ((r = match(it, 'p', "savepointPath", &v)) != 0 ||
                   (r = match(it, 0, "savepoint", &v)) != 0) {
            if (r < 0) return usage_error("stop", "%s needs a directory", it->argv[it->i]);
            dir = v;
        } else if (match(it, 'd', "drain", NULL)) {
            drain = 1;
        } else {
            return usage_error("stop", "unknown option '%s'", it->argv[it->i]);
        }
    }
    if (o->help) { usage(stdout, "stop"); return 0; }
    char jid[33];
    int rc = take_jobid("stop", arg, jid);
    if (rc) return rc;
    cli_ctx cx = {0};
    if ((rc = connect_jm(&cx, o)) != 0) return rc;

    printf("%s job \"%s\" with a CANONICAL savepoint.\n", drain ? "Draining" : "Suspending", jid);
    fflush(stdout);
    json_t *req = json_object();
    if (dir) json_object_set_new(req, "targetDirectory", json_string(dir));
    json_object_set_new(req, "drain", json_boolean(drain));
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    char uri[128];
    snprintf(uri, sizeof uri, "/jobs/%s/stop", jid);
    json_t *resp = NULL;
    rc = call(&cx, "POST", uri, body, &resp, NULL);
    free(body);
    char *trigger = rc == 0 ? request_id(resp, "POST /jobs/:jobid/stop") : NULL;
    json_decref(resp);
    if (rc == 0 && !trigger) rc = 1;
    if (rc == 0) {
        /* Flink prints nothing more until the savepoint is done */
        snprintf(uri, sizeof uri, "/jobs/%s/savepoints/%s", jid, trigger);
        char *location;
        rc = wait_operation(&cx, uri, &location);
        if (rc == 0) printf("Savepoint completed. Path: %s\n", location ? location : "");
        free(location);
    }
    free(trigger);
    sl_cli_http_destroy(cx.http);
    return rc;
}

/* ---- rescale ------------------------------------------------------------ */

/* A parallelism argument: 1 to 32768, or -1. */
static int parse_par(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return (s[0] && !*end && !errno && v >= 1 && v <= 32768) ? (int)v : -1;
}

/* The rescale of the history that is not among the `before` uuids, or NULL. */
static json_t *new_rescale(json_t *history, json_t *before)
{
    size_t i;
    json_t *e;
    json_array_foreach(history, i, e) {
        const char *u = json_string_value(json_object_get(e, "rescaleUuid"));
        if (u && !json_object_get(before, u)) return e;
    }
    return NULL;
}

/* sluice rescale JOBID [-p N] [--vertex ID=N ...]: PUT the job's resource
 * requirements (each vertex's bounds N..N) and wait for the rescale. */
static int cmd_rescale(common_opts *o, arg_iter *it)
{
    const char *arg = NULL, *vset[64];
    int par = 0, nv = 0;
    while (it->i < it->argc) {
        int r;
        const char *v = NULL;
        if (positional(it)) {
            if (arg) return usage_error("rescale", "unexpected argument '%s'", it->argv[it->i]);
            arg = it->argv[it->i++];
        } else if (it->only_pos || it->i >= it->argc) {
            continue;
        } else if ((r = common_option(o, it)) != 0) {
            if (r > 1) return r;
        } else if ((r = match(it, 'p', "parallelism", &v)) != 0) {
            if (r < 0 || (par = parse_par(v)) < 0)
                return usage_error("rescale", "-p needs a parallelism (1 to 32768)%s", "");
        } else if ((r = match(it, 0, "vertex", &v)) != 0) {
            const char *eq = r > 0 ? strrchr(v, '=') : NULL;
            if (!eq || eq == v || parse_par(eq + 1) < 0)
                return usage_error("rescale", "--vertex needs ID=N (N from 1 to 32768)%s", "");
            if (nv == (int)SL_ARRAY_LEN(vset))
                return usage_error("rescale", "too many --vertex options%s", "");
            vset[nv++] = v;
        } else {
            return usage_error("rescale", "unknown option '%s'", it->argv[it->i]);
        }
    }
    if (o->help) { usage(stdout, "rescale"); return 0; }
    char jid[33];
    int rc = take_jobid("rescale", arg, jid);
    if (rc) return rc;
    if (!par && !nv) return usage_error("rescale", "give -p N or --vertex ID=N%s", "");
    cli_ctx cx = {0};
    if ((rc = connect_jm(&cx, o)) != 0) return rc;
    char uri[160];
    json_t *job = NULL, *hist = NULL, *before = json_object(), *body = json_object();
    int *used = NULL;
    snprintf(uri, sizeof uri, "/jobs/%s", jid);
    if ((rc = call(&cx, "GET", uri, NULL, &job, NULL)) != 0) goto out;
    snprintf(uri, sizeof uri, "/jobs/%s/rescales/history", jid);
    if ((rc = call(&cx, "GET", uri, NULL, &hist, NULL)) != 0) goto out;
    size_t i;
    json_t *e;
    json_array_foreach(hist, i, e) {
        const char *u = json_string_value(json_object_get(e, "rescaleUuid"));
        if (u) json_object_set_new(before, u, json_true());
    }
    /* each vertex at -p N, or as it runs; --vertex (its id or name) over that */
    used = calloc((size_t)nv + 1, sizeof *used);
    json_t *vs = json_object_get(job, "vertices");
    json_array_foreach(vs, i, e) {
        const char *id = json_string_value(json_object_get(e, "id"));
        const char *name = json_string_value(json_object_get(e, "name"));
        int p = par ? par : (int)json_integer_value(json_object_get(e, "parallelism"));
        for (int k = 0; k < nv; k++) {
            size_t len = (size_t)(strrchr(vset[k], '=') - vset[k]);
            if ((id && strlen(id) == len && !strncmp(id, vset[k], len)) ||
                (name && strlen(name) == len && !strncmp(name, vset[k], len))) {
                p = parse_par(strrchr(vset[k], '=') + 1);
                used[k] = 1;
            }
        }
        if (id && p > 0)
            json_object_set_new(body, id, json_pack("{s:{s:i,s:i}}", "parallelism", "lowerBound", p,
                                                    "upperBound", p));
    }
    for (int k = 0; k < nv; k++)
        if (!used[k]) {
            fprintf(stderr, "Error: job %s has no vertex '%.*s' (give its id or name, as GET "
                    "/jobs/%s lists them)\n", jid, (int)(strrchr(vset[k], '=') - vset[k]), vset[k], jid);
            rc = 1;
            goto out;
        }
    printf("Rescaling job %s.\n", jid);
    fflush(stdout);
    char *text = json_dumps(body, JSON_COMPACT);
    snprintf(uri, sizeof uri, "/jobs/%s/resource-requirements", jid);
    rc = call(&cx, "PUT", uri, text, NULL, NULL);
    free(text);
    if (rc) goto out;
    /* wait for its entry in the history to end */
    const char *said = NULL;
    char *said_copy = NULL;
    for (;;) {
        json_decref(hist);
        hist = NULL;
        snprintf(uri, sizeof uri, "/jobs/%s/rescales/history", jid);
        if ((rc = call(&cx, "GET", uri, NULL, &hist, NULL)) != 0) break;
        json_t *rs = new_rescale(hist, before);
        const char *st = rs ? json_string_value(json_object_get(rs, "terminalState")) : NULL;
        if (st) {
            if (!strcmp(st, "IGNORED")) {
                printf("Job %s already runs at that parallelism: nothing changed.\n", jid);
            } else if (!strcmp(st, "COMPLETED")) {
                printf("Job %s is rescaled (rescale %s):\n", jid,
                       json_string_value(json_object_get(rs, "rescaleUuid")));
                const char *k;
                json_t *v;
                json_object_foreach(json_object_get(rs, "vertices"), k, v)
                    printf("  %s: %lld -> %lld\n", json_string_value(json_object_get(v, "jobVertexName")),
                           (long long)json_integer_value(json_object_get(v, "preRescaleParallelism")),
                           (long long)json_integer_value(json_object_get(v, "postRescaleParallelism")));
            } else {
                const char *why = NULL;
                json_t *spans = json_object_get(rs, "schedulerStates");
                json_array_foreach(spans, i, e)
                    if (json_is_string(json_object_get(e, "stringifiedException")))
                        why = json_string_value(json_object_get(e, "stringifiedException"));
                fprintf(stderr, "Error: the rescale of job %s failed (%s)%s%s\n", jid,
                        json_string_value(json_object_get(rs, "terminatedReason")), why ? ": " : "",
                        why ? why : "");
                rc = 1;
            }
            break;
        }
        /* say once, and again when it changes, why it waits for slots */
        json_t *sj = NULL;
        snprintf(uri, sizeof uri, "/sluice/jobs/%s", jid);
        if (call(&cx, "GET", uri, NULL, &sj, NULL) == 0) {
            said = json_string_value(json_object_get(sj, "state-reason"));
            if (said && (!said_copy || strcmp(said, said_copy))) {
                printf("Job %s is %s.\n", jid, said);
                fflush(stdout);
                free(said_copy);
                said_copy = sl_strdup(said);
            }
        }
        json_decref(sj);
        sleep_ms(POLL_MS / 5);
    }
    free(said_copy);
out:
    free(used);
    json_decref(job);
    json_decref(hist);
    json_decref(before);
    json_decref(body);
    sl_cli_http_destroy(cx.http);
    return rc;
}

/* ---- savepoint ---------------------------------------------------------- */

static int dispose_savepoint(cli_ctx *cx, const char *path)
{
    printf("Disposing savepoint '%s'.\n", path);
    fflush(stdout);
    json_t *req = json_pack("{s:s}", "savepoint-path", path);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    json_t *resp = NULL;
    int status = 0;
    int rc = call(cx, "POST", "/savepoints/dispose", body, &resp, &status);
    free(body);
    /* Done at once (200), or an asynchronous operation (202) to follow. */
    if (rc == 0 && json_object_get(resp, "request-id")) {
        char *trigger = request_id(resp, "POST /savepoints/dispose");
        char *location = NULL;
        if (!trigger) {
            json_decref(resp);
            return 1;
        }
        printf("Waiting for response...\n");
        fflush(stdout);
        char *uri = sl_sprintf("/savepoints/dispose/%s", trigger);
        rc = wait_operation(cx, uri, &location);
        free(uri);
        free(location);
        free(trigger);
    }
    json_decref(resp);
    if (rc == 0) printf("Savepoint '%s' disposed.\n", path);
    return rc;
}

static int trigger_savepoint(cli_ctx *cx, const char *jid, const char *dir)
{
    printf("Triggering savepoint for job %s.\n", jid);
    fflush(stdout);
    json_t *req = json_object();
    if (dir) json_object_set_new(req, "target-directory", json_string(dir));
    json_object_set_new(req, "cancel-job", json_false());
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    char uri[128];
    snprintf(uri, sizeof uri, "/jobs/%s/savepoints", jid);
    json_t *resp = NULL;
    int rc = call(cx, "POST", uri, body, &resp, NULL);
    free(body);
    char *trigger = rc == 0 ? request_id(resp, "POST /jobs/:jobid/savepoints") : NULL;
    json_decref(resp);
    if (rc == 0 && !trigger) return 1;
    if (rc) return rc;
    printf("Waiting for response...\n");
    fflush(stdout);
    snprintf(uri, sizeof uri, "/jobs/%s/savepoints/%s", jid, trigger);
    free(trigger);
    char *location;
    rc = wait_operation(cx, uri, &location);
    if (rc == 0) {
        printf("Savepoint completed. Path: %s\n", location ? location : "");
        printf("You can resume your program from this savepoint with the run command.\n");
    }
    free(location);
    return rc;
}

/* sluice savepoint check PATH FILE [-p N] [-n] */
static int cmd_savepoint_check(common_opts *o, arg_iter *it)
{
    const char *pos[2] = {NULL, NULL}, *par = NULL;
    int npos = 0, allow_nonrestored = 0;
    while (it->i < it->argc) {
        int r;
        const char *v = NULL;
        if (positional(it)) {
            if (npos == 2)
                return usage_error("savepoint", "unexpected argument '%s'", it->argv[it->i]);
            pos[npos++] = it->argv[it->i++];
        } else if (it->only_pos || it->i >= it->argc) {
            continue;
        } else if ((r = common_option(o, it)) != 0) {
            if (r > 1) return r;
        } else if ((r = match(it, 'p', "parallelism", &v)) != 0) {
            if (r < 0) return usage_error("savepoint", "%s needs a number", it->argv[it->i]);
            par = v;
        } else if (match(it, 'n', "allowNonRestoredState", NULL)) {
            allow_nonrestored = 1;
        } else {
            return usage_error("savepoint", "unknown option '%s'", it->argv[it->i]);
        }
    }
    if (o->help) { usage(stdout, "savepoint"); return 0; }
    if (npos < 2)
        return usage_error("savepoint", "savepoint check needs a savepoint path and a job "
                                        "file%s", "");
    int64_t p = 0;
    if (par && (sl_parse_int(par, &p) != SL_OK || p < 1 || p > 32768))
        return usage_error("savepoint", "'%s' is not a parallelism (1 to 32768)", par);
    char err[512];
    size_t len;
    char *body = read_file(pos[1], &len, err, sizeof err);
    if (!body) {
        fprintf(stderr, "Error: %s\n", err);
        return 1;
    }
    cli_ctx cx = {0};
    int rc = connect_jm(&cx, o);
    if (rc) {
        free(body);
        return rc;
    }
    char parq[48] = "", *enc = evhttp_uriencode(pos[0], -1, 0);
    if (par) snprintf(parq, sizeof parq, "&parallelism=%lld", (long long)p);
    char *uri = sl_sprintf("/savepoints/check?savepointPath=%s%s%s", enc ? enc : "", parq,
                           allow_nonrestored ? "&allowNonRestoredState=true" : "");
    free(enc);
    json_t *report = NULL;
    rc = call(&cx, "POST", uri, body, &report, NULL);
    free(uri);
    free(body);
    if (rc == 0) {
        char *text;
        if (sl_cli_format_check(report, &text, err, sizeof err) == SL_OK) {
            fputs(text, stdout);
            free(text);
        } else {
            fprintf(stderr, "Error: %s\n", err);
            rc = 1;
        }
    }
    json_decref(report);
    sl_cli_http_destroy(cx.http);
    return rc;
}

static int cmd_savepoint(common_opts *o, arg_iter *it)
{
    if (it->i < it->argc && strcmp(it->argv[it->i], "check") == 0) {
        it->i++;
        return cmd_savepoint_check(o, it);
    }
    const char *pos[2] = {NULL, NULL}, *dispose = NULL;
    int npos = 0;
    while (it->i < it->argc) {
        int r;
        const char *v = NULL;
        if (positional(it)) {
            if (npos == 2)
                return usage_error("savepoint", "unexpected argument '%s'", it->argv[it->i]);
            pos[npos++] = it->argv[it->i++];
        } else if (it->only_pos || it->i >= it->argc) {
            continue;
        } else if ((r = common_option(o, it)) != 0) {
            if (r > 1) return r;
        } else if ((r = match(it, 'd', "dispose", &v)) != 0) {
            if (r < 0)
                return usage_error("savepoint", "%s needs a savepoint path", it->argv[it->i]);
            dispose = v;
        } else {
            return usage_error("savepoint", "unknown option '%s'", it->argv[it->i]);
        }
    }
    if (o->help) { usage(stdout, "savepoint"); return 0; }
    if (dispose && npos > 0)
        return usage_error("savepoint", "unexpected argument '%s' with --dispose", pos[0]);
    char jid[33];
    int rc = 0;
    if (!dispose && (rc = take_jobid("savepoint", pos[0], jid)) != 0) return rc;
    cli_ctx cx = {0};
    if ((rc = connect_jm(&cx, o)) != 0) return rc;
    rc = dispose ? dispose_savepoint(&cx, dispose) : trigger_savepoint(&cx, jid, pos[1]);
    sl_cli_http_destroy(cx.http);
    return rc;
}

/* `sluice sql`: the client is cli/sql.c; here only the options every command
 * takes and the connection (opened lazily: DDL needs no JobManager). */
static int cmd_sql(common_opts *o, arg_iter *it)
{
    char *rest[64];
    int n = 0, rc;
    while (it->i < it->argc) {
        if (!positional(it) && !it->only_pos && it->i < it->argc &&
            (rc = common_option(o, it)) != 0) {
            if (rc > 1) return rc;
            continue;
        }
        if (it->i >= it->argc) break;
        if (n == (int)SL_ARRAY_LEN(rest)) return usage_error("sql", "too many arguments%s", "");
        rest[n++] = it->argv[it->i++];
    }
    if (o->help) { usage(stdout, "sql"); return 0; }
    cli_ctx cx = {0};
    if ((rc = connect_jm(&cx, o)) != 0) return rc;
    rc = sl_cli_sql_main(cx.http, n, rest);
    sl_cli_http_destroy(cx.http);
    return rc;
}

/* `sluice sql-gateway`: Flink's SQL Gateway REST API in front of the JobManager. */
static int cmd_sql_gateway(common_opts *o, arg_iter *it)
{
    char *rest[64];
    int n = 0, rc;
    while (it->i < it->argc) {
        if (!positional(it) && !it->only_pos && it->i < it->argc &&
            strncmp(it->argv[it->i], "-D", 2) && (rc = common_option(o, it)) != 0) {
            if (rc > 1) return rc;
            continue;
        }
        if (it->i >= it->argc) break;
        if (n == (int)SL_ARRAY_LEN(rest))
            return usage_error("sql-gateway", "too many arguments%s", "");
        rest[n++] = it->argv[it->i++];
    }
    if (o->help) { usage(stdout, "sql-gateway"); return 0; }
    cli_ctx cx = {0};
    if ((rc = connect_jm(&cx, o)) != 0) return rc;
    rc = sl_cli_sql_gateway_main(cx.http, n, rest);
    sl_cli_http_destroy(cx.http);
    return rc;
}

/* ---- kafka ---------------------------------------------------------------- */

#define CLI_MAX_TXN_IDS 64

/* `kafka abort`: no JobManager involved (the job that left them is gone). */
static int kafka_abort(const char *bootstrap, const char *const *ids, int nids,
                       const char *const *props, int nprops)
{
    if (!bootstrap) return usage_error("kafka", "kafka abort needs %s", "--bootstrap-servers");
    if (nids == 0) return usage_error("kafka", "kafka abort needs at least one %s", "transactional id");
    int rc = 0;
    for (int i = 0; i < nids; i++) {
        char why[600];
        if (kf_txn_fence(bootstrap, ids[i], props, nprops, 30000, why, sizeof why) != SL_OK) {
            fprintf(stderr, "Error: %s\n", why);
            rc = 1;
        } else {
            printf("Transactional id '%s': fenced; its open transaction (if any) is aborted.\n",
                   ids[i]);
        }
    }
    return rc;
}

static int cmd_kafka(common_opts *o, arg_iter *it)
{
    const char *pos[CLI_MAX_TXN_IDS + 1] = {NULL};
    const char *props[32], *bootstrap = NULL;
    int npos = 0, nprops = 0;
    while (it->i < it->argc) {
        int r;
        const char *a = it->argv[it->i];
        if (positional(it)) {
            if (npos == CLI_MAX_TXN_IDS + 1)
                return usage_error("kafka", "unexpected argument '%s'", a);
            pos[npos++] = it->argv[it->i++];
        } else if (it->only_pos || it->i >= it->argc) {
            continue;
        } else if (!strcmp(a, "-b") || !strcmp(a, "--bootstrap-servers") || !strcmp(a, "-X")) {
            if (it->i + 1 >= it->argc) return usage_error("kafka", "%s needs a value", a);
            if (a[1] == 'X' && nprops == (int)SL_ARRAY_LEN(props))
                return usage_error("kafka", "too many %s properties", "-X");
            if (a[1] == 'X') props[nprops++] = it->argv[it->i + 1];
            else bootstrap = it->argv[it->i + 1];
            it->i += 2;
        } else if ((r = common_option(o, it)) != 0) {
            if (r > 1) return r;
        } else {
            return usage_error("kafka", "unknown option '%s'", a);
        }
    }
    if (o->help) { usage(stdout, "kafka"); return 0; }
    if (pos[0] && !strcmp(pos[0], "abort"))
        return kafka_abort(bootstrap, pos + 1, npos - 1, props, nprops);
    if (!pos[0] || strcmp(pos[0], "transactions"))
        return usage_error("kafka", "unknown kafka command '%s' (transactions, abort)",
                           pos[0] ? pos[0] : "");
    if (npos > 2) return usage_error("kafka", "unexpected argument '%s'", pos[2]);
    char jid[33];
    int rc = take_jobid("kafka", pos[1], jid);
    if (rc) return rc;
    cli_ctx cx = {0};
    if ((rc = connect_jm(&cx, o)) != 0) return rc;
    char uri[80];
    snprintf(uri, sizeof uri, "/sluice/jobs/%s/kafka-transactions", jid);
    json_t *ans = NULL;
    rc = call(&cx, "GET", uri, NULL, &ans, NULL);
    if (rc == 0) {
        char *text, err[256];
        if (sl_cli_format_kafka_txns(ans, &text, err, sizeof err) != SL_OK) {
            fprintf(stderr, "Error: %s\n", err);
            rc = 1;
        } else {
            fputs(text, stdout);
            free(text);
        }
    }
    json_decref(ans);
    sl_cli_http_destroy(cx.http);
    return rc;
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(common_opts *, arg_iter *);
    } commands[] = {{"run", cmd_run},   {"list", cmd_list},           {"cancel", cmd_cancel},
                    {"stop", cmd_stop}, {"savepoint", cmd_savepoint}, {"sql", cmd_sql},
                    {"sql-gateway", cmd_sql_gateway}, {"rescale", cmd_rescale},
                    {"kafka", cmd_kafka}};

    /* A JobManager that hangs up mid-request is an error to report, not a
     * signal to die of. */
    signal(SIGPIPE, SIG_IGN);

    common_opts o = {0};
    arg_iter it = {.argc = argc, .argv = argv, .i = 1};
    /* Options before the command ("sluice -m host:port list"). */
    while (it.i < argc && !positional(&it)) {
        if (it.only_pos) break;
        int r = common_option(&o, &it);
        if (r > 1) return r;
        if (r == 0) return usage_error(NULL, "unknown option '%s'", argv[it.i]);
    }
    if (it.i >= argc) {
        if (o.help) {
            usage(stdout, NULL);
            return 0;
        }
        fprintf(stderr, "Please specify a command.\n\n");
        usage(stderr, NULL);
        return EXIT_USAGE;
    }
    const char *name = argv[it.i++];
    for (size_t i = 0; i < SL_ARRAY_LEN(commands); i++) {
        if (strcmp(name, commands[i].name) == 0) {
            o.command = commands[i].name;
            it.only_pos = 0;
            int rc = commands[i].fn(&o, &it);
            fflush(stdout);
            return rc;
        }
    }
    return usage_error(NULL, "unknown command '%s'", name);
}
