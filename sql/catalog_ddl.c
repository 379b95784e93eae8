/*
 * catalog_ddl.c -- catalogs and databases, name resolution, and the DDL
 * that derives one table definition from another: CREATE TABLE ... LIKE,
 * CREATE TABLE ... AS SELECT, ALTER TABLE / VIEW, SHOW CREATE, SHOW
 * TABLES / VIEWS / COLUMNS / CATALOGS / DATABASES, and the dynamic table
 * options of OPTIONS hints.
 *
 * Every table and view lives in a catalog and a database, as in Flink:
 * default_catalog.default_database until USE / USE CATALOG say otherwise;
 * CREATE CATALOG makes another in-memory catalog (Flink's
 * generic_in_memory, whose database is `default`). The session keeps one
 * flat list of tables; each one's key (sql_table.name, what the planner
 * looks up and names vertices and uids after) is its own name in
 * default_catalog.default_database -- so jobs written before catalogs keep
 * their vertex ids and uids -- and db.name or catalog.db.name elsewhere.
 * Before a statement is planned, sql_ddl_refs rewrites each table
 * reference of it (FROM, INSERT INTO) to that key, once, relative to the
 * current catalog and database; a view's body is rewritten where the view
 * is created, so it keeps meaning what it meant there.
 *
 * Derived definitions are built as syntax: the source table is written
 * back as CREATE TABLE elements (columns, computed columns, WATERMARK,
 * PRIMARY KEY, PARTITIONED BY, options), merged or edited, and run through
 * catalog.c's CREATE TABLE checks again, so a derived table is checked
 * exactly as a written one. The nodes live in the statement's arena, which
 * the session keeps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sl.h"
#include "parse.h"
#include "catalog_int.h"

/* ---- names ------------------------------------------------------------------ */

void sql_loc_free(sql_loc *l)
{
    if (!l) return;
    free(l->cat);
    free(l->db);
    free(l->obj);
    free(l->key);
    memset(l, 0, sizeof *l);
}

/* One part of a key: back-quoted when it holds '.' or '`' (as the grammar writes paths). */
static void put_part(sql_sbuf *b, const char *p)
{
    if (!strchr(p, '.') && !strchr(p, '`')) {
        sql_sb_str(b, p);
        return;
    }
    sql_sb_str(b, "`");
    for (; *p; p++) {
        if (*p == '`') sql_sb_str(b, "`");
        sql_sb_put(b, p, 1);
    }
    sql_sb_str(b, "`");
}

static char *make_key(const char *cat, const char *db, const char *obj)
{
    if (!strcasecmp(cat, SQL_DEFAULT_CATALOG) && !strcasecmp(db, SQL_DEFAULT_DATABASE))
        return sl_strdup(obj);
    sql_sbuf b = {0};
    if (strcasecmp(cat, SQL_DEFAULT_CATALOG)) {
        put_part(&b, cat);
        sql_sb_str(&b, ".");
    }
    put_part(&b, db);
    sql_sb_str(&b, ".");
    put_part(&b, obj);
    return sql_sb_take(&b);
}

/* Split a path into at most 3 parts (caller frees each); returns their number,
 * 0 when malformed. */
static int split_path(const char *path, char *parts[3])
{
    int n = 0;
    const char *p = path;
    while (*p) {
        if (n == 3) goto bad;
        sql_sbuf b = {0};
        sql_sb_str(&b, "");
        if (*p == '`') {
            for (p++; *p; p++) {
                if (*p == '`' && p[1] == '`') {
                    sql_sb_put(&b, p, 1);
                    p++;
                } else if (*p == '`') {
                    break;
                } else {
                    sql_sb_put(&b, p, 1);
                }
            }
            if (*p == '`') p++;
        } else {
            const char *e = strchr(p, '.');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            sql_sb_put(&b, p, len);
            p += len;
        }
        parts[n++] = sql_sb_take(&b);
        if (*p == '.') p++;
    }
    return n;
bad:
    for (int i = 0; i < n; i++) free(parts[i]);
    return 0;
}

static const char *find_cat(const sl_sql_session *s, const char *name)
{
    for (int i = 0; i < s->ncats; i++)
        if (!strcasecmp(s->cats[i], name)) return s->cats[i];
    return NULL;
}

static const sql_dbref *find_db(const sl_sql_session *s, const char *cat, const char *db)
{
    for (int i = 0; i < s->ndbs; i++)
        if (!strcasecmp(s->dbs[i].catalog, cat) && !strcasecmp(s->dbs[i].name, db))
            return &s->dbs[i];
    return NULL;
}

int sql_ddl_locate(const sl_sql_session *s, const char *path, int line, int col, int need_db,
                   sql_loc *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *parts[3] = {0};
    int n = split_path(path, parts);
    if (n == 0)
        return sl_seterr(err, errlen, "line %d, column %d: '%s' is not a name (at most "
                         "catalog.database.name)", line, col, path);
    const char *cat = n == 3 ? parts[0] : s->cur_cat;
    const char *db = n == 3 ? parts[1] : n == 2 ? parts[0] : s->cur_db;
    const char *kcat = find_cat(s, cat);
    const sql_dbref *kdb = kcat ? find_db(s, kcat, db) : NULL;
    int rc = SL_OK;
    if (need_db && !kcat)
        rc = sl_seterr(err, errlen, "line %d, column %d: Catalog %s does not exist", line, col, cat);
    else if (need_db && !kdb)
        rc = sl_seterr(err, errlen, "line %d, column %d: Database %s does not exist in Catalog %s",
                       line, col, db, kcat);
    if (rc == SL_OK) {
        out->cat = sl_strdup(kcat ? kcat : cat);
        out->db = sl_strdup(kdb ? kdb->name : db);
        out->obj = sl_strdup(parts[n - 1]);
        out->key = make_key(out->cat, out->db, out->obj);
    }
    for (int i = 0; i < n; i++) free(parts[i]);
    return rc;
}

sql_table *sql_ddl_find(const sl_sql_session *s, const char *path)
{
    sql_loc l;
    if (sql_ddl_locate(s, path, 0, 0, 0, &l, NULL, 0) != SL_OK) return NULL;
    sql_table *t = sql_catalog_find(&s->cat, l.key);
    sql_loc_free(&l);
    return t;
}

int sql_ddl_load(sl_sql_session *s, const char *path, int line, int col, char *err,
                 size_t errlen)
{
    sql_loc l;
    if (sql_ddl_locate(s, path, line, col, 0, &l, NULL, 0) != SL_OK) return SL_OK;
    int rc = sql_jcat_load(s, &l, line, col, err, errlen);
    sql_loc_free(&l);
    return rc;
}

int sql_ddl_refuse_jdbc(const sl_sql_session *s, const char *path, const char *what, int line,
                        int col, char *err, size_t errlen)
{
    sql_loc l;
    if (sql_ddl_locate(s, path, line, col, 0, &l, NULL, 0) != SL_OK) return SL_OK;
    int rc = SL_OK;
    if (sql_jcat_find(s, l.cat))
        rc = sl_seterr(err, errlen, "line %d, column %d: Could not execute %s in path `%s`.`%s`."
                       "`%s`: catalog '%s' is a JDBC catalog, which supports no DDL (as Flink's "
                       "JdbcCatalog: create, alter and drop the table in PostgreSQL itself)",
                       line, col, what, l.cat, l.db, l.obj, l.cat);
    sql_loc_free(&l);
    return rc;
}

static void place(sql_table *t, sql_loc *l)
{
    free(t->name);
    free(t->catalog);
    free(t->database);
    free(t->obj);
    t->name = l->key;
    t->catalog = l->cat;
    t->database = l->db;
    t->obj = l->obj;
    memset(l, 0, sizeof *l);
}

void sql_ddl_init(sl_sql_session *s)
{
    s->cats = sl_calloc(1, sizeof(char *));
    s->cats[s->ncats++] = sl_strdup(SQL_DEFAULT_CATALOG);
    s->dbs = sl_calloc(1, sizeof(sql_dbref));
    s->dbs[0].catalog = sl_strdup(SQL_DEFAULT_CATALOG);
    s->dbs[0].name = sl_strdup(SQL_DEFAULT_DATABASE);
    s->ndbs = 1;
    s->cur_cat = sl_strdup(SQL_DEFAULT_CATALOG);
    s->cur_db = sl_strdup(SQL_DEFAULT_DATABASE);
}

void sql_ddl_destroy(sl_sql_session *s)
{
    sql_jcat_free_all(s);
    for (int i = 0; i < s->ncats; i++) free(s->cats[i]);
    free(s->cats);
    for (int i = 0; i < s->ndbs; i++) {
        free(s->dbs[i].catalog);
        free(s->dbs[i].name);
    }
    free(s->dbs);
    free(s->cur_cat);
    free(s->cur_db);
}

/* ---- the statement's text ---------------------------------------------------- */

char *sql_ddl_text_from(const sl_sql_session *s, const sql_node *n)
{
    if (!s->stmt_text || !n) return NULL;
    int line = s->stmt_line, col = s->stmt_col;
    size_t i = 0;
    while (i < s->stmt_len && (line < n->line || (line == n->line && col < n->col))) {
        if (s->stmt_text[i] == '\n') line++, col = 1;
        else col++;
        i++;
    }
    size_t e = s->stmt_len;
    while (e > i && (s->stmt_text[e - 1] == ';' || s->stmt_text[e - 1] == ' ' ||
                     s->stmt_text[e - 1] == '\n' || s->stmt_text[e - 1] == '\t' ||
                     s->stmt_text[e - 1] == '\r'))
        e--;
    return sl_strndup(s->stmt_text + i, e - i);
}

