/*
 * catalog.c -- the per-session catalog and the statements that only touch
 * the session: CREATE/DROP TABLE and VIEW, SHOW, DESCRIBE, SET, RESET, and
 * the SQL client's BEGIN STATEMENT SET ... END. INSERT and EXPLAIN go to
 * the planner (sql/planner.c).
 *
 * CREATE TABLE is validated completely before the catalog changes: column
 * types, computed columns (type-checked with calc's own expression checker,
 * and the interval-times-DOUBLE mistake Flink only reports at INSERT),
 * WATERMARK FOR (a TIMESTAMP column minus an interval), PRIMARY KEY
 * columns, and the WITH options of the connector (Flink's keys; an unknown
 * key names the table and suggests the nearest valid one).
 *
 * Every statement's parse arena is kept for the session's life: views and
 * computed columns point into them.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr.h"
#include "sl.h"
#include "parse.h"
#include "sql_int.h"
#include "config.h"
#include "jdbc_common.h"
#include "jobgraph.h"
#include "operator.h"
#include "temporal.h"

#include "catalog_int.h"

/* ---- helpers ------------------------------------------------------------ */

sql_table *sql_catalog_find(const sql_catalog *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcasecmp(c->t[i]->name, name) == 0) return c->t[i];
    return NULL;
}

void sql_cat_table_free(sql_table *t)
{
    if (!t) return;
    free(t->name);
    free(t->catalog);
    free(t->database);
    free(t->obj);
    for (int i = 0; i < t->npart; i++) free(t->part[i]);
    free(t->part);
    free(t->pk_name);
    free(t->comment);
    for (int i = 0; i < t->ncols; i++) {
        free(t->cols[i].name);
        free(t->cols[i].type_text);
        free(t->cols[i].meta);
    }
    free(t->cols);
    free(t->wm_col);
    free(t->wm_text);
    for (int i = 0; i < t->npk; i++) free(t->pk[i]);
    free(t->pk);
    for (int i = 0; i < t->nopts; i++) {
        free(t->keys[i]);
        free(t->vals[i]);
    }
    free(t->keys);
    free(t->vals);
    free(t->query_text);
    free(t);
}

static void table_free(sql_table *t) { sql_cat_table_free(t); }

static const char *opt_get(const sql_table *t, const char *key)
{
    for (int i = 0; i < t->nopts; i++)
        if (strcmp(t->keys[i], key) == 0) return t->vals[i];
    return NULL;
}

const char *sql_table_option(const sql_table *t, const char *key) { return opt_get(t, key); }

json_t *sql_table_partition_by(const sql_table *t)
{
    sql_sbuf b = {0};
    for (int i = 0; i < t->npart; i++) sql_sb_fmt(&b, "%s%s", i ? ";" : "", t->part[i]);
    json_t *v = json_string(b.p ? b.p : "");
    free(b.p);
    return v;
}

/* Flink's tableau layout: right-aligned cells in a box, "N rows in set". */
char *sl_sql_tableau(const char *const *head, int ncol, char ***rows, int nrows)
{
    size_t w[16] = {0};
    if (ncol > 16) ncol = 16;
    for (int c = 0; c < ncol; c++) w[c] = strlen(head[c]);
    for (int r = 0; r < nrows; r++)
        for (int c = 0; c < ncol; c++)
            if (strlen(rows[r][c]) > w[c]) w[c] = strlen(rows[r][c]);
    sql_sbuf b = {0};
    sql_sbuf line = {0};
    sql_sb_str(&line, "+");
    for (int c = 0; c < ncol; c++) {
        for (size_t i = 0; i < w[c] + 2; i++) sql_sb_str(&line, "-");
        sql_sb_str(&line, "+");
    }
    sql_sb_str(&line, "\n");
    sql_sb_str(&b, line.p);
    for (int r = -1; r < nrows; r++) {
        sql_sb_str(&b, "|");
        for (int c = 0; c < ncol; c++) {
            const char *v = r < 0 ? head[c] : rows[r][c];
            sql_sb_str(&b, " ");
            for (size_t i = strlen(v); i < w[c]; i++) sql_sb_str(&b, " ");
            sql_sb_str(&b, v);
            sql_sb_str(&b, " |");
        }
        sql_sb_str(&b, "\n");
        if (r < 0) sql_sb_str(&b, line.p);
    }
    if (nrows) sql_sb_str(&b, line.p);
    char tail[64];
    snprintf(tail, sizeof tail, nrows == 0 ? "Empty set\n" : "%d row%s in set\n", nrows,
             nrows == 1 ? "" : "s");
    sql_sb_str(&b, tail);
    free(line.p);
    return b.p;
}

/* A statement's answer as a table: the tableau text the client prints and
 * the same rows as a result set (the gateway's), with Flink's column names
 * and types. cells: nrows * ncols values, NULL for SQL NULL (printed empty,
 * as Flink prints these tables). */
static void table_result(sl_sql_result *r, int ncols, const char *const *names,
                         const char *const *types, char *const *cells, int nrows)
{
    char ***rows = sl_calloc((size_t)nrows + 1, sizeof(char **));
    char **shown = sl_calloc((size_t)nrows * (size_t)ncols + 1, sizeof(char *));
    r->kind = SL_SQL_TEXT;
    r->ncols = ncols;
    r->nrows = nrows;
    r->col_names = sl_calloc((size_t)ncols + 1, sizeof(char *));
    r->col_types = sl_calloc((size_t)ncols + 1, sizeof(char *));
    r->cells = sl_calloc((size_t)nrows * (size_t)ncols + 1, sizeof(char *));
    for (int c = 0; c < ncols; c++) {
        r->col_names[c] = sl_strdup(names[c]);
        r->col_types[c] = sl_strdup(types[c]);
    }
    for (int i = 0; i < nrows * ncols; i++) {
        r->cells[i] = cells[i] ? sl_strdup(cells[i]) : NULL;
        shown[i] = cells[i] ? cells[i] : (char *)"";
    }
    for (int i = 0; i < nrows; i++) rows[i] = &shown[(size_t)i * (size_t)ncols];
    r->text = sl_sql_tableau(names, ncols, rows, nrows);
    free(shown);
    free(rows);
}

void sql_table_result(sl_sql_result *r, int ncols, const char *const *names,
                      const char *const *types, char *const *cells, int nrows)
{
    table_result(r, ncols, names, types, cells, nrows);
}

/* ---- types -------------------------------------------------------------- */

/* Map a declared type onto Sluice's row types. */
/* Type an expression against `in` with calc's checker. */
static int type_of(const sql_node *e, const sl_schema *in, sl_type *t, char *err, size_t errlen)
{
    sl_expr *x = sl_expr_from_sql(e, in, err, errlen); /* errors name line and column */
    if (!x) return SL_ERR;
    *t = sl_expr_type(x);
    sl_expr_destroy(x);
    return SL_OK;
}

static int is_interval(const sql_node *e)
{
    return e && (e->kind == SQL_INTERVAL ||
                 (e->kind == SQL_CAST && e->s && strncmp(e->s, "INTERVAL", 8) == 0));
}

/* Refuse INTERVAL * <DOUBLE> (Flink: "Unsupported casting from DOUBLE to
 * INTERVAL" only at INSERT time). */
static int check_interval_mult(const sql_node *e, const sl_schema *in, char *err, size_t errlen)
{
    if (!e) return SL_OK;
    for (int i = 0; i < e->nkids; i++)
        if (check_interval_mult(e->kids[i], in, err, errlen) != SL_OK) return SL_ERR;
    if (e->kind != SQL_BINOP || (strcmp(e->s, "*") != 0 && strcmp(e->s, "/") != 0)) return SL_OK;
    const sql_node *iv = is_interval(e->kids[0]) ? e->kids[0] : is_interval(e->kids[1]) ? e->kids[1] : NULL;
    if (!iv) return SL_OK;
    const sql_node *other = iv == e->kids[0] ? e->kids[1] : e->kids[0];
    sl_type t;
    if (type_of(other, in, &t, NULL, 0) != SL_OK) return SL_OK; /* reported later */
    if (t != SL_T_DOUBLE) return SL_OK;
    char *itxt = sql_unparse(iv), *otxt = sql_unparse(other);
    /* the same spread in whole milliseconds: INTERVAL '0.001' SECOND * CAST(x * ms AS INT) */
    int64_t ms = 0;
    if (iv->kind != SQL_INTERVAL || sl_interval_parse(itxt, &ms, NULL, 0) != SL_OK || ms <= 0) ms = 1000;
    sl_seterr(err, errlen,
              "line %d, column %d: an interval cannot be multiplied by a DOUBLE (%s %s %s); "
              "Flink accepts this table and fails at INSERT with \"Unsupported casting from "
              "DOUBLE to INTERVAL\". Multiply by an integer instead: INTERVAL '0.001' SECOND * "
              "CAST(%s * %lld AS INT)",
              e->line, e->col, iv == e->kids[0] ? itxt : otxt, e->s,
              iv == e->kids[0] ? otxt : itxt, otxt, (long long)ms);
    free(itxt);
    free(otxt);
    return SL_ERR;
}

/* ---- connectors --------------------------------------------------------- */

static const char *const datagen_field_opts[] = {"kind", "start", "end", "min", "max", "length",
                                                 "max-past", "null-rate"};

/* Does `path` (after "fields.<column>") name a part of type dt: "" the
 * value itself, ".f" a ROW's field, ".element" an ARRAY's or MULTISET's
 * element, ".key" / ".value" a MAP's (Flink's datagen names)? */
