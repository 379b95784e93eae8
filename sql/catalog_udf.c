/*
 * catalog_udf.c -- the session's user-defined functions and jars: CREATE
 * [TEMPORARY [SYSTEM]] FUNCTION, DROP FUNCTION, DESCRIBE FUNCTION, SHOW
 * [USER] FUNCTIONS' user part, ADD JAR / SHOW JARS / REMOVE JAR; and the
 * "functions" a planned job's vertices carry.
 *
 * Like tables, functions live in the session (the client process): the
 * catalog is in memory and per session, so TEMPORARY and not are the same
 * here. A function is C (LANGUAGE C, the default): `AS 'identifier'` names
 * a function declared in a shared object (core/udf.h) -- the one of USING
 * JAR, else the first of the session's ADD JARs that declares it. CREATE
 * reads the declaration from the object's ELF section and checks that the
 * object exports the symbol, both without loading it (core/udf_sig.h), so
 * a bad signature or a missing symbol is an error of the statement. The
 * planner type-checks calls against the declarations
 * (sl_expr_set_session_functions); sql_udfs_attach then lists, in each calc
 * and correlate vertex, the functions its expressions call, with the
 * object's path, which the client turns into an upload (cli/sql.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "expr.h"
#include "sql_int.h"
#include "udf_sig.h"

struct sql_udfs {
    sl_udf_set *set;  /* the functions, by SQL name */
    int *temp;        /* per function: created TEMPORARY */
    int *sys;         /* per function: TEMPORARY SYSTEM */
    char **jars;      /* ADD JAR, absolute paths in the order added */
    int njars;
};

sql_udfs *sql_udfs_new(void)
{
    sql_udfs *u = sl_calloc(1, sizeof *u);
    u->set = sl_udf_set_new();
    return u;
}

void sql_udfs_destroy(sql_udfs *u)
{
    if (!u) return;
    sl_udf_set_destroy(u->set);
    free(u->temp);
    free(u->sys);
    for (int i = 0; i < u->njars; i++) free(u->jars[i]);
    free(u->jars);
    free(u);
}

const struct sl_udf_set *sql_udfs_set(const sql_udfs *u) { return u ? u->set : NULL; }

static int find_idx(const sql_udfs *u, const char *name)
{
    for (int i = 0; i < u->set->n; i++)
        if (!strcasecmp(u->set->f[i]->name, name)) return i;
    return -1;
}

/* The object's path made absolute; NULL with err when it is no readable file. */
static char *object_path(const sql_node *at, const char *path, char *err, size_t errlen)
{
    char buf[PATH_MAX];
    if (!realpath(path, buf) || access(buf, R_OK) != 0) {
        sl_seterr(err, errlen, "line %d, column %d: cannot read the jar '%s': %s", at->line,
                  at->col, path, strerror(errno));
        return NULL;
    }
    return sl_strdup(buf);
}

/* Is `name` a function the expression checker knows already (a built-in)? */
static int is_builtin(const char *name)
{
    static const char *const aggs[] = {"COUNT", "SUM", "MIN", "MAX", "AVG", "ROW_NUMBER",
                                       "PROCTIME", "TUMBLE", "HOP", "CUMULATE", "SESSION",
                                       "FIRST_VALUE", "LAST_VALUE", "LISTAGG", "STDDEV_POP",
                                       "STDDEV_SAMP", "VAR_POP", "VAR_SAMP", "CAST", "TRY_CAST",
                                       "TUMBLE_START", "TUMBLE_END", "TUMBLE_ROWTIME",
                                       "TUMBLE_PROCTIME", "HOP_START", "HOP_END", "HOP_ROWTIME",
                                       "HOP_PROCTIME", "SESSION_START", "SESSION_END",
                                       "SESSION_ROWTIME", "SESSION_PROCTIME"};
    for (size_t i = 0; i < SL_ARRAY_LEN(aggs); i++)
        if (!strcasecmp(aggs[i], name)) return 1;
    char text[300], err[300];
    snprintf(text, sizeof text, "`%s`()", name);
    if (strchr(name, '`')) return 0;
    sl_schema none;
    sl_schema_init(&none);
    sl_expr *x = sl_expr_parse(text, &none, err, sizeof err);
    sl_expr_destroy(x);
    return x || !strstr(err, "unknown function");
}

