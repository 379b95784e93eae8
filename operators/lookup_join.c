/*
 * lookup_join.c -- the `lookup_join` operator: each row of one append-only
 * input joined with the rows of a bounded 'filesystem' table that match its
 * key, Flink SQL's processing-time lookup join
 * `s JOIN t FOR SYSTEM_TIME AS OF s.proc_time AS d ON f(s.x) = d.k`.
 *
 * Config:
 *   join-type              inner | left
 *   left-keys, right-keys  the input's key columns and the table's, paired
 *                          (same types; the SQL planner computes an
 *                          expression key in a calc before the join)
 *   left-columns           how many of the input's first columns go out
 *                          (default all: the planner's computed keys are
 *                          appended after the query's columns and dropped)
 *   table                  the table's name, for messages
 *   path, format, json.ignore-parse-errors, csv.ignore-parse-errors
 *                          as the file source reads them (file_source.h)
 *   lookup.join.cache.ttl  Flink's filesystem / Hive lookup option: the
 *                          table is read again this often (default 60 min;
 *                          0 = never)
 *   lookup.max-memory      the table's in-memory size at most (default
 *                          256 mb); a larger table fails the task
 * The vertex's "schema" is the table's columns.
 *
 * Table. open() reads every file of path with the file source's reader and
 * keeps the rows whose key has no NULL in one hash table: the values of all
 * rows in one array (nrows x columns), their strings in one byte buffer, a
 * hash per row, chains of row indexes from power-of-two buckets. Memory is
 * counted as it grows (arrays, strings, index) against lookup.max-memory.
 * Every subtask holds the whole table, so the input needs no exchange.
 * proc_time() reloads it after the TTL: a new table is built and replaces
 * the old one between two rows (a failing reload fails the task).
 *
 * Rows. process() hashes the row's key values, walks the chain and emits
 * one row per match (left columns, then the table's), in file order; with
 * none, a left join emits the row with NULLs and an inner join nothing. A
 * NULL key column matches nothing. No allocation per row: the output
 * values live in one array and borrow the table's strings. The output is
 * append-only with the input's timestamps; the input's watermarks go on as
 * they come (no watermark callback).
 *
 * Checkpoints: no state at all. A restored job reads the table again at
 * open, as Flink's lookup cache starts empty after a restore.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "file_source.h"
#include "kafka_common.h"
#include "join.h"
#include "keygroup.h"
#include "log.h"
#include "splitmix.h"

#define LJ_NONE UINT32_MAX
#define LJ_DEFAULT_TTL_MS (60 * 60 * 1000)
#define LJ_DEFAULT_MAX_MEMORY (256LL << 20)

typedef struct lj_plan {
    char *vid;
    char *table;            /* for messages */
    char *who;              /* "lookup table 'rates'" */
    int left;               /* a left join: unmatched rows go out with NULLs */
    int nkeys;
    int lkeys[SL_MAX_KEY_COLS], rkeys[SL_MAX_KEY_COLS];
    int nleft;              /* input columns that go out */
    int nright;             /* the table's columns */
    sl_schema right;        /* the table's columns */
    sl_file_opts fo;
    int64_t ttl_ms;         /* reload interval, 0 = never */
    int64_t max_bytes;      /* lookup.max-memory */
} lj_plan;

/* The loaded table. Strings of vals point into str once loaded (offsets
 * while loading, as str may move). */
typedef struct lj_table {
    sl_value *vals;         /* cap x nright */
    uint32_t *hash, *next;  /* per row: key hash, next row of its chain */
    uint32_t *heads;        /* nbuckets chain heads */
    uint32_t nrows, cap, mask;
    char *str;              /* string bytes */
    size_t slen, scap;
    uint64_t skipped_null;  /* rows with a NULL key (never match) */
} lj_table;

typedef struct lj_state {
    lj_table t;
    sl_value *out;          /* nleft + nright output values */
} lj_state;

