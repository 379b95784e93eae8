/*
 * jobgraph.h -- a job as a DAG of operators, parsed from JSON and validated.
 *
 * The JSON form (docs/JOBS.md):
 *   {"name": .., "parallelism": N, "maxParallelism": M,
 *    "vertices": [{"id", "uid", "type", "name", "parallelism", "schema", "config"}],
 *    "edges": [{"from", "to", "strategy": "forward|rebalance|hash|broadcast", "keys": [..],
 *               "input": N, "output": "<side output name>"}]}
 *
 * sl_jobgraph_parse checks everything a user can get wrong -- unknown type or
 * option, missing field, duplicate id, cycle, forward edge between different
 * parallelisms, unknown column, type error -- and names the vertex in the
 * message ("vertex 'calc': line 1, column 3: unknown column 'usr'"). Each
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


const char *sl_part_name(sl_partitioning p); /* "FORWARD", as Flink's ship_strategy */

typedef struct sl_jobgraph sl_jobgraph;

typedef struct sl_edge {
    int from, to;            /* vertex indices */
    sl_partitioning strategy;
    int nkeys;
    int *keys;               /* hash: key column indices in from's output schema */
    int to_input;            /* "input": the logical input of `to` it feeds (0..) */
    int output;              /* "output": index of `from`'s declared output it
                                leaves from (0 = main) */
    char *output_name;       /* as given, until resolved against from's plan */
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
    int ninputs;             /* logical inputs (0 for sources) */
    sl_schema in[SL_MAX_INPUTS]; /* schema of each logical input */
    sl_schema out;           /* main output schema (empty for sinks) */
    void *plan;              /* def->plan result */
    sl_plan_ctx *pc;         /* what plan() declared: keys per input, outputs (owned) */
    int nin, nout;           /* input and output edges */
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
    json_t *conf;            /* the job's "config" (string values, validated) in json, or NULL */
};

/* A job's own setting of `key` from its "config" object (it overrides the
 * cluster's for this job), or NULL when the job does not set it. */
const char *sl_jobgraph_conf(const sl_jobgraph *g, const char *key);
/* The keys a job's "config" may set, NULL-terminated. */
const char *const *sl_jobgraph_conf_keys(void);
/* Check one value of a job's "config" (the key one of those); SL_ERR with err. */
int sl_jobgraph_conf_check(const char *key, const char *value, char *err, size_t errlen);

/* The schema of the rows an edge carries. */
const sl_schema *sl_edge_schema(const sl_jobgraph *g, const sl_edge *e);
/* The schema of output `output` of a planned vertex (0 = main). */
const sl_schema *sl_vertex_output_schema(const sl_vertex *v, int output);

/* Plan one vertex with `nin` logical inputs (schemas copied into v->in; the
 * partitioning of each taken from part[], or "forward" when part is NULL):
 * runs def->plan and keeps its declarations in v->pc. The job graph parser
 * uses it; unit tests plan lone vertices with it. SL_ERR with err (naming the
 * vertex). Free with sl_vertex_plan_free. */
int sl_vertex_plan(sl_vertex *v, int nin, const sl_schema *ins, const sl_plan_input *part,
                   char *err, size_t errlen);
void sl_vertex_plan_free(sl_vertex *v);

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
/* The vertices whose state nothing bounds (sl_plan_unbounded), as a JSON
 * array of {"vertex", "vertex-id" (its chain's job-vertex id), "operator",
 * "key", "setting", "message"} (caller decrefs; empty when none). */
json_t *sl_jobgraph_warnings(const sl_jobgraph *g);

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
