/*
 * jobgraph.c -- parse, validate and chain a JSON job graph (see jobgraph.h).
 *
 * Validation runs in passes, each of which stops at the first problem and
 * names the vertex or edge: structure and types of the JSON, vertex fields
 * and options, edges, cycles (Kahn's algorithm yields the topological order
 * as a by-product), then schemas and operator plans in topological order,
 * and finally chains. Nothing here touches I/O, so the JobManager can run it
 * on every submission and each TaskManager again at deployment.
 */
#include <ctype.h>
#include <string.h>

#include "jobgraph.h"
#include "config.h"
#include "keygroup.h"
#include "duration.h"

const sl_schema *sl_vertex_output_schema(const sl_vertex *v, int output)
{
    if (output <= 0 || !v->pc || output >= v->pc->nout) return &v->out;
    return &v->pc->outputs[output].schema;
}

const sl_schema *sl_edge_schema(const sl_jobgraph *g, const sl_edge *e)
{
    return sl_vertex_output_schema(&g->v[e->from], e->output);
}

const char *sl_part_name(sl_partitioning p)
{
    switch (p) {
    case SL_PART_FORWARD: return "FORWARD";
    case SL_PART_REBALANCE: return "REBALANCE";
    case SL_PART_HASH: return "HASH";
    case SL_PART_BROADCAST: return "BROADCAST";
    }
    return "?";
}

static int parse_strategy(const char *s, sl_partitioning *out)
{
    static const struct { const char *name; sl_partitioning p; } map[] = {
        {"forward", SL_PART_FORWARD}, {"rebalance", SL_PART_REBALANCE},
        {"hash", SL_PART_HASH}, {"keyby", SL_PART_HASH}, {"broadcast", SL_PART_BROADCAST},
    };
    for (size_t i = 0; i < SL_ARRAY_LEN(map); i++)
        if (!strcasecmp(s, map[i].name)) { *out = map[i].p; return SL_OK; }
    return SL_ERR;
}


static int find_vertex(const sl_jobgraph *g, const char *id)
{
    for (int i = 0; i < g->nv; i++)
        if (!strcmp(g->v[i].id, id)) return i;
    return -1;
}

static int valid_id(const char *s)
{
    if (!*s || strlen(s) > 128) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.') return 0;
    return 1;
}

/* Reject keys of obj not in allowed[]. */
static int check_keys(json_t *obj, const char *const *allowed, const char *what, char *err,
                      size_t errlen)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (!strcmp(*a, key)) { ok = 1; break; }
        if (!ok) return sl_seterr(err, errlen, "%s: unknown field '%s'", what, key);
    }
    return SL_OK;
}

static int get_posint(json_t *obj, const char *key, int dflt, int max, int *out, const char *what,
                      char *err, size_t errlen)
{
    json_t *j = json_object_get(obj, key);
    if (!j) { *out = dflt; return SL_OK; }
    json_int_t x;
    if (json_is_integer(j)) x = json_integer_value(j);
    else if (json_is_string(j)) {
        int64_t y;
        if (sl_parse_int(json_string_value(j), &y) != SL_OK)
            return sl_seterr(err, errlen, "%s: '%s' must be an integer", what, key);
        x = y;
    } else
        return sl_seterr(err, errlen, "%s: '%s' must be an integer", what, key);
    if (x < 1 || x > max)
        return sl_seterr(err, errlen, "%s: '%s' must be between 1 and %d, got %lld", what, key, max,
                         (long long)x);
    *out = (int)x;
    return SL_OK;
}

static int parse_schema(json_t *arr, sl_schema *s, const char *what, char *err, size_t errlen)
{
    if (!json_is_array(arr))
        return sl_seterr(err, errlen, "%s: 'schema' must be an array of {\"name\", \"type\"}", what);
    size_t i;
    json_t *f;
    json_array_foreach(arr, i, f) {
        json_t *name = json_object_get(f, "name"), *type = json_object_get(f, "type");
        if (!json_is_object(f) || !json_is_string(name) || !json_is_string(type))
            return sl_seterr(err, errlen, "%s: schema field %zu needs string 'name' and 'type'",
                             what, i + 1);
        const sl_dtype *t;
        char why[300];
        if (sl_dtype_parse(json_string_value(type), &t, why, sizeof why) != SL_OK)
            return sl_seterr(err, errlen, "%s: schema field '%s': unknown type '%s' (%s)", what,
                             json_string_value(name), json_string_value(type), why);
        if (sl_schema_find(s, json_string_value(name)) >= 0)
            return sl_seterr(err, errlen, "%s: schema field '%s' appears twice", what,
                             json_string_value(name));
        if (s->n >= SL_MAX_FIELDS)
            return sl_seterr(err, errlen, "%s: more than %d schema fields", what, SL_MAX_FIELDS);
        sl_schema_add_dt(s, json_string_value(name), t);
    }
    if (s->n == 0) return sl_seterr(err, errlen, "%s: 'schema' is empty", what);
    return SL_OK;
}

static const char *const vertex_keys[] = {"id", "uid", "name", "type", "parallelism", "schema",
                                          "config", "description", NULL};