static int create_function(sql_udfs *u, const sql_node *st, sl_sql_result *r, char *err,
                           size_t errlen)
{
    const sql_node *lang = sql_kid(st, 0), *jar = sql_kid(st, 1);
    bool python = lang && !strcasecmp(lang->s, "PYTHON");
    if (lang && strcasecmp(lang->s, "C") && !python)
        return sl_seterr(err, errlen, "line %d, column %d: LANGUAGE %s is not supported: Sluice's "
                         "functions are C functions in shared objects (LANGUAGE C) or Python "
                         "functions (LANGUAGE PYTHON), see docs/UDF.md", lang->line, lang->col,
                         lang->s);
    bool alter = st->flags & SQL_F_ALTER;
    int old = find_idx(u, st->s);
    const char *old_path = NULL; /* ALTER without USING JAR: the function's file so far */
    if (alter) {
        if (st->flags & SQL_F_TEMP)
            return sl_seterr(err, errlen, "line %d, column %d: Alter temporary %s function is not "
                             "supported", st->line, st->col,
                             (st->flags & SQL_F_SYSTEM) ? "system" : "catalog");
        if (old < 0 || u->temp[old]) {
            if (st->flags & SQL_F_IFEX) {
                r->kind = SL_SQL_OK;
                return SL_OK;
            }
            return sl_seterr(err, errlen, "line %d, column %d: Function default_database.%s does "
                             "not exist in Catalog default_catalog.", st->line, st->col, st->s);
        }
        old_path = u->set->f[old]->library;
    }
    if ((st->flags & SQL_F_SYSTEM) && !(st->flags & SQL_F_TEMP))
        return sl_seterr(err, errlen, "line %d, column %d: CREATE SYSTEM FUNCTION is not supported, "
                         "system functions can only be registered as temporary function, you can "
                         "use CREATE TEMPORARY SYSTEM FUNCTION instead.", st->line, st->col);
    if (!alter && old >= 0) {
        if (st->flags & SQL_F_IFNE) {
            r->kind = SL_SQL_OK;
            return SL_OK;
        }
        return sl_seterr(err, errlen, "line %d, column %d: Function default_catalog.default_database.%s "
                         "already exists (the catalog is per session)", st->line, st->col, st->s);
    }
    if (!alter && is_builtin(st->s))
        return sl_seterr(err, errlen, "line %d, column %d: '%s' is a built-in function; Sluice "
                         "cannot replace it, choose another name", st->line, st->col, st->s);
    char e2[800];
    sl_udf_sig *s = NULL;
    if (python) {
        const char *dot = strrchr(st->s2, '.');
        if (!dot || dot == st->s2 || !dot[1])
            return sl_seterr(err, errlen, "line %d, column %d: a Python function is named "
                             "'module.function', not '%s'", st->line, st->col, st->s2);
        if (!jar && !old_path)
            return sl_seterr(err, errlen, "line %d, column %d: name the Python file of '%s' with "
                             "USING JAR '/path/%.*s.py'", st->line, st->col, st->s2,
                             (int)(dot - st->s2), st->s2);
        char *path = jar ? object_path(jar, jar->s, err, errlen) : sl_strdup(old_path);
        if (!path) return SL_ERR;
        char *module = sl_strndup(st->s2, (size_t)(dot - st->s2));
        s = sl_udf_python_decl(path, module, dot + 1, e2, sizeof e2);
        free(module);
        free(path);
        if (!s)
            return sl_seterr(err, errlen, "line %d, column %d: %s", jar ? jar->line : st->line,
                             jar ? jar->col : st->col, e2);
    } else if (jar || old_path) {
        char *path = jar ? object_path(jar, jar->s, err, errlen) : sl_strdup(old_path);
        if (!path) return SL_ERR;
        s = sl_udf_find_decl(path, st->s2, e2, sizeof e2);
        free(path);
        if (!s)
            return sl_seterr(err, errlen, "line %d, column %d: %s", jar ? jar->line : st->line,
                             jar ? jar->col : st->col, e2);
    } else {
        if (!u->njars)
            return sl_seterr(err, errlen, "line %d, column %d: no jar holds '%s': name its shared "
                             "object with USING JAR '/path/lib.so' or ADD JAR it first", st->line,
                             st->col, st->s2);
        for (int i = 0; i < u->njars && !s; i++) s = sl_udf_find_decl(u->jars[i], st->s2, e2, sizeof e2);
        if (!s)
            return sl_seterr(err, errlen, "line %d, column %d: none of the session's jars (SHOW "
                             "JARS) declares a function '%s'", st->line, st->col, st->s2);
    }
    if (!python && sl_udf_exports(s->library, s->symbol, s->kind, e2, sizeof e2) != SL_OK) {
        sl_udf_sig_free(s);
        return sl_seterr(err, errlen, "line %d, column %d: %s", st->line, st->col, e2);
    }
    free(s->name);
    s->name = sl_strdup(st->s);
    if (alter) { /* in place: the session's later jobs plan against the new one */
        sl_udf_sig_free(u->set->f[old]);
        u->set->f[old] = s;
        r->kind = SL_SQL_OK;
        return SL_OK;
    }
    sl_udf_set_add(u->set, s);
    u->temp = sl_realloc(u->temp, sizeof *u->temp * (size_t)u->set->n);
    u->sys = sl_realloc(u->sys, sizeof *u->sys * (size_t)u->set->n);
    u->temp[u->set->n - 1] = (st->flags & SQL_F_TEMP) != 0;
    u->sys[u->set->n - 1] = (st->flags & SQL_F_SYSTEM) != 0;
    r->kind = SL_SQL_OK;
    return SL_OK;
}