static bool datagen_path_ok(const sl_dtype *dt, const char *path, size_t len)
{
    if (len == 0) return true;
    if (path[0] != '.') return false;
    const char *seg = path + 1, *end = memchr(seg, '.', len - 1);
    size_t sl = end ? (size_t)(end - seg) : len - 1, rest = len - 1 - sl;
    const sl_dtype *in = NULL;
    if ((dt->kind == SL_T_ARRAY || dt->kind == SL_T_MULTISET) && sl == 7 && !strncmp(seg, "element", 7))
        in = dt->elem;
    else if (dt->kind == SL_T_MAP && sl == 3 && !strncmp(seg, "key", 3)) in = dt->elem;
    else if (dt->kind == SL_T_MAP && sl == 5 && !strncmp(seg, "value", 5)) in = dt->val;
    else if (dt->kind == SL_T_ROW)
        for (int f = 0; f < dt->nfields; f++)
            if (strlen(dt->names[f]) == sl && !strncasecmp(dt->names[f], seg, sl)) in = dt->ftypes[f];
    return in && datagen_path_ok(in, seg + sl, rest);
}

/* Flink's json format options (operators/kafka_common.h, KF_JSON_OPTIONS) */
#define JSON_OPTS                                                                                 \
    "json.timestamp-format.standard", "json.encode.decimal-as-plain-number",                     \
        "json.map-null-key.mode", "json.map-null-key.literal", "json.fail-on-missing-field"

/* Is `key` valid for the table's connector? Fills `suggest` otherwise. */
static int option_valid(const sql_table *t, const char *conn, const char *key, char *suggest,
                        size_t slen)
{
    static const char *const dg[] = {"connector", "rows-per-second", "number-of-rows", "seed"};
    static const char *const pr[] = {"connector", "print-identifier", "sink.parallelism"};
    static const char *const bh[] = {"connector", "sink.rows-per-second", "sink.parallelism"};
    static const char *const fs[] = {"connector", "path", "format", "sink.parallelism",
                                     "json.ignore-parse-errors", "csv.ignore-parse-errors",
                                     "lookup.join.cache.ttl", "lookup.max-memory",
                                     "sink.partition-commit.policy.kind",
                                     "sink.partition-commit.success-file.name",
                                     "sink.partition-commit.trigger", "sink.partition-commit.delay",
                                     "sink.partition-commit.watermark-time-zone",
                                     "partition.time-extractor.timestamp-pattern", JSON_OPTS};
    static const char *const nx[] = {
        "connector", "first-event.rate", "next-event.rate", "events.num", "person.proportion",
        "auction.proportion", "bid.proportion", "person.avg-size", "auction.avg-size",
        "bid.avg-size", "base-time", "seed"};
    /* Flink's kafka and upsert-kafka options (properties.* below) */
    static const char *const kf[] = {
        "connector", "topic", "topic-pattern", "scan.startup.mode", "scan.startup.timestamp-millis",
        "scan.startup.specific-offsets", "scan.bounded.mode", "scan.bounded.specific-offsets",
        "scan.bounded.timestamp-millis", "scan.topic-partition-discovery.interval", "format",
        "value.format", "key.format", "key.fields", "value.fields-include",
        "json.ignore-parse-errors", "csv.ignore-parse-errors", "sink.delivery-guarantee",
        "sink.transactional-id-prefix", "sink.partitioner", "sink.parallelism",
        "scan.watermark.idle-timeout", JSON_OPTS};
    static const char *const uk[] = {
        "connector", "topic", "topic-pattern", "scan.bounded.mode", "scan.bounded.specific-offsets",
        "scan.bounded.timestamp-millis", "scan.topic-partition-discovery.interval", "key.format",
        "value.format", "value.fields-include", "json.ignore-parse-errors",
        "csv.ignore-parse-errors", "sink.delivery-guarantee", "sink.transactional-id-prefix",
        "sink.parallelism", "scan.watermark.idle-timeout", JSON_OPTS};
    /* Flink's jdbc options (docs/CONNECTORS.md) */
    static const char *const jd[] = {
        "connector", "url", "table-name", "username", "password", "driver",
        "sink.buffer-flush.max-rows", "sink.buffer-flush.interval", "sink.max-retries",
        "sink.parallelism", "sink.delivery-guarantee", "sink.transactional-id-prefix",
        "lookup.cache", "lookup.partial-cache.max-rows", "lookup.partial-cache.expire-after-write",
        "lookup.partial-cache.expire-after-access", "lookup.partial-cache.cache-missing-key",
        "lookup.cache.max-rows", "lookup.cache.ttl", "lookup.cache.caching-missing-key",
        "lookup.max-retries", "scan.fetch-size", "scan.partition.column", "scan.partition.num",
        "scan.partition.lower-bound", "scan.partition.upper-bound", "scan.auto-commit"};
    /* Flink CDC's postgres-cdc options (docs/CONNECTORS.md) */
    static const char *const pg[] = {
        "connector", "hostname", "port", "username", "password", "database-name", "schema-name",
        "table-name", "slot.name", "decoding.plugin.name", "scan.startup.mode",
        "debezium.publication.name", "debezium.slot.drop.on.stop"};
    const char *const *list;
    size_t n;
    if (!strcmp(conn, "jdbc")) list = jd, n = SL_ARRAY_LEN(jd);
    else if (!strcmp(conn, "postgres-cdc")) list = pg, n = SL_ARRAY_LEN(pg);
    else if (!strcmp(conn, "datagen")) list = dg, n = SL_ARRAY_LEN(dg);
    else if (!strcmp(conn, "print")) list = pr, n = SL_ARRAY_LEN(pr);
    else if (!strcmp(conn, "blackhole")) list = bh, n = SL_ARRAY_LEN(bh);
    else if (!strcmp(conn, "kafka")) list = kf, n = SL_ARRAY_LEN(kf);
    else if (!strcmp(conn, "upsert-kafka")) list = uk, n = SL_ARRAY_LEN(uk);
    else if (!strcmp(conn, "nexmark")) list = nx, n = SL_ARRAY_LEN(nx);
    else list = fs, n = SL_ARRAY_LEN(fs);
    /* any librdkafka property: librdkafka checks it at submission */
    if ((!strcmp(conn, "kafka") || !strcmp(conn, "upsert-kafka")) &&
        !strncmp(key, "properties.", 11) && key[11])
        return 1;
    /* the avro-confluent format's registry options, for the key, the value or both */
    if (!strcmp(conn, "kafka") || !strcmp(conn, "upsert-kafka")) {
        const char *k = key;
        if (!strncmp(k, "key.", 4)) k += 4;
        else if (!strncmp(k, "value.", 6)) k += 6;
        static const char *reg[] = {
            "avro-confluent.url", "avro-confluent.subject",
            "avro-confluent.basic-auth.credentials-source", "avro-confluent.basic-auth.user-info",
            "avro-confluent.bearer-auth.credentials-source", "avro-confluent.bearer-auth.token",
            "avro-confluent.ssl.truststore.location", "avro-confluent.ssl.truststore.password",
            "avro-confluent.ssl.keystore.location", "avro-confluent.ssl.keystore.password"};
        for (size_t i = 0; i < SL_ARRAY_LEN(reg); i++)
            if (!strcmp(k, reg[i])) return 1;
    }
    int best = 99;
    suggest[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(list[i], key)) return 1;
        int d = sl_edit_distance(list[i], key);
        if (d < best) {
            best = d;
            snprintf(suggest, slen, "%s", list[i]);
        }
    }
    if (!strcmp(conn, "datagen")) {
        for (int c = 0; c < t->ncols; c++) {
            if (t->cols[c].expr) continue;
            /* a nested part's option: fields.<column>.<path>.<option> */
            size_t cl = strlen(t->cols[c].name);
            const char *last = strrchr(key, '.');
            if (!strncmp(key, "fields.", 7) && !strncasecmp(key + 7, t->cols[c].name, cl) &&
                key[7 + cl] == '.' && last > key + 7 + cl &&
                datagen_path_ok(sql_col_dt(&t->cols[c]), key + 7 + cl, (size_t)(last - key - 7 - cl)))
                for (size_t k = 0; k < SL_ARRAY_LEN(datagen_field_opts); k++)
                    if (!strcmp(last + 1, datagen_field_opts[k])) return 1;
            for (size_t k = 0; k < SL_ARRAY_LEN(datagen_field_opts); k++) {
                char cand[256];
                snprintf(cand, sizeof cand, "fields.%s.%s", t->cols[c].name, datagen_field_opts[k]);
                if (!strcmp(cand, key)) return 1;
                int d = sl_edit_distance(cand, key);
                if (d < best) {
                    best = d;
                    snprintf(suggest, slen, "%s", cand);
                }
            }
        }
    }
    if (best > (int)strlen(key) / 2 + 1) suggest[0] = '\0';
    return 0;
}

