/*
 * datastream.c -- the DataStream builder (datastream.h): C calls that grow a
 * JSON job graph.
 *
 * The environment holds the graph's "vertices" and "edges" arrays (jansson)
 * and every stream handed out, so one sl_ds_env_free releases all. A stream
 * names the vertex (and side output) its rows leave from, and the key
 * columns of a pending key_by; the next operator added on it gets the edge.
 * The first problem (a bad schema string, a stream from another environment,
 * an id used twice) is kept and reported by sl_ds_to_json, so a job's
 * builder code needs no error checks of its own: the job graph parser then
 * validates the graph as it does any other.
 */
#include <dlfcn.h>
#include <string.h>
#include <jansson.h>

#include "datastream.h"
#include "match_recognize.h"
#include "buf.h"
#include "jobgraph.h"
#include "bridge.h"

struct sl_ds_stream {
    sl_ds_env *env;
    char *vertex;               /* the vertex the rows leave from */
    char *output;               /* its side output, or NULL for the main one */
    json_t *keys;               /* key_by columns for the next edge, or NULL */
    json_t *jv;                 /* the vertex object (borrowed from the graph) */
    struct sl_ds_stream *second; /* connect: the stream feeding input 1 */
    int broadcast;              /* sl_ds_broadcast: its edge broadcasts */
    char *rowtime;              /* the event-time column its watermarks follow, or NULL */
    struct sl_ds_stream *next;  /* the environment's list */
};

struct sl_ds_env {
    json_t *job;                /* {"name", "vertices", "edges"} */
    char *library;              /* where process functions live */
    sl_ds_stream *streams;
    sl_sql_session *sql;        /* the SQL bridges' catalog and SET options, or NULL */
    int anonymous;              /* toDataStream sinks named so far (for messages) */
    char err[768];
};

static void fail(sl_ds_env *env, const char *fmt, const char *arg)
{
    if (!env->err[0]) snprintf(env->err, sizeof env->err, fmt, arg ? arg : "");
}

/* A stream derived from `in` keeps its event-time column. */
static sl_ds_stream *keep_rowtime(sl_ds_stream *s, const sl_ds_stream *in)
{
    if (s != in && in->rowtime && !s->rowtime) s->rowtime = sl_strdup(in->rowtime);
    return s;
}

sl_ds_env *sl_ds_env_new(const char *job_name)
{
    sl_ds_env *env = sl_calloc(1, sizeof *env);
    env->job = json_pack("{s:s, s:[], s:[]}", "name", job_name ? job_name : "C job", "vertices",
                         "edges");
    return env;
}

void sl_ds_env_free(sl_ds_env *env)
{
    if (!env) return;
    for (sl_ds_stream *s = env->streams; s;) {
        sl_ds_stream *next = s->next;
        free(s->vertex);
        free(s->output);
        json_decref(s->keys);
        free(s->rowtime);
        free(s);
        s = next;
    }
    json_decref(env->job);
    sl_sql_session_destroy(env->sql);
    free(env->library);
    free(env);
}

void sl_ds_set_parallelism(sl_ds_env *env, int parallelism)
{
    json_object_set_new(env->job, "parallelism", json_integer(parallelism));
}

void sl_ds_set_library(sl_ds_env *env, const char *path)
{
    free(env->library);
    env->library = path ? sl_strdup(path) : NULL;
}

static sl_ds_stream *stream_new(sl_ds_env *env, const char *vertex, const char *output, json_t *jv)
{
    sl_ds_stream *s = sl_calloc(1, sizeof *s);
    s->env = env;
    s->vertex = sl_strdup(vertex);
    s->output = output ? sl_strdup(output) : NULL;
    s->jv = jv;
    s->next = env->streams;
    env->streams = s;
    return s;
}

/* "name TYPE, name TYPE" as the job graph's [{"name", "type"}]; NULL when
 * it is not one. */
static json_t *schema_json(const char *text)
{
    sl_schema s;
    sl_schema_init(&s);
    json_t *arr = NULL;
    if (sl_schema_parse(text, &s, NULL, 0) == SL_OK) {
        arr = json_array();
        for (int i = 0; i < s.n; i++)
            json_array_append_new(arr, json_pack("{s:s, s:s}", "name", s.fields[i].name, "type",
                                                 sl_type_name(s.fields[i].type)));
    }
    sl_schema_free(&s);
    return arr;
}