static const sl_op_option lj_options[] = {
    {"join-type", SL_CT_STRING, NULL, NULL,
     "inner, left, right or full."},
    {"left-keys", SL_CT_JSON, NULL, NULL,
     "Equi-join key columns of the left input (a list)."},
    {"right-keys", SL_CT_JSON, NULL, NULL,
     "Equi-join key columns of the right input (a list)."},
    {"left-columns", SL_CT_JSON, NULL, NULL,
     "Columns of the left input kept in the output."},
    {"table", SL_CT_JSON, NULL, NULL,
     "The lookup table: its schema and options."},
    {"path", SL_CT_STRING, NULL, NULL,
     "File or directory."},
    {"format", SL_CT_STRING, NULL, NULL,
     "Row format: csv or json."},
    KF_JSON_OPTIONS,
    {"json.ignore-parse-errors", SL_CT_STRING, NULL, NULL,
     "true: a value not of its type is NULL (the field, element or MAP value; a record that "
     "is no JSON object is skipped and counted) instead of failing, as Flink's."},
    {"csv.ignore-parse-errors", SL_CT_STRING, NULL, NULL,
     "true: skip (and count) a row that does not parse as CSV instead of failing."},
    {"lookup.join.cache.ttl", SL_CT_STRING, NULL, NULL,
     "How long a loaded table is used before it is read again."},
    {"lookup.max-memory", SL_CT_STRING, NULL, NULL,
     "Largest table the join loads into memory."},
    SL_OP_OPTIONS_END,
};

/* ---- plan --------------------------------------------------------------- */

static void lj_plan_free(void *p)
{
    lj_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->table);
    free(pl->who);
    sl_schema_free(&pl->right);
    sl_file_opts_free(&pl->fo);
    free(pl);
}

static int read_keys(const sl_vertex *v, const char *opt, const sl_schema *s, const char *what,
                     int *cols, int *n, char *err, size_t errlen)
{
    json_t *a = sl_vconf_array(v, opt);
    size_t i;
    json_t *it;
    *n = 0;
    if (!a || json_array_size(a) == 0)
        return sl_seterr(err, errlen, "vertex '%s': '%s' must list the %s's key columns", v->id,
                         opt, what);
    json_array_foreach(a, i, it) {
        const char *c = json_string_value(it);
        int col = c ? sl_schema_find(s, c) : -1;
        if (col < 0)
            return sl_seterr(err, errlen, "vertex '%s': %s column '%s' is not in the %s", v->id,
                             opt, c ? c : "?", what);
        if (*n == SL_MAX_KEY_COLS)
            return sl_seterr(err, errlen, "vertex '%s': more than %d %s", v->id, SL_MAX_KEY_COLS,
                             opt);
        cols[(*n)++] = col;
    }
    return SL_OK;
}

static void *lj_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    lj_plan *pl = sl_calloc(1, sizeof *pl);
    sl_schema_init(&pl->right);
    pl->vid = sl_strdup(v->id);
    const char *tn = sl_vconf_str(v, "table", NULL);
    pl->table = sl_strdup(tn ? tn : v->id);
    pl->who = sl_sprintf("lookup join '%s': table '%s'", v->id, pl->table);
    const sl_schema *in = pc->in[0].schema;
    if (pc->nin != 1) {
        sl_seterr(err, errlen, "vertex '%s': a lookup join takes one input (the stream)", v->id);
        goto fail;
    }
    if (v->declared.n == 0) {
        sl_seterr(err, errlen, "vertex '%s': the lookup join needs the table's columns as its "
                  "'schema'", v->id);
        goto fail;
    }
    sl_schema_copy(&pl->right, &v->declared);
    pl->nright = pl->right.n;
    const char *t = sl_vconf_str(v, "join-type", "inner");
    if (!strcasecmp(t, "left")) pl->left = 1;
    else if (strcasecmp(t, "inner")) {
        sl_seterr(err, errlen, "vertex '%s': a lookup join is inner or left, not '%s'", v->id, t);
        goto fail;
    }
    int nl, nr;
    if (read_keys(v, "left-keys", in, "input", pl->lkeys, &nl, err, errlen) != SL_OK ||
        read_keys(v, "right-keys", &pl->right, "table", pl->rkeys, &nr, err, errlen) != SL_OK)
        goto fail;
    if (nl != nr) {
        sl_seterr(err, errlen, "vertex '%s': %d left-keys but %d right-keys; they pair up", v->id,
                  nl, nr);
        goto fail;
    }
    pl->nkeys = nl;
    for (int k = 0; k < nl; k++) {
        sl_type a = in->fields[pl->lkeys[k]].type, b = pl->right.fields[pl->rkeys[k]].type;
        if (a != b) {
            sl_seterr(err, errlen, "vertex '%s': key %d pairs %s %s with %s %s; both key columns "
                      "need the same type (cast one)", v->id, k + 1, in->fields[pl->lkeys[k]].name,
                      sl_type_name(a), pl->right.fields[pl->rkeys[k]].name, sl_type_name(b));
            goto fail;
        }
    }
    int64_t ncols;
    if (sl_vconf_int(v, "left-columns", in->n, &ncols, err, errlen) != SL_OK) goto fail;
    if (ncols < 0 || ncols > in->n) {
        sl_seterr(err, errlen, "vertex '%s': left-columns %lld is not between 0 and the input's %d "
                  "columns", v->id, (long long)ncols, in->n);
        goto fail;
    }
    pl->nleft = (int)ncols;
    if (pl->nleft + pl->nright > SL_MAX_FIELDS) {
        sl_seterr(err, errlen, "vertex '%s': the joined row would have %d columns (at most %d)",
                  v->id, pl->nleft + pl->nright, SL_MAX_FIELDS);
        goto fail;
    }
    if (sl_file_opts_parse(v, &pl->fo, err, errlen) != SL_OK) goto fail;
    if (sl_vconf_interval(v, "lookup.join.cache.ttl", LJ_DEFAULT_TTL_MS, &pl->ttl_ms, err,
                          errlen) != SL_OK)
        goto fail;
    const char *mm = sl_vconf_str(v, "lookup.max-memory", NULL);
    pl->max_bytes = LJ_DEFAULT_MAX_MEMORY;
    if (mm && (sl_parse_memory(mm, &pl->max_bytes) != SL_OK || pl->max_bytes <= 0)) {
        sl_seterr(err, errlen, "vertex '%s': lookup.max-memory '%s' is not a memory size such as "
                  "'256 mb'", v->id, mm);
        goto fail;
    }
    /* the output: the input's first nleft columns, then the table's (join.h's names) */
    sl_schema_init(pc->out);
    for (int i = 0; i < pl->nleft; i++) sl_schema_add_dt(pc->out, in->fields[i].name, in->fields[i].dt);
    for (int i = 0; i < pl->nright; i++) {
        const char *name = pl->right.fields[i].name;
        if (sl_schema_find(pc->out, name) < 0) {
            sl_schema_add_dt(pc->out, name, pl->right.fields[i].dt);
            continue;
        }
        char alt[300];
        for (int k = 0;; k++) {
            snprintf(alt, sizeof alt, "%s%d", name, k);
            if (sl_schema_find(pc->out, alt) < 0) break;
        }
        sl_schema_add_dt(pc->out, alt, pl->right.fields[i].dt);
    }
    return pl;