static int check_options(sql_table *t, const sql_node *with, char *err, size_t errlen)
{
    const char *conn = opt_get(t, "connector");
    int line = with ? with->line : 0, col = with ? with->col : 0;
    if (!conn)
        return sl_seterr(err, errlen, "line %d, column %d: table '%s' needs WITH ('connector' = "
                         "'...'): datagen, nexmark, print, blackhole, filesystem, kafka, upsert-kafka "
                         "or jdbc",
                         line, col, t->name);
    static const char *const conns[] = {"datagen", "print", "blackhole", "filesystem", "kafka",
                                        "upsert-kafka", "nexmark", "jdbc", "postgres-cdc"};
    int known = 0, best = 99;
    const char *near = NULL;
    for (size_t i = 0; i < SL_ARRAY_LEN(conns); i++) {
        if (!strcmp(conn, conns[i])) known = 1;
        int d = sl_edit_distance(conn, conns[i]);
        if (d < best) best = d, near = conns[i];
    }
    if (!known) {
        if (best > (int)strlen(conn) / 2 + 1) near = NULL;
        return sl_seterr(err, errlen, "line %d, column %d: table '%s': unknown connector '%s'%s%s%s "
                         "(Sluice has datagen, nexmark, print, blackhole, filesystem, kafka, "
                         "upsert-kafka, jdbc and postgres-cdc)", line, col, t->name, conn, near ? " (did you mean '" : "",
                         near ? near : "", near ? "'?)" : "");
    }
    t->connector = conn;
    for (int i = 0; i < t->nopts; i++) {
        char sug[256];
        if (!option_valid(t, conn, t->keys[i], sug, sizeof sug)) {
            const sql_node *o = sql_kid(with, i);
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': unknown option '%s' "
                             "for connector '%s'%s%s%s", o ? o->line : line, o ? o->col : col,
                             t->name, t->keys[i], conn, sug[0] ? " (did you mean '" : "", sug,
                             sug[0] ? "'?)" : "");
        }
    }
    if (!strcmp(conn, "kafka") || !strcmp(conn, "upsert-kafka")) {
        int up = !strcmp(conn, "upsert-kafka");
        if (!opt_get(t, "topic") && !opt_get(t, "topic-pattern"))
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': connector '%s' needs "
                             "'topic' (or 'topic-pattern')", line, col, t->name, conn);
        if (!opt_get(t, "properties.bootstrap.servers"))
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': connector '%s' needs "
                             "'properties.bootstrap.servers'", line, col, t->name, conn);
        if (!opt_get(t, "value.format") && (up || !opt_get(t, "format")))
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': connector '%s' needs "
                             "'%s'", line, col, t->name, conn, up ? "value.format" : "format");
        if (up && (t->npk == 0 || !opt_get(t, "key.format")))
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': 'upsert-kafka' tables "
                             "require to define a PRIMARY KEY constraint and 'key.format' (the "
                             "primary key is the record key)", line, col, t->name);
        if (!up && t->npk)
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': the 'kafka' connector "
                             "doesn't support PRIMARY KEY constraints; use 'upsert-kafka' for a "
                             "keyed changelog table", line, col, t->name);
    }
    if (!strcmp(conn, "jdbc") && sql_jdbc_check(t, line, col, err, errlen) != SL_OK)
        return SL_ERR;
    if (!strcmp(conn, "filesystem")) {
        const char *fmt = opt_get(t, "format");
        if (!opt_get(t, "path"))
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': connector "
                             "'filesystem' needs 'path'", line, col, t->name);
        if (!fmt || (strcasecmp(fmt, "json") && strcasecmp(fmt, "csv")))
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': connector "
                             "'filesystem' needs 'format' = 'json' or 'csv'%s%s%s", line, col,
                             t->name, fmt ? ", not '" : "", fmt ? fmt : "", fmt ? "'" : "");
    }
    return SL_OK;
}

/* The types beyond the original seven (and TIME/TIMESTAMP with digits
 * beyond the millisecond) travel through the json format and the print and
 * blackhole sinks; every other format and connector refuses them here, at
 * CREATE TABLE, rather than when the job is deployed. */
static int check_new_types(const sql_table *t, const sql_node *at, char *err, size_t errlen)
{
    const char *conn = t->connector ? t->connector : "";
    if (!strcmp(conn, "datastream") || !strcmp(conn, "print") || !strcmp(conn, "blackhole") ||
        !strcmp(conn, "postgres-cdc")) /* its plan checks each type (operators/pg_cdc.c) */
        return SL_OK;
    bool datagen = !strcmp(conn, "datagen");
    bool formats = !strcmp(conn, "filesystem") || !strcmp(conn, "kafka") ||
                   !strcmp(conn, "upsert-kafka");
    for (int i = 0; i < t->ncols; i++) {
        const sql_column *c = &t->cols[i];
        const sl_dtype *dt = sql_col_dt(c);
        if (c->expr || c->meta || (sl_type_is_classic(dt->kind) && !sl_dtype_has_nanos(dt)))
            continue;
        if (!strcmp(conn, "jdbc") && sl_jdbc_carries(dt)) continue; /* jdbc_common.h */
        if (datagen) continue; /* its plan checks each type (operators/datagen.c) */
        if (!formats)
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': column '%s' is %s; "
                             "the %s connector cannot carry that type yet", at->line, at->col,
                             t->name, c->name, dt->text, conn);
        static const char *const keys[] = {"format", "value.format", "key.format"};
        for (size_t k = 0; k < SL_ARRAY_LEN(keys); k++) {
            const char *f = opt_get(t, keys[k]);
            /* avro / avro-confluent: the kafka plan checks each type (format_avro.c) */
            if (f && strcasecmp(f, "json") && strcasecmp(f, "debezium-json") &&
                strncasecmp(f, "avro", 4) &&
                !(!strcasecmp(f, "csv") && sl_type_is_scalar(dt->kind)))
                return sl_seterr(err, errlen, "line %d, column %d: table '%s': column '%s' is %s; "
                                 "the %s format cannot carry that type yet (json can%s)", at->line,
                                 at->col, t->name, c->name, dt->text, f,
                                 sl_type_is_nested(dt->kind) ? "" : "; csv can the other scalar types");
        }
    }
    return SL_OK;
}

/* The kafka connector's metadata keys, as Flink's: what each reads, its
 * type, and whether a sink writes it. */
static const struct kafka_meta {
    const char *key;
    const char *type;   /* Flink's type, for messages */
    sl_type t;
    int writable;
} kafka_meta[] = {
    {"topic", "STRING", SL_T_STRING, 0},
    {"partition", "INT", SL_T_INT, 0},
    {"headers", "MAP<STRING, BYTES>", SL_T_STRING, 1},
    {"offset", "BIGINT", SL_T_BIGINT, 0},
    {"timestamp", "TIMESTAMP_LTZ(3)", SL_T_TIMESTAMP, 1},
};

const char *sql_kafka_meta_keys(int writable)
{
    return writable ? "headers, timestamp" : "topic, partition, headers, offset, timestamp";
}

int sql_kafka_meta_writable(const char *key)
{
    for (size_t i = 0; i < SL_ARRAY_LEN(kafka_meta); i++)
        if (!strcmp(kafka_meta[i].key, key)) return kafka_meta[i].writable;
    return 0;
}

/* METADATA columns: the connector must have the key, the column its type
 * (headers: MAP<STRING, BYTES>, or STRING for its JSON text), and a primary
 * key is made of physical columns. */
static int check_metadata(const sql_table *t, const sql_node *elems, char *err, size_t errlen)
{
    for (int i = 0; i < elems->nkids; i++) {
        const sql_node *e = elems->kids[i];
        if (e->kind != SQL_COLUMN || !(e->flags & SQL_F_METADATA)) continue;
        const sql_column *c = NULL;
        for (int j = 0; j < t->ncols; j++)
            if (!strcmp(t->cols[j].name, e->s)) c = &t->cols[j];
        if (!c || !c->meta) continue;
        if (!sql_table_is_kafka(t))
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': column '%s' is a "
                             "METADATA column, but connector '%s' has no metadata (kafka and "
                             "upsert-kafka have)", e->line, e->col, t->name, c->name,
                             t->connector);
        const struct kafka_meta *m = NULL;
        for (size_t k = 0; k < SL_ARRAY_LEN(kafka_meta); k++)
            if (!strcmp(kafka_meta[k].key, c->meta)) m = &kafka_meta[k];
        if (!m)
            return sl_seterr(err, errlen, "line %d, column %d: Invalid metadata key '%s' in column "
                             "'%s' of table '%s'. The %s connector supports the following "
                             "metadata keys for reading: %s (and for writing: %s)", e->line,
                             e->col, c->meta, c->name, t->name, t->connector,
                             sql_kafka_meta_keys(0), sql_kafka_meta_keys(1));
        int ok = c->type == m->t || (m->t == SL_T_INT && c->type == SL_T_BIGINT);
        if (m->t == SL_T_STRING && !strcmp(m->key, "headers") &&
            strncmp(c->type_text, "MAP<", 4) == 0)
            ok = !strcmp(c->type_text, "MAP<STRING, BYTES>") ||
                 !strcmp(c->type_text, "MAP<VARCHAR, BYTES>");
        else if (!strncmp(c->type_text, "MAP<", 4))
            ok = 0;
        if (!ok)
            return sl_seterr(err, errlen, "line %d, column %d: table '%s': metadata column '%s' "
                             "('%s') must be %s%s, not %s", e->line, e->col, t->name, c->name,
                             c->meta, m->type,
                             !strcmp(m->key, "headers") ? " (or STRING: its JSON text)" : "",
                             c->type_text);
        for (int k = 0; k < t->npk; k++)
            if (!strcasecmp(t->pk[k], c->name))
                return sl_seterr(err, errlen, "line %d, column %d: table '%s': PRIMARY KEY column "
                                 "'%s' is a METADATA column; the key is made of physical columns",
                                 e->line, e->col, t->name, c->name);
    }
    return SL_OK;
}

/* ---- what the planner makes of a table ------------------------------------ */

int sql_table_is_kafka(const sql_table *t)
{
    return !strcmp(t->connector, "kafka") || !strcmp(t->connector, "upsert-kafka");
}

int sql_table_changelog(const sql_table *t)
{
    if (!strcmp(t->connector, "upsert-kafka") || !strcmp(t->connector, "postgres-cdc")) return 1;
    const char *f = opt_get(t, "value.format");
    if (!f) f = opt_get(t, "format");
    return !strcmp(t->connector, "kafka") && f && !strcasecmp(f, "debezium-json");
}

