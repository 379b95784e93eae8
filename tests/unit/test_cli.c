/*
 * test_cli.c -- the CLI's pure pieces (list layout, error lines, async
 * operation status, root exception, argument checks) and its HTTP client
 * against an in-process evhttp server.
 *
 * Expected texts are written out by hand in Flink's `flink list` layout
 * and in the `sluice savepoint check` report layout (sizes worked out by
 * hand: 12595 B / 1024 = 12.299... -> "12.3 KB");
 * times are rendered with TZ=UTC, so 1606748549000 ms is
 * 30.11.2020 15:02:29 (checked with `date -u -d @1606748549`).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "cli.h"
#include "sl_test.h"

static void utc(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
}

/* Format `json` with `flags`; returns the text (static) or "<error: ...>". */
static const char *list_of(const char *json, int flags)
{
    static char result[4096];
    json_error_t jerr;
    json_t *doc = json_loads(json, 0, &jerr);
    if (!doc) {
        snprintf(result, sizeof result, "<bad test json: %s>", jerr.text);
        return result;
    }
    char *out = NULL, err[256];
    if (sl_cli_format_list(doc, flags, &out, err, sizeof err) != SL_OK)
        snprintf(result, sizeof result, "<error: %s>", err);
    else
        snprintf(result, sizeof result, "%s", out);
    free(out);
    json_decref(doc);
    return result;
}

#define RUNNING_HDR "------------------ Running/Restarting Jobs -------------------\n"
#define SCHEDULED_HDR "----------------------- Scheduled Jobs -----------------------\n"
#define TERMINATED_HDR "---------------------- Terminated Jobs -----------------------\n"
#define FOOTER "--------------------------------------------------------------\n"

static const char *const overview =
    "{\"jobs\":["
    "{\"jid\":\"bb000000000000000000000000000000\",\"name\":\"Old job\",\"state\":\"FINISHED\","
    "\"start-time\":1606748449000,\"end-time\":1606748500000},"
    "{\"jid\":\"aa000000000000000000000000000000\",\"name\":\"Waiting job\",\"state\":\"CREATED\","
    "\"start-time\":1606748550000,\"state-reason\":\"waiting for 4 slots, 3 free\"},"
    "{\"jid\":\"cca7bc1061d61cf15238e92312c2fc20\",\"name\":\"State machine job\","
    "\"state\":\"RUNNING\",\"start-time\":1606748549000,\"state-reason\":\"not shown\"},"
    "{\"jid\":\"dd000000000000000000000000000000\",\"name\":\"Flaky\",\"state\":\"RESTARTING\","
    "\"start-time\":1606748400000},"
    "{\"jid\":\"ee000000000000000000000000000000\",\"name\":\"Init\",\"state\":\"INITIALIZING\","
    "\"start-time\":1606748551000},"
    "{\"jid\":\"ff000000000000000000000000000000\",\"name\":\"Broken\",\"state\":\"FAILED\","
    "\"start-time\":1606748300000},"
    "{\"jid\":\"11000000000000000000000000000000\",\"name\":\"Going\",\"state\":\"CANCELLING\","
    "\"start-time\":1606748600000},"
    "{\"jid\":\"22000000000000000000000000000000\",\"name\":\"Gone\",\"state\":\"CANCELED\","
    "\"start-time\":1606748300000}"
    "]}";

static void test_list_default(void)
{
    utc();
    /* Running section: RESTARTING 15:00:00, RUNNING 15:02:29, CANCELLING
     * 15:03:20; scheduled: CREATED 15:02:30 with its reason, INITIALIZING
     * 15:02:31. Terminated jobs are not shown without -a. */
    const char *expected =
        RUNNING_HDR
        "30.11.2020 15:00:00 : dd000000000000000000000000000000 : Flaky (RESTARTING)\n"
        "30.11.2020 15:02:29 : cca7bc1061d61cf15238e92312c2fc20 : State machine job (RUNNING)\n"
        "30.11.2020 15:03:20 : 11000000000000000000000000000000 : Going (CANCELLING)\n"
        FOOTER
        SCHEDULED_HDR
        "30.11.2020 15:02:30 : aa000000000000000000000000000000 : Waiting job (CREATED) "
        "\xe2\x80\x94 waiting for 4 slots, 3 free\n"
        "30.11.2020 15:02:31 : ee000000000000000000000000000000 : Init (INITIALIZING)\n"
        FOOTER;
    CHECK_EQ_STR(list_of(overview, 0), expected);
    CHECK_EQ_STR(list_of(overview, SL_CLI_LIST_RUNNING | SL_CLI_LIST_SCHEDULED), expected);
}