static json_t *options_json(const char *const *options)
{
    json_t *o = json_object();
    for (const char *const *p = options; p && p[0]; p += 2)
        json_object_set_new(o, p[0], json_string(p[1] ? p[1] : ""));
    return o;
}

static json_t *add_vertex(sl_ds_env *env, const char *id, const char *type, json_t *config)
{
    json_t *vs = json_object_get(env->job, "vertices");
    size_t i;
    json_t *v;
    json_array_foreach(vs, i, v)
        if (!strcmp(json_string_value(json_object_get(v, "id")), id)) fail(env, "vertex id '%s' used twice", id);
    json_t *jv = json_pack("{s:s, s:s, s:o}", "id", id, "type", type, "config", config);
    json_array_append_new(vs, jv);
    return jv;
}

/* The edge from stream `in` into the vertex `to` (its input `input`). */
static json_t *edge_json(const sl_ds_stream *in, const char *to, int input)
{
    json_t *e = json_pack("{s:s, s:s}", "from", in->vertex, "to", to);
    if (in->output) json_object_set_new(e, "output", json_string(in->output));
    if (in->broadcast) json_object_set_new(e, "strategy", json_string("broadcast"));
    else if (in->keys) {
        json_object_set_new(e, "strategy", json_string("hash"));
        json_object_set(e, "keys", in->keys);
    }
    if (input) json_object_set_new(e, "input", json_integer(input));
    return e;
}

static void connect_to(sl_ds_stream *in, const char *to, int input)
{
    json_array_append_new(json_object_get(in->env->job, "edges"), edge_json(in, to, input));
}

static int usable(sl_ds_stream *in, const char *id)
{
    if (!in) return 0;
    if (!id || !*id) {
        fail(in->env, "an operator needs an id%s", NULL);
        return 0;
    }
    return 1;
}

sl_ds_stream *sl_ds_source(sl_ds_env *env, const char *id, const char *type, const char *schema,
                           const char *const *options)
{
    json_t *jv = add_vertex(env, id, type, options_json(options));
    json_t *js = schema_json(schema);
    if (!js) fail(env, "source '%s': schema must read \"name TYPE, name TYPE\"", id);
    else json_object_set_new(jv, "schema", js);
    return stream_new(env, id, NULL, jv);
}

static sl_ds_stream *calc(sl_ds_stream *in, const char *id, const char *const *projection,
                          const char *condition)
{
    if (!usable(in, id)) return in;
    json_t *cfg = json_object();
    if (projection) {
        json_t *p = json_array();
        for (const char *const *x = projection; *x; x++) json_array_append_new(p, json_string(*x));
        json_object_set_new(cfg, "projection", p);
    }
    if (condition) json_object_set_new(cfg, "filter", json_string(condition));
    json_t *jv = add_vertex(in->env, id, "calc", cfg);
    connect_to(in, id, 0);
    return stream_new(in->env, id, NULL, jv);
}

sl_ds_stream *sl_ds_map(sl_ds_stream *in, const char *id, const char *const *projection)
{
    sl_ds_stream *s = calc(in, id, projection, NULL);
    return in && !projection ? keep_rowtime(s, in) : s;
}

sl_ds_stream *sl_ds_filter(sl_ds_stream *in, const char *id, const char *condition)
{
    return in ? keep_rowtime(calc(in, id, NULL, condition), in) : in;
}

sl_ds_stream *sl_ds_watermarks(sl_ds_stream *in, const char *id, const char *column,
                               const char *delay, const char *idle_timeout)
{
    if (!usable(in, id)) return in;
    json_t *cfg = json_pack("{s:s, s:s}", "column", column ? column : "", "delay", delay ? delay : "0 ms");
    if (idle_timeout) json_object_set_new(cfg, "idle-timeout", json_string(idle_timeout));
    json_t *jv = add_vertex(in->env, id, "watermark", cfg);
    connect_to(in, id, 0);
    sl_ds_stream *s = stream_new(in->env, id, NULL, jv);
    s->rowtime = column ? sl_strdup(column) : NULL;
    return s;
}