fail:
    lj_plan_free(pl);
    return NULL;
}

/* ---- the table ------------------------------------------------------------ */

/* Values held as bytes (STRING, BYTES and the nested kinds' canonical bytes). */
static inline int is_str(sl_type t) { return sl_type_is_var(t); }

/* The hash of a row's key values (none NULL); the same for equal values of
 * equal types. */
static uint32_t key_hash(const sl_value *vals, const int *cols, int n, const sl_schema *s,
                         const char *strbase)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < n; k++) {
        const sl_value *v = &vals[cols[k]];
        sl_type t = s->fields[cols[k]].type;
        uint64_t x;
        if (is_str(t)) {
            const char *p = strbase ? strbase + (uintptr_t)v->v.s.p : v->v.s.p;
            x = sl_murmur3_32(p, v->v.s.len, (uint32_t)k);
        } else if (t == SL_T_DOUBLE || t == SL_T_FLOAT) {
            double d = v->v.d == 0.0 ? 0.0 : v->v.d; /* -0.0 equals 0.0 */
            memcpy(&x, &d, sizeof x);
        } else if (t == SL_T_DECIMAL) {
            x = v->v.dec.lo ^ sl_mix64((uint64_t)v->v.dec.hi);
        } else {
            x = (uint64_t)v->v.i;
        }
        h = sl_mix64(h ^ x);
    }
    return (uint32_t)(h ^ (h >> 32));
}

/* The memory of a table with room for cap rows, scap string bytes and nbuckets. */
static size_t table_bytes(int nright, size_t cap, size_t scap, size_t nbuckets)
{
    return cap * ((size_t)nright * sizeof(sl_value) + 2 * sizeof(uint32_t)) + scap +
           nbuckets * sizeof(uint32_t);
}

static void table_free(lj_table *t)
{
    free(t->vals);
    free(t->hash);
    free(t->next);
    free(t->heads);
    free(t->str);
    memset(t, 0, sizeof *t);
}

typedef struct lj_load {
    sl_op *op;
    const lj_plan *pl;
    lj_table *t;
} lj_load;