static void test_list_all(void)
{
    utc();
    /* Terminated jobs sorted by start time; equal times keep answer order. */
    const char *expected =
        RUNNING_HDR
        "30.11.2020 15:00:00 : dd000000000000000000000000000000 : Flaky (RESTARTING)\n"
        "30.11.2020 15:02:29 : cca7bc1061d61cf15238e92312c2fc20 : State machine job (RUNNING)\n"
        "30.11.2020 15:03:20 : 11000000000000000000000000000000 : Going (CANCELLING)\n"
        FOOTER
        SCHEDULED_HDR
        "30.11.2020 15:02:30 : aa000000000000000000000000000000 : Waiting job (CREATED) "
        "\xe2\x80\x94 waiting for 4 slots, 3 free\n"
        "30.11.2020 15:02:31 : ee000000000000000000000000000000 : Init (INITIALIZING)\n"
        FOOTER
        TERMINATED_HDR
        "30.11.2020 14:58:20 : ff000000000000000000000000000000 : Broken (FAILED)\n"
        "30.11.2020 14:58:20 : 22000000000000000000000000000000 : Gone (CANCELED)\n"
        "30.11.2020 15:00:49 : bb000000000000000000000000000000 : Old job (FINISHED)\n"
        FOOTER;
    CHECK_EQ_STR(list_of(overview, SL_CLI_LIST_ALL), expected);
}

static void test_list_sections(void)
{
    utc();
    CHECK_EQ_STR(list_of(overview, SL_CLI_LIST_SCHEDULED),
                 SCHEDULED_HDR
                 "30.11.2020 15:02:30 : aa000000000000000000000000000000 : Waiting job (CREATED) "
                 "\xe2\x80\x94 waiting for 4 slots, 3 free\n"
                 "30.11.2020 15:02:31 : ee000000000000000000000000000000 : Init (INITIALIZING)\n"
                 FOOTER);
    const char *one = "{\"jobs\":[{\"jid\":\"cca7bc1061d61cf15238e92312c2fc20\","
                      "\"name\":\"State machine job\",\"state\":\"RUNNING\","
                      "\"start-time\":1606748549000}]}";
    /* Flink's own example: running job, then "No scheduled jobs." */
    CHECK_EQ_STR(list_of(one, 0),
                 RUNNING_HDR
                 "30.11.2020 15:02:29 : cca7bc1061d61cf15238e92312c2fc20 : State machine job "
                 "(RUNNING)\n" FOOTER "No scheduled jobs.\n");
    CHECK_EQ_STR(list_of(one, SL_CLI_LIST_SCHEDULED), "No scheduled jobs.\n");
}

static void test_list_empty(void)
{
    utc();
    CHECK_EQ_STR(list_of("{\"jobs\":[]}", 0), "No running jobs.\nNo scheduled jobs.\n");
    CHECK_EQ_STR(list_of("{\"jobs\":[]}", SL_CLI_LIST_RUNNING), "No running jobs.\n");
    /* An empty terminated section prints nothing at all, as in Flink. */
    CHECK_EQ_STR(list_of("{\"jobs\":[]}", SL_CLI_LIST_ALL),
                 "No running jobs.\nNo scheduled jobs.\n");
}

static void test_list_odd_input(void)
{
    utc();
    /* Non-objects are skipped; an unknown state counts as running (it is
     * neither scheduled nor terminal); a missing start time is the epoch. */
    CHECK_EQ_STR(list_of("{\"jobs\":[1,\"x\",null,{\"jid\":\"ab\",\"name\":\"n\","
                         "\"state\":\"SUSPENDED\"}]}", SL_CLI_LIST_RUNNING),
                 RUNNING_HDR "01.01.1970 00:00:00 : ab : n (SUSPENDED)\n" FOOTER);
    CHECK_EQ_STR(list_of("{}", 0),
                 "<error: unexpected answer from GET /sluice/jobs/overview: no \"jobs\" array>");
    CHECK_EQ_STR(list_of("{\"jobs\":{}}", 0),
                 "<error: unexpected answer from GET /sluice/jobs/overview: no \"jobs\" array>");
    CHECK_EQ_STR(list_of("[1]", 0),
                 "<error: unexpected answer from GET /sluice/jobs/overview: no \"jobs\" array>");
}

