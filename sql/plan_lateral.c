/*
 * plan_lateral.c -- LATERAL TABLE(f(args)): a user-defined table function
 * joined with each row of the relation before it, as Flink plans it into a
 * Correlate. The forms are Flink's:
 *
 *   FROM l, LATERAL TABLE(f(x)) [AS] t(a, b)
 *   FROM l CROSS JOIN LATERAL TABLE(f(x)) AS t(a, b)
 *   FROM l [INNER] JOIN LATERAL TABLE(f(x)) AS t(a, b) ON TRUE
 *   FROM l LEFT JOIN LATERAL TABLE(f(x)) AS t(a, b) ON TRUE
 *
 * One `correlate` vertex (operators/correlate.c) reads l and emits l's
 * columns followed by the function's (named by t(a, b), else as declared);
 * the arguments are expressions over l, typed against the function's
 * declaration. The result keeps l's time attributes and changelog, and a
 * column map (plan_join.c) so that t.a and l.x resolve in the SELECT.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr.h"
#include "plan_int.h"
#include "udf_sig.h"

#define PERR(node, ...) plan_err(p, (node), __VA_ARGS__)

/* The relation of correlate vertex `vid` over l: l's columns then cols
 * (the function's or UNNEST's, named `alias` in the join), l's changelog
 * and time attributes; ident (owned) names it for sub-plan reuse. */
static void correlate_out(plan *p, const sql_node *f, const rel *l, char *vid, const char *alias,
                          const sl_schema *cols, char *ident, rel *out)
{
    memset(out, 0, sizeof *out);
    out->vid = vid;
    sl_schema_init(&out->sch);
    for (int i = 0; i < l->sch.n; i++) sl_schema_add_dt(&out->sch, l->sch.fields[i].name, l->sch.fields[i].dt);
    for (int i = 0; i < cols->n; i++) sl_schema_add_dt(&out->sch, cols->fields[i].name, cols->fields[i].dt);
    out->updating = l->updating;
    out->updater = dup0(l->updater);
    out->rowtime = dup0(l->rowtime);
    out->proctime = dup0(l->proctime);
    out->ident = ident;
    out->jmap = sqlp_lateral_map(l, alias, cols, l->sch.n);
    sqlp_joins_add(p, f, out);
}