static int drop_function(sql_udfs *u, const sql_node *st, sl_sql_result *r, char *err,
                         size_t errlen)
{
    int i = find_idx(u, st->s);
    if (i < 0) {
        if (st->flags & SQL_F_IFEX) {
            r->kind = SL_SQL_OK;
            return SL_OK;
        }
        return sl_seterr(err, errlen, "line %d, column %d: Function %s does not exist in this session",
                         st->line, st->col, st->s);
    }
    sl_udf_sig_free(u->set->f[i]);
    int rest = u->set->n - i - 1;
    memmove(&u->set->f[i], &u->set->f[i + 1], sizeof *u->set->f * (size_t)rest);
    memmove(&u->temp[i], &u->temp[i + 1], sizeof *u->temp * (size_t)rest);
    memmove(&u->sys[i], &u->sys[i + 1], sizeof *u->sys * (size_t)rest);
    u->set->n--;
    r->kind = SL_SQL_OK;
    return SL_OK;
}

static int describe_function(sql_udfs *u, const sql_node *st, sl_sql_result *r, char *err,
                             size_t errlen)
{
    int i = find_idx(u, st->s);
    if (i < 0)
        return sl_seterr(err, errlen, "line %d, column %d: Function %s does not exist in this "
                         "session (built-in functions are listed by SHOW FUNCTIONS)", st->line,
                         st->col, st->s);
    const sl_udf_sig *s = u->set->f[i];
    char *sig = sl_udf_sig_text(s), *uris = sl_sprintf("[%s]", s->library);
    char *cls = s->python ? sl_sprintf("%s.%s", s->module, s->symbol) : sl_strdup(s->symbol);
    char *cells[] = {"is system function", u->sys[i] ? "true" : "false",
                     "is temporary", u->temp[i] ? "true" : "false",
                     "class name", cls,
                     "function language", s->python ? "PYTHON" : "C",
                     "resource uris", uris,
                     "kind", s->kind == SL_UDF_SCALAR_KIND ? "SCALAR"
                             : s->kind == SL_UDF_TABLE_KIND ? "TABLE" : "AGGREGATE",
                     "deterministic", s->deterministic ? "true" : "false",
                     "null handling", s->strict ? "returns NULL on NULL input" : "called on NULL input",
                     "signature", sig};
    const char *head[] = {"info name", "info value"}, *types[] = {"STRING", "STRING"};
    sql_table_result(r, 2, head, types, cells, (int)SL_ARRAY_LEN(cells) / 2);
    free(sig);
    free(uris);
    free(cls);
    return SL_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcasecmp(*(char *const *)a, *(char *const *)b);
}

char **sql_udfs_names(const sql_udfs *u, int *n)
{
    char **names = sl_calloc((size_t)u->set->n + 1, sizeof *names);
    for (int i = 0; i < u->set->n; i++) names[i] = u->set->f[i]->name;
    qsort(names, (size_t)u->set->n, sizeof *names, cmp_str);
    *n = u->set->n;
    return names;
}

static int jar_stmt(sql_udfs *u, const sql_node *st, sl_sql_result *r, char *err, size_t errlen)
{
    if (!strcmp(st->s, "ADD")) {
        char *path = object_path(st, st->s2, err, errlen);
        if (!path) return SL_ERR;
        sl_udf_sig **all;
        int n;
        char e2[800];
        if (sl_udf_read_decls(path, &all, &n, e2, sizeof e2) != SL_OK) {
            free(path);
            return sl_seterr(err, errlen, "line %d, column %d: %s", st->line, st->col, e2);
        }
        for (int i = 0; i < n; i++) sl_udf_sig_free(all[i]);
        free(all);
        for (int i = 0; i < u->njars; i++)
            if (!strcmp(u->jars[i], path)) {
                free(path);
                path = NULL;
                break;
            }
        if (path) {
            u->jars = sl_realloc(u->jars, sizeof *u->jars * (size_t)(u->njars + 1));
            u->jars[u->njars++] = path;
        }
        r->kind = SL_SQL_OK;
        r->message = sl_strdup("The specified jar is added into session classloader.");
        return SL_OK;
    }
    char buf[PATH_MAX];
    const char *p = realpath(st->s2, buf) ? buf : st->s2;
    for (int i = 0; i < u->njars; i++)
        if (!strcmp(u->jars[i], p) || !strcmp(u->jars[i], st->s2)) {
            free(u->jars[i]);
            memmove(&u->jars[i], &u->jars[i + 1], sizeof *u->jars * (size_t)(u->njars - i - 1));
            u->njars--;
            r->kind = SL_SQL_OK;
            r->message = sl_strdup("The specified jar is removed from session classloader.");
            return SL_OK;
        }
    return sl_seterr(err, errlen, "line %d, column %d: The jar '%s' was not added to this session "
                     "(SHOW JARS lists them)", st->line, st->col, st->s2);
}