static const char *const edge_keys[] = {"from", "to", "strategy", "keys", "input", "output", NULL};
static const char *const job_keys[] = {"name", "parallelism", "maxParallelism", "vertices",
                                       "edges", "description", "config", NULL};

const char *sl_jobgraph_conf(const sl_jobgraph *g, const char *key)
{
    return g && g->conf ? json_string_value(json_object_get(g->conf, key)) : NULL;
}

/* Check the job's "config" object and keep it with string values. */
static int parse_job_conf(sl_jobgraph *g, json_t *root, char *err, size_t errlen)
{
    json_t *jc = json_object_get(root, "config");
    if (!jc) return SL_OK;
    if (!json_is_object(jc)) return sl_seterr(err, errlen, "job: 'config' must be an object");
    json_t *norm = json_object();
    sl_config *scratch = sl_config_new();
    const char *key;
    json_t *val;
    int rc = SL_OK;
    json_object_foreach(jc, key, val) {
        int known = 0;
        for (const char *const *k = sl_jobgraph_conf_keys(); *k; k++)
            if (!strcmp(*k, key)) known = 1;
        if (!known) {
            const char *hint = sl_closest(key, sl_jobgraph_conf_keys());
            if (hint)
                rc = sl_seterr(err, errlen, "job: config: unknown key '%s'; did you mean '%s'?", key,
                               hint);
            else
                rc = sl_seterr(err, errlen, "job: config: '%s' cannot be set per job (a job sets "
                               "parallelism.default, pipeline.name, table.exec.state.ttl, "
                               "state.backend.type, execution.checkpointing.* and "
                               "restart-strategy.*; the rest is the cluster's configuration)", key);
            break;
        }
        char buf[64];
        const char *v = NULL;
        if (json_is_string(val)) v = json_string_value(val);
        else if (json_is_integer(val))
            snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(val)), v = buf;
        else if (json_is_real(val)) snprintf(buf, sizeof buf, "%.17g", json_real_value(val)), v = buf;
        else if (json_is_boolean(val)) v = json_is_true(val) ? "true" : "false";
        if (!v) {
            rc = sl_seterr(err, errlen, "job: config: '%s' must be a string or a number", key);
            break;
        }
        char e2[512];
        if (sl_jobgraph_conf_check(key, v, e2, sizeof e2) != SL_OK) {
            rc = sl_seterr(err, errlen, "job: config: %s", e2);
            break;
        }
        if (strcmp(key, "pipeline.name") && strcmp(key, "table.exec.state.ttl"))
            sl_config_set(scratch, key, v, NULL, NULL, 0);
        json_object_set_new(norm, key, json_string(v));
    }
    if (rc == SL_OK && sl_config_check(scratch, err, errlen) != SL_OK) rc = SL_ERR;
    sl_config_destroy(scratch);
    if (rc != SL_OK) {
        json_decref(norm);
        return SL_ERR;
    }
    json_object_set_new(root, "config", norm);
    g->conf = norm;
    return SL_OK;
}

static int parse_vertex(sl_jobgraph *g, int i, json_t *jv, char *err, size_t errlen)
{
    sl_vertex *v = &g->v[i];
    char what[160];
    v->index = i;
    if (!json_is_object(jv)) return sl_seterr(err, errlen, "vertex %d: must be an object", i + 1);
    json_t *jid = json_object_get(jv, "id");
    if (!json_is_string(jid)) return sl_seterr(err, errlen, "vertex %d: missing string 'id'", i + 1);
    if (!valid_id(json_string_value(jid)))
        return sl_seterr(err, errlen, "vertex %d: id '%.64s' may only use letters, digits, '_', '-', '.'",
                         i + 1, json_string_value(jid));
    v->id = sl_strdup(json_string_value(jid));
    snprintf(what, sizeof what, "vertex '%s'", v->id);
    if (find_vertex(g, v->id) != i) return sl_seterr(err, errlen, "%s: duplicate id", what);
    if (check_keys(jv, vertex_keys, what, err, errlen)) return SL_ERR;
    json_t *jt = json_object_get(jv, "type");
    if (!json_is_string(jt)) return sl_seterr(err, errlen, "%s: missing string 'type'", what);
    v->type = sl_strdup(json_string_value(jt));
    v->def = sl_op_find(v->type);
    if (!v->def) {
        char known[1024];
        sl_op_type_list(known, sizeof known);
        return sl_seterr(err, errlen, "%s: unknown type '%s' (known: %s)", what, v->type, known);
    }
    json_t *juid = json_object_get(jv, "uid"), *jname = json_object_get(jv, "name");
    if (juid && !json_is_string(juid)) return sl_seterr(err, errlen, "%s: 'uid' must be a string", what);
    if (jname && !json_is_string(jname)) return sl_seterr(err, errlen, "%s: 'name' must be a string", what);
    v->uid = sl_strdup(juid ? json_string_value(juid) : v->id);
    v->name = sl_strdup(jname ? json_string_value(jname) : v->id);
    if (get_posint(jv, "parallelism", g->parallelism, 32768, &v->parallelism, what, err, errlen))
        return SL_ERR;
    v->json = jv;
    v->config = json_object_get(jv, "config");
    if (!v->config) {
        v->config = json_object();
        json_object_set_new(jv, "config", v->config);
    }
    if (!json_is_object(v->config)) return sl_seterr(err, errlen, "%s: 'config' must be an object", what);
    if (sl_op_options_check_keys(v->def, v->config, what, err, errlen) != SL_OK) return SL_ERR;
    const char *key;
    json_t *val;
    json_object_foreach(v->config, key, val) {
        if (!json_is_string(val) && !json_is_number(val) && !json_is_array(val) &&
            !json_is_boolean(val))
            return sl_seterr(err, errlen, "%s: option '%s' must be a string, number or array", what,
                             key);
    }
    sl_schema_init(&v->declared);
    sl_schema_init(&v->out);
    json_t *js = json_object_get(jv, "schema");
    if (js && parse_schema(js, &v->declared, what, err, errlen)) return SL_ERR;
    return SL_OK;
}

