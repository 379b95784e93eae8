/*
 * file_source.c -- the `file-source` source: rows read from JSON-lines or
 * CSV files, bounded (SQL: a table with 'connector' = 'filesystem').
 *
 *   path                      a file, or a directory whose regular files are
 *                             read (names starting with '.' or '_' are
 *                             skipped, as Flink skips hidden and in-progress
 *                             files; no recursion); "file://" is stripped
 *   format                    json | csv: the encodings the `file` sink
 *                             writes (Flink's json and csv formats), decoded
 *                             by kafka_common.c's codec
 *   json.ignore-parse-errors  true: a bad record is skipped (and counted)
 *   csv.ignore-parse-errors   instead of failing the task
 *   partition-by              "dt;hr": the table is partitioned (Flink's
 *                             partitioned filesystem table): the files are
 *                             under <path>/dt=<v>/hr=<v>/, their records
 *                             leave those columns out and each row gets
 *                             them from its file's directory names (%XX
 *                             escapes undone, __DEFAULT_PARTITION__ NULL)
 *   partition-filter          "dt >= '2026-01-02' AND hr IN (1, 2)": partition
 *                             pruning (Flink's): the planner's conjuncts of
 *                             the WHERE that read only partition columns; a
 *                             partition directory whose values do not make it
 *                             TRUE is skipped when the files are listed, so
 *                             its files are never opened. The rows are still
 *                             filtered downstream; "" (or absent): no pruning
 *
 * Files. The files are listed at open and sorted by name; file k belongs to
 * subtask k % parallelism, so every run deals them the same way. A subtask
 * reads its files one after the other and ends (SL_DONE) after the last;
 * the runtime then sends the maximum watermark. A subtask dealt no file
 * (fewer files than subtasks) marks its output idle in its first run()
 * (sl_op_emit_idle) before it ends, as a reader without splits does, so
 * consumers do not wait for its end to move their watermark. Event time comes from the
 * planner's watermark vertex after the source (WATERMARK FOR in DDL), as for
 * datagen.
 *
 * Records. A JSON record is one line; a CSV record is one RFC-4180 record,
 * which may span lines inside a quoted field. Blank lines are skipped. A
 * record that does not decode fails the task with the file, the line and the
 * codec's reason, or is skipped with the matching ignore-parse-errors
 * option. sl_file_read_all (file_source.h) reads a whole path the same way
 * for the lookup join, which loads a table at open. Reading goes through
 * one buffer per subtask (256 KiB, grown for a
 * record longer than it up to 64 MiB): one read(2) per buffer, no
 * allocation per record; strings point into the buffer or the codec's
 * scratch.
 *
 * Checkpoints. The state is a union (SL_OPF_UNION_STATE, Flink's union list
 * state, as the Kafka source keeps its offsets): each subtask's blob lists
 * its files with the byte offset and line of the next record to read (the
 * offset of a finished file is its length). On restore every subtask gets
 * every old blob, lists the directory again, keeps the files the rule above
 * gives it at its parallelism and starts each at its recorded offset (a file
 * the state does not know is new and starts at 0); so a rescale re-deals the
 * files and every record is read exactly once across the restore. A file of
 * the state that is gone, or shorter than its recorded offset, fails the
 * restore: its records could not be accounted for. The files are dealt at
 * restore (or at the first run() of a fresh subtask), so a snapshot always
 * lists the subtask's own files and each file is in one blob.
 *
 * Blob format (little-endian), version 1:
 *   u8 version, "SLFR", u32 nfiles, nfiles x { u16 len + name relative to
 *   path, u64 offset, u64 line }, u64 FNV-1a of all before it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobgraph.h"
#include "operator.h"
#include "blob.h"
#include "expr.h"
#include "file_source.h"
#include "kafka_common.h"
#include "log.h"

#define FR_BUF (256 * 1024)
#define FR_MAX_RECORD (64 * 1024 * 1024)
#define FR_BATCH 1024

typedef struct fr_plan {
    char *path;      /* as given, "file://" stripped */
    kf_format fmt;   /* KF_JSON or KF_CSV */
    bool ignore_errors;
    const char *vid;
    char *who;       /* what messages name: "file source 'vid'" */
    char *partition_by; /* "dt;hr" or NULL */
    sl_expr *pfilter;   /* partition-filter over the declared schema, or NULL */
} fr_plan;

/* One file of this subtask. */
typedef struct fr_file {
    char *name;      /* relative to the directory ("" when path is a file) */
    uint64_t offset; /* of the next record to read */
    uint64_t line;   /* 1-based line of that record */
} fr_file;

