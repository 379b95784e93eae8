/*
 * explain.c -- EXPLAIN's text, written from the planned job graph itself:
 * each vertex as `id[type] uid=... {config}`, in the order planned (inputs
 * first), and with EXPLAIN CHANGELOG_MODE the changelog mode of what each
 * vertex emits, in Flink's labels: I (+I), UB (-U), UA (+U), D (-D), and
 * NONE for a sink.
 *
 * The modes are derived from the graph, vertex by vertex from its inputs,
 * with what each operator emits (the operators' sources):
 *   sources: datagen and the other sources [I]; kafka with debezium-json
 *     [I,UB,UA,D]; upsert-kafka [UA,D];
 *   changelog-normalize (upserts made a changelog): [I,UB,UA,D];
 *   group_aggregate: [I,UB,UA], plus D when its input retracts (a key whose
 *     rows are all retracted is deleted);
 *   window: [I]; with allowed-lateness, late firings update ([I,UB,UA]) and
 *     a SESSION window merging fired sessions deletes (D);
 *   rank: a window Top-N [I]; with the row number [I,UB,UA,D] (positions
 *     change), without it [I,D];
 *   deduplicate: keep first on processing time [I], otherwise [I,UB,UA];
 *   rowtime_deduplicate (keep first on event time, held to the watermark): [I];
 *   regular_join: [I] for an inner join of insert-only inputs, else [I,D];
 *   interval_join, temporal_join, window_join: [I];
 *   a vertex without outputs is a sink: [NONE];
 *   anything else (calc, watermark, union, ...) passes its inputs' kinds.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "expr.h"
#include "sl.h"
#include "sql_int.h"

enum { CM_I = 1, CM_UB = 2, CM_UA = 4, CM_D = 8, CM_NONE = 16, CM_UNKNOWN = -1 };

static const char *cfg_str(const json_t *v, const char *key)
{
    return json_string_value(json_object_get(json_object_get(v, "config"), key));
}

static int is_type(const char *type, const char *t) { return !strcmp(type, t); }

/* What vertex v emits, given the kinds its inputs carry (OR of them). */
static int vertex_mode(const json_t *v, const char *type, int nin, int in)
{
    if (nin == 0) {
        const char *fmt = cfg_str(v, "value.format");
        if (!fmt) fmt = cfg_str(v, "format");
        if (is_type(type, "upsert-kafka")) return CM_UA | CM_D;
        if (is_type(type, "kafka") && fmt && !strcmp(fmt, "debezium-json"))
            return CM_I | CM_UB | CM_UA | CM_D;
        return CM_I;
    }
    int retracts = (in & (CM_UB | CM_D)) != 0;
    if (is_type(type, "changelog-normalize")) return CM_I | CM_UB | CM_UA | CM_D;
    if (is_type(type, "group_aggregate")) return CM_I | CM_UB | CM_UA | (retracts ? CM_D : 0);
    if (is_type(type, "window")) {
        const char *late = cfg_str(v, "allowed-lateness");
        int64_t ms = 0;
        char err[128];
        if (!late || sl_interval_parse(late, &ms, err, sizeof err) != SL_OK || ms <= 0) return CM_I;
        const char *w = cfg_str(v, "window");
        int session = w && !strncasecmp(w, "SESSION", 7);
        return CM_I | CM_UB | CM_UA | (session ? CM_D : 0);
    }
    if (is_type(type, "rank")) {
        if (cfg_str(v, "window-end")) return CM_I;
        return cfg_str(v, "row-number") ? CM_I | CM_UB | CM_UA | CM_D : CM_I | CM_D;
    }
    if (is_type(type, "deduplicate")) {
        const char *keep = cfg_str(v, "keep"), *time = cfg_str(v, "time");
        int first_proc = keep && !strcmp(keep, "first") && time && !strcmp(time, "processing");
        return first_proc ? CM_I : CM_I | CM_UB | CM_UA;
    }
    if (is_type(type, "rowtime_deduplicate")) return CM_I;
    if (is_type(type, "regular_join")) {
        const char *jt = cfg_str(v, "join-type");
        int inner = !jt || !strcasecmp(jt, "inner");
        return inner && in == CM_I ? CM_I : CM_I | CM_D;
    }
    if (is_type(type, "set_op")) {
        const char *op = cfg_str(v, "op");
        return op && !strcmp(op, "intersect") && in == CM_I ? CM_I : CM_I | CM_D;
    }
    if (is_type(type, "interval_join") || is_type(type, "temporal_join") ||
        is_type(type, "window_join"))
        return CM_I;
    return in;
}

