/*
 * jdbc_table.c -- what the SQL layer makes of a 'connector' = 'jdbc' table
 * (docs/CONNECTORS.md): the options' checks at CREATE TABLE, with Flink's
 * messages where Flink has one, and the vertex config of its sink
 * (operators/jdbc_sink.c) or of a lookup join against it
 * (operators/jdbc_lookup.c). Connecting to the database is the operators'
 * business: the JobManager's check at submission (check_job) and the tasks.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql_int.h"
#include "jdbc_common.h"
#include "temporal.h"

int sql_jdbc_check(const sql_table *t, int line, int col, char *err, size_t errlen)
{
    const char *url = sql_table_option(t, "url"), *tn = sql_table_option(t, "table-name");
    const char *user = sql_table_option(t, "username"), *pw = sql_table_option(t, "password");
    const char *drv = sql_table_option(t, "driver");
    if (!url)
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': connector 'jdbc' needs "
                         "'url'", line, col, t->name);
    if (strncmp(url, "jdbc:postgresql://", 18))
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': Cannot handle such jdbc "
                         "url: %s (Sluice's jdbc connector speaks to PostgreSQL: "
                         "jdbc:postgresql://host:port/database)", line, col, t->name, url);
    if (!tn)
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': connector 'jdbc' needs "
                         "'table-name'", line, col, t->name);
    if (drv && strcmp(drv, "org.postgresql.Driver"))
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': 'driver' '%s': Sluice "
                         "speaks to PostgreSQL through libpq ('org.postgresql.Driver' or none)",
                         line, col, t->name, drv);
    if (!user != !pw)
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': Either all or none of the "
                         "following options should be provided: username, password", line, col,
                         t->name);
    static const char *const part[] = {"scan.partition.column", "scan.partition.num",
                                       "scan.partition.lower-bound",
                                       "scan.partition.upper-bound"};
    int np = 0;
    for (int k = 0; k < 4; k++) np += sql_table_option(t, part[k]) != NULL;
    if (np && np != 4)
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': Either all or none of the "
                         "following options should be provided: scan.partition.column, "
                         "scan.partition.num, scan.partition.lower-bound, "
                         "scan.partition.upper-bound", line, col, t->name);
    if (np) {
        char *e1, *e2, *e3;
        const char *ls = sql_table_option(t, part[2]), *us = sql_table_option(t, part[3]);
        const char *ns = sql_table_option(t, part[1]), *pc = sql_table_option(t, part[0]);
        /* Flink partitions on a numeric, date or timestamp column; the bounds of a DATE or
         * TIMESTAMP column are its literals */
        const sql_column *pcol = NULL;
        for (int i = 0; i < t->ncols; i++)
            if (!strcmp(t->cols[i].name, pc) && !t->cols[i].expr) pcol = &t->cols[i];
        const sl_dtype *pdt = pcol ? sql_col_dt(pcol) : NULL;
        if (pdt && pdt->kind != SL_T_DATE && pdt->kind != SL_T_TIMESTAMP &&
            pdt->kind != SL_T_TINYINT && pdt->kind != SL_T_SMALLINT && pdt->kind != SL_T_INT &&
            pdt->kind != SL_T_BIGINT && pdt->kind != SL_T_DECIMAL)
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': 'scan.partition.column' "
                             "'%s' is %s; it must be a numeric, date or timestamp column", line,
                             col, t->name, pc, pdt->text);
        if (pdt && pdt->kind == SL_T_TIMESTAMP && pdt->variant == SL_DV_LTZ)
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': 'scan.partition.column' "
                             "'%s' is %s; a TIMESTAMP_LTZ partition column is not supported yet "
                             "(TIMESTAMP and DATE are)", line, col, t->name, pc, pdt->text);
        long long n = strtoll(ns, &e3, 10);
        if (!*ns || *e3 || n < 1)
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': 'scan.partition.num' "
                             "'%s' is not a positive integer", line, col, t->name, ns);
        if (pdt && (pdt->kind == SL_T_DATE || pdt->kind == SL_T_TIMESTAMP)) {
            sl_ts lo = {0}, hi = {0};
            for (int k = 0; k < 2; k++) {
                const char *b = k ? us : ls;
                sl_ts *x = k ? &hi : &lo;
                int32_t d = 0;
                int rc = pdt->kind == SL_T_DATE ? sl_date_parse(b, strlen(b), &d)
                                                : sl_timestamp_parse(b, strlen(b), 9, x);
                if (pdt->kind == SL_T_DATE) x->ms = d;
                if (rc != SL_OK)
                    return sl_seterr(err, errlen, "line %d, column %d: table '%s': '%s'='%s' is "
                                     "not a %s literal (the type of 'scan.partition.column' '%s')",
                                     line, col, t->name, part[2 + k], b,
                                     pdt->kind == SL_T_DATE ? "DATE" : "TIMESTAMP", pc);
            }
            if (lo.ms > hi.ms || (lo.ms == hi.ms && lo.nano > hi.nano))
                return sl_seterr(err, errlen, "line %d, column %d: table '%s': "
                                 "'scan.partition.lower-bound'='%s' must not be larger than "
                                 "'scan.partition.upper-bound'='%s'.", line, col, t->name, ls, us);
        } else {
            long long lo = strtoll(ls, &e1, 10), hi = strtoll(us, &e2, 10);
            if (!*ls || *e1 || !*us || *e2)
                return sl_seterr(err, errlen, "line %d, column %d: table '%s': the partition "
                                 "bounds '%s' and '%s' are not both integers", line, col, t->name,
                                 ls, us);
            if (lo > hi)
                return sl_seterr(err, errlen, "line %d, column %d: table '%s': "
                                 "'scan.partition.lower-bound'='%lld' must not be larger than "
                                 "'scan.partition.upper-bound'='%lld'.", line, col, t->name, lo,
                                 hi);
        }
    }
    const char *ac = sql_table_option(t, "scan.auto-commit");
    if (ac && strcasecmp(ac, "true") && strcasecmp(ac, "false"))
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': 'scan.auto-commit' is true "
                         "or false, not '%s'", line, col, t->name, ac);
    const char *cache = sql_table_option(t, "lookup.cache");
    if (cache && strcasecmp(cache, "NONE") && strcasecmp(cache, "PARTIAL"))
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': 'lookup.cache' is NONE or "
                         "PARTIAL, not '%s' (FULL is not supported yet)", line, col, t->name,
                         cache);
    const char *g = sql_table_option(t, "sink.delivery-guarantee");
    if (g && strcasecmp(g, "none") && strcasecmp(g, "at-least-once") &&
        strcasecmp(g, "exactly-once"))
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': 'sink.delivery-guarantee' "
                         "is none, at-least-once or exactly-once, not '%s'", line, col, t->name, g);
    if (g && !strcasecmp(g, "exactly-once") && !sql_table_option(t, "sink.transactional-id-prefix"))
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': 'sink.delivery-guarantee' "
                         "= 'exactly-once' needs 'sink.transactional-id-prefix' (unique to the "
                         "job: its prepared transactions are named after it)", line, col, t->name);
    return SL_OK;
}

const sql_column *sql_jdbc_uncarried(const sql_table *t)
{
    for (int i = 0; i < t->ncols; i++) {
        const sql_column *c = &t->cols[i];
        const sl_dtype *dt = sql_col_dt(c);
        if (!c->expr && !c->meta && !sl_jdbc_carries(dt)) return c;
    }
    return NULL;
}

json_t *sql_jdbc_config(const sql_table *t, int sink)
{
    json_t *cfg = json_object();
    for (int i = 0; i < t->nopts; i++) {
        const char *k = t->keys[i];
        int common = !strcmp(k, "url") || !strcmp(k, "table-name") || !strcmp(k, "username") ||
                     !strcmp(k, "password");
        int mine = sink ? !strncmp(k, "sink.", 5) && strcmp(k, "sink.parallelism")
                        : !strncmp(k, "lookup.", 7);
        if (common || mine) json_object_set_new(cfg, k, json_string(t->vals[i]));
    }
    if (sink && t->npk) {
        json_t *pk = json_array();
        for (int k = 0; k < t->npk; k++) json_array_append_new(pk, json_string(t->pk[k]));
        json_object_set_new(cfg, "primary-key", pk);
    }
    return cfg;
}