int sql_plan_lateral(plan *p, const sql_node *f, rel *out)
{
    const rel *done = sqlp_joins_find(p, f);
    if (done) {
        rel_copy(out, done);
        return SL_OK;
    }
    const sql_node *lat = sql_kid(f, 1), *on = sql_kid(f, 2), *call = sql_kid(lat, 0);
    const sql_node *names = sql_kid(lat, 1);
    int left = f->s && !strcmp(f->s, "LEFT");
    if (f->s && strcmp(f->s, "LEFT") && strcmp(f->s, "INNER") && strcmp(f->s, "CROSS"))
        return PERR(f, "%s JOIN LATERAL TABLE is not supported: use CROSS JOIN LATERAL TABLE(...) "
                    "or LEFT JOIN LATERAL TABLE(...) ON TRUE", f->s);
    if (on && !(on->kind == SQL_BOOL && (on->flags & SQL_F_TRUE)))
        return PERR(on, "a join with LATERAL TABLE takes ON TRUE only (filter the function's rows "
                    "in WHERE)");
    if (left && !on) return PERR(f, "LEFT JOIN LATERAL TABLE(...) needs ON TRUE");
    if (!call || call->kind != SQL_FUNC)
        return PERR(lat, "LATERAL TABLE(...) takes a call of a table function: LATERAL TABLE(f(x))");
    const sl_udf_sig *fn = sl_udf_set_find(sl_expr_session_functions(), call->s);
    if (!fn)
        return PERR(call, "unknown table function '%s' (CREATE FUNCTION it first; SHOW USER "
                    "FUNCTIONS lists the session's)", call->s);
    if (fn->kind != SL_UDF_TABLE_KIND)
        return PERR(call, "'%s' is a scalar function; LATERAL TABLE(...) takes a table function",
                    call->s);
    if (call->nkids != fn->nargs) {
        char *sig = sl_udf_sig_text(fn);
        int rc = PERR(call, "function '%s' takes %d argument%s (%s), got %d", call->s, fn->nargs,
                      fn->nargs == 1 ? "" : "s", sig, call->nkids);
        free(sig);
        return rc;
    }
    if (names && names->nkids != fn->cols.n)
        return PERR(names, "'%s' has %d column%s, the alias names %d", call->s, fn->cols.n,
                    fn->cols.n == 1 ? "" : "s", names->nkids);
    rel l;
    memset(&l, 0, sizeof l);
    if (plan_from(p, sql_kid(f, 0), &l) != SL_OK) return SL_ERR;
    int rc = SL_OK;
    json_t *args = json_array(), *cols = json_array();
    bool casts[SL_UDF_MAX_ARGS] = {0};
    sl_schema fcols;
    sl_schema_init(&fcols);
    for (int i = 0; rc == SL_OK && i < call->nkids; i++) {
        const sql_node *a = call->kids[i];
        sl_type t;
        const sl_dtype *tdt = NULL;
        if ((rc = check_cols(p, a, &l)) != SL_OK ||
            (rc = type_expr_dt(p, a, &l.sch, &t, &tdt)) != SL_OK)
            break;
        sl_type want = fn->args[i];
        bool isint = t == SL_T_INT || t == SL_T_BIGINT || t == SL_T_TINYINT || t == SL_T_SMALLINT;
        if (!(t == want || t == SL_T_NULL ||
              ((t == SL_T_INT || t == SL_T_BIGINT) && (want == SL_T_BIGINT || want == SL_T_DOUBLE)) ||
              (isint && want == SL_T_DECIMAL))) {
            rc = PERR(a, "argument %d of '%s' must be %s, got %s", i + 1, call->s,
                      want == SL_T_DECIMAL ? fn->argdt[i]->text : sl_type_name(want),
                      tdt ? tdt->text : sl_type_name(t));
            break;
        }
        casts[i] = want == SL_T_DECIMAL && t != SL_T_NULL &&
                   (!tdt || tdt->kind != SL_T_DECIMAL || tdt->p != fn->argdt[i]->p ||
                    tdt->s != fn->argdt[i]->s);
    }
    if (rc != SL_OK) goto done;
    /* the arguments as calc text (Flink's implicit cast to a declared DECIMAL(p, s)) */
    for (int i = 0; i < call->nkids; i++) {
        char *txt = sql_unparse(call->kids[i]);
        if (casts[i]) {
            char *c = sl_sprintf("CAST((%s) AS %s)", txt, fn->argdt[i]->text);
            free(txt);
            txt = c;
        }
        json_array_append_new(args, json_string(txt));
        free(txt);
    }
    for (int i = 0; i < fn->cols.n; i++) {
        const char *nm = names ? names->kids[i]->s : fn->cols.fields[i].name;
        if (sl_schema_find(&l.sch, nm) >= 0 || sl_schema_find(&fcols, nm) >= 0) {
            rc = PERR(names ? names->kids[i] : lat, "column '%s' of LATERAL TABLE(%s(...)) is "
                      "also a column before it; name the function's columns: AS t(a, b)", nm, call->s);
            goto done;
        }
        sl_schema_add_dt(&fcols, nm, fn->cols.fields[i].dt);
        json_array_append_new(cols, json_string(nm));
    }
    if (l.sch.n + fcols.n > SL_MAX_FIELDS) {
        rc = PERR(lat, "the joined row would have %d columns (at most %d)", l.sch.n + fcols.n,
                  SL_MAX_FIELDS);
        goto done;
    }
    char *argtext = json_dumps(args, JSON_COMPACT);
    char *uid_src = sl_sprintf("correlate|%s|%s|%s|%s", left ? "left" : "inner",
                               l.ident ? l.ident : "", fn->name, argtext ? argtext : "");
    char *uid = sl_sprintf("correlate-%08x", fnv1a(uid_src));
    json_t *cfg = json_pack("{s:s, s:O, s:O, s:s}", "function", fn->name, "args", args, "columns",
                            cols, "join-type", left ? "left" : "inner");
    char *vid = add_vertex(p, "correlate", "correlate", uid, cfg, NULL, 0);
    add_edge(p, l.vid, vid, NULL, NULL, 0);
    free(argtext);
    free(uid_src);
    free(uid);
    correlate_out(p, f, &l, vid, lat->s2 ? lat->s2 : fn->name, &fcols,
                  sl_sprintf("lateral(%s,%s)", l.ident ? l.ident : "", fn->name), out);
done:
    json_decref(args);
    json_decref(cols);
    sl_schema_free(&fcols);
    rel_free(&l);
    return rc;
}