typedef struct fr_state {
    fr_file *files;
    bool dealt;         /* files holds this subtask's share */
    int nfiles, cur;    /* cur: the file being read (nfiles: all done) */
    bool is_dir;
    int fd;             /* cur's descriptor, -1 when not open */
    char *buf;
    size_t cap;         /* FR_BUF, grown for long records */
    size_t start, end;  /* buf[start..end): read, not consumed; buf[0] is at
                           file offset base */
    uint64_t base;
    bool eof;           /* cur's end was read into buf */
    kf_codec codec;
    sl_buf str;
    sl_value *vals;
    uint64_t skipped;   /* records skipped (ignore-parse-errors) */
    bool said_idle;     /* no file: the output was marked idle */
    /* restored positions (union of all old blobs), until open of the files */
    fr_file *rest;
    int nrest;
    /* partitions: the columns, and their values for the file being read */
    int npart;
    int pcol[SL_MAX_FIELDS];
    const char *pname[SL_MAX_FIELDS]; /* their names (the output schema's) */
    sl_value pvals[SL_MAX_FIELDS];
    sl_buf pstr;        /* the values' unescaped text */
} fr_state;

/* ---- plan ------------------------------------------------------------- */

static void fr_plan_free(void *p)
{
    fr_plan *pl = p;
    if (!pl) return;
    free(pl->path);
    free(pl->who);
    free(pl->partition_by);
    sl_expr_destroy(pl->pfilter);
    free(pl);
}

static int conf_bool(const sl_vertex *v, const char *key, bool *out, char *err, size_t errlen)
{
    json_t *j = json_object_get(v->config, key);
    *out = false;
    if (!j) return SL_OK;
    if (json_is_boolean(j)) {
        *out = json_is_true(j);
        return SL_OK;
    }
    const char *s = json_string_value(j);
    if (s && (!strcasecmp(s, "true") || !strcasecmp(s, "false"))) {
        *out = !strcasecmp(s, "true");
        return SL_OK;
    }
    return sl_seterr(err, errlen, "vertex '%s': option '%s' must be true or false", v->id, key);
}

int sl_file_opts_parse(const sl_vertex *v, sl_file_opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    const char *path = sl_vconf_str(v, "path", NULL);
    if (!path || !path[0])
        return sl_seterr(err, errlen, "vertex '%s': option 'path' (a file or a directory) is "
                         "required", v->id);
    if (!strncmp(path, "file://", 7)) path += 7;
    const char *fmt = sl_vconf_str(v, "format", NULL);
    kf_format f = KF_JSON;
    if (!fmt || kf_format_parse(fmt, &f) != SL_OK || (f != KF_JSON && f != KF_CSV))
        return sl_seterr(err, errlen, "vertex '%s': option 'format' must be json or csv%s%s%s",
                         v->id, fmt ? ", not '" : "", fmt ? fmt : "", fmt ? "'" : "");
    bool ij, ic, fm;
    if (conf_bool(v, "json.ignore-parse-errors", &ij, err, errlen) ||
        conf_bool(v, "csv.ignore-parse-errors", &ic, err, errlen) ||
        conf_bool(v, "json.fail-on-missing-field", &fm, err, errlen))
        return SL_ERR;
    if (f == KF_JSON && ij && fm)
        return sl_seterr(err, errlen, "vertex '%s': %s", v->id, KF_JSON_BOTH_LENIENT_STRICT);
    o->path = sl_strdup(path);
    o->fmt = f;
    o->ignore_errors = f == KF_JSON ? ij : ic;
    return SL_OK;
}

void sl_file_opts_free(sl_file_opts *o)
{
    if (!o) return;
    free(o->path);
    o->path = NULL;
}

static void *fr_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    if (v->declared.n == 0) {
        sl_seterr(err, errlen, "vertex '%s': the file source needs a 'schema' with at least one "
                  "column", v->id);
        return NULL;
    }
    sl_file_opts o;
    if (sl_file_opts_parse(v, &o, err, errlen) != SL_OK) return NULL;
    fr_plan *pl = sl_calloc(1, sizeof *pl);
    pl->path = o.path;
    pl->fmt = (kf_format)o.fmt;
    pl->ignore_errors = o.ignore_errors;
    pl->vid = v->id;
    pl->who = sl_sprintf("file source '%s'", v->id);
    const char *pb = sl_vconf_str(v, "partition-by", NULL);
    if (pb && *pb) {
        char *copy = sl_strdup(pb), *save = NULL;
        for (char *c = strtok_r(copy, ";", &save); c; c = strtok_r(NULL, ";", &save))
            if (sl_schema_find(&v->declared, c) < 0) {
                sl_seterr(err, errlen, "vertex '%s': partition-by: '%s' is not a column of the "
                          "schema", v->id, c);
                free(copy);
                fr_plan_free(pl);
                return NULL;
            }
        free(copy);
        pl->partition_by = sl_strdup(pb);
        const char *pf = sl_vconf_str(v, "partition-filter", NULL);
        if (pf && *pf) {
            char perr[256];
            /* pruning only saves reading: a condition that does not compile
             * here is logged and every partition read, the rows filtered as ever */
            pl->pfilter = sl_expr_parse(pf, &v->declared, perr, sizeof perr);
            if (pl->pfilter && sl_expr_set_zone(pl->pfilter, sl_plan_opt_str(
                                   pc, SL_OPT_LOCAL_TIME_ZONE), perr, sizeof perr)) {
                sl_expr_destroy(pl->pfilter);
                pl->pfilter = NULL;
            }
            if (!pl->pfilter || (sl_expr_type(pl->pfilter) != SL_T_BOOLEAN &&
                                 sl_expr_type(pl->pfilter) != SL_T_NULL)) {
                sl_warn("file-source", "vertex '%s': partition-filter '%s': %s; no partition "
                        "pruning", v->id, pf, pl->pfilter ? "not a BOOLEAN condition" : perr);
                sl_expr_destroy(pl->pfilter);
                pl->pfilter = NULL;
            }
        }
    }
    sl_schema_copy(pc->out, &v->declared);
    return pl;
}