static int parse_edge(sl_jobgraph *g, int i, json_t *je, char *err, size_t errlen)
{
    sl_edge *e = &g->e[i];
    char what[300];
    if (!json_is_object(je)) return sl_seterr(err, errlen, "edge %d: must be an object", i + 1);
    json_t *jf = json_object_get(je, "from"), *jt = json_object_get(je, "to");
    if (!json_is_string(jf) || !json_is_string(jt))
        return sl_seterr(err, errlen, "edge %d: needs string 'from' and 'to'", i + 1);
    snprintf(what, sizeof what, "edge %.100s -> %.100s", json_string_value(jf), json_string_value(jt));
    if (check_keys(je, edge_keys, what, err, errlen)) return SL_ERR;
    e->from = find_vertex(g, json_string_value(jf));
    e->to = find_vertex(g, json_string_value(jt));
    if (e->from < 0) return sl_seterr(err, errlen, "%s: unknown vertex '%s'", what, json_string_value(jf));
    if (e->to < 0) return sl_seterr(err, errlen, "%s: unknown vertex '%s'", what, json_string_value(jt));
    if (e->from == e->to) return sl_seterr(err, errlen, "%s: an edge may not loop", what);
    sl_vertex *from = &g->v[e->from], *to = &g->v[e->to];
    json_t *js = json_object_get(je, "strategy");
    if (js) {
        if (!json_is_string(js) || parse_strategy(json_string_value(js), &e->strategy))
            return sl_seterr(err, errlen, "%s: strategy must be forward, rebalance, hash or broadcast",
                             what);
    } else {
        e->strategy = from->parallelism == to->parallelism ? SL_PART_FORWARD : SL_PART_REBALANCE;
    }
    if (e->strategy == SL_PART_FORWARD && from->parallelism != to->parallelism)
        return sl_seterr(err, errlen,
                         "%s: forward needs equal parallelism (%d vs %d); use rebalance or hash",
                         what, from->parallelism, to->parallelism);
    json_t *jk = json_object_get(je, "keys");
    if (e->strategy == SL_PART_HASH) {
        if (!json_is_array(jk) || json_array_size(jk) == 0)
            return sl_seterr(err, errlen, "%s: hash needs a non-empty 'keys' array", what);
    } else if (jk) {
        return sl_seterr(err, errlen, "%s: 'keys' only applies to the hash strategy", what);
    }
    json_t *jo = json_object_get(je, "output");
    if (jo) {
        /* resolved against from's declared outputs once from is planned */
        if (!json_is_string(jo) || !*json_string_value(jo) || strlen(json_string_value(jo)) >= 32)
            return sl_seterr(err, errlen, "%s: 'output' must name a side output (1-31 characters)", what);
        e->output_name = sl_strdup(json_string_value(jo));
    } else if (from->def->flags & SL_OPF_SINK) {
        return sl_seterr(err, errlen, "%s: '%s' is a sink and has no output", what, from->id);
    }
    json_t *ji = json_object_get(je, "input");
    if (ji) {
        if (!json_is_integer(ji) || json_integer_value(ji) < 0 || json_integer_value(ji) >= SL_MAX_INPUTS)
            return sl_seterr(err, errlen, "%s: 'input' must be an integer from 0 to %d", what,
                             SL_MAX_INPUTS - 1);
        e->to_input = (int)json_integer_value(ji);
    }
    if (to->def->flags & SL_OPF_SOURCE)
        return sl_seterr(err, errlen, "%s: '%s' is a source and takes no input", what, to->id);
    return SL_OK;
}