/* A table's options serve both directions, as in Flink: the scan ones
 * (and the consumer's group) are the source's, the sink ones the sink's. */
static int kafka_option_for(const char *key, int sink)
{
    static const char *const read_only[] = {"json.ignore-parse-errors", "csv.ignore-parse-errors",
                                            "json.fail-on-missing-field",
                                            "properties.group.id", "properties.auto.offset.reset",
                                            "topic-pattern"};
    if (!strcmp(key, "connector") || !strcmp(key, "sink.parallelism")) return 0;
    if (!strncmp(key, "scan.watermark.", 15)) return 0; /* the planner's (watermark.*) */
    if (!sink) return strncmp(key, "sink.", 5) != 0;
    if (!strncmp(key, "scan.", 5)) return 0;
    for (size_t i = 0; i < SL_ARRAY_LEN(read_only); i++)
        if (!strcmp(key, read_only[i])) return 0;
    return 1;
}

json_t *sql_kafka_config(const sql_table *t, int sink)
{
    json_t *cfg = json_object();
    for (int i = 0; i < t->nopts; i++)
        if (kafka_option_for(t->keys[i], sink))
            json_object_set_new(cfg, t->keys[i], json_string(t->vals[i]));
    for (int i = 0; sink && i < t->ncols; i++) /* "metadata.timestamp": column */
        if (t->cols[i].meta && !t->cols[i].virt) {
            char *k = sl_sprintf("metadata.%s", t->cols[i].meta);
            json_object_set_new(cfg, k, json_string(t->cols[i].name));
            free(k);
        }
    if (t->npk) {
        sql_sbuf pk = {0};
        for (int i = 0; i < t->npk; i++) sql_sb_fmt(&pk, "%s%s", i ? ";" : "", t->pk[i]);
        json_object_set_new(cfg, "primary-key", json_string(pk.p));
        free(pk.p);
    }
    /* the avro formats derive their schema from the columns' nullability too
     * (a NOT NULL column is no union with null), which the vertex schema's
     * types do not carry */
    static const char *const fkeys[] = {"format", "value.format", "key.format"};
    bool avro = false;
    for (size_t k = 0; k < SL_ARRAY_LEN(fkeys); k++) {
        const char *f = opt_get(t, fkeys[k]);
        if (f && !strncasecmp(f, "avro", 4)) avro = true;
    }
    sql_sbuf nn = {0};
    for (int i = 0; avro && i < t->ncols; i++) {
        bool nn_col = t->cols[i].notnull; /* declared NOT NULL, or in the primary key */
        for (int k = 0; k < t->npk; k++) nn_col |= !strcasecmp(t->pk[k], t->cols[i].name);
        if (nn_col && !t->cols[i].expr && !t->cols[i].meta)
            sql_sb_fmt(&nn, "%s%s", nn.p ? ";" : "", t->cols[i].name);
    }
    if (nn.p) json_object_set_new(cfg, "not-null-fields", json_string(nn.p));
    free(nn.p);
    return cfg;
}

/* ---- statements --------------------------------------------------------- */

/* WATERMARK FOR col AS col [- INTERVAL ...]: the column must be a
 * TIMESTAMP(3) of t; the delay goes to t->wm_delay. */
static int table_watermark(sql_table *t, const sql_node *wm, char *err, size_t errlen)
{
    int rc = SL_OK;
    int ci = -1;
    for (int j = 0; j < t->ncols; j++)
        if (!strcasecmp(t->cols[j].name, wm->s)) ci = j;
    const sql_node *x = sql_kid(wm, 0);
    if (ci < 0) {
        rc = sl_seterr(err, errlen, "line %d, column %d: WATERMARK FOR '%s': table '%s' has "
                       "no such column", wm->line, wm->col, wm->s, t->name);
    } else if (t->cols[ci].type != SL_T_TIMESTAMP || t->cols[ci].proctime) {
        rc = sl_seterr(err, errlen, "line %d, column %d: WATERMARK FOR '%s': the column must "
                       "be a TIMESTAMP(3) (it is %s)", wm->line, wm->col, wm->s,
                       t->cols[ci].proctime ? "PROCTIME()" : sl_type_name(t->cols[ci].type));
    } else if (x->kind == SQL_COL && !strcasecmp(x->s, wm->s)) {
        t->wm_delay = 0;
    } else if (x->kind == SQL_BINOP && !strcmp(x->s, "-") && x->kids[0]->kind == SQL_COL &&
               !strcasecmp(x->kids[0]->s, wm->s) && x->kids[1]->kind == SQL_INTERVAL) {
        char ivtext[256], ebuf[256];
        snprintf(ivtext, sizeof ivtext, "INTERVAL '%s' %s", x->kids[1]->s, x->kids[1]->s2);
        if (sl_interval_parse(ivtext, &t->wm_delay, ebuf, sizeof ebuf) != SL_OK || t->wm_delay < 0)
            rc = sl_seterr(err, errlen, "line %d, column %d: %s", x->kids[1]->line,
                           x->kids[1]->col, ebuf);
    } else {
        rc = sl_seterr(err, errlen, "line %d, column %d: WATERMARK FOR %s AS ...: Sluice "
                       "supports '%s' and '%s - INTERVAL ...' (bounded out-of-orderness)",
                       x->line, x->col, wm->s, wm->s, wm->s);
    }
    if (rc == SL_OK) {
        t->wm_col = sl_strdup(t->cols[ci].name);
        t->wm_text = sql_unparse(x);
    }
    return rc;
}

/* PRIMARY KEY (cols) NOT ENFORCED: each a column of t. */
static int table_primary_key(sql_table *t, const sql_node *pk, char *err, size_t errlen)
{
    int rc = SL_OK;
    t->pk = sl_calloc((size_t)pk->nkids, sizeof(char *));
    for (int i = 0; rc == SL_OK && i < pk->nkids; i++) {
        int found = 0;
        for (int j = 0; j < t->ncols; j++)
            if (!strcasecmp(t->cols[j].name, pk->kids[i]->s)) found = 1;
        if (!found)
            rc = sl_seterr(err, errlen, "line %d, column %d: PRIMARY KEY column '%s' is not "
                           "a column of table '%s'", pk->kids[i]->line, pk->kids[i]->col,
                           pk->kids[i]->s, t->name);
        else
            t->pk[t->npk++] = sl_strdup(pk->kids[i]->s);
    }
    return rc;
}

/* WITH (...): the options in order, each at most once. */
static int table_with(sql_table *t, const sql_node *with, char *err, size_t errlen)
{
    int rc = SL_OK;
    t->keys = sl_calloc((size_t)with->nkids, sizeof(char *));
    t->vals = sl_calloc((size_t)with->nkids, sizeof(char *));
    for (int i = 0; i < with->nkids; i++) {
        for (int j = 0; j < t->nopts; j++)
            if (!strcmp(t->keys[j], with->kids[i]->s)) {
                rc = sl_seterr(err, errlen, "line %d, column %d: table '%s': option '%s' is "
                               "given twice", with->kids[i]->line, with->kids[i]->col,
                               t->name, with->kids[i]->s);
            }
        if (rc) break;
        t->keys[t->nopts] = sl_strdup(with->kids[i]->s);
        t->vals[t->nopts++] = sl_strdup(with->kids[i]->s2);
    }
    return rc;
}

/* PARTITIONED BY (a, b): physical columns of t, each once. */
static int table_partitions(sql_table *t, const sql_node *part, char *err, size_t errlen)
{
    t->part = sl_calloc((size_t)part->nkids + 1, sizeof(char *));
    for (int i = 0; i < part->nkids; i++) {
        const sql_node *p = part->kids[i];
        const sql_column *c = NULL;
        for (int j = 0; j < t->ncols; j++)
            if (!strcasecmp(t->cols[j].name, p->s)) c = &t->cols[j];
        if (!c)
            return sl_seterr(err, errlen, "line %d, column %d: Partition column '%s' not defined "
                             "in the table schema of table '%s'", p->line, p->col, p->s, t->name);
        if (c->expr || c->meta)
            return sl_seterr(err, errlen, "line %d, column %d: partition column '%s' of table "
                             "'%s' must be a physical column", p->line, p->col, p->s, t->name);
        for (int k = 0; k < t->npart; k++)
            if (!strcasecmp(t->part[k], c->name))
                return sl_seterr(err, errlen, "line %d, column %d: table '%s': partition column "
                                 "'%s' is given twice", p->line, p->col, t->name, p->s);
        t->part[t->npart++] = sl_strdup(c->name);
    }
    return SL_OK;
}

/* PRIMARY KEY without NOT ENFORCED: Flink's refusal. */
static int pk_enforced(const sql_node *pk, char *err, size_t errlen)
{
    return sl_seterr(err, errlen, "line %d, column %d: Flink doesn't support ENFORCED mode for "
                     "PRIMARY KEY constraint. ENFORCED/NOT ENFORCED controls if the constraint "
                     "checks are performed on the incoming/outgoing data. Flink does not own the "
                     "data therefore the only supported mode is the NOT ENFORCED mode",
                     pk->line, pk->col);
}