/* ---- files ------------------------------------------------------------ */

static void files_free(fr_file *f, int n)
{
    for (int i = 0; i < n; i++) free(f[i].name);
    free(f);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of directory path/rel (rel "" or ending in '/'), appended
 * to *names as rel/name; with depth > 0 the files of its partition
 * directories (k=v) that many levels down instead. */
static int list_dir(sl_op *op, const fr_plan *pl, const char *rel, int depth, char ***names,
                    int *cnt)
{
    char *dir = sl_sprintf("%s/%s", pl->path, rel);
    DIR *d = opendir(dir);
    if (!d) {
        int rc = sl_op_fail(op, "%s: cannot list directory '%s': %s", pl->who, dir,
                            strerror(errno));
        free(dir);
        return rc;
    }
    int rc = SL_OK;
    struct dirent *de;
    struct stat sb;
    while (rc == SL_OK && (de = readdir(d))) {
        if (de->d_name[0] == '.' || de->d_name[0] == '_') continue;
        char *full = sl_sprintf("%s%s", dir, de->d_name);
        int st = stat(full, &sb);
        free(full);
        if (st != 0) continue;
        if (depth > 0) {
            if (!S_ISDIR(sb.st_mode) || !strchr(de->d_name, '=')) continue;
            char *sub = sl_sprintf("%s%s/", rel, de->d_name);
            rc = list_dir(op, pl, sub, depth - 1, names, cnt);
            free(sub);
            continue;
        }
        if (!S_ISREG(sb.st_mode)) continue;
        *names = sl_realloc(*names, (size_t)(*cnt + 1) * sizeof **names);
        (*names)[(*cnt)++] = sl_sprintf("%s%s", rel, de->d_name);
    }
    closedir(d);
    free(dir);
    return rc;
}

/* The names of the files under path, sorted (*n 0 and *is_dir 0 when path
 * is one file, named ""); a partitioned table's are "dt=x/hr=y/part-0". */
static int list_files(sl_op *op, const fr_plan *pl, int depth, char ***out, int *n,
                      bool *is_dir)
{
    struct stat sb;
    *out = NULL;
    *n = 0;
    if (stat(pl->path, &sb) != 0)
        return sl_op_fail(op, "%s: cannot read '%s': %s", pl->who, pl->path,
                          strerror(errno));
    *is_dir = S_ISDIR(sb.st_mode);
    if (!*is_dir) {
        *out = sl_calloc(1, sizeof **out);
        (*out)[0] = sl_strdup("");
        *n = 1;
        return SL_OK;
    }
    char **names = NULL;
    int cnt = 0;
    int rc = list_dir(op, pl, "", depth, &names, &cnt);
    if (cnt > 1) qsort(names, (size_t)cnt, sizeof *names, name_cmp);
    *out = names;
    *n = cnt;
    return rc;
}

static char *full_name(const fr_plan *pl, const fr_state *st, const fr_file *f)
{
    return st->is_dir ? sl_sprintf("%s/%s", pl->path, f->name) : sl_strdup(pl->path);
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10
           : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The partition values of file `name` ("dt=x/hr=y/part-0") into st->pvals:
 * its directories' k=v in the order of the partition columns, %XX undone,
 * __DEFAULT_PARTITION__ NULL, each value parsed as its column's type. */
static int partition_values(sl_op *op, const fr_plan *pl, fr_state *st, const char *name)
{
    size_t off[SL_MAX_FIELDS], len[SL_MAX_FIELDS];
    bool null[SL_MAX_FIELDS];
    sl_buf_reset(&st->pstr);
    const char *p = name;
    for (int k = 0; k < st->npart; k++) {
        const char *slash = strchr(p, '/'), *eq = strchr(p, '=');
        size_t klen = eq ? (size_t)(eq - p) : 0;
        if (!slash || !eq || eq > slash || strlen(st->pname[k]) != klen ||
            strncasecmp(p, st->pname[k], klen))
            return sl_op_fail(op, "%s: '%s/%s' is not under a partition directory %s=... "
                              "(PARTITIONED BY column %d)", pl->who, pl->path, name,
                              st->pname[k], k + 1);
        const char *v = eq + 1;
        size_t vlen = (size_t)(slash - v);
        null[k] = vlen == 21 && !strncmp(v, "__DEFAULT_PARTITION__", 21);
        off[k] = st->pstr.len;
        for (size_t i = 0; i < vlen; i++) {
            int hi = i + 2 < vlen ? hexval(v[i + 1]) : -1, lo = i + 2 < vlen ? hexval(v[i + 2]) : -1;
            if (v[i] == '%' && hi >= 0 && lo >= 0) {
                char c = (char)(hi * 16 + lo);
                sl_buf_put(&st->pstr, &c, 1);
                i += 2;
            } else {
                sl_buf_put(&st->pstr, &v[i], 1);
            }
        }
        len[k] = st->pstr.len - off[k];
        p = slash + 1;
    }
    for (int k = 0; k < st->npart; k++) {
        sl_value *pv = &st->pvals[k];
        const char *t = st->pstr.p + off[k];
        sl_type ty = op->out->fields[st->pcol[k]].type;
        memset(pv, 0, sizeof *pv);
        pv->isnull = null[k];
        if (null[k]) continue;
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)SL_MIN(len[k], 63), t);
        char *end = NULL;
        bool ok = true;
        switch (ty) {
        case SL_T_STRING:
        case SL_T_BYTES: pv->v.s.p = t; pv->v.s.len = (uint32_t)len[k]; break;
        case SL_T_INT:
        case SL_T_BIGINT: pv->v.i = strtoll(num, &end, 10); ok = end != num && !*end; break;
        case SL_T_DOUBLE: pv->v.d = strtod(num, &end); ok = end != num && !*end; break;
        case SL_T_BOOLEAN:
            ok = !strcasecmp(num, "true") || !strcasecmp(num, "false");
            pv->v.i = !strcasecmp(num, "true");
            break;
        case SL_T_TIMESTAMP: ok = kf_parse_timestamp(t, len[k], &pv->v.i) == SL_OK; break;
        default: ok = false;
        }
        if (!ok)
            return sl_op_fail(op, "%s: partition value '%s' of '%s/%s' is not a %s", pl->who,
                              num, pl->path, name, sl_type_name(ty));
    }
    return SL_OK;
}