sql_node *sql_ddl_view_columns(sql_arena *a, sql_node *q, sql_node *cols, const char *name)
{
    sql_node *sel = sql_node_new(a, SQL_SELECT, q->line, q->col);
    sql_node *items = sql_node_new(a, SQL_LIST, q->line, q->col);
    sql_node *item = sql_node_new(a, SQL_ITEM, q->line, q->col);
    sql_node_add(a, item, sql_node_new(a, SQL_STAR, q->line, q->col));
    sql_node_add(a, items, item);
    sql_node *from = sql_node_new(a, SQL_FROM_QUERY, q->line, q->col);
    from->s2 = sql_arena_strndup(a, name, strlen(name));
    sql_node_add(a, from, q);
    sql_node_add(a, from, cols);
    sql_node_add(a, sel, items);
    sql_node_add(a, sel, from);
    for (int i = 0; i < 3; i++) sql_node_add(a, sel, NULL);
    return sel;
}

/* ---- table references and OPTIONS hints ------------------------------------- */

typedef struct hint_use {
    char *key;             /* the table's key */
    const sql_node *opts;  /* its OPTIONS hint (a LIST of OPTIONs) or NULL */
    const sql_node *at;    /* for messages */
} hint_use;

typedef struct refs_ctx {
    sl_sql_session *s;
    sql_arena *a;
    const char **ctes;     /* CTE names of the statement */
    int nctes;
    hint_use *uses;
    int nuses, any_hint;
    char *err;
    size_t errlen;
} refs_ctx;

static void collect_ctes(refs_ctx *c, const sql_node *n)
{
    if (!n) return;
    if (n->kind == SQL_CTE && n->s) {
        c->ctes = sl_realloc(c->ctes, sizeof(char *) * (size_t)(c->nctes + 1));
        c->ctes[c->nctes++] = n->s;
    }
    for (int i = 0; i < n->nkids; i++) collect_ctes(c, n->kids[i]);
}

/* The OPTIONS hint of a list of hints (kid of FROM_TABLE / INSERT), checked. */
static int options_hint(refs_ctx *c, const sql_node *hints, const sql_node **opts)
{
    *opts = NULL;
    for (int i = 0; hints && i < hints->nkids; i++) {
        const sql_node *h = hints->kids[i];
        if (strcmp(h->s, "OPTIONS"))
            return sl_seterr(c->err, c->errlen, "line %d, column %d: unknown table hint '%s' "
                             "(a table takes OPTIONS('key' = 'value', ...))", h->line, h->col, h->s);
        if (*opts)
            return sl_seterr(c->err, c->errlen, "line %d, column %d: OPTIONS is given twice for "
                             "one table", h->line, h->col);
        *opts = h;
    }
    return SL_OK;
}

static int same_options(const sql_node *a, const sql_node *b)
{
    if (!a || !b) return a == b;
    if (a->nkids != b->nkids) return 0;
    for (int i = 0; i < a->nkids; i++)
        if (strcmp(a->kids[i]->s, b->kids[i]->s) || strcmp(a->kids[i]->s2, b->kids[i]->s2))
            return 0;
    return 1;
}

static int note_use(refs_ctx *c, const char *key, const sql_node *hints, const sql_node *at)
{
    const sql_node *opts;
    if (options_hint(c, hints, &opts) != SL_OK) return SL_ERR;
    if (opts) c->any_hint = 1;
    for (int i = 0; i < c->nuses; i++) {
        if (strcasecmp(c->uses[i].key, key)) continue;
        if (!same_options(c->uses[i].opts, opts))
            return sl_seterr(c->err, c->errlen, "line %d, column %d: table '%s' is used with "
                             "different OPTIONS hints in one statement (not supported: read it "
                             "through one hint, or through a view)", at->line, at->col, key);
        return SL_OK;
    }
    c->uses = sl_realloc(c->uses, sizeof(hint_use) * (size_t)(c->nuses + 1));
    c->uses[c->nuses++] = (hint_use){sl_strdup(key), opts, at};
    return SL_OK;
}

/* Rewrite a reference's name to its key (once). A reference in another database
 * keeps its own name as its alias. */
static int resolve(refs_ctx *c, sql_node *n, int is_from)
{
    if (n->flags & SQL_F_RESOLVED) return SL_OK;
    n->flags |= SQL_F_RESOLVED;
    if (is_from && !strchr(n->s, '.') && !strchr(n->s, '`'))
        for (int i = 0; i < c->nctes; i++)
            if (!strcasecmp(c->ctes[i], n->s)) return SL_OK;
    sql_loc l;
    if (sql_ddl_locate(c->s, n->s, n->line, n->col, 0, &l, NULL, 0) != SL_OK) return SL_OK;
    /* a table of a JDBC catalog: its definition from the server */
    if (sql_jcat_load(c->s, &l, n->line, n->col, c->err, c->errlen) != SL_OK) {
        sql_loc_free(&l);
        return SL_ERR;
    }
    if (is_from && !n->s2 && strcmp(l.key, l.obj)) /* db.t reads as t */
        n->s2 = sql_arena_strndup(c->a, l.obj, strlen(l.obj));
    if (strcmp(l.key, n->s)) n->s = sql_arena_strndup(c->a, l.key, strlen(l.key));
    sql_loc_free(&l);
    return SL_OK;
}

static int walk_refs(refs_ctx *c, sql_node *n, int depth)
{
    if (!n) return SL_OK;
    if (depth > 200) return SL_OK;
    if (n->kind == SQL_FROM_TABLE && n->s) {
        if (resolve(c, n, 1) != SL_OK) return SL_ERR;
        if (note_use(c, n->s, sql_kid(n, 3), n) != SL_OK) return SL_ERR;
        const sql_table *t = sql_catalog_find(&c->s->cat, n->s);
        /* a view's body: its hints count too (its names are resolved already) */
        if (t && t->is_view && t->query && depth < 64 &&
            walk_refs(c, t->query, depth + 8) != SL_OK)
            return SL_ERR;
    } else if (n->kind == SQL_INSERT && n->s) {
        if (resolve(c, n, 0) != SL_OK) return SL_ERR;
        if (note_use(c, n->s, sql_kid(n, 2), n) != SL_OK) return SL_ERR;
    }
    for (int i = 0; i < n->nkids; i++)
        if (walk_refs(c, n->kids[i], depth + 1) != SL_OK) return SL_ERR;
    return SL_OK;
}

/* A deep copy of t (computed columns' and views' syntax shared: it lives in the
 * session's arenas). */
static sql_table *table_clone(const sql_table *t)
{
    sql_table *c = sl_calloc(1, sizeof *c);
    *c = *t;
    c->name = sl_strdup(t->name);
    c->catalog = t->catalog ? sl_strdup(t->catalog) : NULL;
    c->database = t->database ? sl_strdup(t->database) : NULL;
    c->obj = t->obj ? sl_strdup(t->obj) : NULL;
    c->cols = sl_calloc((size_t)t->ncols + 1, sizeof *c->cols);
    for (int i = 0; i < t->ncols; i++) {
        c->cols[i] = t->cols[i];
        c->cols[i].name = sl_strdup(t->cols[i].name);
        c->cols[i].type_text = t->cols[i].type_text ? sl_strdup(t->cols[i].type_text) : NULL;
        c->cols[i].meta = t->cols[i].meta ? sl_strdup(t->cols[i].meta) : NULL;
    }
    c->wm_col = t->wm_col ? sl_strdup(t->wm_col) : NULL;
    c->wm_text = t->wm_text ? sl_strdup(t->wm_text) : NULL;
    c->pk = sl_calloc((size_t)t->npk + 1, sizeof(char *));
    for (int i = 0; i < t->npk; i++) c->pk[i] = sl_strdup(t->pk[i]);
    c->part = sl_calloc((size_t)t->npart + 1, sizeof(char *));
    for (int i = 0; i < t->npart; i++) c->part[i] = sl_strdup(t->part[i]);
    c->keys = sl_calloc((size_t)t->nopts + 1, sizeof(char *));
    c->vals = sl_calloc((size_t)t->nopts + 1, sizeof(char *));
    for (int i = 0; i < t->nopts; i++) {
        c->keys[i] = sl_strdup(t->keys[i]);
        c->vals[i] = sl_strdup(t->vals[i]);
    }
    c->connector = NULL;
    for (int i = 0; i < t->nopts; i++)
        if (!strcmp(c->keys[i], "connector")) c->connector = c->vals[i];
    c->query_text = t->query_text ? sl_strdup(t->query_text) : NULL;
    c->pk_name = t->pk_name ? sl_strdup(t->pk_name) : NULL;
    c->comment = t->comment ? sl_strdup(t->comment) : NULL;
    return c;
}

/* t's copy with the hint's options over its own, checked as CREATE TABLE checks
 * them (positions: the hint's options, else the hint). */
static sql_table *hinted_table(refs_ctx *c, const sql_table *t, const sql_node *opts)
{
    if (t->is_view) {
        sl_seterr(c->err, c->errlen, "line %d, column %d: OPTIONS hints apply to tables; '%s' "
                  "is a view", opts->line, opts->col, t->name);
        return NULL;
    }
    sql_table *h = table_clone(t);
    sql_node *with = sql_node_new(c->a, SQL_LIST, opts->line, opts->col);
    for (int i = 0; i < h->nopts; i++)
        sql_node_add(c->a, with, sql_node_new(c->a, SQL_OPTION, opts->line, opts->col));
    for (int k = 0; k < opts->nkids; k++) {
        const sql_node *o = opts->kids[k];
        int j = 0;
        while (j < h->nopts && strcmp(h->keys[j], o->s)) j++;
        if (j == h->nopts) {
            h->keys = sl_realloc(h->keys, sizeof(char *) * (size_t)(h->nopts + 1));
            h->vals = sl_realloc(h->vals, sizeof(char *) * (size_t)(h->nopts + 1));
            h->keys[h->nopts] = sl_strdup(o->s);
            h->vals[h->nopts++] = NULL;
            sql_node_add(c->a, with, NULL);
        } else {
            free(h->vals[j]);
        }
        h->vals[j] = sl_strdup(o->s2);
        with->kids[j] = (sql_node *)o;
    }
    if (sql_cat_check_options(h, with, c->err, c->errlen) != SL_OK) {
        sql_cat_table_free(h);
        return NULL;
    }
    return h;
}