sl_ds_stream *sl_ds_watermarks_with_assigner(sl_ds_stream *in, const char *id, const char *symbol,
                                             const char *delay, const char *idle_timeout)
{
    if (!usable(in, id)) return in;
    sl_ds_env *env = in->env;
    if (!env->library) fail(env, "watermarks '%s': no library (sluice run sets the job's own)", id);
    json_t *cfg = json_pack("{s:s, s:s, s:s}", "library", env->library ? env->library : "",
                            "function", symbol ? symbol : "", "delay", delay ? delay : "0 ms");
    if (idle_timeout) json_object_set_new(cfg, "idle-timeout", json_string(idle_timeout));
    json_t *jv = add_vertex(env, id, "watermark", cfg);
    connect_to(in, id, 0);
    return stream_new(env, id, NULL, jv);
}

sl_ds_stream *sl_ds_key_by_fn(sl_ds_stream *in, const char *id, const char *symbol,
                              const char *key_schema)
{
    if (!usable(in, id)) return in;
    sl_ds_env *env = in->env;
    if (!env->library) fail(env, "key_by '%s': no library (sluice run sets the job's own)", id);
    json_t *cols = schema_json(key_schema ? key_schema : "");
    if (!cols) fail(env, "key_by '%s': the key's schema must read \"name TYPE, name TYPE\"", id);
    json_t *cfg = json_pack("{s:s, s:s, s:s}", "library", env->library ? env->library : "",
                            "function", symbol ? symbol : "", "schema", key_schema ? key_schema : "");
    json_t *jv = add_vertex(env, id, "key_select", cfg);
    connect_to(in, id, 0);
    sl_ds_stream *s = keep_rowtime(stream_new(env, id, NULL, jv), in);
    s->keys = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(cols, i, c) json_array_append(s->keys, json_object_get(c, "name"));
    json_decref(cols);
    return s;
}

sl_ds_stream *sl_ds_flat_map(sl_ds_stream *in, const char *id, const char *symbol,
                             const char *out_schema)
{
    return sl_ds_process(in, id, symbol, out_schema, NULL);
}

sl_ds_stream *sl_ds_key_by(sl_ds_stream *in, const char *const *columns)
{
    if (!in) return in;
    sl_ds_stream *s = stream_new(in->env, in->vertex, in->output, in->jv);
    s->keys = json_array();
    for (const char *const *c = columns; c && *c; c++) json_array_append_new(s->keys, json_string(*c));
    if (json_array_size(s->keys) == 0) fail(in->env, "key_by needs at least one column%s", NULL);
    return keep_rowtime(s, in);
}

sl_ds_stream *sl_ds_connect(sl_ds_stream *a, sl_ds_stream *b)
{
    if (!a || !b) return a ? a : b;
    if (a->env != b->env) fail(a->env, "connect: streams of two environments%s", NULL);
    if (a->second || b->second) fail(a->env, "connect: a connected stream cannot be connected again%s", NULL);
    if (a->broadcast) fail(a->env, "connect: the broadcast stream goes second (from '%s')", a->vertex);
    if (!b->broadcast && !a->keys != !b->keys)
        fail(a->env, "connect: key_by both streams or neither (the second of '%s' is not)", a->vertex);
    sl_ds_stream *s = stream_new(a->env, a->vertex, a->output, a->jv);
    if (a->keys) s->keys = json_incref(a->keys);
    s->second = b;
    return s;
}

/* The key-by of a process vertex: one list of names when every input keys
 * on the same names, else one list per input. */
static json_t *key_by_json(const sl_ds_stream *in)
{
    if (!in->second || in->second->broadcast || json_equal(in->keys, in->second->keys))
        return json_incref(in->keys);
    if (json_array_size(in->keys) != json_array_size(in->second->keys))
        fail(in->env, "connect into '%s': both streams need as many key columns", in->vertex);
    return json_pack("[O, O]", in->keys, in->second->keys);
}

