/*
 * format.c -- the `sluice` CLI's pure pieces: REST answers in, text out.
 *
 * `sluice list` mirrors Flink's `flink list` exactly: jobs are grouped into
 * running (any state that is neither scheduled nor globally terminal),
 * scheduled (CREATED, INITIALIZING) and terminated (FINISHED, FAILED,
 * CANCELED) sections, each sorted by start time, each line
 * `dd.MM.yyyy HH:mm:ss : <jid> : <name> (<STATE>)`. Sluice adds one thing
 * Flink lacks: a scheduled job that is waiting for resources carries its
 * reason ("waiting for 4 slots, 3 free") after the state.
 *
 * `sluice savepoint check` has no Flink counterpart: it turns the
 * JobManager's restore plan (POST /savepoints/check) into a short report of
 * where each operator state would go, what would be dropped and which
 * vertices would start empty, so a restore can be judged before it runs.
 *
 * Nothing here does I/O; text is built in an open_memstream buffer.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* ---- list --------------------------------------------------------------- */

enum { SEC_RUNNING, SEC_SCHEDULED, SEC_TERMINATED };

static int section_of(const char *state)
{
    if (strcmp(state, "CREATED") == 0 || strcmp(state, "INITIALIZING") == 0)
        return SEC_SCHEDULED;
    if (strcmp(state, "FINISHED") == 0 || strcmp(state, "FAILED") == 0 ||
        strcmp(state, "CANCELED") == 0)
        return SEC_TERMINATED;
    return SEC_RUNNING;
}

typedef struct {
    const json_t *job;
    long long start;  /* ms since the epoch */
    size_t order;     /* position in the answer, so equal start times keep it */
} list_item;