static void check_error_text(int status, const char *body, const char *expected, int *ok)
{
    char *t = sl_cli_error_text(status, body, body ? strlen(body) : 0);
    *ok = strcmp(t, expected) == 0;
    if (!*ok) fprintf(stderr, "got      \"%s\"\nexpected \"%s\"\n", t, expected);
    free(t);
}

static void test_error_text(void)
{
    int ok;
    check_error_text(400, "{\"errors\":[\"Job graph: vertex 'x' has no type\",\"second\\n\"]}",
                     "Error: Job graph: vertex 'x' has no type\nError: second\n", &ok);
    CHECK(ok);
    check_error_text(404, "", "Error: the JobManager answered HTTP 404\n", &ok);
    CHECK(ok);
    check_error_text(404, NULL, "Error: the JobManager answered HTTP 404\n", &ok);
    CHECK(ok);
    check_error_text(500, "<html>Internal\r\nerror</html>\n",
                     "Error: the JobManager answered HTTP 500: <html>Internal  error</html>\n",
                     &ok);
    CHECK(ok);
    check_error_text(500, "{\"errors\":[]}",
                     "Error: the JobManager answered HTTP 500: {\"errors\":[]}\n", &ok);
    CHECK(ok);
    check_error_text(409, "{\"errors\":[{\"code\":7}]}", "Error: {\"code\":7}\n", &ok);
    CHECK(ok);
}

static int async_of(const char *json, const char **loc, char **failure, json_t **keep)
{
    *keep = json_loads(json, 0, NULL);
    return sl_cli_async_status(*keep, loc, failure);
}

static void test_async_status(void)
{
    const char *loc;
    char *failure;
    json_t *doc;
    CHECK_EQ_INT(async_of("{\"status\":{\"id\":\"IN_PROGRESS\"}}", &loc, &failure, &doc),
                 SL_AGAIN);
    CHECK(loc == NULL && failure == NULL);
    json_decref(doc);

    CHECK_EQ_INT(async_of("{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{\"location\":"
                          "\"file:/tmp/sp/savepoint-cca7bc-bb1e257f0dab\"}}",
                          &loc, &failure, &doc),
                 SL_OK);
    CHECK_EQ_STR(loc, "file:/tmp/sp/savepoint-cca7bc-bb1e257f0dab");
    CHECK(failure == NULL);
    json_decref(doc);

    CHECK_EQ_INT(async_of("{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{\"failure-cause\":"
                          "null,\"location\":\"/sp\"}}", &loc, &failure, &doc),
                 SL_OK);
    CHECK_EQ_STR(loc, "/sp");
    json_decref(doc);

    CHECK_EQ_INT(async_of("{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{}}", &loc,
                          &failure, &doc),
                 SL_OK);
    CHECK(loc == NULL);
    json_decref(doc);

    CHECK_EQ_INT(async_of("{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{\"failure-cause\":"
                          "{\"class\":\"x.CheckpointException\",\"stack-trace\":"
                          "\"CheckpointException: task not running\\n\"}}}",
                          &loc, &failure, &doc),
                 SL_ERR);
    CHECK_EQ_STR(failure, "CheckpointException: task not running");
    free(failure);
    json_decref(doc);

    CHECK_EQ_INT(async_of("{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{\"failure-cause\":"
                          "{\"class\":\"A\",\"message\":\"disk full\"}}}",
                          &loc, &failure, &doc),
                 SL_ERR);
    CHECK_EQ_STR(failure, "disk full");
    free(failure);
    json_decref(doc);

    CHECK_EQ_INT(async_of("{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{\"failure-cause\":"
                          "\"no such job\"}}", &loc, &failure, &doc),
                 SL_ERR);
    CHECK_EQ_STR(failure, "no such job");
    free(failure);
    json_decref(doc);

    CHECK_EQ_INT(async_of("{}", &loc, &failure, &doc), SL_ERR);
    CHECK_EQ_STR(failure, "unexpected answer from the JobManager: no status.id");
    free(failure);
    json_decref(doc);

    CHECK_EQ_INT(async_of("{\"status\":{\"id\":\"LOST\"}}", &loc, &failure, &doc), SL_ERR);
    CHECK_EQ_STR(failure, "unexpected operation status 'LOST'");
    free(failure);
    json_decref(doc);
}

