/*
 * fuzz_jobgraph.c -- libFuzzer target for job-graph JSON (core/jobgraph.c):
 * parse, validate and plan every vertex with the built-in operators
 * registered, as POST /jobs does; a graph that is accepted is dumped (what
 * TaskManagers receive) and that dump must parse again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobgraph.h"
#include "operator.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) {
        sl_ops_register_builtin();
        once = 1;
    }
    char err[1024];
    err[0] = '\0';
    sl_jobgraph *g = sl_jobgraph_parse((const char *)data, size, 2, size & 1 ? 3 : 0, err, sizeof err);
    if (!g) {
        if (!err[0]) abort(); /* a refusal says why */
        return 0;
    }
    char *dump = sl_jobgraph_dump(g);
    sl_jobgraph *again = sl_jobgraph_parse(dump, strlen(dump), 2, 0, err, sizeof err);
    if (!again) abort(); /* what the JobManager accepted, a TaskManager must accept */
    sl_jobgraph_destroy(again);
    free(dump);
    sl_jobgraph_destroy(g);
    return 0;
}