/* Open file cur at its offset; a file of the state that is gone or shorter
 * than the offset fails. */
static int open_cur(sl_op *op, const fr_plan *pl, fr_state *st)
{
    fr_file *f = &st->files[st->cur];
    char *fn = full_name(pl, st, f);
    st->fd = open(fn, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    int rc = SL_OK;
    if (st->fd < 0) {
        rc = sl_op_fail(op, "%s: cannot open '%s': %s", pl->who, fn,
                        strerror(errno));
    } else if (f->offset > 0 && (fstat(st->fd, &sb) != 0 || (uint64_t)sb.st_size < f->offset)) {
        rc = sl_op_fail(op, "%s: '%s' is shorter than the restored read position "
                        "%llu: the file changed since the checkpoint", pl->who, fn,
                        (unsigned long long)f->offset);
    } else if (f->offset > 0 && lseek(st->fd, (off_t)f->offset, SEEK_SET) < 0) {
        rc = sl_op_fail(op, "%s: cannot seek in '%s': %s", pl->who, fn,
                        strerror(errno));
    }
    free(fn);
    st->base = f->offset;
    st->start = st->end = 0;
    st->eof = false;
    if (rc == SL_OK && st->npart) rc = partition_values(op, pl, st, f->name);
    return rc;
}

static void close_cur(fr_state *st)
{
    if (st->fd >= 0) close(st->fd);
    st->fd = -1;
}

static const fr_file *restored(const fr_state *st, const char *name)
{
    for (int i = 0; i < st->nrest; i++)
        if (!strcmp(st->rest[i].name, name)) return &st->rest[i];
    return NULL;
}

/* Partition pruning: the names of names[0..n) (sorted) whose partition
 * satisfies the plan's partition-filter, into keep[] (borrowed pointers);
 * *nkeep their count. The condition is evaluated once per directory, over a
 * row holding the directory's partition values and NULL elsewhere. */
static int prune_files(sl_op *op, const fr_plan *pl, fr_state *st, char **names, int n,
                       char **keep, int *nkeep)
{
    int parts = 0, kparts = 0, rc = SL_OK;
    const char *prev = NULL;
    size_t prevlen = 0;
    bool pass = false;
    sl_value *vals = sl_calloc((size_t)op->out->n + 1, sizeof *vals);
    *nkeep = 0;
    for (int k = 0; rc == SL_OK && k < n; k++) {
        const char *slash = strrchr(names[k], '/');
        size_t dlen = slash ? (size_t)(slash - names[k]) : 0;
        if (!prev || dlen != prevlen || strncmp(prev, names[k], dlen)) {
            parts++;
            prev = names[k];
            prevlen = dlen;
            if ((rc = partition_values(op, pl, st, names[k])) != SL_OK) break;
            for (int i = 0; i < op->out->n; i++) vals[i].isnull = true;
            for (int i = 0; i < st->npart; i++) vals[st->pcol[i]] = st->pvals[i];
            sl_row row = {.kind = SL_KIND_INSERT, .n = op->out->n, .vals = vals, .ts = SL_TS_NONE};
            sl_arena_reset(&op->scratch);
            char why[256];
            /* an error (a bad CAST) keeps the partition: its rows meet the
             * whole WHERE downstream, which decides as it always did */
            if (sl_expr_eval_bool(pl->pfilter, &row, &op->scratch, &pass, why, sizeof why)) {
                sl_debug("tm:file-source", "%s: partition-filter on '%.*s': %s; read", pl->who,
                         (int)dlen, names[k], why);
                pass = true;
            }
            kparts += pass;
        }
        if (pass) keep[(*nkeep)++] = names[k];
    }
    free(vals);
    if (rc == SL_OK)
        sl_info("tm:file-source", "%s subtask %d: partition pruning kept %d of %d partitions "
                "(%d files)", pl->who, op->subtask, kparts, parts, *nkeep);
    return rc;
}

/* Deal the files: this subtask's share, at restored positions if any. */
static int deal_files(sl_op *op, fr_state *st)
{
    const fr_plan *pl = op->plan;
    char **names;
    int n;
    if (list_files(op, pl, st->npart, &names, &n, &st->is_dir) != SL_OK) return SL_ERR;
    int p = op->parallelism > 0 ? op->parallelism : 1;
    /* pruned partitions' files are neither dealt nor opened */
    char **deal = names;
    int ndeal = n;
    if (pl->pfilter && st->npart && st->is_dir) {
        deal = sl_calloc((size_t)n + 1, sizeof *deal);
        if (prune_files(op, pl, st, names, n, deal, &ndeal) != SL_OK) {
            for (int k = 0; k < n; k++) free(names[k]);
            free(names);
            free(deal);
            return SL_ERR;
        }
    }
    files_free(st->files, st->nfiles);
    st->files = sl_calloc((size_t)ndeal + 1, sizeof *st->files);
    st->nfiles = 0;
    for (int k = 0; k < ndeal; k++) {
        if (k % p != op->subtask) continue;
        fr_file *f = &st->files[st->nfiles++];
        const fr_file *r = restored(st, deal[k]);
        f->name = sl_strdup(deal[k]);
        f->offset = r ? r->offset : 0;
        f->line = r ? r->line : 1;
    }
    /* a file of the state that is no longer listed: its records are lost */
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < st->nrest; i++) {
        bool found = false;
        for (int k = 0; k < n && !found; k++) found = !strcmp(names[k], st->rest[i].name);
        if (!found)
            rc = sl_op_fail(op, "%s: '%s%s%s' of the restored state is gone (it was "
                            "read up to byte %llu)", pl->who, pl->path, st->is_dir ? "/" : "",
                            st->rest[i].name, (unsigned long long)st->rest[i].offset);
    }
    if (deal != names) free(deal);
    for (int k = 0; k < n; k++) free(names[k]);
    free(names);
    files_free(st->rest, st->nrest);
    st->rest = NULL;
    st->nrest = 0;
    st->cur = 0;
    st->dealt = true;
    return rc;
}