sql_table *sql_cat_build_table(sl_sql_session *s, const sql_node *st, const char *key, char *err,
                               size_t errlen)
{
    sql_table *t = sl_calloc(1, sizeof *t);
    t->name = sl_strdup(key);
    t->temporary = st->flags & SQL_F_TEMP ? 1 : 0;
    if (st->s2) t->comment = sl_strdup(st->s2);
    sql_node none = {.kind = SQL_LIST};
    const sql_node *elems = sql_kid(st, 0) ? sql_kid(st, 0) : &none, *with = sql_kid(st, 1);
    const sql_node *inline_pk = NULL; /* the column of `c INT PRIMARY KEY NOT ENFORCED` */
    int rc = SL_OK;
    sl_schema phys;
    sl_schema_init(&phys);
    t->cols = sl_calloc((size_t)elems->nkids, sizeof *t->cols);
    const sql_node *wm = NULL, *pk = NULL;
    for (int i = 0; rc == SL_OK && i < elems->nkids; i++) {
        const sql_node *e = elems->kids[i];
        if (e->kind == SQL_WATERMARK) {
            if (wm) rc = sl_seterr(err, errlen, "line %d, column %d: table '%s' has more than one "
                                   "WATERMARK", e->line, e->col, t->name);
            wm = e;
            continue;
        }
        if (e->kind == SQL_PKEY || (e->kind == SQL_COLUMN && sql_kid(e, 1))) {
            const sql_node *k = e->kind == SQL_PKEY ? e : sql_kid(e, 1);
            if (pk || inline_pk) rc = sl_seterr(err, errlen, "line %d, column %d: Duplicate "
                                                "primary key definition", k->line, k->col);
            else if (k->flags & SQL_F_ENFORCED) rc = pk_enforced(k, err, errlen);
            if (rc) break;
            if (e->kind == SQL_PKEY) {
                pk = e;
                continue;
            }
            inline_pk = e;
        }
        for (int j = 0; j < t->ncols; j++)
            if (strcasecmp(t->cols[j].name, e->s) == 0) {
                rc = sl_seterr(err, errlen, "line %d, column %d: table '%s' declares column "
                               "'%s' twice", e->line, e->col, t->name, e->s);
                break;
            }
        if (rc) break;
        if (e->kind == SQL_COLUMN) {
            sl_type ty;
            const sl_dtype *dt = NULL;
            char why[400];
            int meta = e->flags & SQL_F_METADATA ? 1 : 0;
            if (meta && !strncmp(e->s2, "MAP<", 4)) {
                /* the kafka headers: their JSON text (checked in check_meta) */
                dt = sl_dtype_basic(SL_T_STRING);
            } else if (sl_dtype_parse(e->s2, &dt, why, sizeof why) != SL_OK ||
                       sl_dtype_check_declared(dt, why, sizeof why) != SL_OK) {
                rc = sl_seterr(err, errlen, "line %d, column %d: column '%s': %s", e->line,
                               e->col, e->s, why);
                break;
            }
            ty = dt->kind;
            sql_column *c = &t->cols[t->ncols++];
            c->name = sl_strdup(e->s);
            c->type_text = sl_strdup(e->s2);
            c->type = ty;
            c->dt = dt;
            c->notnull = e->flags & SQL_F_NOTNULL ? 1 : 0;
            if (meta) {
                const sql_node *from = sql_kid(e, 0);
                c->meta = sl_strdup(from ? from->s : e->s);
                c->virt = e->flags & SQL_F_VIRTUAL ? 1 : 0;
            }
            sl_schema_add_dt(&phys, e->s, dt);
        }
    }
    /* computed columns see the physical ones */
    for (int i = 0; rc == SL_OK && i < elems->nkids; i++) {
        const sql_node *e = elems->kids[i];
        if (e->kind != SQL_COMPUTED) continue;
        const sql_node *x = sql_kid(e, 0);
        sql_column *c = &t->cols[t->ncols++];
        c->name = sl_strdup(e->s);
        c->expr = (sql_node *)x;
        if (x->kind == SQL_FUNC && strcasecmp(x->s, "PROCTIME") == 0 && x->nkids == 0) {
            c->proctime = 1;
            c->type = SL_T_TIMESTAMP;
            c->dt = sql_proctime_dt();
            continue;
        }
        if ((rc = check_interval_mult(x, &phys, err, errlen)) != SL_OK) break;
        char ebuf[600];
        if (type_of(x, &phys, &c->type, ebuf, sizeof ebuf) != SL_OK) {
            rc = sl_seterr(err, errlen, "%s; computed column '%s' of table '%s'", ebuf, e->s,
                           t->name);
        }
    }
    /* keep declared order: physical and computed columns as written */
    if (rc == SL_OK) {
        sql_column *ord = sl_calloc((size_t)elems->nkids, sizeof *ord);
        int n = 0;
        for (int i = 0; i < elems->nkids; i++) {
            const sql_node *e = elems->kids[i];
            if (e->kind != SQL_COLUMN && e->kind != SQL_COMPUTED) continue;
            for (int j = 0; j < t->ncols; j++)
                if (!strcmp(t->cols[j].name, e->s)) ord[n++] = t->cols[j];
        }
        free(t->cols);
        t->cols = ord;
        t->ncols = n;
    }
    if (rc == SL_OK && wm) rc = table_watermark(t, wm, err, errlen);
    if (rc == SL_OK && wm) t->wm_expr = sql_kid(wm, 0);
    if (rc == SL_OK && pk) rc = table_primary_key(t, pk, err, errlen);
    if (rc == SL_OK && pk && pk->s) t->pk_name = sl_strdup(pk->s);
    if (rc == SL_OK && inline_pk) {
        const sql_node *k = sql_kid(inline_pk, 1);
        t->pk = sl_calloc(1, sizeof(char *));
        t->pk[t->npk++] = sl_strdup(inline_pk->s);
        if (k->s) t->pk_name = sl_strdup(k->s);
    }
    if (rc == SL_OK && sql_kid(st, 4)) rc = table_partitions(t, sql_kid(st, 4), err, errlen);
    if (rc == SL_OK && with) rc = table_with(t, with, err, errlen);
    if (rc == SL_OK && s->bridging) {
        t->connector = opt_get(t, "connector");
        if (!t->connector || strcmp(t->connector, "datastream") != 0 || !opt_get(t, "vertex") ||
            t->nopts > 3)
            rc = sl_seterr(err, errlen, "table '%s': the schema of a stream is columns, computed "
                           "columns and a WATERMARK; it cannot close the column list or add "
                           "options", t->name);
    } else if (rc == SL_OK) {
        rc = check_options(t, with ? with : st, err, errlen);
    }
    if (rc == SL_OK) rc = check_metadata(t, elems, err, errlen);
    /* a JDBC catalog's table keeps Flink's types; the jdbc connector refuses the ones it
     * cannot carry where a job uses the table (sql_jdbc_uncarried) */
    if (rc == SL_OK && !s->jcat_loading) rc = check_new_types(t, with ? with : st, err, errlen);
    int nphys = 0;
    for (int i = 0; i < t->ncols; i++) nphys += !t->cols[i].expr && !t->cols[i].meta;
    if (rc == SL_OK && t->npart && !s->bridging && strcmp(t->connector, "filesystem"))
        rc = sl_seterr(err, errlen, "line %d, column %d: table '%s': PARTITIONED BY is supported "
                       "for the filesystem connector only, not '%s'", sql_kid(st, 4)->line,
                       sql_kid(st, 4)->col, t->name, t->connector);
    else if (rc == SL_OK && t->npart && t->npart == nphys)
        rc = sl_seterr(err, errlen, "line %d, column %d: table '%s': every physical column is a "
                       "partition column; the files need at least one", sql_kid(st, 4)->line,
                       sql_kid(st, 4)->col, t->name);
    sl_schema_free(&phys);
    if (rc != SL_OK) {
        table_free(t);
        return NULL;
    }
    return t;
}

void sql_cat_add(sl_sql_session *s, sql_table *t)
{
    s->cat.t = sl_realloc(s->cat.t, sizeof(sql_table *) * (size_t)(s->cat.n + 1));
    s->cat.t[s->cat.n++] = t;
}

int sql_cat_check_options(sql_table *t, const sql_node *with, char *err, size_t errlen)
{
    return check_options(t, with, err, errlen);
}

int sql_names_have(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, '\x1f');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncasecmp(p, name, n)) return 1;
        p = e ? e + 1 : p + len;
    }
    return 0;
}

static int create_view(sl_sql_session *s, sql_arena *a, const sql_node *st, sl_sql_result *r,
                       char *err, size_t errlen)
{
    sql_loc loc;
    if (sql_ddl_refuse_jdbc(s, st->s, "CreateView", st->line, st->col, err, errlen) != SL_OK)
        return SL_ERR;
    if (sql_ddl_locate(s, st->s, st->line, st->col, 1, &loc, err, errlen) != SL_OK) return SL_ERR;
    if (sql_catalog_find(&s->cat, loc.key)) {
        int rc = SL_OK;
        if (!(st->flags & SQL_F_IFNE))
            rc = sl_seterr(err, errlen, "line %d, column %d: Table (or view) %s.%s already exists "
                           "in Catalog %s (the catalog is per session)", st->line, st->col,
                           loc.db, loc.obj, loc.cat);
        sql_loc_free(&loc);
        r->kind = SL_SQL_OK;
        return rc;
    }
    sl_schema sch;
    /* the body's names are resolved where the view is created, as Flink expands them;
     * a column list renames its columns: SELECT * FROM (query) AS v(a, b) */
    sql_node *q = sql_kid(st, 0);
    if (sql_kid(st, 1)) q = sql_ddl_view_columns(a, q, sql_kid(st, 1), loc.obj);
    char *rt = NULL, *pt = NULL; /* the query's time attributes, which DESCRIBE marks */
    if (sql_ddl_refs(s, a, sql_kid(st, 0), NULL, err, errlen) != SL_OK ||
        sql_plan_schema_attrs(&s->cat, q, &sch, &rt, &pt, err, errlen) != SL_OK) {
        sql_loc_free(&loc);
        return SL_ERR;
    }
    sql_table *t = sl_calloc(1, sizeof *t);
    t->name = loc.key;
    t->catalog = loc.cat;
    t->database = loc.db;
    t->obj = loc.obj;
    t->query_text = sql_ddl_text_from(s, sql_kid(st, 0));
    t->is_view = 1;
    t->temporary = st->flags & SQL_F_TEMP ? 1 : 0;
    t->query = q;
    t->cols = sl_calloc(sch.n ? (size_t)sch.n : 1, sizeof *t->cols);
    for (int i = 0; i < sch.n; i++) {
        t->cols[i].name = sl_strdup(sch.fields[i].name);
        t->cols[i].type = sch.fields[i].type;
        t->cols[i].dt = sch.fields[i].dt;
        t->cols[i].view_attr = sql_names_have(rt, sch.fields[i].name)   ? 1
                             : sql_names_have(pt, sch.fields[i].name) ? 2 : 0;
    }
    free(rt);
    free(pt);
    t->ncols = sch.n;
    sl_schema_free(&sch);
    s->cat.t = sl_realloc(s->cat.t, sizeof(sql_table *) * (size_t)(s->cat.n + 1));
    s->cat.t[s->cat.n++] = t;
    r->kind = SL_SQL_OK;
    return SL_OK;
}

