/*
 * plan_reuse.c -- common sub-plans computed once (Flink's
 * table.optimizer.reuse-sub-plan-enabled, on by default there too).
 *
 * A query may compute the same thing twice: Nexmark q5 counts bids per
 * auction in the same HOP windows on both sides of its join, once to keep
 * the counts and once to find each window's maximum. Planned as written,
 * each copy is a vertex of its own, with its own state, timers and share of
 * every input row. This pass runs over the finished job graph and merges two
 * vertices that are the same operator -- equal type, parallelism, schema
 * and config -- reading the same inputs over the same edges (source,
 * strategy, keys and input number). The first one planned stays, with its
 * uid, and takes over the other's outputs; the pass repeats until nothing
 * changes, so a chain of equal vertices folds from its inputs down.
 *
 * What it leaves alone: sources (scans already share one per table), sinks
 * (two INSERTs into one table write twice), and a merge that would give the
 * kept vertex two edges into the same consumer (a self-join or self-UNION
 * of the same rows needs its two inputs on separate edges, which the
 * planner gives each a calc of its own).
 */
#include <string.h>

#include <jansson.h>

#include "sl.h"
#include "plan_int.h"

static const char *vid(const json_t *v) { return json_string_value(json_object_get(v, "id")); }

static const char *edge_end(const json_t *e, const char *end)
{
    return json_string_value(json_object_get(e, end));
}

/* Two json values equal, either of them possibly absent. */
static int same_json(const json_t *a, const json_t *b)
{
    if (!a || !b) return a == b;
    return json_equal((json_t *)a, (json_t *)b);
}

/* The same operator, whatever its id and uid. */
static int same_vertex(const json_t *a, const json_t *b)
{
    static const char *const fields[] = {"type", "parallelism", "schema", "config"};
    for (size_t i = 0; i < SL_ARRAY_LEN(fields); i++)
        if (!same_json(json_object_get(a, fields[i]), json_object_get(b, fields[i]))) return 0;
    return 1;
}

/* Edge e, with its "to" ignored, is edge f's twin. */
static int same_input(const json_t *e, const json_t *f)
{
    static const char *const fields[] = {"from", "strategy", "keys", "input"};
    for (size_t i = 0; i < SL_ARRAY_LEN(fields); i++)
        if (!same_json(json_object_get(e, fields[i]), json_object_get(f, fields[i]))) return 0;
    return 1;
}

static size_t count_edges(const json_t *edges, const char *end, const char *id)
{
    size_t n = 0, i;
    json_t *e;
    json_array_foreach(edges, i, e)
        if (!strcmp(edge_end(e, end), id)) n++;
    return n;
}

/* a and b read the same inputs the same way (as multisets of edges). */
static int same_inputs(const json_t *edges, const char *a, const char *b)
{
    size_t n = count_edges(edges, "to", a);
    if (!n || n != count_edges(edges, "to", b)) return 0;
    size_t i, j;
    json_t *e, *f;
    json_array_foreach(edges, i, e) {
        if (strcmp(edge_end(e, "to"), a)) continue;
        size_t want = 0, have = 0;
        json_array_foreach(edges, j, f) {
            if (!same_input(e, f)) continue;
            if (!strcmp(edge_end(f, "to"), a)) want++;
            else if (!strcmp(edge_end(f, "to"), b)) have++;
        }
        if (want != have) return 0;
    }
    return 1;
}

/* Some consumer of b already reads a: merging would give it two edges from a. */
static int shares_consumer(const json_t *edges, const char *a, const char *b)
{
    size_t i, j;
    json_t *e, *f;
    json_array_foreach(edges, i, e) {
        if (strcmp(edge_end(e, "from"), b)) continue;
        json_array_foreach(edges, j, f)
            if (!strcmp(edge_end(f, "from"), a) && !strcmp(edge_end(f, "to"), edge_end(e, "to")))
                return 1;
    }
    return 0;
}

/* b's outputs leave from a; b and its input edges go. */
static void fold(json_t *vertices, json_t *edges, size_t keep, size_t drop)
{
    char *a = sl_strdup(vid(json_array_get(vertices, keep)));
    char *b = sl_strdup(vid(json_array_get(vertices, drop)));
    for (size_t i = json_array_size(edges); i-- > 0;) {
        json_t *e = json_array_get(edges, i);
        if (!strcmp(edge_end(e, "to"), b)) json_array_remove(edges, i);
        else if (!strcmp(edge_end(e, "from"), b)) json_object_set_new(e, "from", json_string(a));
    }
    json_array_remove(vertices, drop);
    free(a);
    free(b);
}

int sqlp_reuse_common(json_t *vertices, json_t *edges)
{
    int merged = 0;
    for (int again = 1; again;) {
        again = 0;
        size_t n = json_array_size(vertices);
        for (size_t i = 0; i < n && !again; i++) {
            const json_t *vi = json_array_get(vertices, i);
            const char *a = vid(vi);
            if (!count_edges(edges, "from", a)) continue; /* a sink */
            for (size_t j = i + 1; j < n && !again; j++) {
                const json_t *vj = json_array_get(vertices, j);
                const char *b = vid(vj);
                if (!count_edges(edges, "from", b) || !same_vertex(vi, vj) ||
                    !same_inputs(edges, a, b) || shares_consumer(edges, a, b))
                    continue;
                fold(vertices, edges, i, j);
                merged++;
                again = 1;
            }
        }
    }
    return merged;
}