int sql_ddl_refs(sl_sql_session *s, sql_arena *a, sql_node *st, sql_catalog *view, char *err,
                 size_t errlen)
{
    refs_ctx c = {.s = s, .a = a, .err = err, .errlen = errlen};
    collect_ctes(&c, st);
    int rc = walk_refs(&c, st, 0);
    if (rc == SL_OK && view && c.any_hint) {
        view->t = sl_calloc((size_t)s->cat.n + 1, sizeof(sql_table *));
        view->n = s->cat.n;
        memcpy(view->t, s->cat.t, sizeof(sql_table *) * (size_t)s->cat.n);
        for (int i = 0; rc == SL_OK && i < c.nuses; i++) {
            if (!c.uses[i].opts) continue;
            for (int j = 0; j < view->n; j++) {
                if (strcasecmp(view->t[j]->name, c.uses[i].key)) continue;
                sql_table *h = hinted_table(&c, view->t[j], c.uses[i].opts);
                if (!h) rc = SL_ERR;
                else view->t[j] = h;
                break;
            }
        }
        if (rc != SL_OK) sql_ddl_view_free(view, &s->cat);
    } else if (rc == SL_OK && !view) {
        /* CREATE VIEW: hints are checked where the view is read */
    }
    for (int i = 0; i < c.nuses; i++) free(c.uses[i].key);
    free(c.uses);
    free(c.ctes);
    return rc;
}

void sql_ddl_view_free(sql_catalog *view, const sql_catalog *base)
{
    for (int i = 0; view->t && i < view->n; i++)
        if (i >= base->n || view->t[i] != base->t[i]) sql_cat_table_free(view->t[i]);
    free(view->t);
    view->t = NULL;
    view->n = 0;
}

/* ---- a table written back as CREATE TABLE elements ----------------------------- */

static sql_node *mk(sql_arena *a, sql_kind k, const sql_node *at, const char *s1, const char *s2)
{
    sql_node *n = sql_node_new(a, k, at ? at->line : 0, at ? at->col : 0);
    if (s1) n->s = sql_arena_strndup(a, s1, strlen(s1));
    if (s2) n->s2 = sql_arena_strndup(a, s2, strlen(s2));
    return n;
}

static int in_list(char *const *l, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(l[i], name)) return 1;
    return 0;
}

/* The parts of a definition, each a node as the grammar makes it (`at` their position). */
typedef struct tdef {
    sql_node *cols;  /* LIST of COLUMN / COMPUTED */
    sql_node *wm;    /* WATERMARK or NULL */
    sql_node *pk;    /* PKEY or NULL */
    sql_node *with;  /* LIST of OPTIONs */
    sql_node *part;  /* LIST of IDENTs or NULL */
} tdef;

static sql_node *column_node(sql_arena *a, const sql_column *c, const sql_node *at)
{
    if (c->expr) {
        sql_node *n = mk(a, SQL_COMPUTED, at, c->name, NULL);
        sql_node_add(a, n, c->expr);
        return n;
    }
    sql_node *n = mk(a, SQL_COLUMN, at, c->name, c->type_text ? c->type_text : sl_type_name(c->type));
    if (c->notnull) n->flags |= SQL_F_NOTNULL;
    if (c->meta) {
        n->flags |= SQL_F_METADATA | (c->virt ? SQL_F_VIRTUAL : 0);
        sql_node_add(a, n, strcmp(c->meta, c->name) ? mk(a, SQL_IDENT, at, c->meta, NULL) : NULL);
    }
    return n;
}

static void table_def(sql_arena *a, const sql_table *t, const sql_node *at, tdef *d)
{
    d->cols = mk(a, SQL_LIST, at, NULL, NULL);
    for (int i = 0; i < t->ncols; i++) sql_node_add(a, d->cols, column_node(a, &t->cols[i], at));
    d->wm = NULL;
    if (t->wm_col && t->wm_expr) {
        d->wm = mk(a, SQL_WATERMARK, at, t->wm_col, NULL);
        sql_node_add(a, d->wm, t->wm_expr);
    }
    d->pk = NULL;
    if (t->npk) {
        d->pk = mk(a, SQL_PKEY, at, t->pk_name, NULL);
        for (int i = 0; i < t->npk; i++) sql_node_add(a, d->pk, mk(a, SQL_IDENT, at, t->pk[i], NULL));
    }
    d->with = mk(a, SQL_LIST, at, NULL, NULL);
    for (int i = 0; i < t->nopts; i++)
        sql_node_add(a, d->with, mk(a, SQL_OPTION, at, t->keys[i], t->vals[i]));
    d->part = NULL;
    if (t->npart) {
        d->part = mk(a, SQL_LIST, at, NULL, NULL);
        for (int i = 0; i < t->npart; i++) sql_node_add(a, d->part, mk(a, SQL_IDENT, at, t->part[i], NULL));
    }
}

/* A written CREATE TABLE's elements split into a tdef (inline keys become PKEYs). */
static void written_def(sql_arena *a, const sql_node *st, tdef *d)
{
    memset(d, 0, sizeof *d);
    d->cols = mk(a, SQL_LIST, st, NULL, NULL);
    const sql_node *elems = sql_kid(st, 0);
    for (int i = 0; elems && i < elems->nkids; i++) {
        sql_node *e = elems->kids[i];
        if (e->kind == SQL_WATERMARK) d->wm = e;
        else if (e->kind == SQL_PKEY) d->pk = e;
        else sql_node_add(a, d->cols, e);
    }
    d->with = sql_kid(st, 1) ? sql_kid(st, 1) : mk(a, SQL_LIST, st, NULL, NULL);
    d->part = sql_kid(st, 4);
}

/* A CREATE TABLE node of the definition (what sql_cat_build_table reads). */
static sql_node *def_node(sql_arena *a, const sql_node *at, const tdef *d, int flags,
                          const char *comment)
{
    sql_node *st = mk(a, SQL_CREATE_TABLE, at, NULL, comment);
    st->flags = flags;
    sql_node *elems = mk(a, SQL_LIST, at, NULL, NULL);
    for (int i = 0; i < d->cols->nkids; i++) sql_node_add(a, elems, d->cols->kids[i]);
    if (d->wm) sql_node_add(a, elems, d->wm);
    if (d->pk) sql_node_add(a, elems, d->pk);
    sql_node_add(a, st, elems);
    sql_node_add(a, st, d->with);
    sql_node_add(a, st, NULL);
    sql_node_add(a, st, NULL);
    sql_node_add(a, st, d->part);
    return st;
}

static int col_index(const sql_node *cols, const char *name)
{
    for (int i = 0; i < cols->nkids; i++)
        if (!strcasecmp(cols->kids[i]->s, name)) return i;
    return -1;
}

/* ---- CREATE TABLE ... LIKE ---------------------------------------------------- */

enum { F_CONSTRAINTS, F_PARTITIONS, F_GENERATED, F_OPTIONS, F_WATERMARKS, F_METADATA, F_N };
enum { M_INCLUDING, M_EXCLUDING, M_OVERWRITING };
static const char *const feature_names[F_N] = {"CONSTRAINTS", "PARTITIONS", "GENERATED",
                                                "OPTIONS", "WATERMARKS", "METADATA"};

/* The like options: defaults INCLUDING ALL, OVERWRITING OPTIONS; an ALL option first,
 * then the others in order. */
static int like_strategies(const sql_node *like, int m[F_N], char *err, size_t errlen)
{
    for (int f = 0; f < F_N; f++) m[f] = M_INCLUDING;
    m[F_OPTIONS] = M_OVERWRITING;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < like->nkids; i++) {
            const sql_node *o = like->kids[i];
            char how[32] = "", what[64] = "";
            sscanf(o->s, "%31s %63s", how, what);
            int mm = !strcmp(how, "INCLUDING") ? M_INCLUDING : !strcmp(how, "EXCLUDING") ? M_EXCLUDING
                     : !strcmp(how, "OVERWRITING") ? M_OVERWRITING : -1;
            int f = -1;
            for (int k = 0; k < F_N; k++)
                if (!strcmp(what, feature_names[k])) f = k;
            int all = !strcmp(what, "ALL");
            if (mm < 0 || (f < 0 && !all))
                return sl_seterr(err, errlen, "line %d, column %d: unknown LIKE option '%s' "
                                 "(INCLUDING | EXCLUDING  ALL | CONSTRAINTS | PARTITIONS, or "
                                 "INCLUDING | EXCLUDING | OVERWRITING  GENERATED | OPTIONS | "
                                 "WATERMARKS | METADATA)", o->line, o->col, o->s);
            if (mm == M_OVERWRITING && (all || f == F_CONSTRAINTS || f == F_PARTITIONS))
                return sl_seterr(err, errlen, "line %d, column %d: Illegal merging strategy "
                                 "'OVERWRITING' for '%s' option.", o->line, o->col, what);
            if (pass == 0 && all)
                for (int k = 0; k < F_N; k++) m[k] = mm;
            if (pass == 1 && !all) m[f] = mm;
        }
    return SL_OK;
}