static char *root_of(const char *json)
{
    json_t *doc = json_loads(json, 0, NULL);
    char *t = sl_cli_root_exception(doc);
    json_decref(doc);
    return t;
}

static void test_root_exception(void)
{
    char *t = root_of("{\"exceptionHistory\":{\"entries\":[{\"exceptionName\":"
                      "\"java.lang.RuntimeException: boom\",\"stacktrace\":"
                      "\"java.lang.RuntimeException: boom\\n\\tat op(calc)\\n\"},"
                      "{\"exceptionName\":\"older\"}],\"truncated\":false}}");
    CHECK_EQ_STR(t, "java.lang.RuntimeException: boom\n\tat op(calc)");
    free(t);
    t = root_of("{\"exceptionHistory\":{\"entries\":[{\"exceptionName\":\"SinkError\","
                "\"stacktrace\":\"at sink(file)\"}]}}");
    CHECK_EQ_STR(t, "SinkError\nat sink(file)");
    free(t);
    t = root_of("{\"exceptionHistory\":{\"entries\":[{\"exceptionName\":\"OnlyName\"}]}}");
    CHECK_EQ_STR(t, "OnlyName");
    free(t);
    t = root_of("{\"root-exception\":\"legacy trace\\n\",\"exceptionHistory\":{\"entries\":[]}}");
    CHECK_EQ_STR(t, "legacy trace");
    free(t);
    CHECK(root_of("{\"exceptionHistory\":{\"entries\":[]}}") == NULL);
    CHECK(root_of("{}") == NULL);
}

/* Format a check report; returns the text (static) or "<error: ...>". */
static const char *check_of(const char *json)
{
    static char result[4096];
    json_error_t jerr;
    json_t *doc = json_loads(json, 0, &jerr);
    if (!doc) {
        snprintf(result, sizeof result, "<bad test json: %s>", jerr.text);
        return result;
    }
    char *out = NULL, err[256];
    if (sl_cli_format_check(doc, &out, err, sizeof err) != SL_OK)
        snprintf(result, sizeof result, "<error: %s>", err);
    else
        snprintf(result, sizeof result, "%s", out);
    free(out);
    json_decref(doc);
    return result;
}

static void test_check_rescale(void)
{
    /* 2 -> 4 subtasks everywhere; the source's operator state, the keyed
     * aggregate, a stateless calc that starts empty. */
    const char *report =
        "{\"savepoint\":\"file:/sp/savepoint-cca7bc-bb1e257f0dab\",\"checkpoint-id\":7,"
        "\"is-savepoint\":true,\"maxParallelism\":128,"
        "\"mapped\":["
        "{\"uid\":\"gen\",\"type\":\"datagen\",\"from-parallelism\":2,\"vertex\":\"gen\","
        "\"parallelism\":4,\"keyed\":false,\"state-size\":96},"
        "{\"uid\":\"agg\",\"type\":\"group_aggregate\",\"from-parallelism\":3,"
        "\"vertex\":\"agg\",\"parallelism\":4,\"keyed\":true,\"state-size\":12595}],"
        "\"dropped\":[],"
        "\"new\":[{\"vertex\":\"keyed\",\"uid\":\"keyed\",\"type\":\"calc\"}]}";
    CHECK_EQ_STR(check_of(report),
                 "Savepoint file:/sp/savepoint-cca7bc-bb1e257f0dab (checkpoint 7, "
                 "maxParallelism 128)\n"
                 "State restored by uid:\n"
                 "  uid 'gen' (datagen, operator state, 2 -> 4 subtasks, 96 B) -> vertex 'gen'\n"
                 "  uid 'agg' (group_aggregate, keyed, 3 -> 4 subtasks, 12.3 KB) -> vertex 'agg'\n"
                 "Dropped (no vertex with this uid): none\n"
                 "Starts empty:\n"
                 "  vertex 'keyed' (calc)\n");
}