/* ---- lifecycle -------------------------------------------------------- */

/* Everything st holds (not st itself). */
static void state_free(fr_state *st)
{
    close_cur(st);
    files_free(st->files, st->nfiles);
    files_free(st->rest, st->nrest);
    kf_codec_free(&st->codec);
    sl_buf_free(&st->str);
    sl_buf_free(&st->pstr);
    free(st->buf);
    free(st->vals);
}

/* A zeroed st ready to read rows of `schema`: buffer, values, codec. */
static int state_init(sl_op *op, const fr_plan *pl, fr_state *st, const sl_schema *schema)
{
    st->fd = -1;
    st->cap = FR_BUF;
    st->buf = sl_malloc(st->cap);
    st->vals = sl_calloc((size_t)schema->n, sizeof *st->vals);
    if (pl->partition_by) { /* the partition columns come from the path, not the records */
        char *copy = sl_strdup(pl->partition_by), *save = NULL;
        for (char *c = strtok_r(copy, ";", &save); c && st->npart < SL_MAX_FIELDS;
             c = strtok_r(NULL, ";", &save)) {
            int k = sl_schema_find(schema, c);
            if (k < 0) continue;
            st->pname[st->npart] = schema->fields[k].name;
            st->pcol[st->npart++] = k;
        }
        free(copy);
    }
    int cols[SL_MAX_FIELDS], n = 0;
    for (int i = 0; i < schema->n; i++) {
        bool part = false;
        for (int k = 0; k < st->npart; k++) part |= st->pcol[k] == i;
        if (!part) cols[n++] = i;
    }
    if (kf_codec_init(&st->codec, pl->fmt, schema, cols, n, pl->vid, op->err, sizeof op->err) ||
        (op->vertex && kf_json_opts_read(&st->codec, op->vertex->config, pl->vid, op->err,
                                         sizeof op->err)))
        return SL_ERR;
    st->codec.ignore_errors = pl->ignore_errors;
    return SL_OK;
}

