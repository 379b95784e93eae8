/*
 * fuzz_rest.c -- libFuzzer target for REST request bodies and arguments,
 * through the functions the JobManager's handlers (jobmanager/rest.c) call
 * on them: POST /jobs and /savepoints/check parse the body as a job graph
 * (with ?parallelism= as an integer), and the savepoint, stop and dispose
 * bodies are JSON whose directory strings go through sl_config_local_path.
 * Byte 0 picks the endpoint; the rest is the body (for POST /jobs, up to
 * the first NUL is the parallelism argument when byte 0 says so).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "config.h"
#include "jobgraph.h"
#include "operator.h"

static void local_path(json_t *v)
{
    if (!json_is_string(v)) return;
    char why[300];
    why[0] = '\0';
    char *p = sl_config_local_path(json_string_value(v), why, sizeof why);
    if (!p && !why[0]) abort();
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) {
        sl_ops_register_builtin();
        once = 1;
    }
    if (size < 1) return 0;
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    char err[1024];
    err[0] = '\0';
    if (data[0] % 3 == 0) {
        int64_t p = 0;
        const char *nul = memchr(body, '\0', len);
        if ((data[0] & 4) && nul) {
            char *arg = strdup(body);
            if (sl_parse_int(arg, &p) != SL_OK || p < 1 || p > 32768) p = 0;
            free(arg);
            len -= (size_t)(nul + 1 - body);
            body = nul + 1;
        }
        sl_jobgraph *g = sl_jobgraph_parse(body, len, 1, (int)p, err, sizeof err);
        if (g) sl_jobgraph_destroy(g);
        else if (!err[0]) abort();
        return 0;
    }
    json_error_t jerr;
    json_t *j = json_loadb(body, len, 0, &jerr);
    if (!j) return 0;
    static const char *keys[] = {"target-directory", "targetDirectory", "savepoint-path"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) local_path(json_object_get(j, keys[i]));
    if (json_is_string(j)) local_path(j);
    json_decref(j);
    return 0;
}