static void test_check_dropped_and_new(void)
{
    /* A retained checkpoint; the aggregate's uid was renamed, so its state
     * would be dropped and the renamed vertex starts empty; same
     * parallelism is said once, and one subtask in the singular. */
    const char *report =
        "{\"savepoint\":\"/chk/ab/chk-3\",\"checkpoint-id\":3,\"is-savepoint\":false,"
        "\"maxParallelism\":256,"
        "\"mapped\":[{\"uid\":\"out\",\"type\":\"file\",\"from-parallelism\":1,"
        "\"vertex\":\"sink\",\"parallelism\":1,\"keyed\":false,\"state-size\":1048576}],"
        "\"dropped\":[{\"uid\":\"agg\",\"type\":\"group_aggregate\",\"parallelism\":2,"
        "\"state-size\":3221225472}],"
        "\"new\":[{\"vertex\":\"agg\",\"uid\":\"agg-v2\",\"type\":\"group_aggregate\"},"
        "{\"vertex\":\"keyed\",\"uid\":\"keyed\",\"type\":\"calc\"}]}";
    CHECK_EQ_STR(check_of(report),
                 "Retained checkpoint /chk/ab/chk-3 (checkpoint 3, maxParallelism 256)\n"
                 "State restored by uid:\n"
                 "  uid 'out' (file, operator state, 1 subtask, 1.0 MB) -> vertex 'sink'\n"
                 "Dropped (no vertex with this uid):\n"
                 "  uid 'agg' (group_aggregate, 2 subtasks, 3.0 GB)\n"
                 "Starts empty:\n"
                 "  vertex 'agg' (uid 'agg-v2', group_aggregate)\n"
                 "  vertex 'keyed' (calc)\n");
    /* nothing at all maps */
    CHECK_EQ_STR(check_of("{\"savepoint\":\"/s\",\"checkpoint-id\":1,\"maxParallelism\":128,"
                          "\"mapped\":[],\"dropped\":[],\"new\":[]}"),
                 "Savepoint /s (checkpoint 1, maxParallelism 128)\n"
                 "State restored by uid: none\n"
                 "Dropped (no vertex with this uid): none\n"
                 "Starts empty: none\n");
}

static void test_check_bad_answer(void)
{
    const char *want = "<error: unexpected answer from POST /savepoints/check: no \"mapped\", "
                       "\"dropped\" and \"new\" arrays>";
    CHECK_EQ_STR(check_of("{}"), want);
    CHECK_EQ_STR(check_of("{\"mapped\":[],\"dropped\":{},\"new\":[]}"), want);
    CHECK_EQ_STR(check_of("[1]"), want);
    /* missing scalar fields print as placeholders, never crash */
    CHECK_EQ_STR(check_of("{\"mapped\":[{}],\"dropped\":[7],\"new\":[{}]}"),
                 "Savepoint ? (checkpoint 0, maxParallelism 0)\n"
                 "State restored by uid:\n"
                 "  uid '?' (?, operator state, 0 subtasks, 0 B) -> vertex '?'\n"
                 "Dropped (no vertex with this uid):\n"
                 "  uid '?' (?, 0 subtasks, 0 B)\n"
                 "Starts empty:\n"
                 "  vertex '?' (?)\n");
}

static void test_format_size(void)
{
    char b[32];
    CHECK_EQ_STR(sl_cli_format_size(0, b, sizeof b), "0 B");
    CHECK_EQ_STR(sl_cli_format_size(1023, b, sizeof b), "1023 B");
    CHECK_EQ_STR(sl_cli_format_size(1024, b, sizeof b), "1.0 KB");
    CHECK_EQ_STR(sl_cli_format_size(1536, b, sizeof b), "1.5 KB");
    /* 1048575 B = 1023.999 KB would print as "1024.0 KB": one unit up */
    CHECK_EQ_STR(sl_cli_format_size(1048575, b, sizeof b), "1.0 MB");
    CHECK_EQ_STR(sl_cli_format_size(5u * 1024 * 1024 + 104858, b, sizeof b), "5.1 MB");
    CHECK_EQ_STR(sl_cli_format_size(UINT64_MAX, b, sizeof b), "16777216.0 TB");
}