/*
 * UNNEST(a [, b ...]) [WITH ORDINALITY] [AS t(x, ...)]: the elements of each
 * row's collections as rows, joined with the row (CROSS JOIN UNNEST, a comma,
 * [INNER] JOIN UNNEST ... ON TRUE, LEFT JOIN UNNEST ... ON TRUE). Planned
 * onto the same correlate vertex in its "unnest" form. An ARRAY or MULTISET
 * gives one column of its element type, an ARRAY of ROWs the row's fields, a
 * MAP two columns (key, value); WITH ORDINALITY adds the element's 1-based
 * position as an INT NOT NULL column.
 */

/* The columns one UNNEST argument of type dt gives (added to cols, named
 * later); SL_ERR when dt is no collection. */
static int unnest_cols(const sl_dtype *dt, sl_schema *cols)
{
    if (dt->kind == SL_T_MAP) {
        sl_schema_add_dt(cols, "KEY", dt->elem);
        sl_schema_add_dt(cols, "VALUE", dt->val);
    } else if (dt->kind == SL_T_ARRAY && dt->elem->kind == SL_T_ROW) {
        for (int i = 0; i < dt->elem->nfields; i++)
            sl_schema_add_dt(cols, dt->elem->names[i], dt->elem->ftypes[i]);
    } else if (dt->kind == SL_T_ARRAY || dt->kind == SL_T_MULTISET) {
        sl_schema_add_dt(cols, "EXPR$0", dt->elem);
    } else {
        return SL_ERR;
    }
    return SL_OK;
}