static int drop(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err, size_t errlen)
{
    int view = st->flags & SQL_F_VIEW ? 1 : 0;
    if (sql_ddl_refuse_jdbc(s, st->s, view ? "DropView" : "DropTable", st->line, st->col, err,
                            errlen) != SL_OK)
        return SL_ERR;
    const sql_table *found = sql_ddl_find(s, st->s);
    for (int i = 0; i < s->cat.n; i++) {
        sql_table *t = s->cat.t[i];
        if (t != found) continue;
        if (t->is_view != view)
            return sl_seterr(err, errlen, "line %d, column %d: '%s' is a %s; use DROP %s",
                             st->line, st->col, st->s, t->is_view ? "view" : "table",
                             t->is_view ? "VIEW" : "TABLE");
        table_free(t);
        memmove(&s->cat.t[i], &s->cat.t[i + 1], sizeof(sql_table *) * (size_t)(s->cat.n - i - 1));
        s->cat.n--;
        r->kind = SL_SQL_OK;
        return SL_OK;
    }
    if (st->flags & SQL_F_IFEX) {
        r->kind = SL_SQL_OK;
        return SL_OK;
    }
    return sl_seterr(err, errlen, "line %d, column %d: %s '%s' does not exist in this session",
                     st->line, st->col, view ? "view" : "table", st->s);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int show(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err, size_t errlen)
{
    if (!strcmp(st->s, "JOBS")) {
        r->kind = SL_SQL_SHOW_JOBS;
        return SL_OK;
    }
    if (!strcmp(st->s, "FUNCTIONS")) {
        static const char *const fns[] = {
            "ABS", "AVG", "CAST", "CEIL", "CHAR_LENGTH", "COALESCE", "CONCAT", "COUNT",
            "CUMULATE", "CURRENT_TIMESTAMP", "DAYOFMONTH", "DAYOFWEEK", "DAYOFYEAR", "EXTRACT",
            "FLOOR", "FROM_UNIXTIME", "HOP", "HOUR", "IF", "LOCALTIMESTAMP", "LOWER", "LTRIM",
            "MAX", "MIN", "MINUTE", "MOD", "MONTH", "NOW", "NULLIF", "PROCTIME", "QUARTER", "RAND",
            "RAND_INTEGER", "RTRIM", "SECOND", "SESSION", "SUM", "TIMESTAMPADD", "TIMESTAMPDIFF",
            "TO_TIMESTAMP", "TO_TIMESTAMP_LTZ", "TRY_CAST", "TUMBLE", "UNIX_TIMESTAMP", "UPPER",
            "WEEK", "YEAR",
            /* group-window auxiliary functions (sql/plan_groupwin.c) */
            "HOP_END", "HOP_PROCTIME", "HOP_ROWTIME", "HOP_START", "SESSION_END",
            "SESSION_PROCTIME", "SESSION_ROWTIME", "SESSION_START", "TUMBLE_END", "TUMBLE_PROCTIME",
            "TUMBLE_ROWTIME", "TUMBLE_START"};
        int nu = 0;
        char **user = sql_udfs_names(s->udfs, &nu);
        char **all = sl_calloc(SL_ARRAY_LEN(fns) + (size_t)nu + 1, sizeof *all);
        memcpy(all, fns, sizeof fns);
        memcpy(all + SL_ARRAY_LEN(fns), user, sizeof *user * (size_t)nu);
        qsort(all, SL_ARRAY_LEN(fns) + (size_t)nu, sizeof *all, cmp_str);
        const char *head[] = {"function name"}, *types[] = {"STRING"};
        table_result(r, 1, head, types, all, (int)SL_ARRAY_LEN(fns) + nu);
        free(all);
        free(user);
        return SL_OK;
    }
    if (!strcmp(st->s, "USER FUNCTIONS") || !strcmp(st->s, "JARS")) {
        return sql_udfs_execute(s->udfs, st, r, err, errlen);
    }
    int rc = sql_ddl_show(s, st, r, err, errlen); /* TABLES, VIEWS, COLUMNS, CREATE ... */
    if (rc != 1) return rc;
    return sl_seterr(err, errlen, "line %d, column %d: SHOW %s is not supported yet", st->line,
                     st->col, st->s);
}

int sql_cat_describe(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err,
                     size_t errlen)
{
    if (sql_ddl_load(s, st->s, st->line, st->col, err, errlen) != SL_OK) return SL_ERR;
    sql_table *t = sql_ddl_find(s, st->s);
    if (!t)
        return sl_seterr(err, errlen, "line %d, column %d: table or view '%s' does not exist in "
                         "this session", st->line, st->col, st->s);
    char **cells = sl_calloc((size_t)t->ncols * 6 + 1, sizeof(char *));
    for (int i = 0; i < t->ncols; i++) {
        const sql_column *c = &t->cols[i];
        char **row = &cells[i * 6];
        row[0] = sl_strdup(c->name);
        int is_rt = t->wm_col && !strcasecmp(t->wm_col, c->name);
        /* the type without its own NOT NULL, which the null column says (a view's
         * ARRAY[1, 2]: ARRAY<INT NOT NULL>, null FALSE, as Flink's DESCRIBE) */
        const sl_dtype *cdt = sl_dtype_nullable(sql_col_dt(c), false);
        row[1] = c->proctime || c->view_attr == 2 ? sl_strdup("TIMESTAMP_LTZ(3) *PROCTIME*")
                 : is_rt || c->view_attr == 1      ? sl_sprintf("%s *ROWTIME*", cdt->text)
                 : c->meta && c->type_text && !strncmp(c->type_text, "MAP<", 4)
                             ? sl_strdup(c->type_text) /* kafka headers, read as JSON text */
                             : sl_strdup(cdt->text);
        int key = 0;
        for (int k = 0; k < t->npk; k++)
            if (!strcasecmp(t->pk[k], c->name)) key = 1;
        row[2] = sl_strdup(key || c->notnull || sql_col_dt(c)->notnull ? "FALSE" : "TRUE");
        row[3] = key ? sl_strdup("PRI") : NULL;
        if (c->expr) {
            char *x = sql_unparse(c->expr);
            row[4] = sl_sprintf("AS %s", x);
            free(x);
        } else if (c->meta) {
            row[4] = sl_sprintf("METADATA FROM '%s'%s", c->meta, c->virt ? " VIRTUAL" : "");
        }
        row[5] = is_rt ? sl_strdup(t->wm_text) : NULL;
    }
    const char *head[] = {"name", "type", "null", "key", "extras", "watermark"};
    const char *types[] = {"STRING", "STRING", "BOOLEAN", "STRING", "STRING", "STRING"};
    table_result(r, 6, head, types, cells, t->ncols);
    for (int i = 0; i < t->ncols * 6; i++) free(cells[i]);
    free(cells);
    return SL_OK;
}

const char *sl_sql_option(const sl_sql_session *s, const char *key)
{
    for (int i = 0; i < s->nopts; i++)
        if (!strcmp(s->okeys[i], key)) return s->ovals[i];
    return NULL;
}

/* Options the job's "config" carries (core/jobgraph.c decides which). */
static int is_job_key(const char *k)
{
    for (const char *const *p = sl_jobgraph_conf_keys(); *p; p++)
        if (!strcmp(*p, k)) return 1;
    return 0;
}

/* Options the client applies itself. */
static int is_client_key(const char *k)
{
    static const char *const client[] = {"execution.savepoint.path",
                                         "pipeline.auto-watermark-interval",
                                         "execution.savepoint.ignore-unclaimed-state",
                                         "state.savepoints.dir",
                                         "sql-client.execution.result-mode",
                                         "sql-client.execution.max-table-result.rows",
                                         "table.optimizer.reuse-sub-plan-enabled",
                                         "table.local-time-zone"};
    for (size_t i = 0; i < SL_ARRAY_LEN(client); i++)
        if (!strcmp(client[i], k)) return 1;
    return 0;
}

static int set(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err, size_t errlen)
{
    if (!st->s) {
        char **cells = sl_calloc((size_t)s->nopts * 2 + 1, sizeof(char *));
        for (int i = 0; i < s->nopts; i++) {
            cells[2 * i] = s->okeys[i];
            cells[2 * i + 1] = s->ovals[i];
        }
        const char *head[] = {"key", "value"}, *types[] = {"STRING", "STRING"};
        table_result(r, 2, head, types, cells, s->nopts);
        free(cells);
        return SL_OK;
    }
    if (!strcmp(st->s, "parallelism.default")) {
        char *end;
        long p = strtol(st->s2, &end, 10);
        if (*st->s2 == '\0' || *end || p < 1 || p > 32768)
            return sl_seterr(err, errlen, "line %d, column %d: 'parallelism.default' must be a "
                             "number from 1 to 32768, not '%s'", st->line, st->col, st->s2);
    }
    if (!strcmp(st->s, "table.exec.state.ttl") && strcmp(st->s2, "0")) {
        int64_t ms;
        char ebuf[256];
        if (sl_interval_parse(st->s2, &ms, ebuf, sizeof ebuf) != SL_OK)
            return sl_seterr(err, errlen, "line %d, column %d: 'table.exec.state.ttl': %s",
                             st->line, st->col, ebuf);
    }
    if (!strcmp(st->s, "sql-client.execution.result-mode") && strcasecmp(st->s2, "table") &&
        strcasecmp(st->s2, "changelog") && strcasecmp(st->s2, "tableau"))
        return sl_seterr(err, errlen, "line %d, column %d: 'sql-client.execution.result-mode' is "
                         "table, changelog or tableau", st->line, st->col);
    if (!strcmp(st->s, "table.optimizer.reuse-sub-plan-enabled") && strcasecmp(st->s2, "true") &&
        strcasecmp(st->s2, "false"))
        return sl_seterr(err, errlen, "line %d, column %d: 'table.optimizer.reuse-sub-plan-enabled' "
                         "must be true or false, not '%s'", st->line, st->col, st->s2);
    if (!strcmp(st->s, "table.local-time-zone")) { /* a java.time.ZoneId name, checked now */
        char zerr[256];
        sl_tz *tz = sl_tz_open(st->s2, SL_TZ_JAVA_TIME, zerr, sizeof zerr);
        if (!tz)
            return sl_seterr(err, errlen, "line %d, column %d: 'table.local-time-zone': %s (a "
                             "region such as 'Asia/Shanghai', 'UTC' or an offset such as "
                             "'+08:00')", st->line, st->col, zerr);
        sl_tz_destroy(tz);
    }
    if (!is_job_key(st->s) && !is_client_key(st->s)) {
        const char *hint = sl_closest(st->s, sl_jobgraph_conf_keys());
        if (hint)
            return sl_seterr(err, errlen, "line %d, column %d: unknown key '%s'; did you mean "
                             "'%s'?", st->line, st->col, st->s, hint);
    }
    if (is_job_key(st->s)) { /* the value as the job's config will check it */
        char e2[512];
        if (sl_jobgraph_conf_check(st->s, st->s2, e2, sizeof e2) != SL_OK)
            return sl_seterr(err, errlen, "line %d, column %d: %s", st->line, st->col, e2);
    }
    for (int i = 0; i < s->nopts; i++)
        if (!strcmp(s->okeys[i], st->s)) {
            free(s->ovals[i]);
            s->ovals[i] = sl_strdup(st->s2);
            r->kind = SL_SQL_OK;
            r->message = sl_strdup("Session property has been set.");
            return SL_OK;
        }
    s->okeys = sl_realloc(s->okeys, sizeof(char *) * (size_t)(s->nopts + 1));
    s->ovals = sl_realloc(s->ovals, sizeof(char *) * (size_t)(s->nopts + 1));
    s->okeys[s->nopts] = sl_strdup(st->s);
    s->ovals[s->nopts++] = sl_strdup(st->s2);
    r->kind = SL_SQL_OK;
    r->message = sl_strdup("Session property has been set.");
    return SL_OK;
}

static void reset(sl_sql_session *s, const sql_node *st, sl_sql_result *r)
{
    for (int i = s->nopts - 1; i >= 0; i--) {
        if (st->s && strcmp(s->okeys[i], st->s)) continue;
        free(s->okeys[i]);
        free(s->ovals[i]);
        memmove(&s->okeys[i], &s->okeys[i + 1], sizeof(char *) * (size_t)(s->nopts - i - 1));
        memmove(&s->ovals[i], &s->ovals[i + 1], sizeof(char *) * (size_t)(s->nopts - i - 1));
        s->nopts--;
    }
    r->kind = SL_SQL_OK;
    r->message = sl_strdup(st->s ? "Session property has been reset."
                                 : "All session properties have been set to their default values.");
}

/* SET values travel with the job: its "config" object. */
static void add_job_config(const sl_sql_session *s, json_t *job)
{
    sql_udfs_attach(s->udfs, job, s->okeys, s->ovals, s->nopts);
    /* the session zone goes into each vertex whose type takes it (core/operator.h:
     * SL_OP_OPTION_LOCAL_TIME_ZONE), so that a restored job keeps the zone it
     * was planned in (UTC: left out) */
    const char *zone = sl_sql_option(s, SL_OPT_LOCAL_TIME_ZONE);
    if (zone && strcmp(zone, "UTC") && !sl_op_find("calc"))
        sl_ops_register_builtin(); /* the client plans before it registers (idempotent) */
    json_t *v;
    size_t k;
    json_array_foreach(zone && strcmp(zone, "UTC") ? json_object_get(job, "vertices") : NULL, k, v) {
        const char *type = json_string_value(json_object_get(v, "type"));
        const sl_op_def *def = type ? sl_op_find(type) : NULL;
        const sl_op_option *o = def ? sl_op_option_find(def, SL_OPT_LOCAL_TIME_ZONE) : NULL;
        if (!o || strcmp(o->key, SL_OPT_LOCAL_TIME_ZONE)) continue; /* not a prefix row */
        json_t *vc = json_object_get(v, "config");
        if (!vc) json_object_set_new(v, "config", vc = json_object());
        if (json_is_object(vc)) json_object_set_new(vc, SL_OPT_LOCAL_TIME_ZONE, json_string(zone));
    }
    json_t *cfg = json_object();
    for (int i = 0; i < s->nopts; i++)
        if (is_job_key(s->okeys[i])) json_object_set_new(cfg, s->okeys[i], json_string(s->ovals[i]));
    if (json_object_size(cfg)) json_object_set_new(job, "config", cfg);
    else json_decref(cfg);
}

int sql_cat_plan_job(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err,
                     size_t errlen)
{
    json_t *job = sql_plan(&s->cat, s->okeys, s->ovals, s->nopts, st, err, errlen);
    if (!job) return SL_ERR;
    add_job_config(s, job);
    r->kind = SL_SQL_JOB;
    r->job = json_dumps(job, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(job);
    const char *sp = sl_sql_option(s, "execution.savepoint.path");
    if (sp && *sp) r->savepoint = sl_strdup(sp);
    const char *ig = sl_sql_option(s, "execution.savepoint.ignore-unclaimed-state");
    r->allow_nonrestored = ig && !strcasecmp(ig, "true");
    /* what does not reach the job is said, not silently dropped */
    size_t w = 0;
    char buf[1024] = "";
    for (int i = 0; i < s->nopts; i++)
        if (!is_job_key(s->okeys[i]) && !is_client_key(s->okeys[i]) && w < sizeof buf)
            w += (size_t)snprintf(buf + w, sizeof buf - w, "%s'%s'", w ? ", " : "", s->okeys[i]);
    if (w)
        r->warning = sl_sprintf("%s %s not a per-job setting: the cluster's configuration "
                                "applies", buf, strchr(buf, ',') ? "are" : "is");
    return SL_OK;
}

/* A plain SELECT: a job with a collect sink, and what the client needs to
 * show its rows. */
static int plan_select(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err,
                       size_t errlen)
{
    sl_schema cols;
    sl_schema_init(&cols);
    int updating = 0;
    json_t *job = sql_plan_query(&s->cat, s->okeys, s->ovals, s->nopts, st, &cols, &updating,
                                 err, errlen);
    if (!job) {
        sl_schema_free(&cols);
        return SL_ERR;
    }
    add_job_config(s, job);
    r->kind = SL_SQL_QUERY;
    r->job = json_dumps(job, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(job);
    r->ncols = cols.n;
    r->col_names = sl_calloc((size_t)cols.n + 1, sizeof(char *));
    r->col_types = sl_calloc((size_t)cols.n + 1, sizeof(char *));
    for (int i = 0; i < cols.n; i++) {
        r->col_names[i] = sl_strdup(cols.fields[i].name);
        r->col_types[i] = sl_strdup(cols.fields[i].dt->text);
    }
    sl_schema_free(&cols);
    r->changelog = updating;
    const char *mode = sl_sql_option(s, "sql-client.execution.result-mode");
    r->result_mode = sl_strdup(mode && *mode ? mode : "table");
    for (char *q = r->result_mode; *q; q++) *q = (char)tolower((unsigned char)*q);
    const char *maxr = sl_sql_option(s, "sql-client.execution.max-table-result.rows");
    if (maxr) r->max_table_rows = atoll(maxr);
    r->limit_rows = sql_query_row_limit(sql_kid(st, 0));
    return SL_OK;
}

static int execute_stmt(sl_sql_session *s, sql_arena *a, const sql_node *st, sl_sql_result *r,
                        char *err, size_t errlen)
{
    switch (st->kind) {
    case SQL_CREATE_TABLE: return sql_ddl_create_table(s, a, st, r, err, errlen);
    case SQL_ALTER:
    case SQL_CATALOG_STMT: return sql_ddl_execute(s, a, st, r, err, errlen);
    case SQL_CREATE_VIEW: return create_view(s, a, st, r, err, errlen);
    case SQL_DROP: return drop(s, st, r, err, errlen);
    case SQL_SHOW: return show(s, st, r, err, errlen);
    case SQL_DESCRIBE: return sql_cat_describe(s, st, r, err, errlen);
    case SQL_CREATE_FUNCTION:
    case SQL_DROP_FUNCTION:
    case SQL_DESCRIBE_FUNCTION:
    case SQL_JAR: return sql_udfs_execute(s->udfs, st, r, err, errlen);
    case SQL_SET: return set(s, st, r, err, errlen);
    case SQL_RESET: reset(s, st, r); return SL_OK;
    case SQL_INSERT:
        if (s->in_set) {
            /* validate now, run at END */
            json_t *j = sql_plan(&s->cat, s->okeys, s->ovals, s->nopts, st, err, errlen);
            if (!j) return SL_ERR;
            json_decref(j);
            sql_node_add(s->set_arena, s->set, (sql_node *)st);
            r->kind = SL_SQL_OK;
            r->message = sl_strdup("Add SQL update statement to the statement set.");
            return SL_OK;
        }
        return sql_cat_plan_job(s, st, r, err, errlen);
    case SQL_STMT_SET: return sql_cat_plan_job(s, st, r, err, errlen);
    case SQL_BEGIN_SET:
        if (s->in_set)
            return sl_seterr(err, errlen, "line %d, column %d: a statement set is already open",
                             st->line, st->col);
        s->in_set = 1;
        s->set = sql_node_new(a, SQL_STMT_SET, st->line, st->col);
        s->set_arena = a;
        r->kind = SL_SQL_OK;
        r->message = sl_strdup("Begin a statement set.");
        return SL_OK;
    case SQL_END_SET: {
        if (!s->in_set)
            return sl_seterr(err, errlen, "line %d, column %d: END without BEGIN STATEMENT SET",
                             st->line, st->col);
        s->in_set = 0;
        if (s->set->nkids == 0) {
            r->kind = SL_SQL_OK;
            r->message = sl_strdup("No SQL statement is in the statement set; nothing to run.");
            return SL_OK;
        }
        return sql_cat_plan_job(s, s->set, r, err, errlen);
    }
    case SQL_EXPLAIN: {
        const sql_node *x = sql_kid(st, 0);
        json_t *job = sql_plan(&s->cat, s->okeys, s->ovals, s->nopts, x, err, errlen);
        if (!job) return SL_ERR;
        char *text = sql_explain_text(job, st->flags & SQL_F_CHANGELOG);
        char *js = json_dumps(job, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        char *plan = sl_sprintf("%s== Job Graph ==\n%s", text, js);
        const char *head[] = {"result"}, *types[] = {"STRING"};
        table_result(r, 1, head, types, &plan, 1);
        free(r->text);
        r->text = sl_sprintf("%s\n", plan); /* printed as it is, as Flink's client does */
        r->job = js; /* the client prints what its operators warn about */
        free(plan);
        free(text);
        json_decref(job);
        return SL_OK;
    }
    case SQL_STOP_JOB: {
        size_t n = strlen(st->s);
        int ok = n == 32;
        for (size_t i = 0; ok && i < n; i++)
            ok = (st->s[i] >= '0' && st->s[i] <= '9') || (st->s[i] >= 'a' && st->s[i] <= 'f') ||
                 (st->s[i] >= 'A' && st->s[i] <= 'F');
        if (!ok)
            return sl_seterr(err, errlen, "line %d, column %d: '%s' is not a job id (32 "
                             "hexadecimal digits)", st->line, st->col, st->s);
        r->kind = SL_SQL_STOP_JOB;
        r->jobid = sl_strdup(st->s);
        for (char *q = r->jobid; *q; q++)
            if (*q >= 'A' && *q <= 'F') *q = (char)(*q - 'A' + 'a');
        r->with_savepoint = st->flags & SQL_F_SAVEPOINT ? 1 : 0;
        r->drain = st->flags & SQL_F_DRAIN ? 1 : 0;
        const char *dir = sl_sql_option(s, "state.savepoints.dir");
        if (dir && *dir) r->target_dir = sl_strdup(dir);
        return SL_OK;
    }
    case SQL_QUERY_STMT: return plan_select(s, st, r, err, errlen);
    default:
        return sl_seterr(err, errlen, "line %d, column %d: unsupported statement", st->line,
                         st->col);
    }
}

/* The statements that plan a job see every table reference in the catalog's
 * keys, and tables read or written with OPTIONS hints as copies with those
 * options (sql/catalog_ddl.c): the planner reads a per-statement catalog. */
static int execute(sl_sql_session *s, sql_arena *a, const sql_node *st, sl_sql_result *r,
                   char *err, size_t errlen)
{
    if (s->in_set && st->kind != SQL_INSERT && st->kind != SQL_END_SET)
        return sl_seterr(err, errlen, "line %d, column %d: only INSERT statements can be added "
                         "to a statement set (END it first)", st->line, st->col);
    int plans = st->kind == SQL_INSERT || st->kind == SQL_STMT_SET || st->kind == SQL_EXPLAIN ||
                st->kind == SQL_QUERY_STMT || (st->kind == SQL_END_SET && s->in_set);
    if (!plans) return execute_stmt(s, a, st, r, err, errlen);
    sql_catalog view = {0};
    const sql_node *refs = st->kind == SQL_END_SET ? s->set : st;
    if (sql_ddl_refs(s, a, (sql_node *)refs, &view, err, errlen) != SL_OK) return SL_ERR;
    sql_catalog base = s->cat; /* after the references were resolved: a JDBC catalog's
                                  table read by them may have grown the list */
    if (view.t) s->cat = view;
    int rc = execute_stmt(s, a, st, r, err, errlen);
    if (view.t) {
        s->cat = base;
        sql_ddl_view_free(&view, &base);
    }
    return rc;
}

/* ---- session ------------------------------------------------------------ */

sl_sql_session *sl_sql_session_new(void)
{
    sl_sql_session *s = sl_calloc(1, sizeof(sl_sql_session));
    s->udfs = sql_udfs_new();
    sql_ddl_init(s);
    return s;
}

void sl_sql_session_destroy(sl_sql_session *s)
{
    if (!s) return;
    for (int i = 0; i < s->cat.n; i++) table_free(s->cat.t[i]);
    free(s->cat.t);
    sql_udfs_destroy(s->udfs);
    sql_ddl_destroy(s);
    for (int i = 0; i < s->nopts; i++) {
        free(s->okeys[i]);
        free(s->ovals[i]);
    }
    free(s->okeys);
    free(s->ovals);
    for (int i = 0; i < s->narenas; i++) sql_arena_destroy(s->arenas[i]);
    free(s->arenas);
    free(s);
}

const sql_catalog *sql_session_catalog(const sl_sql_session *s) { return &s->cat; }

int sql_session_create_stream_table(sl_sql_session *s, const char *ddl, char *err, size_t errlen)
{
    sl_sql_result r;
    s->bridging = 1;
    int rc = sl_sql_execute(s, ddl, strlen(ddl), 1, 1, &r, err, errlen);
    s->bridging = 0;
    if (rc == SL_OK) sl_sql_result_clear(&r);
    return rc;
}

int sl_sql_options(const sl_sql_session *s, char *const **keys, char *const **vals)
{
    *keys = s->okeys;
    *vals = s->ovals;
    return s->nopts;
}

void sl_sql_result_clear(sl_sql_result *r)
{
    free(r->text);
    free(r->job);
    free(r->savepoint);
    free(r->message);
    free(r->jobid);
    free(r->target_dir);
    free(r->warning);
    for (int i = 0; i < r->ncols; i++) {
        free(r->col_names[i]);
        free(r->col_types[i]);
    }
    free(r->col_names);
    free(r->col_types);
    for (int i = 0; r->cells && i < r->nrows * r->ncols; i++) free(r->cells[i]);
    free(r->cells);
    free(r->result_mode);
    memset(r, 0, sizeof *r);
}

int sl_sql_execute(sl_sql_session *s, const char *text, size_t len, int line, int col,
                   sl_sql_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    sql_arena *a = sql_arena_new();
    sql_node *list = sql_parse(a, text, len, line, col, err, errlen);
    if (!list) {
        sql_arena_destroy(a);
        return SL_ERR;
    }
    if (list->nkids == 0) {
        sql_arena_destroy(a);
        r->kind = SL_SQL_NONE;
        return SL_OK;
    }
    if (list->nkids > 1) {
        const sql_node *second = list->kids[1];
        sql_arena_destroy(a);
        return sl_seterr(err, errlen, "line %d, column %d: one statement at a time, please",
                         second->line, second->col);
    }
    const sql_node *st = list->kids[0];
    int in_set = s->in_set;
    s->stmt_seq++;
    s->stmt_text = text;
    s->stmt_len = len;
    s->stmt_line = line;
    s->stmt_col = col;
    sl_expr_set_session_functions(sql_udfs_set(s->udfs)); /* calls type-check against them */
    int rc = execute(s, a, st, r, err, errlen);
    sl_expr_set_session_functions(NULL);
    /* keep the parse when the session now points into it: views, computed columns,
     * statement sets; drop it otherwise, so a long session does not grow per statement */
    int keep = rc == SL_OK && (st->kind == SQL_CREATE_TABLE || st->kind == SQL_CREATE_VIEW ||
                               st->kind == SQL_ALTER ||
                               st->kind == SQL_BEGIN_SET || (st->kind == SQL_INSERT && in_set));
    if (keep) {
        s->arenas = sl_realloc(s->arenas, sizeof(sql_arena *) * (size_t)(s->narenas + 1));
        s->arenas[s->narenas++] = a;
    } else {
        sql_arena_destroy(a);
    }
    if (rc != SL_OK) sl_sql_result_clear(r);
    return rc;
}