static int merge_like(sql_arena *a, const sql_node *st, const sql_table *src, tdef *out, char *err,
                      size_t errlen)
{
    const sql_node *like = sql_kid(st, 2);
    int m[F_N];
    if (like_strategies(like, m, err, errlen) != SL_OK) return SL_ERR;
    tdef base, mine;
    table_def(a, src, like, &base);
    written_def(a, st, &mine);
    memset(out, 0, sizeof *out);
    out->cols = mk(a, SQL_LIST, like, NULL, NULL);
    /* the base table's columns first: physical always, computed and metadata by strategy */
    for (int i = 0; i < base.cols->nkids; i++) {
        sql_node *c = base.cols->kids[i];
        int gen = c->kind == SQL_COMPUTED, meta = c->kind == SQL_COLUMN && (c->flags & SQL_F_METADATA);
        if ((gen && m[F_GENERATED] == M_EXCLUDING) || (meta && m[F_METADATA] == M_EXCLUDING)) continue;
        sql_node_add(a, out->cols, c);
    }
    for (int i = 0; i < mine.cols->nkids; i++) {
        sql_node *c = mine.cols->kids[i];
        int j = col_index(out->cols, c->s);
        if (j < 0) {
            sql_node_add(a, out->cols, c);
            continue;
        }
        const sql_node *b = out->cols->kids[j];
        int gen = b->kind == SQL_COMPUTED, meta = b->kind == SQL_COLUMN && (b->flags & SQL_F_METADATA);
        if (!gen && !meta)
            return sl_seterr(err, errlen, "line %d, column %d: A column named '%s' already exists "
                             "in the base table.", c->line, c->col, c->s);
        int mm = gen ? m[F_GENERATED] : m[F_METADATA];
        if (mm != M_OVERWRITING)
            return sl_seterr(err, errlen, "line %d, column %d: A %s column named '%s' already "
                             "exists in the base table. You might want to specify EXCLUDING %s or "
                             "OVERWRITING %s.", c->line, c->col, gen ? "generated" : "metadata",
                             c->s, gen ? "GENERATED" : "METADATA", gen ? "GENERATED" : "METADATA");
        out->cols->kids[j] = c;
    }
    /* watermark */
    out->wm = m[F_WATERMARKS] == M_EXCLUDING ? NULL : base.wm;
    if (mine.wm) {
        if (out->wm && m[F_WATERMARKS] == M_INCLUDING)
            return sl_seterr(err, errlen, "line %d, column %d: There already exists a watermark "
                             "spec for column '%s' in the base table. You might want to specify "
                             "EXCLUDING WATERMARKS or OVERWRITING WATERMARKS.", mine.wm->line,
                             mine.wm->col, out->wm->s);
        out->wm = mine.wm;
    }
    /* primary key */
    out->pk = m[F_CONSTRAINTS] == M_EXCLUDING ? NULL : base.pk;
    sql_node *mine_pk = mine.pk;
    for (int i = 0; !mine_pk && i < mine.cols->nkids; i++)
        if (sql_kid(mine.cols->kids[i], 1)) mine_pk = sql_kid(mine.cols->kids[i], 1);
    if (mine_pk && out->pk)
        return sl_seterr(err, errlen, "line %d, column %d: The base table already has a primary "
                         "key. You might want to specify EXCLUDING CONSTRAINTS.", mine_pk->line,
                         mine_pk->col);
    if (mine.pk) out->pk = mine.pk;
    /* partitions: the base table's unless the new one has its own (then EXCLUDING
     * PARTITIONS is needed when the base has some too) -- whatever the strategy, as Flink */
    out->part = base.part;
    if (mine.part && base.part && m[F_PARTITIONS] != M_EXCLUDING)
        return sl_seterr(err, errlen, "line %d, column %d: The base table already has partitions "
                         "defined. You might want to specify EXCLUDING PARTITIONS.",
                         mine.part->line, mine.part->col);
    if (mine.part) out->part = mine.part;
    /* options */
    out->with = mk(a, SQL_LIST, sql_kid(st, 1) ? sql_kid(st, 1) : like, NULL, NULL);
    if (m[F_OPTIONS] != M_EXCLUDING)
        for (int i = 0; i < base.with->nkids; i++) sql_node_add(a, out->with, base.with->kids[i]);
    for (int i = 0; i < mine.with->nkids; i++) {
        sql_node *o = mine.with->kids[i];
        int j = -1;
        for (int k = 0; k < out->with->nkids; k++)
            if (!strcmp(out->with->kids[k]->s, o->s)) j = k;
        if (j < 0) {
            sql_node_add(a, out->with, o);
        } else if (m[F_OPTIONS] == M_OVERWRITING) {
            out->with->kids[j] = o;
        } else {
            return sl_seterr(err, errlen, "line %d, column %d: There already exists an option "
                             "['%s' -> '%s'] in the base table. You might want to specify "
                             "EXCLUDING OPTIONS or OVERWRITING OPTIONS.", o->line, o->col,
                             out->with->kids[j]->s, out->with->kids[j]->s2);
        }
    }
    return SL_OK;
}

/* ---- CREATE TABLE (plain, LIKE, AS SELECT) ----------------------------------------- */

static void remove_table(sl_sql_session *s, const sql_table *t)
{
    for (int i = 0; i < s->cat.n; i++)
        if (s->cat.t[i] == t) {
            sql_cat_table_free(s->cat.t[i]);
            memmove(&s->cat.t[i], &s->cat.t[i + 1], sizeof(sql_table *) * (size_t)(s->cat.n - i - 1));
            s->cat.n--;
            return;
        }
}

/* CTAS: the query's columns become the table's physical columns, before the written
 * elements (a WATERMARK, a PRIMARY KEY, more columns). */
static int ctas_def(sl_sql_session *s, sql_arena *a, const sql_node *st, tdef *d, char *err,
                    size_t errlen)
{
    sql_node *q = sql_kid(st, 3);
    sl_schema sch;
    if (sql_ddl_refs(s, a, q, NULL, err, errlen) != SL_OK ||
        sql_plan_schema(&s->cat, q, &sch, err, errlen) != SL_OK)
        return SL_ERR;
    tdef mine;
    written_def(a, st, &mine);
    *d = mine;
    d->cols = mk(a, SQL_LIST, q, NULL, NULL);
    for (int i = 0; i < sch.n; i++) { /* each column of the query's full type, as Flink's CTAS */
        const sl_dtype *dt = sch.fields[i].dt;
        sql_node *c = mk(a, SQL_COLUMN, q, sch.fields[i].name,
                         dt ? sl_dtype_nullable(dt, false)->text : sl_type_name(sch.fields[i].type));
        if (dt && dt->notnull) c->flags |= SQL_F_NOTNULL;
        sql_node_add(a, d->cols, c);
    }
    sl_schema_free(&sch);
    for (int i = 0; i < mine.cols->nkids; i++) {
        sql_node *c = mine.cols->kids[i];
        if (col_index(d->cols, c->s) >= 0)
            return sl_seterr(err, errlen, "line %d, column %d: column '%s' is also a column of "
                             "the query (CREATE TABLE ... AS SELECT takes the query's columns)",
                             c->line, c->col, c->s);
        sql_node_add(a, d->cols, c);
    }
    return SL_OK;
}

int sql_ddl_create_table(sl_sql_session *s, sql_arena *a, const sql_node *st, sl_sql_result *r,
                         char *err, size_t errlen)
{
    sql_loc loc;
    if (sql_ddl_refuse_jdbc(s, st->s, "CreateTable", st->line, st->col, err, errlen) != SL_OK)
        return SL_ERR;
    if (sql_ddl_locate(s, st->s, st->line, st->col, 1, &loc, err, errlen) != SL_OK) return SL_ERR;
    int rc = SL_OK;
    r->kind = SL_SQL_OK;
    if (sql_catalog_find(&s->cat, loc.key)) {
        if (!(st->flags & SQL_F_IFNE))
            rc = sl_seterr(err, errlen, "line %d, column %d: Table (or view) %s.%s already exists "
                           "in Catalog %s (the catalog is per session: CREATE a table once, then "
                           "run only the INSERT again)", st->line, st->col, loc.db, loc.obj,
                           loc.cat);
        sql_loc_free(&loc);
        return rc;
    }
    const sql_node *like = sql_kid(st, 2), *as = sql_kid(st, 3), *def = st;
    tdef d;
    if (like) {
        const sql_table *src = sql_ddl_find(s, like->s);
        if (!src || src->is_view)
            rc = sl_seterr(err, errlen, "line %d, column %d: Source table '%s' of the LIKE clause "
                           "%s", like->line, like->col, like->s,
                           src ? "is a view, not a table" : "can not be found");
        if (rc == SL_OK) rc = merge_like(a, st, src, &d, err, errlen);
        if (rc == SL_OK) def = def_node(a, st, &d, st->flags, st->s2);
    } else if (as) {
        if (st->flags & SQL_F_TEMP)
            rc = sl_seterr(err, errlen, "line %d, column %d: CREATE TEMPORARY TABLE ... AS SELECT "
                           "is not supported (Flink refuses it too)", st->line, st->col);
        if (rc == SL_OK) rc = ctas_def(s, a, st, &d, err, errlen);
        if (rc == SL_OK) def = def_node(a, st, &d, st->flags, st->s2);
    } else if (!sql_kid(st, 0)) {
        rc = sl_seterr(err, errlen, "line %d, column %d: table '%s' needs its columns (or LIKE "
                       "another table, or AS a query)", st->line, st->col, st->s);
    }
    sql_table *t = rc == SL_OK ? sql_cat_build_table(s, def, loc.key, err, errlen) : NULL;
    if (!t) {
        sql_loc_free(&loc);
        return SL_ERR;
    }
    place(t, &loc);
    sql_cat_add(s, t);
    if (!as) return SL_OK;
    /* CTAS: the INSERT INTO the new table, as one job */
    sql_node *ins = mk(a, SQL_INSERT, st, t->name, NULL);
    ins->flags |= SQL_F_RESOLVED;
    sql_node_add(a, ins, sql_kid(st, 3));
    sql_catalog view = {0}, base;
    rc = sql_ddl_refs(s, a, ins, &view, err, errlen);
    base = s->cat;
    if (rc == SL_OK && view.t) s->cat = view;
    if (rc == SL_OK) rc = sql_cat_plan_job(s, ins, r, err, errlen);
    if (view.t) {
        s->cat = base;
        sql_ddl_view_free(&view, &base);
    }
    if (rc != SL_OK) remove_table(s, t); /* no table without its job */
    return rc;
}

/* ---- ALTER TABLE / ALTER VIEW -------------------------------------------------------- */

static void put_q(sql_sbuf *b, const char *id);