int sql_udfs_execute(sql_udfs *u, const sql_node *st, sl_sql_result *r, char *err, size_t errlen)
{
    switch (st->kind) {
    case SQL_CREATE_FUNCTION: return create_function(u, st, r, err, errlen);
    case SQL_DROP_FUNCTION: return drop_function(u, st, r, err, errlen);
    case SQL_DESCRIBE_FUNCTION: return describe_function(u, st, r, err, errlen);
    case SQL_JAR: return jar_stmt(u, st, r, err, errlen);
    case SQL_SHOW:
        if (!strcmp(st->s, "JARS")) {
            const char *head[] = {"jars"}, *types[] = {"STRING"};
            sql_table_result(r, 1, head, types, u->jars, u->njars);
            return SL_OK;
        } else {
            int n;
            char **names = sql_udfs_names(u, &n);
            const char *head[] = {"function name"}, *types[] = {"STRING"};
            sql_table_result(r, 1, head, types, names, n);
            free(names);
            return SL_OK;
        }
    default: return sl_seterr(err, errlen, "line %d, column %d: not a function statement", st->line, st->col);
    }
}

/* ---- the job's vertices ------------------------------------------------------ */

/* Does text call `name` -- name, then blanks and '(' -- outside quotes? */
static int calls(const char *text, const char *name)
{
    size_t n = strlen(name);
    char q = 0;
    for (const char *p = text; *p; p++) {
        if (q) {
            if (*p == q) q = 0;
            continue;
        }
        if (*p == '\'') {
            q = '\'';
            continue;
        }
        if (strncasecmp(p, name, n)) continue;
        if (p > text && (p[-1] == '_' || p[-1] == '$' || (p[-1] >= '0' && p[-1] <= '9') ||
                         ((p[-1] | 32) >= 'a' && (p[-1] | 32) <= 'z')))
            continue;
        const char *e = p + n;
        if (*e == '`') e++;
        while (*e == ' ' || *e == '\n' || *e == '\t') e++;
        if (*e == '(') return 1;
    }
    return 0;
}

void sql_udfs_attach(const sql_udfs *u, json_t *job, char *const *keys, char *const *vals, int nopts)
{
    if (!u || !u->set->n) return;
    json_t *vs = json_object_get(job, "vertices"), *v;
    size_t k;
    json_array_foreach(vs, k, v) {
        const char *type = json_string_value(json_object_get(v, "type"));
        json_t *cfg = json_object_get(v, "config");
        if (!type || !cfg || (strcmp(type, "calc") && strcmp(type, "correlate") &&
                               strcmp(type, "group_aggregate") && strcmp(type, "window") &&
                               strcmp(type, "local_aggregate") && strcmp(type, "over_aggregate")))
            continue;
        char *text = json_dumps(cfg, JSON_COMPACT);
        const char *tf = json_string_value(json_object_get(cfg, "function")); /* correlate's */
        json_t *fns = json_array();
        for (int i = 0; text && i < u->set->n; i++)
            if (calls(text, u->set->f[i]->name) || (tf && !strcasecmp(tf, u->set->f[i]->name)))
                json_array_append_new(fns, sl_udf_sig_json(u->set->f[i]));
        free(text);
        bool py = false;
        for (size_t j = 0; j < json_array_size(fns); j++)
            py |= json_object_get(json_array_get(fns, j), "source") != NULL;
        if (json_array_size(fns)) json_object_set_new(cfg, "functions", fns);
        else json_decref(fns);
        /* Flink's bundle options, SET in the session, go to the vertices
         * that call Python scalar functions (operators/calc.c) */
        static const char pfx[] = "python.fn-execution.bundle.";
        for (int i = 0; py && !strcmp(type, "calc") && i < nopts; i++)
            if (!strncmp(keys[i], pfx, sizeof pfx - 1))
                json_object_set_new(cfg, keys[i], !strcmp(keys[i] + sizeof pfx - 1, "size")
                                                      ? json_integer(atoll(vals[i]))
                                                      : json_string(vals[i]));
    }
}