static void fr_close(sl_op *op)
{
    fr_state *st = op->priv;
    if (!st) return;
    state_free(st);
    free(st);
    op->priv = NULL;
}

static int fr_open(sl_op *op)
{
    fr_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    /* files are dealt at restore or at the first run() */
    return state_init(op, op->plan, st, op->out);
}

/* ---- reading ---------------------------------------------------------- */

/* The end of the record starting at p (its '\n', or e when it has none
 * yet); *lines counts the newlines inside a CSV quoted field. */
static const char *record_end(kf_format fmt, const char *p, const char *e, uint64_t *lines)
{
    if (fmt == KF_JSON) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        return nl ? nl : e;
    }
    bool quoted = false;
    *lines = 0;
    for (; p < e; p++) {
        if (*p == '"') quoted = !quoted;
        else if (*p == '\n') {
            if (!quoted) return p;
            (*lines)++;
        }
    }
    return e;
}

/* Move the unconsumed bytes to the front and read more; grow for a record
 * longer than the buffer. */
static int fill(sl_op *op, const fr_plan *pl, fr_state *st)
{
    if (st->start > 0) {
        memmove(st->buf, st->buf + st->start, st->end - st->start);
        st->base += st->start;
        st->end -= st->start;
        st->start = 0;
    }
    if (st->end == st->cap) {
        if (st->cap >= FR_MAX_RECORD) {
            char *fn = full_name(pl, st, &st->files[st->cur]);
            sl_op_fail(op, "%s: %s:%llu: a record longer than %d MiB", pl->who, fn,
                       (unsigned long long)st->files[st->cur].line, FR_MAX_RECORD >> 20);
            free(fn);
            return SL_ERR;
        }
        st->cap *= 2;
        st->buf = sl_realloc(st->buf, st->cap);
    }
    ssize_t r;
    do r = read(st->fd, st->buf + st->end, st->cap - st->end);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        char *fn = full_name(pl, st, &st->files[st->cur]);
        sl_op_fail(op, "%s: cannot read '%s': %s", pl->who, fn, strerror(errno));
        free(fn);
        return SL_ERR;
    }
    if (r == 0) st->eof = true;
    st->end += (size_t)r;
    return SL_OK;
}

/* One record [p, q) of file f failed to decode: fail, or skip it. */
static int bad_record(sl_op *op, const fr_plan *pl, fr_state *st, const fr_file *f,
                      const char *why)
{
    if (pl->ignore_errors) {
        st->skipped++;
        return SL_OK;
    }
    char *fn = full_name(pl, st, f);
    sl_op_fail(op, "%s: %s:%llu: cannot decode the %s record: %s (set '%s' = "
               "'true' to skip such records)", pl->who, fn, (unsigned long long)f->line,
               kf_format_name(pl->fmt), why,
               pl->fmt == KF_JSON ? "json.ignore-parse-errors" : "csv.ignore-parse-errors");
    free(fn);
    return SL_ERR;
}

/* The next record of st's files, decoded into st->vals: SL_OK, SL_DONE
 * after the last file, SL_ERR with op->err. */