sl_ds_stream *sl_ds_process(sl_ds_stream *in, const char *id, const char *symbol,
                            const char *out_schema, const char *const *side_outputs)
{
    if (!usable(in, id)) return in;
    sl_ds_env *env = in->env;
    if (!env->library) fail(env, "process '%s': no library (sluice run sets the job's own)", id);
    json_t *cfg = json_pack("{s:s, s:s, s:s}", "library", env->library ? env->library : "",
                            "function", symbol ? symbol : "", "schema", out_schema ? out_schema : "");
    if (side_outputs && side_outputs[0]) {
        json_t *so = json_array();
        for (const char *const *p = side_outputs; p[0]; p += 2) {
            char *item = p[1] ? sl_sprintf("%s: %s", p[0], p[1]) : sl_strdup(p[0]);
            json_array_append_new(so, json_string(item));
            free(item);
        }
        json_object_set_new(cfg, "side-outputs", so);
    }
    if (in->keys) json_object_set_new(cfg, "key-by", key_by_json(in));
    if (in->second && in->second->broadcast) json_object_set_new(cfg, "broadcast-input", json_integer(1));
    json_t *jv = add_vertex(env, id, in->keys ? "keyed_process" : "process", cfg);
    connect_to(in, id, 0);
    if (in->second) connect_to(in->second, id, 1);
    return stream_new(env, id, NULL, jv);
}

sl_ds_stream *sl_ds_broadcast(sl_ds_stream *in)
{
    if (!in) return in;
    sl_ds_stream *s = stream_new(in->env, in->vertex, in->output, in->jv);
    s->broadcast = 1;
    return s;
}

sl_ds_stream *sl_ds_async(sl_ds_stream *in, const char *id, const char *symbol,
                          const char *out_schema, const char *const *options)
{
    if (!usable(in, id)) return in;
    sl_ds_env *env = in->env;
    if (!env->library) fail(env, "async '%s': no library (sluice run sets the job's own)", id);
    if (in->second) fail(env, "async '%s': a connected stream goes to sl_ds_process", id);
    json_t *cfg = options_json(options);
    json_object_set_new(cfg, "library", json_string(env->library ? env->library : ""));
    json_object_set_new(cfg, "function", json_string(symbol ? symbol : ""));
    json_object_set_new(cfg, "schema", json_string(out_schema ? out_schema : ""));
    json_t *jv = add_vertex(env, id, "async_wait", cfg);
    connect_to(in, id, 0);
    return stream_new(env, id, NULL, jv);
}

sl_ds_stream *sl_ds_side_output(sl_ds_stream *in, const char *name)
{
    if (!in) return in;
    return stream_new(in->env, in->vertex, name, in->jv);
}

sl_ds_stream *sl_ds_union(sl_ds_stream *a, sl_ds_stream *b, const char *id)
{
    if (!usable(a, id) || !b) return a;
    if (a->env != b->env) fail(a->env, "union '%s': streams of two environments", id);
    json_t *jv = add_vertex(a->env, id, "union", json_object());
    connect_to(a, id, 0);
    connect_to(b, id, 1);
    return stream_new(a->env, id, NULL, jv);
}

void sl_ds_sink(sl_ds_stream *in, const char *id, const char *type, const char *const *options)
{
    if (!usable(in, id)) return;
    add_vertex(in->env, id, type, options_json(options));
    connect_to(in, id, 0);
}

void sl_ds_uid(sl_ds_stream *s, const char *uid)
{
    if (s && s->jv) json_object_set_new(s->jv, "uid", json_string(uid));
}

void sl_ds_option(sl_ds_stream *s, const char *key, const char *value)
{
    if (s && s->jv) json_object_set_new(json_object_get(s->jv, "config"), key, json_string(value));
}

void sl_ds_parallelism(sl_ds_stream *s, int parallelism)
{
    if (s && s->jv) json_object_set_new(s->jv, "parallelism", json_integer(parallelism));
}

/* ---- the bridges to SQL ----------------------------------------------------------- */

static sl_sql_session *sql_session(sl_ds_env *env)
{
    if (!env->sql) env->sql = sl_sql_session_new();
    return env->sql;
}

int sl_ds_sql(sl_ds_env *env, const char *statement)
{
    char why[600];
    sl_sql_result r;
    if (!statement) statement = "";
    if (sl_sql_execute(sql_session(env), statement, strlen(statement), 1, 1, &r, why, sizeof why) != SL_OK) {
        fail(env, "sl_ds_sql: %s", why);
        return SL_ERR;
    }
    int rc = SL_OK;
    if (r.kind == SL_SQL_JOB || r.kind == SL_SQL_QUERY || r.kind == SL_SQL_STOP_JOB ||
        r.kind == SL_SQL_SHOW_JOBS) {
        fail(env, "sl_ds_sql: only DDL and SET belong here; a query becomes a stream with "
             "sl_ds_to_data_stream (not '%.80s')", statement);
        rc = SL_ERR;
    }
    sl_sql_result_clear(&r);
    return rc;
}