static int by_start(const void *a, const void *b)
{
    const list_item *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static const char *str_field(const json_t *o, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static void print_job(FILE *f, const json_t *job, long long start, int with_reason)
{
    char when[32] = "";
    time_t t = (time_t)(start / 1000);
    struct tm tm;
    if (localtime_r(&t, &tm)) strftime(when, sizeof when, "%d.%m.%Y %H:%M:%S", &tm);
    fprintf(f, "%s : %s : %s (%s)", when, str_field(job, "jid", "?"), str_field(job, "name", ""),
            str_field(job, "state", "?"));
    const char *reason = with_reason ? str_field(job, "state-reason", NULL) : NULL;
    if (reason && *reason) fprintf(f, " \xe2\x80\x94 %s", reason);
    fputc('\n', f);
}

static void print_section(FILE *f, const list_item *items, size_t n, int section)
{
    static const char *const headers[] = {
        "------------------ Running/Restarting Jobs -------------------",
        "----------------------- Scheduled Jobs -----------------------",
        "---------------------- Terminated Jobs -----------------------",
    };
    static const char *const empty[] = {"No running jobs.", "No scheduled jobs.", NULL};
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        if (section_of(str_field(items[i].job, "state", "")) == section) count++;
    if (count == 0) {
        if (empty[section]) fprintf(f, "%s\n", empty[section]);
        return;
    }
    fprintf(f, "%s\n", headers[section]);
    for (size_t i = 0; i < n; i++)
        if (section_of(str_field(items[i].job, "state", "")) == section)
            print_job(f, items[i].job, items[i].start, section == SEC_SCHEDULED);
    fprintf(f, "--------------------------------------------------------------\n");
}

int sl_cli_format_list(const json_t *overview, int flags, char **out, char *err, size_t errlen)
{
    const json_t *jobs = json_object_get(overview, "jobs");
    if (!json_is_array(jobs))
        return sl_seterr(err, errlen, "unexpected answer from GET /sluice/jobs/overview: no \"jobs\" array");
    size_t n = json_array_size(jobs), m = 0;
    list_item *items = sl_calloc(n ? n : 1, sizeof *items);
    for (size_t i = 0; i < n; i++) {
        const json_t *job = json_array_get(jobs, i);
        if (!json_is_object(job)) continue;
        const json_t *st = json_object_get(job, "start-time");
        items[m].job = job;
        items[m].start = json_is_integer(st) ? (long long)json_integer_value(st)
                         : json_is_real(st)  ? (long long)json_real_value(st)
                                             : 0;
        items[m].order = m;
        m++;
    }
    qsort(items, m, sizeof *items, by_start);

    if (flags == 0) flags = SL_CLI_LIST_RUNNING | SL_CLI_LIST_SCHEDULED;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        free(items);
        return sl_seterr(err, errlen, "out of memory");
    }
    if (flags & (SL_CLI_LIST_RUNNING | SL_CLI_LIST_ALL)) print_section(f, items, m, SEC_RUNNING);
    if (flags & (SL_CLI_LIST_SCHEDULED | SL_CLI_LIST_ALL))
        print_section(f, items, m, SEC_SCHEDULED);
    if (flags & SL_CLI_LIST_ALL) print_section(f, items, m, SEC_TERMINATED);
    fclose(f);
    free(items);
    *out = buf;
    return SL_OK;
}

/* ---- errors and async operations ------------------------------------------ */

/* Trim trailing whitespace (a server message's final newline) in place. */
static char *rtrim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

char *sl_cli_error_text(int status, const char *body, size_t len)
{
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    if (!f) return sl_strdup("Error: out of memory\n");
    int printed = 0;
    json_t *doc = body ? json_loadb(body, len, 0, NULL) : NULL;
    const json_t *errors = json_object_get(doc, "errors");
    size_t i;
    const json_t *e;
    json_array_foreach(errors, i, e) {
        char *msg = json_is_string(e) ? sl_strdup(json_string_value(e))
                                      : json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
        if (msg && *rtrim(msg)) {
            fprintf(f, "Error: %s\n", msg);
            printed = 1;
        }
        free(msg);
    }
    json_decref(doc);
    if (!printed) {
        /* No JSON errors: show the start of whatever the server said. */
        char snippet[201] = "";
        if (body) {
            size_t n = SL_MIN(len, sizeof snippet - 1);
            memcpy(snippet, body, n);
            snippet[n] = '\0';
            for (char *p = snippet; *p; p++)
                if (*p == '\n' || *p == '\r') *p = ' ';
            rtrim(snippet);
        }
        if (*snippet)
            fprintf(f, "Error: the JobManager answered HTTP %d: %s\n", status, snippet);
        else
            fprintf(f, "Error: the JobManager answered HTTP %d\n", status);
    }
    fclose(f);
    return buf;
}

/* A failure cause as text: a string as is, an object by its message,
 * stack trace or class (Flink sends {"class","stack-trace",...}). */
static char *cause_text(const json_t *cause)
{
    if (json_is_string(cause)) return sl_strdup(json_string_value(cause));
    static const char *const keys[] = {"message", "stack-trace", "stacktrace", "class"};
    for (size_t i = 0; i < SL_ARRAY_LEN(keys); i++) {
        const char *s = str_field(cause, keys[i], NULL);
        if (s && *s) return rtrim(sl_strdup(s));
    }
    char *dump = json_dumps(cause, JSON_COMPACT | JSON_ENCODE_ANY);
    return dump ? dump : sl_strdup("unknown failure");
}

int sl_cli_async_status(const json_t *resp, const char **location, char **failure)
{
    *location = NULL;
    *failure = NULL;
    const json_t *status = json_object_get(resp, "status");
    const char *id = str_field(status, "id", NULL);
    if (!id) {
        *failure = sl_strdup("unexpected answer from the JobManager: no status.id");
        return SL_ERR;
    }
    if (strcmp(id, "IN_PROGRESS") == 0) return SL_AGAIN;
    if (strcmp(id, "COMPLETED") != 0) {
        *failure = sl_sprintf("unexpected operation status '%s'", id);
        return SL_ERR;
    }
    const json_t *op = json_object_get(resp, "operation");
    const json_t *cause = json_object_get(op, "failure-cause");
    if (cause && !json_is_null(cause)) {
        *failure = cause_text(cause);
        return SL_ERR;
    }
    *location = str_field(op, "location", NULL);
    return SL_OK;
}

char *sl_cli_root_exception(const json_t *exceptions)
{
    const json_t *hist = json_object_get(exceptions, "exceptionHistory");
    const json_t *first = json_array_get(json_object_get(hist, "entries"), 0);
    const char *name = str_field(first, "exceptionName", NULL);
    const char *trace = str_field(first, "stacktrace", NULL);
    if (!name && !trace) {
        /* Flink's older answer carries the root exception at the top level. */
        trace = str_field(exceptions, "root-exception", NULL);
        if (!trace || !*trace) return NULL;
        return rtrim(sl_strdup(trace));
    }
    if (!trace || !*trace) return rtrim(sl_strdup(name));
    /* A stack trace usually opens with the exception's name: say it once. */
    if (!name || !*name || strncmp(trace, name, strlen(name)) == 0)
        return rtrim(sl_strdup(trace));
    return rtrim(sl_sprintf("%s\n%s", name, trace));
}

/* ---- savepoint check ------------------------------------------------------ */

const char *sl_cli_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"KB", "MB", "GB", "TB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    /* move up a unit when the value would print as 1024.0 or more */
    while (v >= 1023.95 && u + 1 < SL_ARRAY_LEN(units)) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, "%.1f %s", v, units[u]);
    return buf;
}