static void test_parse_jobid(void)
{
    char id[33], err[128];
    CHECK(sl_cli_parse_jobid("CCA7BC1061D61CF15238E92312C2FC20", id, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(id, "cca7bc1061d61cf15238e92312c2fc20");
    CHECK(sl_cli_parse_jobid("cca7bc1061d61cf15238e92312c2fc2", id, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "'cca7bc1061d61cf15238e92312c2fc2' is not a valid job ID "
                      "(32 hexadecimal digits)");
    CHECK(sl_cli_parse_jobid("cca7bc1061d61cf15238e92312c2fc2g", id, err, sizeof err) == SL_ERR);
    CHECK(sl_cli_parse_jobid("", id, err, sizeof err) == SL_ERR);
}

static void test_parse_address(void)
{
    char host[64], err[160];
    int port = 0;
    CHECK(sl_cli_parse_address("localhost:8081", host, sizeof host, &port, err, sizeof err) ==
          SL_OK);
    CHECK_EQ_STR(host, "localhost");
    CHECK_EQ_INT(port, 8081);
    CHECK(sl_cli_parse_address("http://jm.example:18081/", host, sizeof host, &port, err,
                               sizeof err) == SL_OK);
    CHECK_EQ_STR(host, "jm.example");
    CHECK_EQ_INT(port, 18081);
    CHECK(sl_cli_parse_address("[::1]:8081", host, sizeof host, &port, err, sizeof err) ==
          SL_OK);
    CHECK_EQ_STR(host, "::1");
    CHECK_EQ_INT(port, 8081);
    CHECK(sl_cli_parse_address("localhost", host, sizeof host, &port, err, sizeof err) ==
          SL_ERR);
    CHECK_EQ_STR(err, "'localhost' is not an address of the form host:port");
    CHECK(sl_cli_parse_address(":8081", host, sizeof host, &port, err, sizeof err) == SL_ERR);
    CHECK(sl_cli_parse_address("h:0", host, sizeof host, &port, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "'h:0': the port is not a number from 1 to 65535");
    CHECK(sl_cli_parse_address("h:65536", host, sizeof host, &port, err, sizeof err) == SL_ERR);
    CHECK(sl_cli_parse_address("h:80x", host, sizeof host, &port, err, sizeof err) == SL_ERR);
    CHECK(sl_cli_parse_address("h:", host, sizeof host, &port, err, sizeof err) == SL_ERR);
    CHECK(sl_cli_parse_address("[::1]8081", host, sizeof host, &port, err, sizeof err) == SL_ERR);
    CHECK(sl_cli_parse_address("https://h:1", host, sizeof host, &port, err, sizeof err) ==
          SL_ERR);
    CHECK_EQ_STR(err, "'https://h:1': only http:// addresses are supported");
}

/* ---- HTTP client against an in-process evhttp server ---------------------- */

typedef struct {
    struct event_base *base;
    struct evhttp *http;
    int port;
    pthread_t thread;
} test_server;

/* Answers every request with what it received, as JSON; "/fail" answers
 * 400 with Flink's error shape; "/quit" ends the server loop. */
static void serve(struct evhttp_request *req, void *arg)
{
    test_server *ts = arg;
    const char *uri = evhttp_request_get_uri(req);
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    struct evbuffer *body = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(body);
    char *text = malloc(n + 1);
    evbuffer_remove(body, text, n);
    text[n] = '\0';
    static const char *const names[] = {"GET", "POST", "HEAD", "PUT", "DELETE",
                                        "OPTIONS", "TRACE", "CONNECT", "PATCH"};
    const char *method = "?";
    for (unsigned i = 0; i < SL_ARRAY_LEN(names); i++)
        if (evhttp_request_get_command(req) == (enum evhttp_cmd_type)(1u << i)) method = names[i];
    const char *auth = evhttp_find_header(in, "Authorization");
    const char *ctype = evhttp_find_header(in, "Content-Type");
    json_t *echo = json_pack("{s:s,s:s,s:s,s:s,s:s}", "method", method, "uri", uri, "auth",
                             auth ? auth : "", "content-type", ctype ? ctype : "", "body", text);
    free(text);
    int fail = strcmp(uri, "/fail") == 0;
    char *out = fail ? strdup("{\"errors\":[\"no such job\"]}") : json_dumps(echo, JSON_COMPACT);
    json_decref(echo);
    struct evbuffer *reply = evbuffer_new();
    evbuffer_add(reply, out, strlen(out));
    free(out);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, fail ? 400 : strcmp(method, "POST") == 0 ? 202 : 200,
                      fail ? "Bad Request" : "OK", reply);
    evbuffer_free(reply);
    if (strcmp(uri, "/quit") == 0) event_base_loopbreak(ts->base);
}

static void *server_main(void *arg)
{
    test_server *ts = arg;
    event_base_dispatch(ts->base);
    return NULL;
}

static int server_start(test_server *ts)
{
    ts->base = event_base_new();
    ts->http = evhttp_new(ts->base);
    evhttp_set_allowed_methods(ts->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PATCH);
    evhttp_set_gencb(ts->http, serve, ts);
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(ts->http, "127.0.0.1", 0);
    if (!bs) return -1;
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&sa, &len);
    ts->port = ntohs(sa.sin_port);
    return pthread_create(&ts->thread, NULL, server_main, ts);
}

static void server_stop(test_server *ts, sl_cli_http *h)
{
    sl_cli_response r;
    if (sl_cli_http_request(h, "GET", "/quit", NULL, &r, NULL, 0) == SL_OK)
        sl_cli_response_clear(&r);
    pthread_join(ts->thread, NULL);
    evhttp_free(ts->http);
    event_base_free(ts->base);
}

static void test_http_roundtrip(void)
{
    test_server ts;
    CHECK(server_start(&ts) == 0);
    /* "localhost" may resolve to ::1 first; the client must fall back to
     * 127.0.0.1, where the server listens. */
    sl_cli_http *h = sl_cli_http_new("localhost", ts.port, "s3cret", 5);
    char url[64], err[256] = "";
    snprintf(url, sizeof url, "http://localhost:%d", ts.port);
    CHECK_EQ_STR(sl_cli_http_url(h), url);

    sl_cli_response r;
    int rc = sl_cli_http_request(h, "POST", "/jobs?parallelism=2", "{\"a\":1}", &r, err,
                                 sizeof err);
    if (rc != SL_OK) fprintf(stderr, "%s\n", err);
    CHECK(rc == SL_OK);
    CHECK_EQ_INT(r.status, 202);
    CHECK_EQ_STR(r.body, "{\"method\":\"POST\",\"uri\":\"/jobs?parallelism=2\",\"auth\":"
                         "\"Bearer s3cret\",\"content-type\":\"application/json\",\"body\":"
                         "\"{\\\"a\\\":1}\"}");
    CHECK_EQ_INT(r.len, strlen(r.body));
    sl_cli_response_clear(&r);

    CHECK(sl_cli_http_request(h, "PATCH", "/jobs/ab?mode=cancel", NULL, &r, err, sizeof err) ==
          SL_OK);
    CHECK_EQ_INT(r.status, 200);
    CHECK(strstr(r.body, "\"method\":\"PATCH\",\"uri\":\"/jobs/ab?mode=cancel\"") != NULL);
    sl_cli_response_clear(&r);

    CHECK(sl_cli_http_request(h, "GET", "/fail", NULL, &r, err, sizeof err) == SL_OK);
    CHECK_EQ_INT(r.status, 400);
    CHECK_EQ_STR(r.body, "{\"errors\":[\"no such job\"]}");
    sl_cli_response_clear(&r);

    CHECK(sl_cli_http_request(h, "BREW", "/", NULL, &r, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "unsupported HTTP method 'BREW'");
    server_stop(&ts, h);
    sl_cli_http_destroy(h);
}

/* A port nothing listens on: bind one, note it, close it. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    bind(fd, (struct sockaddr *)&sa, sizeof sa);
    getsockname(fd, (struct sockaddr *)&sa, &len);
    close(fd);
    return ntohs(sa.sin_port);
}

static void test_http_refused(void)
{
    int port = free_port();
    sl_cli_http *h = sl_cli_http_new("127.0.0.1", port, NULL, 5);
    sl_cli_response r;
    char err[256], expected[256];
    CHECK(sl_cli_http_request(h, "GET", "/jobs/overview", NULL, &r, err, sizeof err) == SL_ERR);
    snprintf(expected, sizeof expected,
             "could not connect to the JobManager at http://127.0.0.1:%d (is it running?)", port);
    CHECK_EQ_STR(err, expected);
    CHECK(r.body == NULL);
    sl_cli_http_destroy(h);
}

static void test_http_timeout(void)
{
    /* A socket that listens but never accepts: the kernel completes the
     * handshake, nobody answers. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    CHECK(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    CHECK(listen(fd, 4) == 0);
    getsockname(fd, (struct sockaddr *)&sa, &len);
    int port = ntohs(sa.sin_port);
    sl_cli_http *h = sl_cli_http_new("127.0.0.1", port, NULL, 1);
    sl_cli_response r;
    char err[256], expected[256];
    int rc = sl_cli_http_request(h, "GET", "/jobs/overview", NULL, &r, err, sizeof err);
    close(fd);
    sl_cli_http_destroy(h);
    CHECK(rc == SL_ERR);
    snprintf(expected, sizeof expected,
             "the JobManager at http://127.0.0.1:%d did not answer GET /jobs/overview within 1 s",
             port);
    CHECK_EQ_STR(err, expected);
}

/* `sluice kafka transactions`: one line per transaction, or a line saying none. */
static void test_kafka_txns(void)
{
    char *out = NULL, err[200];
    json_t *a = json_loads("{\"transactions\": [{\"vertex\": \"sink\", \"subtask\": 1, "
                           "\"transactional-id\": \"p-1-7\", \"state\": \"pre-committed\", "
                           "\"checkpoint-id\": 12, \"records\": 300, \"age-ms\": 2500}, "
                           "{\"vertex\": \"sink\", \"subtask\": 1, \"transactional-id\": \"p-1-8\", "
                           "\"state\": \"open\", \"checkpoint-id\": null, \"records\": 4, "
                           "\"age-ms\": 100}]}", 0, NULL);
    CHECK_EQ_INT(sl_cli_format_kafka_txns(a, &out, err, sizeof err), SL_OK);
    CHECK_EQ_STR(out,
                 "VERTEX           SUBTASK TRANSACTIONAL ID                 STATE         CHECKPOINT RECORDS   AGE\n"
                 "sink             1       p-1-7                            pre-committed 12         300       2.5 s\n"
                 "sink             1       p-1-8                            open          -          4         0.1 s\n");
    free(out);
    json_decref(a);
    a = json_loads("{\"transactions\": []}", 0, NULL);
    CHECK_EQ_INT(sl_cli_format_kafka_txns(a, &out, err, sizeof err), SL_OK);
    CHECK_EQ_STR(out, "No open or pre-committed Kafka transactions.\n");
    free(out);
    json_decref(a);
    a = json_loads("{\"jobs\": []}", 0, NULL);
    CHECK_EQ_INT(sl_cli_format_kafka_txns(a, &out, err, sizeof err), SL_ERR);
    CHECK_EQ_STR(err, "unexpected answer: no \"transactions\" array");
    json_decref(a);
}

SL_TEST_MAIN(SL_TEST(test_kafka_txns), SL_TEST(test_list_default), SL_TEST(test_list_all), SL_TEST(test_list_sections),
             SL_TEST(test_list_empty), SL_TEST(test_list_odd_input), SL_TEST(test_error_text),
             SL_TEST(test_async_status), SL_TEST(test_root_exception), SL_TEST(test_check_rescale),
             SL_TEST(test_check_dropped_and_new), SL_TEST(test_check_bad_answer),
             SL_TEST(test_format_size), SL_TEST(test_parse_jobid),
             SL_TEST(test_parse_address), SL_TEST(test_http_roundtrip),
             SL_TEST(test_http_refused), SL_TEST(test_http_timeout))