static int alter_add(sql_arena *a, const sql_node *st, tdef *d, int modify, char *err,
                     size_t errlen)
{
    const sql_node *list = sql_kid(st, 0);
    for (int i = 0; i < list->nkids; i++) {
        const sql_node *w = list->kids[i];
        sql_node *e = sql_kid(w, 0);
        if (e->kind == SQL_WATERMARK) {
            if (!modify && d->wm) {
                char *x = sql_unparse(sql_kid(d->wm, 0));
                sl_seterr(err, errlen, "line %d, column %d: The current table has already defined "
                          "the watermark strategy `%s` AS %s. You might want to drop it before "
                          "adding a new one.", e->line, e->col, d->wm->s, x);
                free(x);
                return SL_ERR;
            }
            if (modify && !d->wm)
                return sl_seterr(err, errlen, "line %d, column %d: The current table does not "
                                 "define any watermark strategy.", e->line, e->col);
            d->wm = e;
            continue;
        }
        if (e->kind == SQL_PKEY || (e->kind == SQL_COLUMN && sql_kid(e, 1))) {
            sql_node *k = e->kind == SQL_PKEY ? e : sql_kid(e, 1);
            if (!modify && d->pk)
                return sl_seterr(err, errlen, "line %d, column %d: The current table has already "
                                 "defined the primary key constraint. You might want to drop it "
                                 "before adding a new one.", k->line, k->col);
            if (modify && !d->pk)
                return sl_seterr(err, errlen, "line %d, column %d: The current table does not "
                                 "define any primary key constraint. You might want to add a new "
                                 "one.", k->line, k->col);
            if (e->kind == SQL_PKEY) { /* ENFORCED: refused by the build, with Flink's message */
                d->pk = e;
                continue;
            }
            if (k->flags & SQL_F_ENFORCED) {
                d->pk = k;
            } else {
                d->pk = mk(a, SQL_PKEY, k, k->s, NULL);
                sql_node_add(a, d->pk, mk(a, SQL_IDENT, e, e->s, NULL));
            }
            sql_node *c = mk(a, SQL_COLUMN, e, e->s, e->s2); /* the column, without its key */
            c->flags = e->flags;
            sql_node_add(a, c, sql_kid(e, 0));
            e = c;
        }
        int j = col_index(d->cols, e->s);
        if (!modify && j >= 0)
            return sl_seterr(err, errlen, "line %d, column %d: Column `%s` already exists in the "
                             "table.", e->line, e->col, e->s);
        if (modify && j < 0)
            return sl_seterr(err, errlen, "line %d, column %d: Column `%s` does not exist in the "
                             "table.", e->line, e->col, e->s);
        if (modify) {
            for (int k = j; k + 1 < d->cols->nkids; k++) d->cols->kids[k] = d->cols->kids[k + 1];
            d->cols->nkids--;
        }
        int at = modify && !w->s ? j : d->cols->nkids;
        if (w->s && !strcmp(w->s, "FIRST")) at = 0;
        if (w->s && !strcmp(w->s, "AFTER")) {
            int k = col_index(d->cols, w->s2);
            if (k < 0)
                return sl_seterr(err, errlen, "line %d, column %d: Referenced column `%s` by "
                                 "'AFTER' does not exist in the table.", w->line, w->col, w->s2);
            at = k + 1;
        }
        sql_node_add(a, d->cols, NULL);
        for (int k = d->cols->nkids - 1; k > at; k--) d->cols->kids[k] = d->cols->kids[k - 1];
        d->cols->kids[at] = e;
    }
    return SL_OK;
}

static int uses_col(const sql_node *n, const char *col)
{
    if (!n) return 0;
    if (n->kind == SQL_COL && !strcasecmp(n->s, col)) return 1;
    for (int i = 0; i < n->nkids; i++)
        if (uses_col(n->kids[i], col)) return 1;
    return 0;
}

static int alter_drop(sql_arena *a, const sql_node *st, tdef *d, char *err, size_t errlen)
{
    const sql_node *list = sql_kid(st, 0);
    for (int i = 0; i < list->nkids; i++) {
        const sql_node *c = list->kids[i];
        int j = col_index(d->cols, c->s);
        if (j < 0)
            return sl_seterr(err, errlen, "line %d, column %d: The column `%s` does not exist in "
                             "the base table.", c->line, c->col, c->s);
        for (int k = 0; d->pk && k < d->pk->nkids; k++)
            if (!strcasecmp(d->pk->kids[k]->s, c->s))
                return sl_seterr(err, errlen, "line %d, column %d: The column `%s` is used as the "
                                 "primary key.", c->line, c->col, c->s);
        if (d->wm && (!strcasecmp(d->wm->s, c->s) || uses_col(sql_kid(d->wm, 0), c->s)))
            return sl_seterr(err, errlen, "line %d, column %d: The column `%s` is referenced by "
                             "watermark expression.", c->line, c->col, c->s);
        for (int k = 0; d->part && k < d->part->nkids; k++)
            if (!strcasecmp(d->part->kids[k]->s, c->s))
                return sl_seterr(err, errlen, "line %d, column %d: The column `%s` is used as the "
                                 "partition keys.", c->line, c->col, c->s);
        for (int k = 0; k < d->cols->nkids; k++)
            if (k != j && d->cols->kids[k]->kind == SQL_COMPUTED &&
                uses_col(sql_kid(d->cols->kids[k], 0), c->s))
                return sl_seterr(err, errlen, "line %d, column %d: The column `%s` is referenced "
                                 "by computed column `%s`.", c->line, c->col, c->s,
                                 d->cols->kids[k]->s);
        for (int k = j; k + 1 < d->cols->nkids; k++) d->cols->kids[k] = d->cols->kids[k + 1];
        d->cols->nkids--;
    }
    (void)a;
    return SL_OK;
}

static int alter_rename_column(sql_arena *a, const sql_node *st, tdef *d, char *err, size_t errlen)
{
    const sql_node *from = sql_kid(st, 0), *to = sql_kid(st, 1);
    int j = col_index(d->cols, from->s);
    if (j < 0)
        return sl_seterr(err, errlen, "line %d, column %d: The column `%s` does not exist in the "
                         "base table.", from->line, from->col, from->s);
    if (col_index(d->cols, to->s) >= 0)
        return sl_seterr(err, errlen, "line %d, column %d: The column `%s` already existed in "
                         "table schema.", to->line, to->col, to->s);
    for (int k = 0; k < d->cols->nkids; k++)
        if (d->cols->kids[k]->kind == SQL_COMPUTED && uses_col(sql_kid(d->cols->kids[k], 0), from->s))
            return sl_seterr(err, errlen, "line %d, column %d: The column `%s` is referenced by "
                             "computed column `%s`.", from->line, from->col, from->s,
                             d->cols->kids[k]->s);
    if (d->wm && uses_col(sql_kid(d->wm, 0), from->s) && strcasecmp(d->wm->s, from->s))
        return sl_seterr(err, errlen, "line %d, column %d: The column `%s` is referenced by "
                         "watermark expression.", from->line, from->col, from->s);
    sql_node *old = d->cols->kids[j];
    sql_node *c = mk(a, old->kind, old, to->s, old->s2);
    c->flags = old->flags;
    for (int k = 0; k < old->nkids; k++) sql_node_add(a, c, old->kids[k]);
    d->cols->kids[j] = c;
    if (d->wm && !strcasecmp(d->wm->s, from->s)) {
        /* WATERMARK FOR a AS a - INTERVAL ...: the expression names the column too */
        const sql_node *x = sql_kid(d->wm, 0);
        sql_node *w = mk(a, SQL_WATERMARK, d->wm, to->s, NULL);
        sql_node *nx;
        if (x->kind == SQL_COL) {
            nx = mk(a, SQL_COL, x, to->s, NULL);
        } else {
            nx = mk(a, x->kind, x, x->s, x->s2);
            sql_node_add(a, nx, mk(a, SQL_COL, x->kids[0], to->s, NULL));
            for (int k = 1; k < x->nkids; k++) sql_node_add(a, nx, x->kids[k]);
        }
        sql_node_add(a, w, nx);
        d->wm = w;
    }
    if (d->pk) {
        sql_node *p = mk(a, SQL_PKEY, d->pk, d->pk->s, NULL);
        for (int k = 0; k < d->pk->nkids; k++)
            sql_node_add(a, p, mk(a, SQL_IDENT, d->pk->kids[k],
                                  strcasecmp(d->pk->kids[k]->s, from->s) ? d->pk->kids[k]->s : to->s, NULL));
        d->pk = p;
    }
    if (d->part) {
        sql_node *p = mk(a, SQL_LIST, d->part, NULL, NULL);
        for (int k = 0; k < d->part->nkids; k++)
            sql_node_add(a, p, mk(a, SQL_IDENT, d->part->kids[k],
                                  strcasecmp(d->part->kids[k]->s, from->s) ? d->part->kids[k]->s : to->s, NULL));
        d->part = p;
    }
    return SL_OK;
}

static int alter_options(sql_arena *a, const sql_node *st, tdef *d, int reset, char *err,
                         size_t errlen)
{
    const sql_node *list = sql_kid(st, 0);
    sql_node *w = mk(a, SQL_LIST, st, NULL, NULL);
    for (int i = 0; i < d->with->nkids; i++) sql_node_add(a, w, d->with->kids[i]);
    for (int i = 0; i < list->nkids; i++) {
        const sql_node *o = list->kids[i];
        if (reset && !strcmp(o->s, "connector"))
            return sl_seterr(err, errlen, "line %d, column %d: ALTER TABLE RESET does not support "
                             "changing 'connector'", o->line, o->col);
        int j = -1;
        for (int k = 0; k < w->nkids; k++)
            if (!strcmp(w->kids[k]->s, o->s)) j = k;
        if (reset) {
            if (j < 0) continue;
            for (int k = j; k + 1 < w->nkids; k++) w->kids[k] = w->kids[k + 1];
            w->nkids--;
        } else if (j >= 0) {
            w->kids[j] = (sql_node *)o;
        } else {
            sql_node_add(a, w, (sql_node *)o);
        }
    }
    d->with = w;
    return SL_OK;
}