int sql_plan_unnest(plan *p, const sql_node *f, rel *out)
{
    const rel *done = sqlp_joins_find(p, f);
    if (done) {
        rel_copy(out, done);
        return SL_OK;
    }
    const sql_node *un = sql_kid(f, 1), *on = sql_kid(f, 2);
    const sql_node *args = sql_kid(un, 0), *names = sql_kid(un, 1), *ord = sql_kid(un, 2);
    int left = f->s && !strcmp(f->s, "LEFT");
    if (f->s && strcmp(f->s, "LEFT") && strcmp(f->s, "INNER") && strcmp(f->s, "CROSS"))
        return PERR(f, "%s JOIN UNNEST is not supported: use CROSS JOIN UNNEST(...) or LEFT JOIN "
                    "UNNEST(...) ON TRUE", f->s);
    if (on && !(on->kind == SQL_BOOL && (on->flags & SQL_F_TRUE)))
        return PERR(on, "a join with UNNEST takes ON TRUE only (filter the elements in WHERE)");
    if (f->s && strcmp(f->s, "CROSS") && !on)
        return PERR(f, "%s JOIN UNNEST(...) needs ON TRUE", f->s);
    if (ord && strcasecmp(ord->s, "ORDINALITY"))
        return PERR(ord, "expected WITH ORDINALITY after UNNEST(...), found WITH %s", ord->s);
    if (args->nkids > 1)
        return PERR(args->kids[1], "UNNEST takes one array, map or multiset; unnest each in a "
                    "CROSS JOIN UNNEST of its own");
    rel l;
    memset(&l, 0, sizeof l);
    if (plan_from(p, sql_kid(f, 0), &l) != SL_OK) return SL_ERR;
    int rc = SL_OK;
    json_t *jargs = json_array(), *cols = json_array();
    sl_schema ucols;
    sl_schema_init(&ucols);
    for (int i = 0; i < args->nkids; i++) {
        const sql_node *a = args->kids[i];
        sl_type t;
        const sl_dtype *dt = NULL;
        if ((rc = check_cols(p, a, &l)) != SL_OK ||
            (rc = type_expr_dt(p, a, &l.sch, &t, &dt)) != SL_OK)
            goto done;
        if (!dt || unnest_cols(dt, &ucols) != SL_OK) {
            rc = PERR(a, "UNNEST takes an ARRAY, MAP or MULTISET, got %s",
                      dt ? dt->text : sl_type_name(t));
            goto done;
        }
        char *txt = sql_unparse(a);
        json_array_append_new(jargs, json_string(txt));
        free(txt);
    }
    if (ord) sl_schema_add_dt(&ucols, "ORDINALITY", sl_dtype_nullable(sl_dtype_basic(SL_T_INT), true));
    /* UNNEST(arr) AS x of one column: x names the column too */
    if (!names && un->s2 && ucols.n == 1) {
        free(ucols.fields[0].name);
        ucols.fields[0].name = sl_strdup(un->s2);
    }
    if (names && names->nkids != ucols.n) {
        rc = PERR(names, "UNNEST(...)%s gives %d column%s, the alias names %d",
                  ord ? " WITH ORDINALITY" : "", ucols.n, ucols.n == 1 ? "" : "s", names->nkids);
        goto done;
    }
    sl_schema fcols;
    sl_schema_init(&fcols);
    for (int i = 0; i < ucols.n; i++) {
        const char *nm = names ? names->kids[i]->s : ucols.fields[i].name;
        const sl_dtype *dt = ucols.fields[i].dt;
        if (left) dt = sl_dtype_nullable(dt, false);
        if (sl_schema_find(&l.sch, nm) >= 0 || sl_schema_find(&fcols, nm) >= 0) {
            rc = PERR(names ? names->kids[i] : un, "column '%s' of UNNEST(...) is also a column "
                      "before it; name the columns: AS t(x, ...)", nm);
            sl_schema_free(&fcols);
            goto done;
        }
        sl_schema_add_dt(&fcols, nm, dt);
        json_array_append_new(cols, json_string(nm));
    }
    sl_schema_free(&ucols);
    ucols = fcols;
    if (l.sch.n + ucols.n > SL_MAX_FIELDS) {
        rc = PERR(un, "the joined row would have %d columns (at most %d)", l.sch.n + ucols.n,
                  SL_MAX_FIELDS);
        goto done;
    }
    char *argtext = json_dumps(jargs, JSON_COMPACT);
    char *uid_src = sl_sprintf("unnest|%s|%s|%s|%d", left ? "left" : "inner",
                               l.ident ? l.ident : "", argtext ? argtext : "", ord != NULL);
    char *uid = sl_sprintf("unnest-%08x", fnv1a(uid_src));
    json_t *cfg = json_pack("{s:O, s:O, s:s, s:b}", "unnest", jargs, "columns", cols,
                            "join-type", left ? "left" : "inner", "ordinality", ord != NULL);
    char *vid = add_vertex(p, "unnest", "correlate", uid, cfg, NULL, 0);
    add_edge(p, l.vid, vid, NULL, NULL, 0);
    free(uid_src);
    free(uid);
    correlate_out(p, f, &l, vid, un->s2 ? un->s2 : "unnest", &ucols,
                  sl_sprintf("unnest(%s,%s)", l.ident ? l.ident : "", argtext ? argtext : ""), out);
    free(argtext);
done:
    json_decref(jargs);
    json_decref(cols);
    sl_schema_free(&ucols);
    rel_free(&l);
    return rc;
}