/* The columns of the rows stream `in` carries: the graph so far, with a
 * probe sink on `in`, through the job graph parser (which plans every
 * vertex's output schema). */
static int stream_schema(sl_ds_stream *in, sl_schema *out, char *err, size_t errlen)
{
    static const char probe[] = "sluice-schema-probe";
    if (!sl_op_find("calc")) sl_ops_register_builtin(); /* `sluice run` builds before it plans */
    json_t *job = json_deep_copy(in->env->job);
    json_array_append_new(json_object_get(job, "vertices"),
                          json_pack("{s:s, s:s}", "id", probe, "type", "blackhole"));
    json_array_append_new(json_object_get(job, "edges"), edge_json(in, probe, 0));
    char *text = json_dumps(job, JSON_COMPACT);
    json_decref(job);
    sl_jobgraph *g = sl_jobgraph_parse(text, strlen(text), 1, 0, err, errlen);
    free(text);
    int rc = SL_ERR;
    for (int i = 0; g && i < g->nv; i++)
        if (!strcmp(g->v[i].id, probe)) {
            sl_schema_copy(out, &g->v[i].in[0]);
            rc = SL_OK;
        }
    sl_jobgraph_destroy(g);
    return rc;
}

void sl_ds_from_data_stream(sl_ds_stream *in, const char *name, const char *schema)
{
    if (!in) return;
    sl_ds_env *env = in->env;
    char why[600];
    sl_schema cols;
    sl_schema_init(&cols);
    if (stream_schema(in, &cols, why, sizeof why) != SL_OK) {
        if (!env->err[0])
            snprintf(env->err, sizeof env->err, "fromDataStream '%s': %s", name ? name : "", why);
    } else {
        const sl_ds_stream *from = in;
        if (in->output) { /* the planner reads main outputs: a side output goes through a calc */
            char *id = sl_sprintf("%s-%s", in->vertex, in->output);
            from = sl_ds_map(in, id, NULL);
            free(id);
        }
        if (sl_sql_bridge_register(sql_session(env), name, from->vertex, &cols, in->rowtime,
                                           schema, why, sizeof why) != SL_OK)
            fail(env, "%s", why);
    }
    sl_schema_free(&cols);
}

static sl_ds_stream *query_stream(sl_ds_env *env, const char *query, int changelog)
{
    char why[600];
    sl_sql_stream out;
    if (sl_sql_bridge_plan(sql_session(env), query ? query : "", json_object_get(env->job, "vertices"),
                           json_object_get(env->job, "edges"), &out, why, sizeof why) != SL_OK) {
        fail(env, changelog ? "toChangelogStream: %s" : "toDataStream: %s", why);
        return NULL;
    }
    sl_ds_stream *s = NULL;
    if (out.updating && !changelog) {
        if (!env->err[0])
            snprintf(env->err, sizeof env->err,
                     "toDataStream: Table sink '*anonymous_datastream_sink$%d*' doesn't support "
                     "consuming update changes which is produced by %s (an updating query becomes "
                     "a stream with sl_ds_to_changelog_stream)", env->anonymous + 1, out.updater);
    } else {
        json_t *vs = json_object_get(env->job, "vertices"), *v, *jv = NULL;
        size_t i;
        json_array_foreach(vs, i, v)
            if (!strcmp(json_string_value(json_object_get(v, "id")), out.vertex)) jv = v;
        s = stream_new(env, out.vertex, NULL, jv);
        s->rowtime = out.rowtime ? sl_strdup(out.rowtime) : NULL;
    }
    env->anonymous++;
    sl_sql_stream_clear(&out);
    return s;
}

sl_ds_stream *sl_ds_to_data_stream(sl_ds_env *env, const char *query)
{
    return query_stream(env, query, 0);
}

sl_ds_stream *sl_ds_to_changelog_stream(sl_ds_env *env, const char *query)
{
    return query_stream(env, query, 1);
}