static int alter_view(sl_sql_session *s, sql_arena *a, const sql_node *st, sql_table *t,
                      sl_sql_result *r, char *err, size_t errlen)
{
    sql_node *q = sql_kid(st, 0);
    sl_schema sch;
    if (sql_ddl_refs(s, a, q, NULL, err, errlen) != SL_OK ||
        sql_plan_schema(&s->cat, q, &sch, err, errlen) != SL_OK)
        return SL_ERR;
    for (int i = 0; i < t->ncols; i++) {
        free(t->cols[i].name);
        free(t->cols[i].type_text);
        free(t->cols[i].meta);
    }
    free(t->cols);
    t->cols = sl_calloc(sch.n ? (size_t)sch.n : 1, sizeof *t->cols);
    for (int i = 0; i < sch.n; i++) {
        t->cols[i].name = sl_strdup(sch.fields[i].name);
        t->cols[i].type = sch.fields[i].type;
    }
    t->ncols = sch.n;
    sl_schema_free(&sch);
    t->query = q;
    free(t->query_text);
    t->query_text = sql_ddl_text_from(s, q);
    r->kind = SL_SQL_OK;
    return SL_OK;
}

static int alter(sl_sql_session *s, sql_arena *a, const sql_node *st, sl_sql_result *r, char *err,
                 size_t errlen)
{
    int view = st->flags & SQL_F_VIEW ? 1 : 0;
    if (sql_ddl_refuse_jdbc(s, st->s, view ? "AlterView" : "AlterTable", st->line, st->col, err,
                            errlen) != SL_OK)
        return SL_ERR;
    sql_table *t = sql_ddl_find(s, st->s);
    r->kind = SL_SQL_OK;
    if (!t) {
        if (st->flags & SQL_F_IFEX) return SL_OK;
        sql_loc l;
        sql_sbuf b = {0};
        if (sql_ddl_locate(s, st->s, st->line, st->col, 0, &l, NULL, 0) == SL_OK) {
            put_q(&b, l.cat);
            sql_sb_str(&b, ".");
            put_q(&b, l.db);
            sql_sb_str(&b, ".");
            put_q(&b, l.obj);
            sql_loc_free(&l);
        }
        sl_seterr(err, errlen, "line %d, column %d: %s %s doesn't exist or is a temporary %s.",
                  st->line, st->col, view ? "View" : "Table", b.p ? b.p : st->s,
                  view ? "view" : "table");
        free(b.p);
        return SL_ERR;
    }
    if (t->is_view != view)
        return sl_seterr(err, errlen, "line %d, column %d: ALTER %s for a %s is not allowed",
                         st->line, st->col, view ? "VIEW" : "TABLE", t->is_view ? "view" : "table");
    if (!strcmp(st->s2, "RENAME")) {
        sql_loc l;
        if (sql_ddl_locate(s, sql_kid(st, 0)->s, sql_kid(st, 0)->line, sql_kid(st, 0)->col, 1, &l,
                           err, errlen) != SL_OK)
            return SL_ERR;
        int rc = SL_OK;
        if (sql_catalog_find(&s->cat, l.key))
            rc = sl_seterr(err, errlen, "line %d, column %d: Table (or view) %s.%s already exists "
                           "in Catalog %s", sql_kid(st, 0)->line, sql_kid(st, 0)->col, l.db, l.obj,
                           l.cat);
        else if (strcasecmp(l.cat, t->catalog ? t->catalog : SQL_DEFAULT_CATALOG))
            rc = sl_seterr(err, errlen, "line %d, column %d: a table is renamed within its catalog "
                           "(%s)", sql_kid(st, 0)->line, sql_kid(st, 0)->col, t->catalog);
        if (rc == SL_OK) place(t, &l);
        sql_loc_free(&l);
        return rc;
    }
    if (view) return alter_view(s, a, st, t, r, err, errlen);
    tdef d;
    table_def(a, t, st, &d);
    int rc = SL_OK;
    if (!strcmp(st->s2, "SET")) rc = alter_options(a, st, &d, 0, err, errlen);
    else if (!strcmp(st->s2, "RESET")) rc = alter_options(a, st, &d, 1, err, errlen);
    else if (!strcmp(st->s2, "ADD")) rc = alter_add(a, st, &d, 0, err, errlen);
    else if (!strcmp(st->s2, "MODIFY")) rc = alter_add(a, st, &d, 1, err, errlen);
    else if (!strcmp(st->s2, "DROP")) rc = alter_drop(a, st, &d, err, errlen);
    else if (!strcmp(st->s2, "RENAME COLUMN")) rc = alter_rename_column(a, st, &d, err, errlen);
    else if (!strcmp(st->s2, "DROP PRIMARY KEY")) {
        if (!d.pk)
            rc = sl_seterr(err, errlen, "line %d, column %d: The base table does not define any "
                           "primary key.", st->line, st->col);
        d.pk = NULL;
    } else if (!strcmp(st->s2, "DROP WATERMARK")) {
        if (!d.wm)
            rc = sl_seterr(err, errlen, "line %d, column %d: The base table does not define any "
                           "watermark strategy.", st->line, st->col);
        d.wm = NULL;
    }
    if (rc != SL_OK) return SL_ERR;
    sql_node *def = def_node(a, st, &d, t->temporary ? SQL_F_TEMP : 0, t->comment);
    sql_table *n = sql_cat_build_table(s, def, t->name, err, errlen);
    if (!n) return SL_ERR;
    n->catalog = t->catalog ? sl_strdup(t->catalog) : NULL;
    n->database = t->database ? sl_strdup(t->database) : NULL;
    n->obj = t->obj ? sl_strdup(t->obj) : NULL;
    for (int i = 0; i < s->cat.n; i++)
        if (s->cat.t[i] == t) s->cat.t[i] = n;
    sql_cat_table_free(t);
    return SL_OK;
}

/* ---- catalogs and databases -------------------------------------------------------- */

static int tables_in(const sl_sql_session *s, const char *cat, const char *db)
{
    int n = 0;
    for (int i = 0; i < s->cat.n; i++) {
        const sql_table *t = s->cat.t[i];
        const char *tc = t->catalog ? t->catalog : SQL_DEFAULT_CATALOG;
        const char *td = t->database ? t->database : SQL_DEFAULT_DATABASE;
        if (!strcasecmp(tc, cat) && (!db || !strcasecmp(td, db))) n++;
    }
    return n;
}

static void drop_tables_in(sl_sql_session *s, const char *cat, const char *db)
{
    for (int i = s->cat.n - 1; i >= 0; i--) {
        const sql_table *t = s->cat.t[i];
        const char *tc = t->catalog ? t->catalog : SQL_DEFAULT_CATALOG;
        const char *td = t->database ? t->database : SQL_DEFAULT_DATABASE;
        if (!strcasecmp(tc, cat) && (!db || !strcasecmp(td, db))) remove_table(s, t);
    }
}

static void add_db(sl_sql_session *s, const char *cat, const char *db)
{
    s->dbs = sl_realloc(s->dbs, sizeof(sql_dbref) * (size_t)(s->ndbs + 1));
    s->dbs[s->ndbs].catalog = sl_strdup(cat);
    s->dbs[s->ndbs++].name = sl_strdup(db);
}

/* [catalog.]database of a statement: *cat (borrowed from the session) and *db (caller frees) */
static int db_path(const sl_sql_session *s, const sql_node *st, const char **cat, char **db,
                   char *err, size_t errlen)
{
    char *parts[3] = {0};
    int n = split_path(st->s2, parts);
    if (n < 1 || n > 2) {
        for (int i = 0; i < n; i++) free(parts[i]);
        return sl_seterr(err, errlen, "line %d, column %d: '%s' is not a database name "
                         "([catalog.]database)", st->line, st->col, st->s2);
    }
    const char *c = n == 2 ? parts[0] : s->cur_cat;
    *cat = find_cat(s, c);
    int rc = SL_OK;
    if (!*cat)
        rc = sl_seterr(err, errlen, "line %d, column %d: A catalog with name [%s] does not exist.",
                       st->line, st->col, c);
    *db = rc == SL_OK ? sl_strdup(parts[n - 1]) : NULL;
    for (int i = 0; i < n; i++) free(parts[i]);
    return rc;
}

