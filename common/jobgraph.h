/*
 * jobgraph.h -- a job as a DAG of operators, parsed from JSON and validated.
 *
 * The JSON form (docs/JOBS.md):
 *   {"name": .., "parallelism": N, "maxParallelism": M,
 *    "vertices": [{"id", "uid", "type", "name", "parallelism", "schema", "config"}],
 *    "edges": [{"from", "to", "strategy": "forward|rebalance|hash|broadcast", "keys": [..]}]}
 *
 * sl_jobgraph_parse checks everything a user can get wrong -- unknown type or
 * option, missing field, duplicate id, cycle, forward edge between different
 * parallelisms, unknown column, type error -- and names the vertex in the
 * message ("vertex 'calc': unknown column 'usr' at position 3"). Each
 * vertex's operator plan() derives its output schema from its input, in
 * topological order.
 *
 * It also computes chains: a vertex is chained to its single upstream when
 * the edge is forward, parallelisms are equal, the upstream has exactly one
 * output and the vertex exactly one input. A chain is what Flink's REST API
 * calls a job vertex; it runs as one task per subtask.
 */
#ifndef SL_JOBGRAPH_H
#define SL_JOBGRAPH_H

#include <jansson.h>
#include "operator.h"

typedef enum {
    SL_PART_FORWARD = 0,
    SL_PART_REBALANCE,
    SL_PART_HASH,
    SL_PART_BROADCAST
} sl_partitioning;

const char *sl_part_name(sl_partitioning p); /* "FORWARD", as Flink's ship_strategy */

typedef struct sl_jobgraph sl_jobgraph;

typedef struct sl_edge {
    int from, to;            /* vertex indices */
    sl_partitioning strategy;
    int nkeys;
    int *keys;               /* hash: key column indices in from's output schema */
    int to_input;            /* index of this edge among `to`'s inputs */
    int late;                /* "output": "late": the late side output of `from`,
                                carrying `from`'s input rows */
} sl_edge;


struct sl_vertex {
    int index;
    char *id;                /* user's id, unique in the job */
    char *uid;               /* stable id for state mapping (defaults to id) */
    char *name;              /* display name (defaults to id) */
    char *type;
    const sl_op_def *def;
    int parallelism;
    json_t *config;          /* borrowed from the graph's JSON (object, maybe empty) */
    json_t *json;            /* the whole vertex object */
    sl_schema declared;      /* "schema" given in JSON (sources), else empty */
    sl_schema in;            /* input schema (empty for sources) */
    sl_schema out;           /* output schema (empty for sinks) */
    void *plan;              /* def->plan result */
    int nin, nout;
    int *in_edges, *out_edges;  /* edge indices */
    int chain;               /* index of the chain this vertex runs in */
    int chain_pos;           /* position inside it (0 = head) */
};

typedef struct sl_chain {
    int n;
    int *vertices;           /* vertex indices, head first */
    int parallelism;
    char *name;              /* "gen -> calc" */
    char id[33];             /* 32-hex job-vertex id, stable: derived from the head's uid */
} sl_chain;

struct sl_jobgraph {
    char *name;
    int parallelism;         /* job default */
    int max_parallelism;     /* number of key groups */
    int nv, ne, nchains;
    sl_vertex *v;
    sl_edge *e;
    sl_chain *chains;        /* in topological order */
    int *topo;               /* vertex indices in topological order */
    json_t *json;            /* owned: the parsed document */
    int max_vertex_parallelism; /* slots a job needs (slot sharing) */
};

/* The schema of the rows an edge carries. */
const sl_schema *sl_edge_schema(const sl_jobgraph *g, const sl_edge *e);

/* Parse and validate. `default_parallelism` (parallelism.default) applies
 * when the job gives none; `override_parallelism` > 0 replaces the job's
 * (sluice run -p). Returns the graph (caller frees) or NULL with err. */
sl_jobgraph *sl_jobgraph_parse(const char *text, size_t len, int default_parallelism,
                               int override_parallelism, char *err, size_t errlen);
void sl_jobgraph_destroy(sl_jobgraph *g);

/* The JSON text the TaskManagers receive at deployment: the original
 * document with the effective parallelism of every vertex filled in.
 * Caller frees. */
char *sl_jobgraph_dump(const sl_jobgraph *g);

int sl_kg_default_max_parallelism(int p);

/* Helpers for operator plan() functions reading v->config. Values may be
 * JSON strings or numbers (Flink's options are strings). */
const char *sl_vconf_str(const sl_vertex *v, const char *key, const char *dflt);
/* SL_OK with *out set (dflt when absent), SL_ERR with "vertex 'x': option 'k': ..." */
int sl_vconf_int(const sl_vertex *v, const char *key, int64_t dflt, int64_t *out, char *err,
                 size_t errlen);
int sl_vconf_duration(const sl_vertex *v, const char *key, int64_t dflt_ms, int64_t *out,
                      char *err, size_t errlen);
/* A non-negative interval: a JSON integer (milliseconds) or a string that
 * sl_interval_parse reads ("5 s", "200 ms", "INTERVAL '5' SECOND"). */
int sl_vconf_interval(const sl_vertex *v, const char *key, int64_t dflt_ms, int64_t *out,
                      char *err, size_t errlen);
/* A JSON array of strings (or a single string); NULL if absent. Borrowed. */
json_t *sl_vconf_array(const sl_vertex *v, const char *key);

#endif