/* Kahn's algorithm: fills g->topo; a leftover vertex means a cycle. */
static int topo_sort(sl_jobgraph *g, char *err, size_t errlen)
{
    int *indeg = sl_calloc((size_t)g->nv, sizeof(int));
    int n = 0;
    for (int i = 0; i < g->ne; i++) indeg[g->e[i].to]++;
    for (int i = 0; i < g->nv; i++)
        if (!indeg[i]) g->topo[n++] = i;
    for (int k = 0; k < n; k++) {
        sl_vertex *v = &g->v[g->topo[k]];
        for (int j = 0; j < v->nout; j++)
            if (--indeg[g->e[v->out_edges[j]].to] == 0) g->topo[n++] = g->e[v->out_edges[j]].to;
    }
    int rc = SL_OK;
    if (n < g->nv) {
        for (int i = 0; i < g->nv; i++)
            if (indeg[i]) {
                rc = sl_seterr(err, errlen, "the graph has a cycle through vertex '%s'", g->v[i].id);
                break;
            }
    }
    free(indeg);
    return rc;
}

int sl_vertex_plan(sl_vertex *v, int nin, const sl_schema *ins, const sl_plan_input *part,
                   char *err, size_t errlen)
{
    sl_vertex_plan_free(v);
    if (nin < 0 || nin > SL_MAX_INPUTS)
        return sl_seterr(err, errlen, "vertex '%s': more than %d inputs", v->id, SL_MAX_INPUTS);
    sl_plan_ctx *pc = sl_calloc(1, sizeof *pc);
    v->pc = pc;
    v->ninputs = nin;
    pc->v = v;
    pc->nin = nin;
    for (int i = 0; i < nin; i++) {
        sl_schema_copy(&v->in[i], &ins[i]);
        if (part) pc->in[i] = part[i];
        pc->in[i].schema = &v->in[i];
        pc->in[i].parallel = v->parallelism > 1;
    }
    sl_schema_init(&v->out);
    pc->out = &v->out;
    pc->nout = 1;
    char perr[400] = "", what[160];
    snprintf(what, sizeof what, "vertex '%s'", v->id);
    sl_plan_opts *opts;
    if (sl_op_options_parse(v->def, v->config, what, &opts, err, errlen) != SL_OK) return SL_ERR;
    pc->opts = opts;
    v->plan = v->def->plan(pc, perr, sizeof perr);
    if (!v->plan) {
        /* operators name the vertex themselves; add it when they did not */
        if (strstr(perr, v->id)) return sl_seterr(err, errlen, "%s", perr);
        return sl_seterr(err, errlen, "vertex '%s': %s", v->id, perr[0] ? perr : "invalid configuration");
    }
    return SL_OK;
}

void sl_plan_unbounded(sl_plan_ctx *pc, const char *what, const char *key, const char *setting)
{
    sl_plan_unbounded_decl *u = &pc->unbounded;
    snprintf(u->what, sizeof u->what, "%s", what ? what : "operator");
    snprintf(u->key, sizeof u->key, "%s", key ? key : "");
    snprintf(u->setting, sizeof u->setting, "%s", setting ? setting : "");
}

void sl_plan_unbounded_cols(sl_plan_ctx *pc, const char *what, const sl_schema *in,
                            const int *cols, int ncols, const char *setting)
{
    char kt[256] = "";
    size_t at = 0;
    for (int k = 0; k < ncols && at < sizeof kt; k++)
        at += (size_t)snprintf(kt + at, sizeof kt - at, "%s%s", k ? ", " : "",
                               in->fields[cols[k]].name);
    sl_plan_unbounded(pc, what, ncols ? kt : "none (one global group)", setting);
}

json_t *sl_jobgraph_warnings(const sl_jobgraph *g)
{
    json_t *a = json_array();
    for (int i = 0; i < g->nv; i++) {
        const sl_vertex *v = &g->v[i];
        if (!v->pc || !v->pc->unbounded.what[0]) continue;
        const sl_plan_unbounded_decl *u = &v->pc->unbounded;
        int join = !strcmp(u->what, "regular join");
        char *msg = sl_sprintf("%s '%s' keeps state per key (%s) that nothing bounds: it grows "
                               "with every distinct key for as long as the job runs. Set '%s' to "
                               "expire idle state (in SQL: SET 'table.exec.state.ttl' = '1 d'%s)%s.",
                               u->what, v->name ? v->name : v->id, u->key[0] ? u->key : "one key",
                               u->setting, join ? ", or the hint /*+ STATE_TTL('alias' = '1 d') */" : "",
                               join
                                   ? ", or bound the join in time (an interval join: AND b.ts "
                                     "BETWEEN a.ts - INTERVAL ... AND a.ts + INTERVAL ...)"
                                   : "");
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "vertex", v->id,
                                           "vertex-id", g->chains[v->chain].id, "operator", u->what,
                                           "key", u->key, "setting", u->setting, "message", msg));
        free(msg);
    }
    return a;
}

void sl_vertex_plan_free(sl_vertex *v)
{
    if (v->plan && v->def && v->def->plan_free) v->def->plan_free(v->plan);
    v->plan = NULL;
    for (int i = 0; i < v->ninputs; i++) sl_schema_free(&v->in[i]);
    v->ninputs = 0;
    sl_schema_free(&v->out);
    if (v->pc)
        for (int o = 1; o < v->pc->nout; o++) sl_schema_free(&v->pc->outputs[o].schema);
    if (v->pc) sl_op_options_free((sl_plan_opts *)v->pc->opts);
    free(v->pc);
    v->pc = NULL;
}