static int catalog_stmt(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err,
                        size_t errlen)
{
    r->kind = SL_SQL_OK;
    const char *what = st->s;
    if (!strcmp(what, "USE CATALOG")) {
        const char *c = find_cat(s, st->s2);
        if (!c)
            return sl_seterr(err, errlen, "line %d, column %d: A catalog with name [%s] does not "
                             "exist.", st->line, st->col, st->s2);
        /* the catalog's default database: the first one it has */
        const char *db = NULL;
        for (int i = 0; i < s->ndbs && !db; i++)
            if (!strcasecmp(s->dbs[i].catalog, c)) db = s->dbs[i].name;
        free(s->cur_cat);
        free(s->cur_db);
        s->cur_cat = sl_strdup(c);
        s->cur_db = sl_strdup(db ? db : "");
        return SL_OK;
    }
    if (!strcmp(what, "CREATE CATALOG")) {
        const sql_node *with = sql_kid(st, 0);
        const char *type = NULL;
        for (int i = 0; with && i < with->nkids; i++)
            if (!strcmp(with->kids[i]->s, "type")) type = with->kids[i]->s2;
        if (type && !strcmp(type, "jdbc")) {
            if (find_cat(s, st->s2)) {
                if (st->flags & SQL_F_IFNE) return SL_OK;
                return sl_seterr(err, errlen, "line %d, column %d: Catalog %s already exists.",
                                 st->line, st->col, st->s2);
            }
            if (sql_jcat_create(s, st, err, errlen) != SL_OK) return SL_ERR;
            s->cats = sl_realloc(s->cats, sizeof(char *) * (size_t)(s->ncats + 1));
            s->cats[s->ncats++] = sl_strdup(st->s2);
            add_db(s, st->s2, sql_jcat_default_db(sql_jcat_find(s, st->s2)));
            return SL_OK;
        }
        for (int i = 0; with && i < with->nkids; i++) {
            if (!strcmp(with->kids[i]->s, "type")) continue;
            else if (strcmp(with->kids[i]->s, "default-database"))
                return sl_seterr(err, errlen, "line %d, column %d: catalog '%s': unknown option "
                                 "'%s' (type, default-database)", with->kids[i]->line,
                                 with->kids[i]->col, st->s2, with->kids[i]->s);
        }
        if (!type || strcmp(type, "generic_in_memory"))
            return sl_seterr(err, errlen, "line %d, column %d: catalog '%s': Sluice has the "
                             "in-memory catalog and PostgreSQL's JDBC catalog: WITH ('type' = "
                             "'generic_in_memory') or ('type' = 'jdbc', ...)%s%s%s",
                             st->line, st->col, st->s2, type ? ", not '" : "", type ? type : "",
                             type ? "'" : "");
        if (find_cat(s, st->s2)) {
            if (st->flags & SQL_F_IFNE) return SL_OK;
            return sl_seterr(err, errlen, "line %d, column %d: Catalog %s already exists.",
                             st->line, st->col, st->s2);
        }
        const char *defdb = "default";
        for (int i = 0; with && i < with->nkids; i++)
            if (!strcmp(with->kids[i]->s, "default-database")) defdb = with->kids[i]->s2;
        s->cats = sl_realloc(s->cats, sizeof(char *) * (size_t)(s->ncats + 1));
        s->cats[s->ncats++] = sl_strdup(st->s2);
        add_db(s, st->s2, defdb);
        return SL_OK;
    }
    if (!strcmp(what, "DROP CATALOG")) {
        const char *c = find_cat(s, st->s2);
        if (!c) {
            if (st->flags & SQL_F_IFEX) return SL_OK;
            return sl_seterr(err, errlen, "line %d, column %d: Catalog %s does not exist.",
                             st->line, st->col, st->s2);
        }
        if (!strcasecmp(c, s->cur_cat) || !strcasecmp(c, SQL_DEFAULT_CATALOG))
            return sl_seterr(err, errlen, "line %d, column %d: Cannot drop a catalog which is "
                             "currently in use (or the default catalog).", st->line, st->col);
        char *name = sl_strdup(c);
        sql_jcat_drop(s, name);
        drop_tables_in(s, name, NULL);
        for (int i = s->ndbs - 1; i >= 0; i--)
            if (!strcasecmp(s->dbs[i].catalog, name)) {
                free(s->dbs[i].catalog);
                free(s->dbs[i].name);
                memmove(&s->dbs[i], &s->dbs[i + 1], sizeof(sql_dbref) * (size_t)(s->ndbs - i - 1));
                s->ndbs--;
            }
        for (int i = 0; i < s->ncats; i++)
            if (!strcasecmp(s->cats[i], name)) {
                free(s->cats[i]);
                memmove(&s->cats[i], &s->cats[i + 1], sizeof(char *) * (size_t)(s->ncats - i - 1));
                s->ncats--;
                break;
            }
        free(name);
        return SL_OK;
    }
    const char *cat;
    char *db;
    if (db_path(s, st, &cat, &db, err, errlen) != SL_OK) return SL_ERR;
    const sql_dbref *ref = find_db(s, cat, db);
    int rc = SL_OK;
    const sql_jcat *jc = sql_jcat_find(s, cat);
    if (jc && strcmp(what, "USE")) {
        rc = sl_seterr(err, errlen, "line %d, column %d: Could not execute %s %s: catalog '%s' is "
                       "a JDBC catalog, which supports no DDL (as Flink's JdbcCatalog)", st->line,
                       st->col, what, db, cat);
        free(db);
        return rc;
    }
    if (jc && !ref) { /* a database of the server not named before */
        int has = sql_jcat_has_db(jc, db, err, errlen);
        if (has < 0) {
            free(db);
            return SL_ERR;
        }
        if (has) {
            add_db(s, cat, db);
            ref = find_db(s, cat, db);
        }
    }
    if (!strcmp(what, "USE")) {
        if (!ref) {
            rc = sl_seterr(err, errlen, "line %d, column %d: A database with name [%s] does not "
                           "exist in the catalog: [%s].", st->line, st->col, db, cat);
        } else {
            char *c = sl_strdup(cat), *d = sl_strdup(ref->name);
            free(s->cur_cat);
            free(s->cur_db);
            s->cur_cat = c;
            s->cur_db = d;
        }
    } else if (!strcmp(what, "CREATE DATABASE")) {
        const sql_node *with = sql_kid(st, 0);
        if (with && with->nkids)
            rc = sl_seterr(err, errlen, "line %d, column %d: database '%s': the in-memory catalog "
                           "keeps no database properties", with->line, with->col, db);
        else if (ref && !(st->flags & SQL_F_IFNE))
            rc = sl_seterr(err, errlen, "line %d, column %d: Database %s already exists in Catalog "
                           "%s.", st->line, st->col, db, cat);
        else if (!ref)
            add_db(s, cat, db);
    } else if (!strcmp(what, "DROP DATABASE")) {
        if (!ref) {
            if (!(st->flags & SQL_F_IFEX))
                rc = sl_seterr(err, errlen, "line %d, column %d: Database %s does not exist in "
                               "Catalog %s.", st->line, st->col, db, cat);
        } else if (!strcasecmp(cat, s->cur_cat) && !strcasecmp(ref->name, s->cur_db)) {
            rc = sl_seterr(err, errlen, "line %d, column %d: Cannot drop a database which is "
                           "currently in use.", st->line, st->col);
        } else if (tables_in(s, cat, ref->name) && !(st->flags & SQL_F_CASCADE)) {
            rc = sl_seterr(err, errlen, "line %d, column %d: Database %s in catalog %s is not "
                           "empty (DROP DATABASE ... CASCADE drops its tables and views too).",
                           st->line, st->col, ref->name, cat);
        } else {
            drop_tables_in(s, cat, ref->name);
            int i = (int)(ref - s->dbs);
            free(s->dbs[i].catalog);
            free(s->dbs[i].name);
            memmove(&s->dbs[i], &s->dbs[i + 1], sizeof(sql_dbref) * (size_t)(s->ndbs - i - 1));
            s->ndbs--;
        }
    }
    free(db);
    return rc;
}

int sql_ddl_execute(sl_sql_session *s, sql_arena *a, const sql_node *st, sl_sql_result *r,
                    char *err, size_t errlen)
{
    if (st->kind == SQL_ALTER) return alter(s, a, st, r, err, errlen);
    return catalog_stmt(s, st, r, err, errlen);
}

/* ---- SHOW ------------------------------------------------------------------------------ */

/* SQL LIKE: % any run, _ any one character; case-sensitive as Flink's SHOW ... LIKE. */
static int like_match(const char *p, const char *s)
{
    for (; *p; p++, s++) {
        if (*p == '%') {
            for (;;) {
                if (like_match(p + 1, s)) return 1;
                if (!*s) return 0;
                s++;
            }
        }
        if (!*s || (*p != '_' && *p != *s)) return 0;
    }
    return *s == '\0';
}

