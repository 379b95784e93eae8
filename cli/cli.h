/*
 * Layer cli/ (docs/ARCHITECTURE.md, "Layers"): a top layer, over api/: the
 * `sluice` command and the SQL gateway. Never calls the daemons' code; talks
 * to them over REST.
 *
 * cli.h -- the pieces of the `sluice` command-line client that live in the
 * shared library: a blocking HTTP client for the JobManager's REST API
 * (cli/http.c) and pure functions that turn REST answers into the text the
 * CLI prints (cli/format.c), kept apart from cli/main.c so unit tests can
 * check them without a server.
 *
 * Everything here runs on the CLI's one thread; nothing is thread-safe.
 */
#ifndef SL_CLI_H
#define SL_CLI_H

#include <jansson.h>

#include "sl.h"

/* ---- HTTP ------------------------------------------------------------- */

typedef struct sl_cli_http sl_cli_http;

typedef struct sl_cli_response {
    int status;  /* HTTP status code */
    char *body;  /* NUL-terminated body (may contain no JSON); owned */
    size_t len;  /* body length, without the NUL */
} sl_cli_response;

/* A client for http://host:port. `auth_token` (may be NULL or empty) is
 * sent as `Authorization: Bearer <token>`; `timeout_s` bounds each single
 * request (connect, send, answer), not a sequence of polls. Resolution is
 * deferred to the first request. Caller destroys. */
sl_cli_http *sl_cli_http_new(const char *host, int port, const char *auth_token, int timeout_s);
void sl_cli_http_destroy(sl_cli_http *h);

/* "http://host:port" as the user would type it; borrowed from `h`. */
const char *sl_cli_http_url(const sl_cli_http *h);

/* Send one request and wait for its answer. `method` is GET, POST, PATCH,
 * PUT or DELETE; `uri` is the path with query ("/jobs?parallelism=2");
 * `body` (may be NULL) is sent as application/json. Returns SL_OK when an
 * answer arrived, whatever its status, with `resp` filled (clear it with
 * sl_cli_response_clear); SL_ERR when no answer came (cannot resolve, cannot
 * connect -- "could not connect to the JobManager at http://h:p (is it
 * running?)" --, timeout, connection dropped), with the reason in err. */
int sl_cli_http_request(sl_cli_http *h, const char *method, const char *uri, const char *body,
                        sl_cli_response *resp, char *err, size_t errlen);
/* The same with a body of any type and length (a multipart upload). */
int sl_cli_http_request_raw(sl_cli_http *h, const char *method, const char *uri, const char *ctype,
                            const char *body, size_t blen, sl_cli_response *resp, char *err,
                            size_t errlen);
void sl_cli_response_clear(sl_cli_response *r);

/* User-defined functions (cli/ship.c): upload the shared object of each
 * function the job graph *job names by a local path (POST /jars/upload,
 * once per object) and name it "jar:<id>" instead, so the job carries it
 * to the TaskManagers and keeps it for recovery. *job is replaced (freed).
 * SL_ERR with err. */
int sl_cli_ship_functions(sl_cli_http *h, char **job, char *err, size_t errlen);

/* ---- Formatting --------------------------------------------------------- */

/* Sections of `sluice list`. 0 means Flink's default: running + scheduled. */
#define SL_CLI_LIST_RUNNING 1    /* -r: every non-terminal state but CREATED/INITIALIZING */
#define SL_CLI_LIST_SCHEDULED 2  /* -s: CREATED, INITIALIZING */
#define SL_CLI_LIST_ALL 4        /* -a: running, scheduled and terminated */

/* Format a GET /jobs/overview answer as `sluice list` prints it (after its
 * "Waiting for response..." line): sections in Flink's layout, jobs sorted
 * by start time, times in the local time zone. Returns SL_OK with *out
 * (caller frees), or SL_ERR if the answer has no "jobs" array. */
int sl_cli_format_list(const json_t *overview, int flags, char **out, char *err, size_t errlen);

/* Format a GET /jobs/:id/kafka-transactions answer as `sluice kafka
 * transactions` prints it: one line per open or pre-committed transaction
 * of the job's exactly-once Kafka sinks (vertex, subtask, transactional id,
 * state, checkpoint, records, age), or a line saying there is none. SL_ERR
 * if the answer has no "transactions" array. *out: caller frees. */
int sl_cli_format_kafka_txns(const json_t *answer, char **out, char *err, size_t errlen);

/* Turn a non-2xx answer into the lines the CLI prints on stderr: one
 * "Error: <message>\n" per entry of {"errors":[...]}, or one line naming
 * the status when the body says nothing usable. Caller frees. */
char *sl_cli_error_text(int status, const char *body, size_t len);

/* Read an asynchronous-operation status (GET /jobs/:id/savepoints/:trigger
 * and the like): SL_AGAIN while IN_PROGRESS; SL_OK when COMPLETED, with
 * *location borrowed from `resp` (NULL when the answer has none); SL_ERR
 * when the operation failed or the answer is malformed, with *failure the
 * reason (caller frees). */
int sl_cli_async_status(const json_t *resp, const char **location, char **failure);

/* The root cause from a GET /jobs/:id/exceptions answer as printable text:
 * "<exceptionName>\n<stacktrace>", or the stack trace alone when it opens
 * with the name; NULL if the answer records none. Caller frees. */
char *sl_cli_root_exception(const json_t *exceptions);

/* Format a POST /savepoints/check answer as `sluice savepoint check`
 * prints it: a line naming the snapshot, one line per operator state that
 * maps to a vertex ("uid 'agg' (group_aggregate, keyed, 3 -> 4 subtasks,
 * 12.3 KB) -> vertex 'agg'"), then the states that would be dropped and the
 * vertices that start empty (each section says "none" when empty). Returns
 * SL_OK with *out (caller frees), or SL_ERR if the answer lacks the
 * "mapped", "dropped" or "new" arrays. */
int sl_cli_format_check(const json_t *report, char **out, char *err, size_t errlen);

/* A byte count as people read it: "512 B", "12.3 KB", "4.0 MB", "1.5 GB"
 * (units of 1024). Writes into buf[len] and returns buf. */
const char *sl_cli_format_size(uint64_t bytes, char *buf, size_t len);

/* Check a job id: 32 hexadecimal digits, written lowercase into out[33]. */
int sl_cli_parse_jobid(const char *s, char out[33], char *err, size_t errlen);

/* Parse "host:port", "[v6]:port" or "http://host:port" (a trailing "/"
 * allowed) into host (without brackets) and port. */
int sl_cli_parse_address(const char *s, char *host, size_t hostlen, int *port, char *err,
                         size_t errlen);

/* ---- SQL client --------------------------------------------------------- */

/* `sluice sql [-i init.sql] [-f script.sql]`: Flink's SQL client (cli/sql.c).
 * argv holds the arguments after "sql" that are not common options; `http`
 * is the JobManager's REST client (borrowed; only INSERTs use it). Without
 * -f, statements are read from stdin. Returns the exit status. */
int sl_cli_sql_main(sl_cli_http *http, int argc, char **argv);
/* `sluice sql-gateway`: Flink's SQL Gateway REST API (cli/sql_gateway.c). */
int sl_cli_sql_gateway_main(sl_cli_http *http, int argc, char **argv);

#endif