/* "late, errors" or "none": a vertex's declared side outputs, for messages. */
static void side_output_list(const sl_vertex *v, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = 0;
    for (int o = 1; v->pc && o < v->pc->nout && at < cap; o++) {
        int w = snprintf(buf + at, cap - at, "%s%s", o > 1 ? ", " : "", v->pc->outputs[o].name);
        if (w < 0) break;
        at += (size_t)w;
    }
    if (!buf[0]) snprintf(buf, cap, "none");
}

/* The inputs of vertex v: every logical input has edges, each edge names an
 * output its upstream declares, and the edges of one input agree on the
 * schema (several edges into one input are a UNION ALL). */
static int plan_inputs(sl_jobgraph *g, sl_vertex *v, sl_schema *ins, sl_plan_input *part,
                       int *nin, char *err, size_t errlen)
{
    int max_in = v->def->max_inputs > 0 ? v->def->max_inputs : 1;
    int n = 0;
    const sl_edge *first[SL_MAX_INPUTS] = {0};
    for (int j = 0; j < v->nin; j++) {
        sl_edge *e = &g->e[v->in_edges[j]];
        const sl_vertex *from = &g->v[e->from];
        if (e->to_input >= max_in)
            return sl_seterr(err, errlen, "edge %s -> %s: input %d of '%s' (%s), which takes %d input%s",
                             from->id, v->id, e->to_input, v->id, v->type, max_in, max_in == 1 ? "" : "s");
        if (e->to_input + 1 > n) n = e->to_input + 1;
        const sl_edge *f = first[e->to_input];
        if (!f) {
            first[e->to_input] = e;
            part[e->to_input].strategy = e->strategy;
            part[e->to_input].nkeys = e->nkeys;
            part[e->to_input].keys = e->keys;
            continue;
        }
        if (!sl_schema_equal(sl_edge_schema(g, f), sl_edge_schema(g, e)))
            return sl_seterr(err, errlen, "vertex '%s': inputs '%s' and '%s' have different schemas",
                             v->id, g->v[f->from].id, from->id);
        int same = f->strategy == e->strategy && f->nkeys == e->nkeys;
        for (int q = 0; same && q < e->nkeys; q++) same = f->keys[q] == e->keys[q];
        if (!same) { /* mixed partitioning: the input as a whole is not hashed */
            part[e->to_input].strategy = SL_PART_REBALANCE;
            part[e->to_input].nkeys = 0;
            part[e->to_input].keys = NULL;
        }
    }
    for (int i = 0; i < n; i++) {
        if (!first[i])
            return sl_seterr(err, errlen, "vertex '%s': input %d has no edge (inputs are numbered from 0)",
                             v->id, i);
        sl_schema_copy(&ins[i], sl_edge_schema(g, first[i]));
    }
    *nin = n;
    return SL_OK;
}

/* Hash keys of edges leaving v are columns of the output they leave from;
 * the receiving keyed operator is checked in check_keyed_inputs. */
static int resolve_edge_keys(sl_jobgraph *g, sl_vertex *v, char *err, size_t errlen)
{
    for (int j = 0; j < v->nout; j++) {
        sl_edge *e = &g->e[v->out_edges[j]];
        if (e->strategy != SL_PART_HASH) continue;
        json_t *jk = json_object_get(json_array_get(json_object_get(g->json, "edges"),
                                                    (size_t)v->out_edges[j]), "keys");
        const sl_schema *s = sl_vertex_output_schema(v, e->output);
        e->nkeys = (int)json_array_size(jk);
        e->keys = sl_calloc((size_t)e->nkeys, sizeof(int));
        for (int q = 0; q < e->nkeys; q++) {
            json_t *kq = json_array_get(jk, (size_t)q);
            int col = json_is_string(kq) ? sl_schema_find(s, json_string_value(kq)) : -1;
            if (col < 0)
                return sl_seterr(err, errlen, "edge %s -> %s: key %s is not a column of '%s'", v->id,
                                 g->v[e->to].id,
                                 json_is_string(kq) ? json_string_value(kq) : "(non-string)", v->id);
            e->keys[q] = col;
        }
    }
    return SL_OK;
}