static int keep_name(const sql_node *st, const char *name)
{
    const sql_node *l = sql_kid(st, 0);
    if (!l) return 1;
    int m = like_match(l->s, name);
    return l->flags & SQL_F_NOT ? !m : m;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_result(sl_sql_result *r, const char *head, char **names, int n)
{
    qsort(names, (size_t)n, sizeof(char *), cmp_str);
    const char *h[] = {head}, *types[] = {"STRING"};
    sql_table_result(r, 1, h, types, names, n);
}

static void put_q(sql_sbuf *b, const char *id)
{
    sql_sb_str(b, "`");
    for (; *id; id++) {
        if (*id == '`') sql_sb_str(b, "`");
        sql_sb_put(b, id, 1);
    }
    sql_sb_str(b, "`");
}

static void put_str(sql_sbuf *b, const char *v)
{
    sql_sb_str(b, "'");
    for (; *v; v++) {
        if (*v == '\'') sql_sb_str(b, "'");
        sql_sb_put(b, v, 1);
    }
    sql_sb_str(b, "'");
}

static void put_path(sql_sbuf *b, const sql_table *t)
{
    put_q(b, t->catalog ? t->catalog : SQL_DEFAULT_CATALOG);
    sql_sb_str(b, ".");
    put_q(b, t->database ? t->database : SQL_DEFAULT_DATABASE);
    sql_sb_str(b, ".");
    put_q(b, t->obj ? t->obj : t->name);
}

/* SHOW CREATE TABLE: a CREATE TABLE statement that `sluice sql` takes back (a JDBC
 * catalog's table with its password hidden, as Flink hides sensitive values). */
static char *create_text(const sql_table *t, int hide_password)
{
    sql_sbuf b = {0};
    sql_sb_str(&b, t->temporary ? "CREATE TEMPORARY TABLE " : "CREATE TABLE ");
    put_path(&b, t);
    sql_sb_str(&b, " (\n");
    for (int i = 0; i < t->ncols; i++) {
        const sql_column *c = &t->cols[i];
        sql_sb_str(&b, i ? ",\n  " : "  ");
        put_q(&b, c->name);
        if (c->expr) {
            char *x = sql_unparse(c->expr);
            sql_sb_fmt(&b, " AS %s", x);
            free(x);
            continue;
        }
        sql_sb_fmt(&b, " %s", c->type_text ? c->type_text : sl_type_name(c->type));
        if (c->meta) {
            sql_sb_str(&b, " METADATA");
            if (strcmp(c->meta, c->name)) {
                sql_sb_str(&b, " FROM ");
                put_str(&b, c->meta);
            }
            if (c->virt) sql_sb_str(&b, " VIRTUAL");
        } else if (c->notnull || in_list(t->pk, t->npk, c->name)) {
            sql_sb_str(&b, " NOT NULL");
        }
    }
    if (t->wm_col) {
        sql_sb_str(&b, ",\n  WATERMARK FOR ");
        put_q(&b, t->wm_col);
        sql_sb_fmt(&b, " AS %s", t->wm_text);
    }
    if (t->npk) {
        sql_sb_str(&b, ",\n  CONSTRAINT ");
        if (t->pk_name) {
            put_q(&b, t->pk_name);
        } else {
            sql_sbuf n = {0};
            sql_sb_str(&n, "PK");
            for (int i = 0; i < t->npk; i++) sql_sb_fmt(&n, "_%s", t->pk[i]);
            put_q(&b, n.p);
            free(n.p);
        }
        sql_sb_str(&b, " PRIMARY KEY (");
        for (int i = 0; i < t->npk; i++) {
            if (i) sql_sb_str(&b, ", ");
            put_q(&b, t->pk[i]);
        }
        sql_sb_str(&b, ") NOT ENFORCED");
    }
    sql_sb_str(&b, "\n)");
    if (t->comment) {
        sql_sb_str(&b, "\nCOMMENT ");
        put_str(&b, t->comment);
    }
    if (t->npart) {
        sql_sb_str(&b, "\nPARTITIONED BY (");
        for (int i = 0; i < t->npart; i++) {
            if (i) sql_sb_str(&b, ", ");
            put_q(&b, t->part[i]);
        }
        sql_sb_str(&b, ")");
    }
    sql_sb_str(&b, "\nWITH (\n");
    int *ord = sl_calloc((size_t)t->nopts + 1, sizeof(int)); /* in key order, as Flink */
    for (int i = 0; i < t->nopts; i++) {
        int j = i;
        while (j > 0 && strcmp(t->keys[ord[j - 1]], t->keys[i]) > 0) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = i;
    }
    for (int i = 0; i < t->nopts; i++) {
        sql_sb_str(&b, i ? ",\n  " : "  ");
        put_str(&b, t->keys[ord[i]]);
        sql_sb_str(&b, " = ");
        put_str(&b, hide_password && !strcmp(t->keys[ord[i]], "password") ? "******"
                                                                          : t->vals[ord[i]]);
    }
    free(ord);
    sql_sb_str(&b, "\n)\n");
    return sql_sb_take(&b);
}

/* CREATE VIEW `c`.`d`.`v` (`a`, ...) AS <the query as written>: Flink's layout (its
 * query is expanded, Sluice's as written) */
static char *view_text(const sql_table *t)
{
    sql_sbuf b = {0};
    sql_sb_str(&b, t->temporary ? "CREATE TEMPORARY VIEW " : "CREATE VIEW ");
    put_path(&b, t);
    sql_sb_str(&b, " (\n");
    for (int i = 0; i < t->ncols; i++) {
        sql_sb_str(&b, i ? ",\n  " : "  ");
        put_q(&b, t->cols[i].name);
    }
    sql_sb_fmt(&b, "\n)\nAS %s\n", t->query_text ? t->query_text : "");
    return sql_sb_take(&b);
}

static int show_create(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err,
                       size_t errlen)
{
    int view = !strcmp(st->s, "CREATE VIEW");
    if (sql_ddl_load(s, st->s2, st->line, st->col, err, errlen) != SL_OK) return SL_ERR;
    const sql_table *t = sql_ddl_find(s, st->s2);
    if (!t)
        return sl_seterr(err, errlen, "line %d, column %d: Could not execute SHOW CREATE %s. %s "
                         "with identifier `%s` does not exist.", st->line, st->col,
                         view ? "VIEW" : "TABLE", view ? "View" : "Table", st->s2);
    if (t->is_view != view)
        return sl_seterr(err, errlen, "line %d, column %d: %s is a %s; use SHOW CREATE %s",
                         st->line, st->col, st->s2, t->is_view ? "view" : "table",
                         t->is_view ? "VIEW" : "TABLE");
    char *text = view ? view_text(t) : create_text(t, t->catalog && sql_jcat_find(s, t->catalog));
    const char *head[] = {"result"}, *types[] = {"STRING"};
    sql_table_result(r, 1, head, types, &text, 1);
    free(r->text);
    r->text = text; /* printed as it is, as Flink's client does */
    return SL_OK;
}

/* SHOW COLUMNS: DESCRIBE's rows whose names match the pattern. */
static int show_columns(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err,
                        size_t errlen)
{
    if (sql_ddl_load(s, st->s2, st->line, st->col, err, errlen) != SL_OK) return SL_ERR;
    const sql_table *t = sql_ddl_find(s, st->s2);
    if (!t)
        return sl_seterr(err, errlen, "line %d, column %d: table or view '%s' does not exist in "
                         "this session", st->line, st->col, st->s2);
    sql_node d = {.kind = SQL_DESCRIBE, .line = st->line, .col = st->col};
    d.s = t->name;
    sl_sql_result all;
    char dummy[8];
    memset(&all, 0, sizeof all);
    if (sql_cat_describe(s, &d, &all, dummy, sizeof dummy) != SL_OK) return SL_ERR;
    char **cells = sl_calloc((size_t)all.nrows * 6 + 1, sizeof(char *));
    int n = 0;
    for (int i = 0; i < all.nrows; i++) {
        if (!keep_name(st, all.cells[i * 6])) continue;
        memcpy(&cells[n * 6], &all.cells[i * 6], 6 * sizeof(char *));
        n++;
    }
    sql_table_result(r, 6, (const char *const *)all.col_names, (const char *const *)all.col_types,
                     cells, n);
    free(cells);
    sl_sql_result_clear(&all);
    return SL_OK;
}

int sql_ddl_show(sl_sql_session *s, const sql_node *st, sl_sql_result *r, char *err,
                 size_t errlen)
{
    const char *w = st->s;
    if (!strcmp(w, "CREATE TABLE") || !strcmp(w, "CREATE VIEW")) return show_create(s, st, r, err, errlen);
    if (!strcmp(w, "COLUMNS")) return show_columns(s, st, r, err, errlen);
    if (!strcmp(w, "CURRENT CATALOG") || !strcmp(w, "CURRENT DATABASE")) {
        int c = !strcmp(w, "CURRENT CATALOG");
        char *v = c ? s->cur_cat : s->cur_db;
        const char *head[] = {c ? "current catalog name" : "current database name"};
        const char *types[] = {"STRING"};
        sql_table_result(r, 1, head, types, &v, 1);
        return SL_OK;
    }
    if (!strcmp(w, "CATALOGS")) {
        char **names = sl_calloc((size_t)s->ncats + 1, sizeof(char *));
        int n = 0;
        for (int i = 0; i < s->ncats; i++)
            if (keep_name(st, s->cats[i])) names[n++] = s->cats[i];
        names_result(r, "catalog name", names, n);
        free(names);
        return SL_OK;
    }
    const char *cat = s->cur_cat, *db = s->cur_db;
    char *dbfree = NULL;
    if (st->s2) { /* FROM [catalog.]database (SHOW DATABASES FROM catalog) */
        if (!strcmp(w, "DATABASES")) {
            cat = find_cat(s, st->s2);
            if (!cat)
                return sl_seterr(err, errlen, "line %d, column %d: A catalog with name [%s] does "
                                 "not exist.", st->line, st->col, st->s2);
        } else {
            sql_node fake = *st;
            if (db_path(s, &fake, &cat, &dbfree, err, errlen) != SL_OK) return SL_ERR;
            const sql_dbref *ref = find_db(s, cat, dbfree);
            if (!ref && sql_jcat_find(s, cat)) {
                db = dbfree; /* the server says whether it exists */
            } else if (!ref) {
                int rc = sl_seterr(err, errlen, "line %d, column %d: Database %s does not exist in "
                                   "Catalog %s", st->line, st->col, dbfree, cat);
                free(dbfree);
                return rc;
            } else {
                db = ref->name;
            }
        }
    }
    const sql_jcat *jc = sql_jcat_find(s, cat);
    if (jc && (!strcmp(w, "DATABASES") || !strcmp(w, "TABLES") || !strcmp(w, "VIEWS"))) {
        char **all = NULL;
        int nall = 0, rc = SL_OK;
        if (!strcmp(w, "DATABASES")) rc = sql_jcat_databases(jc, &all, &nall, err, errlen);
        else if (!strcmp(w, "TABLES")) rc = sql_jcat_tables(jc, db, &all, &nall, err, errlen);
        if (rc == SL_OK) {
            int k = 0;
            for (int i = 0; i < nall; i++)
                if (keep_name(st, all[i])) all[k++] = all[i];
                else free(all[i]);
            names_result(r, !strcmp(w, "DATABASES") ? "database name"
                            : !strcmp(w, "TABLES")  ? "table name"
                                                    : "view name", all, k);
            for (int i = 0; i < k; i++) free(all[i]);
        } else {
            char m[1024];
            snprintf(m, sizeof m, "%s", err);
            sl_seterr(err, errlen, "line %d, column %d: %s", st->line, st->col, m);
        }
        free(all);
        free(dbfree);
        return rc;
    }
    char **names = sl_calloc((size_t)(s->cat.n + s->ndbs) + 1, sizeof(char *));
    int n = 0;
    if (!strcmp(w, "DATABASES")) {
        for (int i = 0; i < s->ndbs; i++)
            if (!strcasecmp(s->dbs[i].catalog, cat) && keep_name(st, s->dbs[i].name))
                names[n++] = s->dbs[i].name;
        names_result(r, "database name", names, n);
    } else if (!strcmp(w, "TABLES") || !strcmp(w, "VIEWS")) {
        int views = !strcmp(w, "VIEWS");
        for (int i = 0; i < s->cat.n; i++) {
            const sql_table *t = s->cat.t[i];
            const char *tc = t->catalog ? t->catalog : SQL_DEFAULT_CATALOG;
            const char *td = t->database ? t->database : SQL_DEFAULT_DATABASE;
            const char *obj = t->obj ? t->obj : t->name;
            if (strcasecmp(tc, cat) || strcasecmp(td, db)) continue;
            if ((!views || t->is_view) && keep_name(st, obj)) names[n++] = (char *)obj;
        }
        names_result(r, views ? "view name" : "table name", names, n);
    } else {
        free(names);
        free(dbfree);
        return 1;
    }
    free(names);
    free(dbfree);
    return SL_OK;
}