static int too_big(sl_op *op, const lj_plan *pl, size_t need)
{
    return sl_op_fail(op, "%s: the table needs more than %lld bytes in memory (at least %zu; "
                      "lookup.max-memory is %lld bytes): raise 'lookup.max-memory' or look up a "
                      "smaller table", pl->who, (long long)pl->max_bytes, need,
                      (long long)pl->max_bytes);
}

/* One decoded row of the table: copied in, strings as offsets. */
static int load_row(void *ctx, const sl_row *row)
{
    lj_load *ld = ctx;
    const lj_plan *pl = ld->pl;
    lj_table *t = ld->t;
    for (int k = 0; k < pl->nkeys; k++)
        if (row->vals[pl->rkeys[k]].isnull) {
            t->skipped_null++;
            return SL_OK;
        }
    if (t->nrows == t->cap) {
        if (t->cap >= (LJ_NONE >> 1))
            return sl_op_fail(ld->op, "%s: more than %u rows", pl->who, t->cap);
        uint32_t cap = t->cap ? t->cap * 2 : 1024;
        size_t need = table_bytes(pl->nright, cap, t->scap, 0);
        if (need > (size_t)pl->max_bytes) return too_big(ld->op, pl, need);
        t->vals = sl_realloc(t->vals, (size_t)cap * (size_t)pl->nright * sizeof *t->vals);
        t->hash = sl_realloc(t->hash, (size_t)cap * sizeof *t->hash);
        t->next = sl_realloc(t->next, (size_t)cap * sizeof *t->next);
        t->cap = cap;
    }
    size_t slen = 0;
    for (int c = 0; c < pl->nright; c++)
        if (is_str(pl->right.fields[c].type) && !row->vals[c].isnull) slen += row->vals[c].v.s.len;
    if (t->slen + slen > t->scap) {
        size_t cap = t->scap ? t->scap : 64 * 1024;
        while (cap < t->slen + slen) cap *= 2;
        size_t need = table_bytes(pl->nright, t->cap, cap, 0);
        if (need > (size_t)pl->max_bytes) return too_big(ld->op, pl, need);
        t->str = sl_realloc(t->str, cap);
        t->scap = cap;
    }
    sl_value *dst = &t->vals[(size_t)t->nrows * (size_t)pl->nright];
    for (int c = 0; c < pl->nright; c++) {
        dst[c] = row->vals[c];
        if (is_str(pl->right.fields[c].type) && !dst[c].isnull) {
            if (dst[c].v.s.len) memcpy(t->str + t->slen, row->vals[c].v.s.p, dst[c].v.s.len);
            dst[c].v.s.p = (const char *)(uintptr_t)t->slen;
            t->slen += dst[c].v.s.len;
        }
    }
    t->hash[t->nrows] = key_hash(dst, pl->rkeys, pl->nkeys, &pl->right, t->str);
    t->nrows++;
    return SL_OK;
}

/* Read the table into *t (empty): rows, strings, then the index. */
static int table_load(sl_op *op, const lj_plan *pl, lj_table *t)
{
    lj_load ld = {op, pl, t};
    int64_t t0 = sl_mono_ms();
    t->scap = 64; /* never NULL: empty strings point into it */
    t->str = sl_malloc(t->scap);
    if (sl_file_read_all(op, pl->who, pl->vid, &pl->fo, &pl->right, load_row, &ld) != SL_OK)
        return SL_ERR;
    uint32_t nb = 16;
    while (nb < 2 * (uint64_t)t->nrows && nb < (UINT32_C(1) << 31)) nb *= 2;
    t->mask = nb - 1;
    size_t need = table_bytes(pl->nright, t->cap, t->scap, nb);
    if (need > (size_t)pl->max_bytes) return too_big(op, pl, need);
    t->heads = sl_malloc((size_t)nb * sizeof *t->heads);
    for (uint32_t b = 0; b < nb; b++) t->heads[b] = LJ_NONE;
    /* strings: offsets into pointers now that str stays put */
    for (uint32_t r = 0; r < t->nrows; r++) {
        sl_value *row = &t->vals[(size_t)r * (size_t)pl->nright];
        for (int c = 0; c < pl->nright; c++)
            if (is_str(pl->right.fields[c].type) && !row[c].isnull)
                row[c].v.s.p = t->str + (uintptr_t)row[c].v.s.p;
    }
    /* chains in file order: insert from the last row */
    for (uint32_t r = t->nrows; r-- > 0;) {
        uint32_t b = t->hash[r] & t->mask;
        t->next[r] = t->heads[b];
        t->heads[b] = r;
    }
    sl_info("lookup-join", "%s (%d/%d): %u rows loaded from '%s' in %lld ms (%zu bytes%s)",
            pl->who, op->subtask + 1, op->parallelism, t->nrows, pl->fo.path,
            (long long)(sl_mono_ms() - t0), need,
            t->skipped_null ? ", rows with a NULL key left out" : "");
    return SL_OK;
}