char *sl_ds_to_json(sl_ds_env *env, char *err, size_t errlen)
{
    if (env->err[0]) {
        sl_seterr(err, errlen, "%s", env->err);
        return NULL;
    }
    return json_dumps(env->job, JSON_COMPACT);
}

/* Every function table the graph names ("function" of a vertex with a
 * "library") must be in h and carry this Sluice's DataStream ABI. */
static int check_tables(void *h, const char *text, const char *shown, char *err, size_t errlen)
{
    json_t *doc = json_loads(text, 0, NULL);
    json_t *vs = json_object_get(doc, "vertices"), *v;
    size_t i;
    int rc = SL_OK;
    json_array_foreach(vs, i, v) {
        const char *fn = json_string_value(json_object_get(json_object_get(v, "config"), "function"));
        if (!fn || rc != SL_OK) continue;
        const unsigned *abi = dlsym(h, fn);
        if (!abi)
            rc = sl_seterr(err, errlen, "%s has no function table '%s' (vertex '%s')", shown, fn,
                           json_string_value(json_object_get(v, "id")));
        else if (*abi != SL_DS_ABI_VERSION)
            rc = sl_seterr(err, errlen, "'%s' in %s was built for DataStream ABI %u, this Sluice has %u",
                           fn, shown, *abi, SL_DS_ABI_VERSION);
    }
    json_decref(doc);
    return rc;
}

char *sl_ds_build(const char *path, const char *entry, const char *library, const char *shown,
                  int argc, char **argv, char *err, size_t errlen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        sl_seterr(err, errlen, "cannot load %s: %s", shown, dlerror());
        return NULL;
    }
    if (!entry || !*entry) entry = SL_DS_JOB_MAIN;
    sl_ds_job_main_fn job_main;
    *(void **)&job_main = dlsym(h, entry);
    if (!job_main) {
        sl_seterr(err, errlen, "%s has no %s() (is it a Sluice C job?)", shown, entry);
        return NULL;
    }
    const char *base = strrchr(shown, '/');
    sl_ds_env *env = sl_ds_env_new(base ? base + 1 : shown);
    sl_ds_set_library(env, library);
    char *text = NULL;
    int rc = job_main(env, argc, argv);
    if (rc != 0) sl_seterr(err, errlen, "%s: %s() returned %d", shown, entry, rc);
    else text = sl_ds_to_json(env, err, errlen);
    sl_ds_env_free(env);
    if (text && check_tables(h, text, shown, err, errlen) != SL_OK) {
        free(text);
        text = NULL;
    }
    return text; /* the object stays loaded: the caller may still need its code */
}

/* ---- complex event processing ------------------------------------------------------ */

enum { CEP_NEXT, CEP_FOLLOWED_BY, CEP_FOLLOWED_BY_ANY, CEP_NOT_NEXT, CEP_NOT_FOLLOWED_BY };

typedef struct cep_elem {
    char *name;
    int kind;                   /* how it follows the element before it */
    int lo, hi, greedy;
} cep_elem;

struct sl_cep_pattern {
    cep_elem *e;
    int n;
    int64_t within;
    char err[160];              /* the first misuse of the builder, reported by sl_ds_cep */
};

void sl_cep_pattern_free(sl_cep_pattern *p)
{
    if (!p) return;
    for (int i = 0; i < p->n; i++) free(p->e[i].name);
    free(p->e);
    free(p);
}

static sl_cep_pattern *cep_add(sl_cep_pattern *p, const char *name, int kind)
{
    if (!p) return NULL;
    p->e = sl_realloc(p->e, sizeof *p->e * (size_t)(p->n + 1));
    p->e[p->n++] = (cep_elem){sl_strdup(name ? name : ""), kind, 1, 1, 0};
    return p;
}

sl_cep_pattern *sl_cep_begin(const char *name)
{
    return cep_add(sl_calloc(1, sizeof(sl_cep_pattern)), name, CEP_NEXT);
}

sl_cep_pattern *sl_cep_next(sl_cep_pattern *p, const char *name) { return cep_add(p, name, CEP_NEXT); }

sl_cep_pattern *sl_cep_followed_by(sl_cep_pattern *p, const char *name)
{
    return cep_add(p, name, CEP_FOLLOWED_BY);
}