static long long int_field(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v)
           : json_is_real(v)  ? (long long)json_real_value(v)
                              : 0;
}

/* "2 subtasks", "1 subtask" or "2 -> 4 subtasks". */
static void print_subtasks(FILE *f, long long from, long long to)
{
    if (from == to) fprintf(f, "%lld subtask%s", from, from == 1 ? "" : "s");
    else fprintf(f, "%lld -> %lld subtask%s", from, to, to == 1 ? "" : "s");
}

int sl_cli_format_check(const json_t *report, char **out, char *err, size_t errlen)
{
    const json_t *mapped = json_object_get(report, "mapped");
    const json_t *dropped = json_object_get(report, "dropped");
    const json_t *fresh = json_object_get(report, "new");
    if (!json_is_array(mapped) || !json_is_array(dropped) || !json_is_array(fresh))
        return sl_seterr(err, errlen, "unexpected answer from POST /savepoints/check: no "
                                      "\"mapped\", \"dropped\" and \"new\" arrays");
    char *buf = NULL, size[32];
    size_t len = 0, i;
    const json_t *e;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return sl_seterr(err, errlen, "out of memory");

    const json_t *is_sp = json_object_get(report, "is-savepoint");
    fprintf(f, "%s %s (checkpoint %lld, maxParallelism %lld)\n",
            json_is_false(is_sp) ? "Retained checkpoint" : "Savepoint",
            str_field(report, "savepoint", "?"), int_field(report, "checkpoint-id"),
            int_field(report, "maxParallelism"));

    fprintf(f, "State restored by uid:%s\n", json_array_size(mapped) ? "" : " none");
    json_array_foreach(mapped, i, e) {
        fprintf(f, "  uid '%s' (%s, %s, ", str_field(e, "uid", "?"), str_field(e, "type", "?"),
                json_is_true(json_object_get(e, "keyed")) ? "keyed" : "operator state");
        print_subtasks(f, int_field(e, "from-parallelism"), int_field(e, "parallelism"));
        fprintf(f, ", %s) -> vertex '%s'\n",
                sl_cli_format_size((uint64_t)int_field(e, "state-size"), size, sizeof size),
                str_field(e, "vertex", "?"));
    }

    fprintf(f, "Dropped (no vertex with this uid):%s\n", json_array_size(dropped) ? "" : " none");
    json_array_foreach(dropped, i, e) {
        long long p = int_field(e, "parallelism");
        fprintf(f, "  uid '%s' (%s, ", str_field(e, "uid", "?"), str_field(e, "type", "?"));
        print_subtasks(f, p, p);
        fprintf(f, ", %s)\n",
                sl_cli_format_size((uint64_t)int_field(e, "state-size"), size, sizeof size));
    }

    fprintf(f, "Starts empty:%s\n", json_array_size(fresh) ? "" : " none");
    json_array_foreach(fresh, i, e) {
        const char *vid = str_field(e, "vertex", "?"), *uid = str_field(e, "uid", vid);
        fprintf(f, "  vertex '%s' (", vid);
        if (strcmp(uid, vid) != 0) fprintf(f, "uid '%s', ", uid);
        fprintf(f, "%s)\n", str_field(e, "type", "?"));
    }
    fclose(f);
    *out = buf;
    return SL_OK;
}

/* ---- arguments ---------------------------------------------------------- */