/* ---- lifecycle ------------------------------------------------------------ */

static void lj_close(sl_op *op)
{
    lj_state *st = op->priv;
    if (!st) return;
    table_free(&st->t);
    free(st->out);
    free(st);
    op->priv = NULL;
}

/* The next reload, a TTL after now_ms (wall clock). */
static void schedule_reload(sl_op *op, int64_t now_ms)
{
    const lj_plan *pl = op->plan;
    op->proc_time_at = pl->ttl_ms > 0 ? now_ms + pl->ttl_ms : INT64_MAX;
}

static int lj_open(sl_op *op)
{
    const lj_plan *pl = op->plan;
    lj_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->out = sl_calloc((size_t)(pl->nleft + pl->nright), sizeof *st->out);
    if (table_load(op, pl, &st->t) != SL_OK) return SL_ERR;
    schedule_reload(op, sl_op_processing_time(op));
    return SL_OK;
}

/* lookup.join.cache.ttl passed: the table is read again and replaces the old. */
static int lj_proc_time(sl_op *op, int64_t now_ms)
{
    lj_state *st = op->priv;
    lj_table fresh;
    memset(&fresh, 0, sizeof fresh);
    if (table_load(op, op->plan, &fresh) != SL_OK) {
        table_free(&fresh);
        return SL_ERR;
    }
    table_free(&st->t);
    st->t = fresh;
    schedule_reload(op, now_ms);
    return SL_OK;
}

/* ---- rows ----------------------------------------------------------------- */

static inline int value_eq(const sl_value *a, const sl_value *b, sl_type t)
{
    if (is_str(t))
        return a->v.s.len == b->v.s.len && (!a->v.s.len || !memcmp(a->v.s.p, b->v.s.p, a->v.s.len));
    if (t == SL_T_DOUBLE || t == SL_T_FLOAT) return a->v.d == b->v.d;
    if (t == SL_T_DECIMAL) return a->v.dec.lo == b->v.dec.lo && a->v.dec.hi == b->v.dec.hi;
    return a->v.i == b->v.i;
}

static int lj_process(sl_op *op, int input, sl_row *row)
{
    (void)input;
    const lj_plan *pl = op->plan;
    lj_state *st = op->priv;
    const lj_table *t = &st->t;
    static const sl_value null = {.isnull = true};
    int nullkey = 0;
    for (int k = 0; k < pl->nkeys; k++) nullkey |= row->vals[pl->lkeys[k]].isnull;
    sl_value *out = st->out;
    memcpy(out, row->vals, (size_t)pl->nleft * sizeof *out);
    sl_row o = {.kind = row->kind, .n = pl->nleft + pl->nright, .vals = out, .ts = row->ts};
    int matched = 0;
    if (!nullkey && t->nrows) {
        uint32_t h = key_hash(row->vals, pl->lkeys, pl->nkeys, op->in, NULL);
        for (uint32_t r = t->heads[h & t->mask]; r != LJ_NONE; r = t->next[r]) {
            if (t->hash[r] != h) continue;
            const sl_value *rv = &t->vals[(size_t)r * (size_t)pl->nright];
            int eq = 1;
            for (int k = 0; eq && k < pl->nkeys; k++)
                eq = value_eq(&row->vals[pl->lkeys[k]], &rv[pl->rkeys[k]],
                              pl->right.fields[pl->rkeys[k]].type);
            if (!eq) continue;
            memcpy(out + pl->nleft, rv, (size_t)pl->nright * sizeof *out);
            matched = 1;
            int rc = sl_op_emit(op, &o);
            if (rc != SL_OK) return rc;
        }
    }
    if (matched || !pl->left) return SL_OK;
    for (int c = 0; c < pl->nright; c++) out[pl->nleft + c] = null;
    return sl_op_emit(op, &o);
}

const sl_op_def sl_op_lookup_join = {
    .abi = SL_OP_ABI_VERSION,
    .name = "lookup_join",
    .options = lj_options,
    .plan = lj_plan_new,
    .plan_free = lj_plan_free,
    .open = lj_open,
    .process = lj_process,
    .proc_time = lj_proc_time,
    .close = lj_close,
};