sl_cep_pattern *sl_cep_followed_by_any(sl_cep_pattern *p, const char *name)
{
    return cep_add(p, name, CEP_FOLLOWED_BY_ANY);
}

sl_cep_pattern *sl_cep_not_next(sl_cep_pattern *p, const char *name)
{
    return cep_add(p, name, CEP_NOT_NEXT);
}

sl_cep_pattern *sl_cep_not_followed_by(sl_cep_pattern *p, const char *name)
{
    return cep_add(p, name, CEP_NOT_FOLLOWED_BY);
}

/* The element a quantifier applies to, or NULL (noted in p->err) when it is
 * a negative one. */
static cep_elem *cep_last(sl_cep_pattern *p, const char *what)
{
    if (!p || !p->n) return NULL;
    cep_elem *e = &p->e[p->n - 1];
    if (e->kind == CEP_NOT_NEXT || e->kind == CEP_NOT_FOLLOWED_BY) {
        if (!p->err[0])
            snprintf(p->err, sizeof p->err, "%s of '%s': Option not applicable to NOT pattern", what,
                     e->name);
        return NULL;
    }
    return e;
}

sl_cep_pattern *sl_cep_times(sl_cep_pattern *p, int lo, int hi)
{
    cep_elem *e = cep_last(p, "times");
    if (e) {
        e->lo = lo;
        e->hi = hi;
    }
    return p;
}

sl_cep_pattern *sl_cep_one_or_more(sl_cep_pattern *p) { return sl_cep_times(p, 1, -1); }

sl_cep_pattern *sl_cep_optional(sl_cep_pattern *p)
{
    cep_elem *e = cep_last(p, "optional");
    if (e) e->lo = 0;
    return p;
}

sl_cep_pattern *sl_cep_greedy(sl_cep_pattern *p)
{
    cep_elem *e = cep_last(p, "greedy");
    if (e) e->greedy = 1;
    return p;
}

sl_cep_pattern *sl_cep_within(sl_cep_pattern *p, int64_t ms)
{
    if (p) p->within = ms;
    return p;
}

/* The pattern as MATCH_RECOGNIZE's PATTERN text, and in *unless the rows a
 * hidden element may not take. Before a followed_by (_any) element goes a
 * TRUE "__skip<i>" taken reluctantly (as few rows as needed); it takes no
 * row the element would take (followed_by: skip till the next fitting row,
 * _any: any row) nor one a not_followed_by element before it would. A
 * not_next element is `!name` (the next row must not be name; it is not
 * taken); not_followed_by at the end is "__skip<i>* $": rows that are none
 * of its names until the WITHIN window is over (`$`). NULL with err when
 * the elements do not fit together. */
static char *cep_text(const sl_cep_pattern *p, json_t *unless, char *err, size_t errlen)
{
    sl_buf b = {0};
    json_t *nots = json_array();
    for (int i = 0; i < p->n; i++) {
        const cep_elem *e = &p->e[i];
        int neg = e->kind == CEP_NOT_NEXT || e->kind == CEP_NOT_FOLLOWED_BY;
        if (neg && i && p->e[i - 1].lo == 0) {
            snprintf(err, errlen, "'%s': Specifying a pattern with an optional path to NOT condition is "
                     "not supported yet.", e->name);
            goto fail;
        }
        if (e->kind == CEP_NOT_FOLLOWED_BY) {
            json_array_append_new(nots, json_string(e->name));
            continue;
        }
        if (b.len) sl_buf_putc(&b, ' ');
        if (e->kind == CEP_NOT_NEXT) {
            sl_buf_fmt(&b, "!`%s`", e->name);
            continue;
        }
        if (json_array_size(nots) && e->kind == CEP_NEXT) {
            snprintf(err, errlen, "'%s' follows a not_followed_by element: it must be followed_by or "
                     "followed_by_any", e->name);
            goto fail;
        }
        if (i && (e->kind == CEP_FOLLOWED_BY || e->kind == CEP_FOLLOWED_BY_ANY)) {
            char hv[32];
            snprintf(hv, sizeof hv, "__skip%d", i);
            sl_buf_fmt(&b, "%s*? ", hv);
            if (e->kind == CEP_FOLLOWED_BY) json_array_append_new(nots, json_string(e->name));
            if (json_array_size(nots)) {
                json_t *ent = json_pack("[s]", hv);
                json_array_extend(ent, nots);
                json_array_append_new(unless, ent);
            }
        }
        json_array_clear(nots);
        sl_buf_fmt(&b, "`%s`", e->name);
        if (e->lo == 1 && e->hi == 1) continue;
        if (e->lo == 0 && e->hi == 1) sl_buf_str(&b, "?");
        else if (e->lo == 0 && e->hi < 0) sl_buf_str(&b, "*");
        else if (e->lo == 1 && e->hi < 0) sl_buf_str(&b, "+");
        else if (e->hi < 0) sl_buf_fmt(&b, "{%d,}", e->lo);
        else sl_buf_fmt(&b, "{%d,%d}", e->lo, e->hi);
        if (!e->greedy && e->lo != e->hi && !(e->lo == 0 && e->hi == 1)) sl_buf_putc(&b, '?');
    }
    if (json_array_size(nots)) { /* at the end: no such row until the WITHIN window is over */
        if (p->within <= 0) {
            snprintf(err, errlen, "NotFollowedBy is not supported without windowTime as a last part "
                     "of a Pattern!");
            goto fail;
        }
        char hv[32];
        snprintf(hv, sizeof hv, "__skip%d", p->n);
        sl_buf_fmt(&b, " %s* $", hv);
        json_t *ent = json_pack("[s]", hv);
        json_array_extend(ent, nots);
        json_array_append_new(unless, ent);
    }
    json_decref(nots);
    return sl_buf_take(&b);
fail:
    json_decref(nots);
    sl_buf_free(&b);
    return NULL;
}