static int next_record(sl_op *op, const fr_plan *pl, fr_state *st)
{
    if (st->fd < 0 && st->cur < st->nfiles && open_cur(op, pl, st) != SL_OK) return SL_ERR;
    while (st->cur < st->nfiles) {
        fr_file *f = &st->files[st->cur];
        const char *p = st->buf + st->start, *e = st->buf + st->end;
        uint64_t inner = 0;
        const char *q = p < e ? record_end(pl->fmt, p, e, &inner) : e;
        if (q == e && !st->eof) {
            if (fill(op, pl, st) != SL_OK) return SL_ERR;
            continue;
        }
        if (p == e) { /* the file is done */
            close_cur(st);
            if (++st->cur < st->nfiles && open_cur(op, pl, st) != SL_OK) return SL_ERR;
            continue;
        }
        /* the record [p, q), q at its '\n' or at the end of the file */
        size_t len = (size_t)(q - p), used = len + (q < e);
        uint64_t line = f->line;
        st->start += used;
        f->offset = st->base + st->start;
        f->line += 1 + inner;
        while (len > 0 && p[len - 1] == '\r') len--;
        bool blank = true;
        for (size_t i = 0; i < len && blank; i++) blank = p[i] == ' ' || p[i] == '\t';
        if (blank) continue;
        char why[300];
        if (kf_decode(&st->codec, p, len, st->vals, &st->str, why, sizeof why) != SL_OK) {
            fr_file at = *f;
            at.line = line;
            if (bad_record(op, pl, st, &at, why) != SL_OK) return SL_ERR;
            continue;
        }
        for (int k = 0; k < st->npart; k++) st->vals[st->pcol[k]] = st->pvals[k];
        return SL_OK;
    }
    return SL_DONE;
}

static void warn_skipped(sl_op *op, const fr_plan *pl, fr_state *st)
{
    if (st->skipped)
        sl_warn("file-source", "%s (%d/%d): %llu record(s) skipped that did not decode", pl->who,
                op->subtask + 1, op->parallelism, (unsigned long long)st->skipped);
    st->skipped = 0;
}

static int fr_run(sl_op *op)
{
    const fr_plan *pl = op->plan;
    fr_state *st = op->priv;
    if (!st->dealt && deal_files(op, st) != SL_OK) return SL_ERR;
    if (st->nfiles == 0 && !st->said_idle) {
        /* a reader without a file has nothing to say about time: idle
         * first, so no consumer waits for its end to judge other rows */
        st->said_idle = true;
        if (sl_op_emit_idle(op, 1) != SL_OK) return SL_ERR;
    }
    sl_row row = {SL_KIND_INSERT, op->out->n, st->vals, SL_TS_NONE};
    for (int emitted = 0; emitted < FR_BATCH; emitted++) {
        int rc = next_record(op, pl, st);
        if (rc == SL_ERR) return SL_ERR;
        if (rc == SL_DONE) break;
        /* the position already counts the row: emitted whatever emit says */
        rc = sl_op_emit(op, &row);
        if (rc != SL_OK) {
            if (rc == SL_ERR && !op->err[0]) sl_op_fail(op, "file source: downstream failed");
            if (rc == SL_AGAIN) op->wake_at_ms = sl_mono_ms();
            return rc;
        }
    }
    if (st->cur >= st->nfiles) {
        warn_skipped(op, pl, st);
        return SL_DONE;
    }
    return SL_OK;
}

int sl_file_read_all(sl_op *op, const char *who, const char *vid, const sl_file_opts *o,
                     const sl_schema *schema, sl_file_row_fn fn, void *ctx)
{
    fr_plan pl = {.path = o->path, .fmt = (kf_format)o->fmt, .ignore_errors = o->ignore_errors,
                  .vid = vid, .who = (char *)who};
    fr_state st;
    memset(&st, 0, sizeof st);
    char **names = NULL;
    int n = 0;
    int rc = state_init(op, &pl, &st, schema);
    if (rc == SL_OK) rc = list_files(op, &pl, 0, &names, &n, &st.is_dir);
    if (rc == SL_OK) { /* every file, from its start */
        st.files = sl_calloc((size_t)n + 1, sizeof *st.files);
        for (int k = 0; k < n; k++) {
            st.files[k].name = names[k];
            st.files[k].line = 1;
        }
        st.nfiles = n;
        st.dealt = true;
        free(names);
    }
    sl_row row = {SL_KIND_INSERT, schema->n, st.vals, SL_TS_NONE};
    while (rc == SL_OK) {
        rc = next_record(op, &pl, &st);
        if (rc == SL_DONE) {
            rc = SL_OK;
            break;
        }
        if (rc == SL_OK) rc = fn(ctx, &row);
    }
    if (rc == SL_OK) warn_skipped(op, &pl, &st);
    state_free(&st);
    return rc;
}

/* ---- checkpoints ------------------------------------------------------ */

#define FR_BLOB_VERSION 1
static const unsigned char fr_magic[4] = {'S', 'L', 'F', 'R'};

