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
    sl_schema fcols;
    sl_schema_init(&fcols);
    for (int i = 0; rc == SL_OK && i < call->nkids; i++) {
        const sql_node *a = call->kids[i];
        sl_type t;
        if ((rc = check_cols(p, a, &l)) != SL_OK || (rc = type_expr(p, a, &l.sch, &t)) != SL_OK) break;
        sl_type want = fn->args[i];
        if (!(t == want || t == SL_T_NULL ||
              ((t == SL_T_INT || t == SL_T_BIGINT) && (want == SL_T_BIGINT || want == SL_T_DOUBLE)))) {
            rc = PERR(a, "argument %d of '%s' must be %s, got %s", i + 1, call->s,
                      sl_type_name(want), sl_type_name(t));
            break;
        }
    }
    if (rc != SL_OK) goto done;
    /* the arguments as calc text */
    for (int i = 0; i < call->nkids; i++) {
        char *txt = sql_unparse(call->kids[i]);
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
    const char *alias = lat->s2 ? lat->s2 : fn->name;
    memset(out, 0, sizeof *out);
    out->vid = vid;
    sl_schema_init(&out->sch);
    for (int i = 0; i < l.sch.n; i++) sl_schema_add_dt(&out->sch, l.sch.fields[i].name, l.sch.fields[i].dt);
    for (int i = 0; i < fcols.n; i++) sl_schema_add_dt(&out->sch, fcols.fields[i].name, fcols.fields[i].dt);
    out->updating = l.updating;
    out->updater = dup0(l.updater);
    out->rowtime = dup0(l.rowtime);
    out->proctime = dup0(l.proctime);
    out->ident = sl_sprintf("lateral(%s,%s)", l.ident ? l.ident : "", fn->name);
    out->jmap = sqlp_lateral_map(&l, alias, &fcols, l.sch.n);
    sqlp_joins_add(p, f, out);
done:
    json_decref(args);
    json_decref(cols);
    sl_schema_free(&fcols);
    rel_free(&l);
    return rc;
}