static int plan_vertices(sl_jobgraph *g, char *err, size_t errlen)
{
    for (int k = 0; k < g->nv; k++) {
        sl_vertex *v = &g->v[g->topo[k]];
        int is_src = (v->def->flags & SL_OPF_SOURCE) != 0;
        if (is_src && v->nin)
            return sl_seterr(err, errlen, "vertex '%s': a source takes no input", v->id);
        if (!is_src && !v->nin)
            return sl_seterr(err, errlen, "vertex '%s': has no input edge", v->id);
        sl_schema ins[SL_MAX_INPUTS];
        sl_plan_input part[SL_MAX_INPUTS];
        memset(part, 0, sizeof part);
        int nin = 0;
        for (int i = 0; i < SL_MAX_INPUTS; i++) sl_schema_init(&ins[i]);
        int rc = plan_inputs(g, v, ins, part, &nin, err, errlen);
        if (rc == SL_OK) rc = sl_vertex_plan(v, nin, ins, part, err, errlen);
        for (int i = 0; i < SL_MAX_INPUTS; i++) sl_schema_free(&ins[i]);
        if (rc != SL_OK) return rc;
        /* edges leaving a named output: the output must be declared */
        int main_used = 0;
        for (int j = 0; j < v->nout; j++) {
            sl_edge *e = &g->e[v->out_edges[j]];
            if (!e->output_name) {
                main_used = 1;
                continue;
            }
            e->output = -1;
            for (int o = 1; o < v->pc->nout; o++)
                if (!strcmp(v->pc->outputs[o].name, e->output_name)) e->output = o;
            if (e->output < 0) {
                char have[256];
                side_output_list(v, have, sizeof have);
                return sl_seterr(err, errlen, "edge %s -> %s: '%s' (%s) has no side output '%s' (it declares: %s)",
                                 v->id, g->v[e->to].id, v->id, v->type, e->output_name, have);
            }
        }
        if (!(v->def->flags & SL_OPF_SINK) && !main_used)
            return sl_seterr(err, errlen, "vertex '%s': its output goes nowhere (add an edge to a sink)",
                             v->id);
        if (resolve_edge_keys(g, v, err, errlen)) return SL_ERR;
    }
    return SL_OK;
}

/* A keyed operator running in parallel must get each key from exactly one
 * place: every edge into a keyed input hashes on the columns plan() declared
 * as that input's key. */
static int check_keyed_inputs(sl_jobgraph *g, char *err, size_t errlen)
{
    for (int i = 0; i < g->nv; i++) {
        sl_vertex *v = &g->v[i];
        if (v->parallelism == 1 || !v->pc) continue;
        for (int k = 0; k < v->nin; k++) {
            const sl_edge *e = &g->e[v->in_edges[k]];
            int in = e->to_input, nk = v->pc->nkeys[in];
            if (!nk) continue;
            const sl_vertex *from = &g->v[e->from];
            int ok = e->strategy == SL_PART_HASH && e->nkeys == nk;
            for (int q = 0; ok && q < nk; q++) ok = e->keys[q] == v->pc->keys[in][q];
            if (!ok) {
                char want[256] = "";
                size_t used = 0;
                for (int q = 0; q < nk && used < sizeof want - 64; q++)
                    used += (size_t)snprintf(want + used, sizeof want - used, "%s\"%s\"", q ? ", " : "",
                                             v->in[in].fields[v->pc->keys[in][q]].name);
                return sl_seterr(err, errlen,
                                 "vertex '%s': a keyed operator with parallelism %d needs its input "
                                 "from '%s' hashed on its key: use {\"strategy\": \"hash\", \"keys\": [%s]}",
                                 v->id, v->parallelism, from->id, want);
            }
        }
    }
    return SL_OK;
}

static void make_chains(sl_jobgraph *g)
{
    g->chains = sl_calloc((size_t)g->nv, sizeof(sl_chain));
    g->nchains = 0;
    for (int k = 0; k < g->nv; k++) {
        sl_vertex *v = &g->v[g->topo[k]];
        if (v->nin == 1) {
            sl_edge *e = &g->e[v->in_edges[0]];
            sl_vertex *up = &g->v[e->from];
            if (e->strategy == SL_PART_FORWARD && up->nout == 1 && e->output == 0 &&
                up->parallelism == v->parallelism) {
                sl_chain *c = &g->chains[up->chain];
                v->chain = up->chain;
                v->chain_pos = c->n;
                c->vertices = sl_realloc(c->vertices, sizeof(int) * (size_t)(c->n + 1));
                c->vertices[c->n++] = v->index;
                char *name = sl_sprintf("%s -> %s", c->name, v->name);
                free(c->name);
                c->name = name;
                continue;
            }
        }
        sl_chain *c = &g->chains[g->nchains];
        v->chain = g->nchains++;
        v->chain_pos = 0;
        c->n = 1;
        c->vertices = sl_malloc(sizeof(int));
        c->vertices[0] = v->index;
        c->parallelism = v->parallelism;
        c->name = sl_strdup(v->name);
        /* stable 32-hex id from the head's uid */
        uint32_t h[4];
        for (int s = 0; s < 4; s++) h[s] = sl_murmur3_32(v->uid, strlen(v->uid), 0x5eed0000u + (uint32_t)s);
        snprintf(c->id, sizeof c->id, "%08x%08x%08x%08x", h[0], h[1], h[2], h[3]);
    }
}