static int fr_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    (void)cpid;
    fr_state *st = op->priv;
    /* this subtask's files only (none read yet when not dealt), so that
     * each file is in one blob */
    const fr_file *fs = st->files;
    int n = st->dealt ? st->nfiles : 0;
    size_t total = 1 + 4 + 4 + 8;
    for (int i = 0; i < n; i++) total += 2 + strlen(fs[i].name) + 16;
    unsigned char *b = sl_malloc(total), *p = b;
    *p++ = FR_BLOB_VERSION;
    memcpy(p, fr_magic, 4);
    p += 4;
    p = sl_put_le_n(p, (uint64_t)n, 4);
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(fs[i].name);
        p = sl_put_le_n(p, nl, 2);
        memcpy(p, fs[i].name, nl);
        p += nl;
        p = sl_put_le_n(p, fs[i].offset, 8);
        p = sl_put_le_n(p, fs[i].line, 8);
    }
    p = sl_put_le_n(p, sl_blob_fnv1a(b, (size_t)(p - b)), 8);
    SL_ASSERT((size_t)(p - b) == total);
    *blob = b;
    *len = total;
    return SL_OK;
}

/* Append the files of one blob to *out; SL_ERR with why. */
static int parse_blob(const unsigned char *b, size_t len, fr_file **out, int *n, char *why,
                      size_t whylen)
{
    if (len < 1 + 4 + 4 + 8 || memcmp(b + 1, fr_magic, 4) != 0)
        return sl_seterr(why, whylen, "not file source state (%zu bytes, unknown header)", len);
    if (b[0] != FR_BLOB_VERSION)
        return sl_seterr(why, whylen, "format version %u, but this build reads version %d", b[0],
                         FR_BLOB_VERSION);
    const unsigned char *p = b + len - 8, *e = b + len - 8;
    if (sl_get_le_n(&p, 8) != sl_blob_fnv1a(b, len - 8))
        return sl_seterr(why, whylen, "damaged (checksum mismatch over %zu bytes)", len);
    p = b + 5;
    uint64_t cnt = sl_get_le_n(&p, 4);
    for (uint64_t i = 0; i < cnt; i++) {
        if (e - p < 2) return sl_seterr(why, whylen, "damaged (truncated at file %llu)",
                                        (unsigned long long)i + 1);
        size_t nl = (size_t)sl_get_le_n(&p, 2);
        if ((size_t)(e - p) < nl + 16 || memchr(p, '/', nl) || memchr(p, '\0', nl))
            return sl_seterr(why, whylen, "damaged (file %llu)", (unsigned long long)i + 1);
        *out = sl_realloc(*out, (size_t)(*n + 1) * sizeof **out);
        fr_file *f = &(*out)[(*n)++];
        f->name = sl_strndup((const char *)p, nl);
        p += nl;
        f->offset = sl_get_le_n(&p, 8);
        f->line = sl_get_le_n(&p, 8);
    }
    if (p != e) return sl_seterr(why, whylen, "damaged (%td bytes left over)", e - p);
    return SL_OK;
}

/* Every old subtask's blob (union state): the positions of all files. */
static int fr_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    fr_state *st = op->priv;
    const fr_plan *pl = op->plan;
    for (int k = 0; k < nblobs; k++) {
        char why[300];
        if (parse_blob(blobs[k], lens[k], &st->rest, &st->nrest, why, sizeof why) != SL_OK)
            return sl_op_fail(op, "file source '%s' subtask %d: cannot restore state %d of %d: %s",
                              pl->vid, op->subtask, k + 1, nblobs, why);
    }
    /* dealt now, so that a snapshot before the first run() records this
     * subtask's files rather than every old subtask's */
    return deal_files(op, st);
}

static const sl_op_option fr_options[] = {
    SL_OP_OPTION_LOCAL_TIME_ZONE,
    {"path", SL_CT_STRING, NULL, NULL,
     "File or directory."},
    {"format", SL_CT_STRING, NULL, NULL,
     "Row format: csv or json."},
    {"json.ignore-parse-errors", SL_CT_STRING, NULL, NULL,
     "true: a value not of its type is NULL (the field, element or MAP value; a record that "
     "is no JSON object is skipped and counted) instead of failing, as Flink's."},
    KF_JSON_OPTIONS,
    {"csv.ignore-parse-errors", SL_CT_STRING, NULL, NULL,
     "true: skip (and count) a row that does not parse as CSV instead of failing."},
    {"partition-by", SL_CT_STRING, NULL, NULL,
     "Partition columns, ';'-separated: the files are read from <path>/<col>=<value>/... "
     "directories and the columns filled from those names."},
    {"partition-filter", SL_CT_STRING, NULL, NULL,
     "Partition pruning: a condition on the partition columns; a partition directory "
     "whose values do not make it TRUE is not read (the planner's, from a WHERE)."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_file_source = {
    .abi = SL_OP_ABI_VERSION,
    .name = "file-source",
    .flags = SL_OPF_SOURCE | SL_OPF_UNION_STATE,
    .options = fr_options,
    .plan = fr_plan_new,
    .plan_free = fr_plan_free,
    .open = fr_open,
    .run = fr_run,
    .close = fr_close,
    .snapshot_state = fr_snapshot,
    .restore_state = fr_restore,
};