int sl_cli_parse_jobid(const char *s, char out[33], char *err, size_t errlen)
{
    size_t n = strlen(s);
    int ok = n == 32;
    for (size_t i = 0; ok && i < n; i++) ok = isxdigit((unsigned char)s[i]) != 0;
    if (!ok)
        return sl_seterr(err, errlen, "'%s' is not a valid job ID (32 hexadecimal digits)", s);
    for (size_t i = 0; i < 32; i++) out[i] = (char)tolower((unsigned char)s[i]);
    out[32] = '\0';
    return SL_OK;
}

int sl_cli_parse_address(const char *s, char *host, size_t hostlen, int *port, char *err,
                         size_t errlen)
{
    const char *p = s;
    if (strncmp(p, "http://", 7) == 0) p += 7;
    else if (strstr(p, "://"))
        return sl_seterr(err, errlen, "'%s': only http:// addresses are supported", s);
    size_t n = strlen(p);
    if (n > 0 && p[n - 1] == '/') n--;
    const char *hs, *colon;
    size_t hn;
    if (n > 0 && p[0] == '[') {
        const char *close = memchr(p, ']', n);
        if (!close || close + 1 >= p + n || close[1] != ':')
            return sl_seterr(err, errlen, "'%s' is not an address of the form host:port", s);
        hs = p + 1;
        hn = (size_t)(close - hs);
        colon = close + 1;
    } else {
        colon = NULL;
        for (const char *q = p; q < p + n; q++)
            if (*q == ':') colon = q;
        if (!colon)
            return sl_seterr(err, errlen, "'%s' is not an address of the form host:port", s);
        hs = p;
        hn = (size_t)(colon - p);
    }
    if (hn == 0 || hn >= hostlen)
        return sl_seterr(err, errlen, "'%s' is not an address of the form host:port", s);
    size_t pn = (size_t)(p + n - (colon + 1));
    long v = 0;
    int ok = pn > 0 && pn <= 5;
    for (size_t i = 0; ok && i < pn; i++) {
        ok = isdigit((unsigned char)colon[1 + i]) != 0;
        v = v * 10 + (colon[1 + i] - '0');
    }
    if (!ok || v < 1 || v > 65535)
        return sl_seterr(err, errlen, "'%s': the port is not a number from 1 to 65535", s);
    memcpy(host, hs, hn);
    host[hn] = '\0';
    *port = (int)v;
    return SL_OK;
}

int sl_cli_format_kafka_txns(const json_t *answer, char **out, char *err, size_t errlen)
{
    const json_t *list = json_object_get(answer, "transactions");
    if (!json_is_array(list))
        return sl_seterr(err, errlen, "unexpected answer: no \"transactions\" array");
    size_t cap = 256 + json_array_size(list) * 300, len = 0;
    char *s = sl_malloc(cap);
    s[0] = '\0';
    if (json_array_size(list) == 0) {
        snprintf(s, cap, "No open or pre-committed Kafka transactions.\n");
        *out = s;
        return SL_OK;
    }
    len += (size_t)snprintf(s + len, cap - len, "%-16s %-7s %-32s %-13s %-10s %-9s %s\n", "VERTEX",
                            "SUBTASK", "TRANSACTIONAL ID", "STATE", "CHECKPOINT", "RECORDS", "AGE");
    size_t i;
    const json_t *t;
    json_array_foreach(list, i, t) {
        const json_t *cp = json_object_get(t, "checkpoint-id");
        char cps[32];
        if (json_is_integer(cp)) snprintf(cps, sizeof cps, "%lld", (long long)json_integer_value(cp));
        else snprintf(cps, sizeof cps, "-");
        const char *vid = json_string_value(json_object_get(t, "vertex"));
        const char *id = json_string_value(json_object_get(t, "transactional-id"));
        const char *st = json_string_value(json_object_get(t, "state"));
        double age = (double)json_integer_value(json_object_get(t, "age-ms")) / 1000.0;
        len += (size_t)snprintf(s + len, cap - len, "%-16.100s %-7lld %-32.200s %-13.20s %-10s %-9lld %.1f s\n",
                                vid ? vid : "?",
                                (long long)json_integer_value(json_object_get(t, "subtask")),
                                id ? id : "?", st ? st : "?", cps,
                                (long long)json_integer_value(json_object_get(t, "records")), age);
        if (len >= cap) len = cap - 1;
    }
    *out = s;
    return SL_OK;
}