sl_jobgraph *sl_jobgraph_parse(const char *text, size_t len, int default_parallelism,
                               int override_parallelism, char *err, size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        sl_seterr(err, errlen, "job graph is not valid JSON: %s at line %d, column %d", jerr.text,
                  jerr.line, jerr.column);
        return NULL;
    }
    sl_jobgraph *g = sl_calloc(1, sizeof *g);
    g->json = root;
    if (!json_is_object(root)) {
        sl_seterr(err, errlen, "job graph must be a JSON object");
        goto fail;
    }
    if (check_keys(root, job_keys, "job", err, errlen)) goto fail;
    if (parse_job_conf(g, root, err, errlen)) goto fail;
    /* the job's config names and sizes it when the graph itself does not */
    if (!json_object_get(root, "name") && sl_jobgraph_conf(g, "pipeline.name"))
        json_object_set_new(root, "name", json_string(sl_jobgraph_conf(g, "pipeline.name")));
    if (!json_object_get(root, "parallelism") && sl_jobgraph_conf(g, "parallelism.default"))
        json_object_set_new(root, "parallelism",
                            json_string(sl_jobgraph_conf(g, "parallelism.default")));
    json_t *jn = json_object_get(root, "name");
    if (jn && !json_is_string(jn)) {
        sl_seterr(err, errlen, "job: 'name' must be a string");
        goto fail;
    }
    g->name = sl_strdup(jn ? json_string_value(jn) : "Sluice job");
    if (get_posint(root, "parallelism", default_parallelism > 0 ? default_parallelism : 1, 32768,
                   &g->parallelism, "job", err, errlen))
        goto fail;
    if (override_parallelism > 0) {
        g->parallelism = override_parallelism;
        /* -p replaces the job's parallelism, and every vertex that did not
         * pin its own keeps following the job's */
    }
    json_t *jvs = json_object_get(root, "vertices"), *jes = json_object_get(root, "edges");
    if (!json_is_array(jvs) || json_array_size(jvs) == 0) {
        sl_seterr(err, errlen, "job: 'vertices' must be a non-empty array");
        goto fail;
    }
    if (jes && !json_is_array(jes)) {
        sl_seterr(err, errlen, "job: 'edges' must be an array");
        goto fail;
    }
    if (json_array_size(jvs) > 1000 || json_array_size(jes) > 10000) {
        sl_seterr(err, errlen, "job: too many vertices or edges");
        goto fail;
    }
    g->nv = (int)json_array_size(jvs);
    g->ne = jes ? (int)json_array_size(jes) : 0;
    g->v = sl_calloc((size_t)g->nv, sizeof(sl_vertex));
    g->e = sl_calloc((size_t)(g->ne ? g->ne : 1), sizeof(sl_edge));
    g->topo = sl_calloc((size_t)g->nv, sizeof(int));
    for (int i = 0; i < g->nv; i++) {
        g->v[i].id = NULL;
        sl_schema_init(&g->v[i].declared);
        sl_schema_init(&g->v[i].out);
    }
    const char *ttl = sl_jobgraph_conf(g, "table.exec.state.ttl");
    for (size_t i = 0; ttl && i < json_array_size(jvs); i++) {
        /* the job's state TTL for each GROUP BY aggregate that does not set its own */
        json_t *jv = json_array_get(jvs, i), *type = json_object_get(jv, "type");
        if (!json_is_object(jv) || !json_is_string(type) ||
            strcmp(json_string_value(type), "group_aggregate"))
            continue;
        json_t *cfg = json_object_get(jv, "config");
        if (!cfg) json_object_set_new(jv, "config", cfg = json_object());
        if (json_is_object(cfg) && !json_object_get(cfg, "state.ttl") &&
            !json_object_get(cfg, "table.exec.state.ttl"))
            json_object_set_new(cfg, "state.ttl", json_string(ttl));
    }
    for (int i = 0; i < g->nv; i++) {
        /* ids must be set in order for the duplicate check */
        json_t *jid = json_object_get(json_array_get(jvs, (size_t)i), "id");
        if (json_is_string(jid)) {
            for (int j = 0; j < i; j++)
                if (g->v[j].id && !strcmp(g->v[j].id, json_string_value(jid))) {
                    sl_seterr(err, errlen, "vertex '%s': duplicate id", json_string_value(jid));
                    goto fail;
                }
        }
        if (parse_vertex(g, i, json_array_get(jvs, (size_t)i), err, errlen)) goto fail;
    }
    for (int i = 0; i < g->ne; i++)
        if (parse_edge(g, i, json_array_get(jes, (size_t)i), err, errlen)) goto fail;
    for (int i = 0; i < g->ne; i++) {
        sl_vertex *f = &g->v[g->e[i].from], *t = &g->v[g->e[i].to];
        f->out_edges = sl_realloc(f->out_edges, sizeof(int) * (size_t)(f->nout + 1));
        f->out_edges[f->nout++] = i;
        t->in_edges = sl_realloc(t->in_edges, sizeof(int) * (size_t)(t->nin + 1));
        t->in_edges[t->nin++] = i;
    }
    if (topo_sort(g, err, errlen)) goto fail;
    if (plan_vertices(g, err, errlen)) goto fail;
    for (int i = 0; i < g->nv; i++)
        g->max_vertex_parallelism = SL_MAX(g->max_vertex_parallelism, g->v[i].parallelism);
    int maxp;
    if (get_posint(root, "maxParallelism", sl_kg_default_max_parallelism(g->max_vertex_parallelism),
                   32768, &maxp, "job", err, errlen))
        goto fail;
    if (maxp < g->max_vertex_parallelism) {
        sl_seterr(err, errlen, "job: maxParallelism %d is below the largest parallelism %d", maxp,
                  g->max_vertex_parallelism);
        goto fail;
    }
    g->max_parallelism = maxp;
    if (check_keyed_inputs(g, err, errlen)) goto fail;
    make_chains(g);
    return g;