static void mode_text(sql_sbuf *b, int m)
{
    if (m & CM_NONE) {
        sql_sb_str(b, "[NONE]");
        return;
    }
    static const char *const names[] = {"I", "UB", "UA", "D"};
    sql_sb_str(b, "[");
    for (int i = 0, first = 1; i < 4; i++)
        if (m & (1 << i)) {
            sql_sb_fmt(b, "%s%s", first ? "" : ",", names[i]);
            first = 0;
        }
    sql_sb_str(b, "]");
}

/* Each vertex's mode, in vertex order (caller frees). */
static int *changelog_modes(const json_t *job)
{
    const json_t *vs = json_object_get(job, "vertices"), *es = json_object_get(job, "edges");
    size_t n = json_array_size(vs), ne = json_array_size(es);
    int *mode = sl_calloc(n + 1, sizeof(int));
    for (size_t i = 0; i < n; i++) mode[i] = CM_UNKNOWN;
    /* at most n passes: each settles at least one vertex of an acyclic graph */
    for (size_t pass = 0, progress = 1; progress && pass < n; pass++) {
        progress = 0;
        for (size_t i = 0; i < n; i++) {
            if (mode[i] != CM_UNKNOWN) continue;
            const json_t *v = json_array_get(vs, i);
            const char *id = json_string_value(json_object_get(v, "id"));
            const char *type = json_string_value(json_object_get(v, "type"));
            if (!id || !type) {
                mode[i] = 0;
                progress = 1;
                continue;
            }
            int nin = 0, nout = 0, in = 0, ready = 1;
            for (size_t e = 0; e < ne; e++) {
                const json_t *ed = json_array_get(es, e);
                const char *from = json_string_value(json_object_get(ed, "from"));
                const char *to = json_string_value(json_object_get(ed, "to"));
                if (from && !strcmp(from, id)) nout++;
                if (!to || strcmp(to, id) || !from) continue;
                nin++;
                for (size_t k = 0; k < n; k++) {
                    const char *kid = json_string_value(json_object_get(json_array_get(vs, k), "id"));
                    if (!kid || strcmp(kid, from)) continue;
                    if (mode[k] == CM_UNKNOWN) ready = 0;
                    else in |= mode[k] & ~CM_NONE;
                }
            }
            if (!ready) continue;
            mode[i] = nout == 0 && nin > 0 ? CM_NONE : vertex_mode(v, type, nin, in);
            progress = 1;
        }
    }
    return mode;
}

char *sql_explain_text(const json_t *job, int changelog_mode)
{
    const json_t *vs = json_object_get(job, "vertices");
    int *mode = changelog_mode ? changelog_modes(job) : NULL;
    sql_sbuf b = {0};
    sql_sb_str(&b, "== Optimized Execution Plan ==\n");
    size_t i;
    const json_t *v;
    json_array_foreach(vs, i, v) {
        const char *id = json_string_value(json_object_get(v, "id"));
        const char *uid = json_string_value(json_object_get(v, "uid"));
        const char *type = json_string_value(json_object_get(v, "type"));
        sql_sb_fmt(&b, "%s[%s] uid=%s", id ? id : "?", type ? type : "?", uid ? uid : id ? id : "?");
        if (mode && mode[i] != CM_UNKNOWN) {
            sql_sb_str(&b, " changelogMode=");
            mode_text(&b, mode[i]);
        }
        const json_t *cfg = json_object_get(v, "config");
        if (cfg && json_object_size(cfg)) {
            char *c = json_dumps(cfg, JSON_COMPACT | JSON_PRESERVE_ORDER);
            sql_sb_fmt(&b, " %s", c);
            free(c);
        }
        sql_sb_str(&b, "\n");
    }
    free(mode);
    return sql_sb_take(&b);
}