sl_ds_stream *sl_ds_cep(sl_ds_stream *keyed, const char *id, const sl_cep_pattern *p,
                        const char *symbol, const char *out_schema, const char *timeout_schema)
{
    if (!usable(keyed, id)) return keyed;
    sl_ds_env *env = keyed->env;
    if (!env->library) fail(env, "cep '%s': no library (sluice run sets the job's own)", id);
    if (!keyed->keys) fail(env, "cep '%s': the pattern runs per key: sl_ds_key_by the stream first", id);
    if (!p || !p->n) fail(env, "cep '%s': an empty pattern", id);
    for (int i = 0; p && i < p->n; i++)
        if (!p->e[i].name[0] || !strncmp(p->e[i].name, "__", 2) || strchr(p->e[i].name, '`'))
            fail(env, "cep '%s': a pattern element's name is empty, has '`' or starts with \"__\"", id);
    char perr[300] = "";
    json_t *unless = json_array();
    if (p && p->err[0] && !env->err[0]) snprintf(env->err, sizeof env->err, "cep '%s': %s", id, p->err);
    char *text = p && p->n ? cep_text(p, unless, perr, sizeof perr) : sl_strdup("");
    if (!text) {
        if (!env->err[0]) snprintf(env->err, sizeof env->err, "cep '%s': %s", id, perr);
        text = sl_strdup("");
    }
    sl_mr_pattern *chk = sl_mr_pattern_compile(text, perr, sizeof perr);
    if (!chk && !env->err[0]) snprintf(env->err, sizeof env->err, "cep '%s': pattern %s: %s", id, text, perr);
    sl_mr_pattern_free(chk);
    json_t *cfg = json_pack("{s:s, s:s, s:s, s:s, s:O}", "library", env->library ? env->library : "",
                            "function", symbol ? symbol : "", "schema", out_schema ? out_schema : "",
                            "pattern", text, "partition-keys", keyed->keys);
    free(text);
    if (json_array_size(unless)) json_object_set(cfg, "skip-unless", unless);
    json_decref(unless);
    if (keyed->rowtime) json_object_set_new(cfg, "time", json_string(keyed->rowtime));
    else json_object_set_new(cfg, "time-domain", json_string("processing"));
    if (p && p->within > 0) {
        char w[48];
        snprintf(w, sizeof w, "%lld ms", (long long)p->within);
        json_object_set_new(cfg, "within", json_string(w));
    }
    if (timeout_schema) json_object_set_new(cfg, "timeout-schema", json_string(timeout_schema));
    json_t *jv = add_vertex(env, id, "match_recognize", cfg);
    connect_to(keyed, id, 0);
    return stream_new(env, id, NULL, jv);
}