fail:
    sl_jobgraph_destroy(g);
    return NULL;
}

void sl_jobgraph_destroy(sl_jobgraph *g)
{
    if (!g) return;
    for (int i = 0; i < g->nv; i++) {
        sl_vertex *v = &g->v[i];
        sl_vertex_plan_free(v);
        free(v->id);
        free(v->uid);
        free(v->name);
        free(v->type);
        sl_schema_free(&v->declared);
        free(v->in_edges);
        free(v->out_edges);
    }
    for (int i = 0; i < g->ne; i++) {
        free(g->e[i].keys);
        free(g->e[i].output_name);
    }
    for (int i = 0; i < g->nchains; i++) {
        free(g->chains[i].vertices);
        free(g->chains[i].name);
    }
    free(g->chains);
    free(g->v);
    free(g->e);
    free(g->topo);
    free(g->name);
    json_decref(g->json);
    free(g);
}

char *sl_jobgraph_dump(const sl_jobgraph *g)
{
    json_t *copy = json_deep_copy(g->json);
    json_object_set_new(copy, "parallelism", json_integer(g->parallelism));
    json_object_set_new(copy, "maxParallelism", json_integer(g->max_parallelism));
    json_t *jvs = json_object_get(copy, "vertices");
    for (int i = 0; i < g->nv; i++)
        json_object_set_new(json_array_get(jvs, (size_t)i), "parallelism",
                            json_integer(g->v[i].parallelism));
    char *s = json_dumps(copy, JSON_COMPACT);
    json_decref(copy);
    return s;
}

const char *sl_vconf_str(const sl_vertex *v, const char *key, const char *dflt)
{
    json_t *j = json_object_get(v->config, key);
    if (json_is_string(j)) return json_string_value(j);
    return dflt;
}

/* Numbers and booleans in the config are accepted as their text. */
static int vconf_text(const sl_vertex *v, const char *key, char *buf, size_t cap, const char **out)
{
    json_t *j = json_object_get(v->config, key);
    if (!j) { *out = NULL; return SL_OK; }
    if (json_is_string(j)) { *out = json_string_value(j); return SL_OK; }
    if (json_is_integer(j)) { snprintf(buf, cap, "%lld", (long long)json_integer_value(j)); *out = buf; return SL_OK; }
    if (json_is_real(j)) { snprintf(buf, cap, "%.17g", json_real_value(j)); *out = buf; return SL_OK; }
    return SL_ERR;
}

int sl_vconf_int(const sl_vertex *v, const char *key, int64_t dflt, int64_t *out, char *err,
                 size_t errlen)
{
    char buf[64];
    const char *s;
    if (vconf_text(v, key, buf, sizeof buf, &s) || (s && sl_parse_int(s, out) != SL_OK))
        return sl_seterr(err, errlen, "vertex '%s': option '%s' must be an integer", v->id, key);
    if (!s) *out = dflt;
    return SL_OK;
}

int sl_vconf_duration(const sl_vertex *v, const char *key, int64_t dflt_ms, int64_t *out,
                      char *err, size_t errlen)
{
    char buf[64];
    const char *s;
    if (vconf_text(v, key, buf, sizeof buf, &s) || (s && sl_parse_duration_ms(s, out) != SL_OK))
        return sl_seterr(err, errlen, "vertex '%s': option '%s' must be a duration like '5 s'",
                         v->id, key);
    if (!s) *out = dflt_ms;
    return SL_OK;
}

int sl_vconf_interval(const sl_vertex *v, const char *key, int64_t dflt_ms, int64_t *out,
                      char *err, size_t errlen)
{
    json_t *j = json_object_get(v->config, key);
    if (!j || json_is_null(j)) {
        *out = dflt_ms;
        return SL_OK;
    }
    if (json_is_integer(j)) {
        if (json_integer_value(j) < 0)
            return sl_seterr(err, errlen, "vertex '%s': option '%s' must not be negative", v->id, key);
        *out = (int64_t)json_integer_value(j);
        return SL_OK;
    }
    if (!json_is_string(j))
        return sl_seterr(err, errlen, "vertex '%s': option '%s' must be a duration like '5 s'", v->id,
                         key);
    char perr[200];
    if (sl_interval_parse(json_string_value(j), out, perr, sizeof perr) != SL_OK)
        return sl_seterr(err, errlen, "vertex '%s': option '%s': %s", v->id, key, perr);
    return SL_OK;
}

json_t *sl_vconf_array(const sl_vertex *v, const char *key)
{
    json_t *j = json_object_get(v->config, key);
    return (json_is_array(j) || json_is_string(j)) ? j : NULL;
}
