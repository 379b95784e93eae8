/*
 * file.c -- the `file` sink: rows as JSON lines or CSV, one file per subtask.
 *
 *   path     a directory, created (with its parents) when missing
 *   format   json | csv
 *
 * Without checkpointing, subtask i writes `<path>/part-<i>`, replacing what
 * a previous run left (with it, see two-phase commit below). The encodings are Flink's json and csv formats:
 *   json  one object per line, keys = column names in schema order:
 *         {"id":1,"name":"a","ts":"2026-01-01 00:00:00.02"}; a row whose
 *         kind is not +I also carries "op":"-U" (last key). TIMESTAMP uses
 *         Flink's SQL form (date, space, time, fraction without trailing
 *         zeros), DOUBLE Java's Double.toString (non-finite values as the
 *         strings "NaN", "Infinity"), BYTES base64, NULL null.
 *   csv   RFC-4180: a field holding a comma, quote, CR or LF is quoted with
 *         inner quotes doubled; NULL is an empty field, an empty string is
 *         "" so the two stay apart; no header. CSV carries no row kind, so
 *         a row that is not +I fails the task (as Flink refuses an updating
 *         stream into this format) rather than silently losing retractions.
 *
 * Output goes through a 64 KiB buffer owned by the subtask and reaches the
 * file with one write(2) per full buffer; end of input writes the rest and
 * fsyncs, so a finished job's files are complete on disk.
 *
 * Exactly-once (when the runtime sets op->checkpointing): two-phase commit.
 * Rows go to a hidden in-progress file `.part-<i>-<c>.inprogress`, c being
 * the checkpoint expected to stage it (one past the last snapshot). At the
 * barrier of checkpoint c, snapshot_state writes out, fsyncs and closes the
 * file, which becomes pending under a final name `part-<i>-<n>` (n counts
 * this subtask's files and is never reused: it starts above any part-<i>-*
 * already in the directory), and the blob records every pending file not yet
 * committed (its name, final name, length and staging checkpoint). The next
 * row opens a new in-progress file. checkpoint_complete(c) renames every file
 * staged at or before c to its final name, then fsyncs the directory: output
 * only ever appears by an atomic rename, so a reader of the directory sees
 * committed rows only. An aborted checkpoint leaves its files pending for the
 * next completion.
 *
 * restore_state is recover-and-commit: the pending files in the restored
 * blobs belong to a checkpoint that completed, so each is truncated to its
 * recorded length and renamed (one already renamed before the failure is
 * left as it is); then every other in-progress file of this subtask and of
 * the blobs' old subtasks is deleted -- it held rows written after the
 * checkpoint, which the restored job produces again. After rescaling, old
 * subtask j's blob goes to one new subtask only (j % p), so no two subtasks
 * clean up the same files. A pending file that is missing or shorter than
 * recorded fails the restore: rows of a completed checkpoint would be lost.
 *
 * End of input with checkpointing on stages the last file; the task then
 * waits for a final checkpoint (op->final_checkpoint, Flink's checkpoints
 * after tasks finish) and its checkpoint_complete commits it. Committing at
 * end of input would write those rows again if the job failed over after
 * this subtask ended. Only a job restored from a savepoint but taking no
 * checkpoints (no final checkpoint comes) commits everything at end of
 * input. Without checkpointing no hook is called: the sink writes
 * `part-<i>` directly as described above (a savepoint of such a job syncs
 * the file and records nothing).
 *
 * Partition commit (Flink's sink.partition-commit.*; partitioned tables).
 * With policy success-file the sink reports what it stages on its
 * "partition-commit" side output and, when an edge leaves from it (the SQL
 * planner's partition_commit vertex, below), leaves the success files to
 * that committer. Without one (a job graph written by hand), each subtask
 * commits the partitions it wrote: checkpoint_complete(c), after renaming, writes
 * the success file into each partition that has rows since its last one, no
 * staged file left, and whose trigger fired: process-time (the delay since
 * this subtask created the partition's writer) or partition-time (the
 * watermark recorded at c's barrier past the partition's time, from
 * partition.time-extractor.timestamp-pattern, plus the delay). Such a
 * partition's writer is not forgotten until then. End of input commits every
 * partition (at the final checkpoint, or at once without checkpointing).
 *
 * Blob format (little-endian), version 1:
 *   u8 version, "SLFS", u32 subtask, i64 cpid, u64 next file number,
 *   u32 npending, npending x { i64 staging cpid, u64 length,
 *   u16 len + in-progress name, u16 len + final name }, u64 FNV-1a of all
 *   before it. Names are checked against the two patterns above before any
 *   file is touched, so a damaged blob cannot rename or delete other files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobgraph.h"
#include "operator.h"
#include "base64.h"
#include "blob.h"
#include "config.h"
#include "kafka_common.h"
#include "format_csv.h"
#include "format_json.h"
#include "temporal.h"

#define FILE_BUF (64 * 1024)

#define FILE_MAX_OPEN 256 /* partition writers with an open file and a buffer */
#define FILE_PART_BUDGET (8u << 20) /* what the partition writers' buffers hold together */

typedef enum { FMT_JSON = 0, FMT_CSV } file_format;

typedef struct file_plan {
    char *path;
    file_format format;
    char *partition_by; /* "dt;hr" or NULL; resolved against the input at open */
    /* partition commit (Flink's sink.partition-commit.*), partitioned only */
    char *success_name;  /* policy success-file: the file written; NULL: no policy */
    bool part_time;      /* trigger partition-time (else process-time) */
    int64_t delay_ms;    /* sink.partition-commit.delay */
    char *ts_pattern;    /* partition.time-extractor.timestamp-pattern, NULL: the
                            first partition column's value */
    char *wm_zone;       /* sink.partition-commit.watermark-time-zone, NULL: UTC */
} file_plan;

#define FS_WM_RING 16 /* (checkpoint, watermark at its barrier) pairs kept */

/* A file written out at a checkpoint, waiting for it to complete. */
typedef struct pending_file {
    char *stage;   /* ".part-<i>-<c>.inprogress", in the writer's directory */
    char *final;   /* "part-<i>-<n>" */
    uint64_t len;  /* bytes, synced */
    int64_t cpid;  /* the checkpoint that staged it */
} pending_file;

/* The files of one directory: the table's path, or one partition of it. */
typedef struct fs_writer {
    char *part;     /* "dt=2026-01-01/hr=10" (escaped), "" without partitions */
    char *dir;      /* the path (and partition) with a trailing '/' */
    int fd;         /* -1: none open (two-phase commit: no row since the last
                       snapshot; partitions: also closed to stay under
                       FILE_MAX_OPEN, reopened to append) */
    bool started;   /* a file was opened since the last snapshot (without
                       two-phase commit: part-<i> exists and is appended to) */
    char *fname;    /* the file being written, for messages */
    sl_buf out;     /* encoded rows not written yet; written out once
                       FILE_BUF bytes wait */
    uint64_t used;  /* last use (rows seen by the sink), for closing the oldest */
    /* two-phase commit */
    char *cur_stage;     /* name of the open in-progress file, NULL if none */
    pending_file *pend;  /* staged, not committed, oldest first */
    int npend, cappend;
    uint64_t next_n;     /* number of the next final name */
    bool scanned;        /* next_n raised above the directory's part files */
    /* partition commit */
    bool uncommitted;    /* rows written since its success file (or ever) */
    int64_t created_ms;  /* wall clock when this subtask first wrote to it */
    int64_t ptime;       /* the partition's time (partition-time trigger) */
} fs_writer;

typedef struct file_state {
    kf_codec codec;  /* the columns a row's line holds: all, or all but the
                        partition columns (Flink leaves them to the path) */
    bool twopc;      /* op->checkpointing at open */
    char *base;      /* the path with a trailing '/' */
    int64_t next_cpid; /* names the next in-progress files */
    fs_writer **w;   /* [0] the unpartitioned one, or the partitions seen */
    int nw, capw, nopen;
    fs_writer *last; /* the writer of the last row */
    uint64_t rows;
    /* partitions */
    int npart;
    int pcol[SL_MAX_FIELDS]; /* their input columns */
    kf_codec pcodec; /* csv of the partition columns: their values as text */
    int64_t wm_cpid[FS_WM_RING], wm_at[FS_WM_RING]; /* watermark at each snapshot */
    int nwm;
    bool ended;      /* end of input: every partition may commit */
    sl_tz *wm_tz;    /* the watermark time zone, opened on first use */
    int rep_out;     /* the report output when a committer reads it, else -1:
                        then this subtask commits its own partitions */
    sl_buf ptext, pname; /* scratch: the values' csv, the partition's name */
} file_state;

/* ---- plan ------------------------------------------------------------- */

static void file_plan_free(void *p)
{
    file_plan *pl = p;
    if (!pl) return;
    free(pl->path);
    free(pl->partition_by);
    free(pl->success_name);
    free(pl->ts_pattern);
    free(pl->wm_zone);
    free(pl);
}

/* The side output a partitioned sink with a commit policy reports on: one
 * row per file it staged (kind 0: at a checkpoint's barrier, or at end of
 * input for the final checkpoint) or, without checkpointing, per partition
 * it wrote (kind 1, at end of input). The partition committer (below) reads
 * them. */
#define FS_REPORT_OUTPUT "partition-commit"
enum { FS_REP_FILE = 0, FS_REP_PART = 1 };

static void report_schema(sl_schema *s)
{
    sl_schema_init(s);
    sl_schema_add(s, "kind", SL_T_INT);
    sl_schema_add(s, "cpid", SL_T_BIGINT);
    sl_schema_add(s, "dir", SL_T_STRING);
    sl_schema_add(s, "part", SL_T_STRING);
    sl_schema_add(s, "stage", SL_T_STRING);
    sl_schema_add(s, "final", SL_T_STRING);
    sl_schema_add(s, "len", SL_T_BIGINT);
}

/* Whether a zone name is one java.util.TimeZone reads as java.time.ZoneId
 * does (Flink's check of the watermark time zone): an offset alone ("+08:00",
 * "Z") or "UTC+8"/"UT+8" is not (TimeZone reads them as GMT), "GMT+8" is. */
static bool zone_fixed_ok(const char *z)
{
    if (z[0] == '+' || z[0] == '-' || !strcmp(z, "Z")) return false;
    if (!strncmp(z, "UTC", 3) && (z[3] == '+' || z[3] == '-')) return false;
    if (!strncmp(z, "UT", 2) && (z[2] == '+' || z[2] == '-')) return false;
    return true;
}

/* Flink's partition commit options into pl; SL_ERR with a message when an
 * option is set that Sluice cannot honour. */
static int commit_opts(const sl_vertex *v, file_plan *pl, char *err, size_t errlen)
{
    const char *kind = sl_vconf_str(v, "sink.partition-commit.policy.kind", NULL);
    const char *trig = sl_vconf_str(v, "sink.partition-commit.trigger", NULL);
    const char *delay = sl_vconf_str(v, "sink.partition-commit.delay", NULL);
    const char *name = sl_vconf_str(v, "sink.partition-commit.success-file.name", NULL);
    const char *pat = sl_vconf_str(v, "partition.time-extractor.timestamp-pattern", NULL);
    const char *zone = sl_vconf_str(v, "sink.partition-commit.watermark-time-zone", NULL);
    if (kind && *kind) {
        char *copy = sl_strdup(kind), *save = NULL;
        int rc = SL_OK;
        for (char *k = strtok_r(copy, ", ", &save); rc == SL_OK && k;
             k = strtok_r(NULL, ", ", &save)) {
            if (!strcasecmp(k, "success-file")) continue;
            if (!strcasecmp(k, "metastore"))
                rc = sl_seterr(err, errlen, "vertex '%s': sink.partition-commit.policy.kind "
                               "'metastore' needs a Hive metastore, which Sluice does not have; "
                               "use 'success-file'", v->id);
            else if (!strcasecmp(k, "custom"))
                rc = sl_seterr(err, errlen, "vertex '%s': sink.partition-commit.policy.kind "
                               "'custom' needs sink.partition-commit.policy.class, a Java "
                               "PartitionCommitPolicy class, which Sluice cannot run; use "
                               "'success-file'", v->id);
            else
                rc = sl_seterr(err, errlen, "vertex '%s': sink.partition-commit.policy.kind "
                               "'%s' is not supported (Sluice has 'success-file')", v->id, k);
        }
        free(copy);
        if (rc != SL_OK) return rc;
        pl->success_name = sl_strdup(name && *name ? name : "_SUCCESS");
        if (strchr(pl->success_name, '/') || pl->success_name[0] == '.' ||
            !strncmp(pl->success_name, "part-", 5))
            return sl_seterr(err, errlen, "vertex '%s': sink.partition-commit.success-file.name "
                             "'%s' must be a plain file name that is no part file", v->id,
                             pl->success_name);
    }
    if (trig && strcasecmp(trig, "process-time") && strcasecmp(trig, "partition-time"))
        return sl_seterr(err, errlen, "vertex '%s': sink.partition-commit.trigger '%s' is not "
                         "'process-time' or 'partition-time'", v->id, trig);
    pl->part_time = trig && !strcasecmp(trig, "partition-time");
    if (delay && sl_parse_duration_ms(delay, &pl->delay_ms) != SL_OK)
        return sl_seterr(err, errlen, "vertex '%s': sink.partition-commit.delay '%s' is not a "
                         "duration ('1 h', '30 min')", v->id, delay);
    if (pat && *pat) pl->ts_pattern = sl_strdup(pat);
    if (zone && strcmp(zone, "UTC")) {
        /* Flink accepts a name that java.util.TimeZone and java.time.ZoneId
         * read alike: a region, UTC/GMT, or GMT+hh:mm -- not a bare offset */
        char zerr[256];
        sl_tz *tz = zone_fixed_ok(zone) ? sl_tz_open(zone, SL_TZ_JAVA_TIME, zerr, sizeof zerr)
                                        : NULL;
        if (!tz)
            return sl_seterr(err, errlen, "vertex '%s': Invalid time zone for "
                             "'sink.partition-commit.watermark-time-zone'. The value should be "
                             "a Time Zone Database (TZDB) ID such as 'America/Los_Angeles' to "
                             "include daylight saving time. Fixed offsets are supported using "
                             "'GMT-03:00' or 'GMT+03:00'. Or use 'UTC' without time zone and "
                             "daylight saving time (not '%s')", v->id, zone);
        sl_tz_destroy(tz);
        pl->wm_zone = sl_strdup(zone);
    }
    if (pl->success_name && !pl->partition_by)
        return sl_seterr(err, errlen, "vertex '%s': sink.partition-commit.policy.kind needs a "
                         "partitioned table (PARTITIONED BY)", v->id);
    return SL_OK;
}

static void *file_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    json_t *jp = json_object_get(v->config, "path");
    if (!json_is_string(jp) || json_string_value(jp)[0] == '\0') {
        sl_seterr(err, errlen, "vertex '%s': option 'path' (the output directory) is required",
                  v->id);
        return NULL;
    }
    const char *fmt = sl_vconf_str(v, "format", NULL);
    file_format f;
    if (!fmt) {
        sl_seterr(err, errlen, "vertex '%s': option 'format' (json or csv) is required", v->id);
        return NULL;
    }
    if (!strcasecmp(fmt, "json")) f = FMT_JSON;
    else if (!strcasecmp(fmt, "csv")) f = FMT_CSV;
    else {
        sl_seterr(err, errlen, "vertex '%s': option 'format': '%s' is not json or csv", v->id, fmt);
        return NULL;
    }
    const char *pb = sl_vconf_str(v, "partition-by", NULL);
    if (pb && pc->nin > 0 && pc->in[0].schema) { /* each a column of the input, not BYTES */
        char *copy = sl_strdup(pb), *save = NULL;
        for (char *c = strtok_r(copy, ";", &save); c; c = strtok_r(NULL, ";", &save)) {
            int k = sl_schema_find(pc->in[0].schema, c);
            if (k < 0 || pc->in[0].schema->fields[k].type == SL_T_BYTES) {
                sl_seterr(err, errlen, "vertex '%s': partition-by: '%s' is %s", v->id, c,
                          k < 0 ? "not a column of the input" : "BYTES (not a partition type)");
                free(copy);
                return NULL;
            }
        }
        free(copy);
    }
    kf_codec probe = {0}; /* the json.* options, checked here and read again at open */
    int jrc = kf_json_opts_read(&probe, v->config, v->id, err, errlen);
    kf_codec_free(&probe);
    if (jrc != SL_OK) return NULL;
    file_plan *pl = sl_calloc(1, sizeof *pl);
    pl->path = sl_strdup(json_string_value(jp));
    pl->format = f;
    pl->partition_by = pb && *pb ? sl_strdup(pb) : NULL;
    if (commit_opts(v, pl, err, errlen) != SL_OK) {
        file_plan_free(pl);
        return NULL;
    }
    if (pl->success_name) { /* what the partition committer reads */
        sl_schema rs;
        report_schema(&rs);
        int o = sl_plan_output(pc, FS_REPORT_OUTPUT, &rs, err, errlen);
        sl_schema_free(&rs);
        if (o < 0) {
            file_plan_free(pl);
            return NULL;
        }
    }
    return pl;
}

static int commit_partitions(sl_op *op, struct file_state *st, int64_t cpid);
static fs_writer *writer_for(sl_op *op, struct file_state *st);

/* ---- output buffer ---------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return SL_ERR;
        }
        p += w;
        n -= (size_t)w;
    }
    return SL_OK;
}

static int out_flush(sl_op *op, fs_writer *w)
{
    if (w->out.len == 0) return SL_OK;
    if (write_all(w->fd, w->out.p, w->out.len) != SL_OK)
        return sl_op_fail(op, "file sink: cannot write '%s': %s", w->fname, strerror(errno));
    sl_buf_reset(&w->out);
    return SL_OK;
}

/* mkdir -p: create path and its missing parents. */
static int make_dirs(const char *path, char *err, size_t errlen)
{
    char *p = sl_strdup(path);
    int rc = SL_OK;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char saved = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            rc = sl_seterr(err, errlen, "file sink: cannot create directory '%s': %s", p,
                           strerror(errno));
            break;
        }
        *s = saved;
        if (saved == '\0') break;
    }
    free(p);
    if (rc != SL_OK) return rc;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return sl_seterr(err, errlen, "file sink: cannot use directory '%s': %s", path,
                         strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return sl_seterr(err, errlen, "file sink: '%s' exists and is not a directory", path);
    return SL_OK;
}

/* ---- two-phase commit ------------------------------------------------- */

/* Parse "<prefix><i>-<n><suffix>" exactly (decimal, no sign): 1 if it fits. */
static int parse_part_name(const char *name, const char *prefix, const char *suffix, int *sub,
                           uint64_t *num)
{
    size_t pl = strlen(prefix);
    if (strncmp(name, prefix, pl) != 0) return 0;
    const char *p = name + pl;
    uint64_t v[2];
    for (int k = 0; k < 2; k++) {
        if (*p < '0' || *p > '9') return 0;
        v[k] = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (v[k] > (UINT64_MAX - 9) / 10) return 0;
            v[k] = v[k] * 10 + (uint64_t)(*p - '0');
        }
        if (k == 0 && *p++ != '-') return 0;
    }
    if (strcmp(p, suffix) != 0 || v[0] > INT32_MAX) return 0;
    *sub = (int)v[0];
    *num = v[1];
    return 1;
}

static int sync_dir(sl_op *op, const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return sl_op_fail(op, "file sink: cannot open directory '%s': %s", dir, strerror(errno));
    int rc = fsync(fd) != 0 && errno != EINVAL ? SL_ERR : SL_OK;
    if (rc != SL_OK) sl_op_fail(op, "file sink: cannot sync directory '%s': %s", dir,
                                strerror(errno));
    close(fd);
    return rc;
}

/* Raise next_n above every committed part-<subtask>-<n> in the writer's
 * directory, so this subtask never overwrites what an earlier run committed. */
static int scan_counter(sl_op *op, fs_writer *w)
{
    DIR *d = opendir(w->dir);
    if (!d)
        return sl_op_fail(op, "file sink: cannot read directory '%s': %s", w->dir,
                          strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        int sub;
        uint64_t n;
        if (parse_part_name(e->d_name, "part-", "", &sub, &n) && sub == op->subtask &&
            n != UINT64_MAX && n + 1 > w->next_n)
            w->next_n = n + 1;
    }
    closedir(d);
    w->scanned = true;
    return SL_OK;
}

/* The oldest writer with an open file gives it up (flushed; reopened to append). */
static int close_oldest(sl_op *op, file_state *st)
{
    fs_writer *old = NULL;
    for (int i = 0; i < st->nw; i++)
        if (st->w[i]->fd >= 0 && (!old || st->w[i]->used < old->used)) old = st->w[i];
    if (!old) return SL_OK;
    if (out_flush(op, old) != SL_OK) return SL_ERR;
    close(old->fd);
    old->fd = -1;
    sl_buf_free(&old->out);
    memset(&old->out, 0, sizeof old->out);
    st->nopen--;
    return SL_OK;
}

/* The next row of w needs its file open: the in-progress file of this
 * checkpoint interval (two-phase commit) or part-<i>; a file closed to stay
 * under FILE_MAX_OPEN is appended to. Once per interval, not per row. */
static int writer_open(sl_op *op, file_state *st, fs_writer *w)
{
    if (st->nopen >= FILE_MAX_OPEN && close_oldest(op, st) != SL_OK) return SL_ERR;
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
    if (st->twopc && !w->cur_stage) {
        if (!w->scanned && scan_counter(op, w) != SL_OK) return SL_ERR;
        w->cur_stage = sl_sprintf(".part-%d-%lld.inprogress", op->subtask,
                                  (long long)st->next_cpid);
        flags |= O_TRUNC;
    } else if (!st->twopc && !w->started) {
        flags |= O_TRUNC;
    } else {
        flags |= O_APPEND;
    }
    free(w->fname);
    w->fname = st->twopc ? sl_sprintf("%s%s", w->dir, w->cur_stage)
                         : sl_sprintf("%spart-%d", w->dir, op->subtask);
    w->fd = open(w->fname, flags, 0666);
    if (w->fd < 0)
        return sl_op_fail(op, "file sink: cannot create '%s': %s", w->fname, strerror(errno));
    w->started = true;
    st->nopen++;
    return SL_OK;
}

/* The asynchronous part of a snapshot: make a staged file durable and close
 * it, on the snapshot thread, before the checkpoint is acknowledged. */
typedef struct fsync_job {
    int fd;
    char *path;
} fsync_job;

static int fsync_deferred(void *arg, char *err, size_t errlen)
{
    fsync_job *j = arg;
    int rc = SL_OK;
    if (fsync(j->fd) != 0 && errno != EINVAL)
        rc = sl_seterr(err, errlen, "file sink: cannot sync '%s': %s", j->path, strerror(errno));
    close(j->fd);
    free(j->path);
    free(j);
    return rc;
}

static void defer_fsync(sl_op *op, int fd, const char *path)
{
    fsync_job *j = sl_malloc(sizeof *j);
    j->fd = fd;
    j->path = sl_strdup(path);
    sl_op_defer(op, fsync_deferred, j);
}

/* Write out and close w's in-progress file, which becomes pending; its
 * fsync runs off the task thread before the checkpoint is acknowledged. */
static int stage_current(sl_op *op, file_state *st, fs_writer *w, int64_t cpid)
{
    if (!w->cur_stage) return SL_OK; /* no row since the last snapshot */
    if (w->fd < 0) { /* closed to stay under FILE_MAX_OPEN: sync it here */
        if (writer_open(op, st, w) != SL_OK) return SL_ERR;
    }
    if (out_flush(op, w) != SL_OK) return SL_ERR;
    struct stat sb;
    if (fstat(w->fd, &sb) != 0)
        return sl_op_fail(op, "file sink: cannot stat '%s': %s", w->fname, strerror(errno));
    defer_fsync(op, w->fd, w->fname);
    w->fd = -1;
    st->nopen--;
    if (w->npend == w->cappend) {
        w->cappend = w->cappend ? w->cappend * 2 : 4;
        w->pend = sl_realloc(w->pend, (size_t)w->cappend * sizeof *w->pend);
    }
    pending_file *pf = &w->pend[w->npend++];
    pf->stage = w->cur_stage;
    w->cur_stage = NULL;
    pf->final = sl_sprintf("part-%d-%llu", op->subtask, (unsigned long long)w->next_n++);
    pf->len = (uint64_t)sb.st_size;
    pf->cpid = cpid;
    return SL_OK;
}

/* Publish w's pending files staged at or before cpid, oldest first. */
static int commit_upto(sl_op *op, fs_writer *w, int64_t cpid)
{
    int done = 0, rc = SL_OK;
    while (done < w->npend && w->pend[done].cpid <= cpid) {
        pending_file *pf = &w->pend[done];
        char *from = sl_sprintf("%s%s", w->dir, pf->stage);
        char *to = sl_sprintf("%s%s", w->dir, pf->final);
        struct stat sb;
        /* the partition committer may have renamed it first */
        if (rename(from, to) != 0 && !(errno == ENOENT && stat(to, &sb) == 0))
            rc = sl_op_fail(op, "file sink: cannot commit '%s' as '%s': %s", from, to,
                            strerror(errno));
        free(from);
        free(to);
        if (rc != SL_OK) break;
        free(pf->stage);
        free(pf->final);
        done++;
    }
    if (done == 0) return rc;
    memmove(w->pend, w->pend + done, (size_t)(w->npend - done) * sizeof *w->pend);
    w->npend -= done;
    if (rc == SL_OK) rc = sync_dir(op, w->dir);
    return rc;
}

/* 2: the directory the pending files were written in follows the count,
 * so a job restored with another path still commits them where they are.
 * 3: a partitioned sink's state: u8 3, "SLFS", u32 n, n x { u32 len, a
 * version-2 blob of one partition directory }. */
#define FS_BLOB_VERSION 2
#define FS_BLOB_PARTS 3
static const unsigned char fs_magic[4] = {'S', 'L', 'F', 'S'};

static unsigned char *put_name(unsigned char *p, const char *name)
{
    size_t n = strlen(name);
    p = sl_put_le_n(p, n, 2);
    memcpy(p, name, n);
    return p + n;
}

/* One directory's version-2 blob. */
static unsigned char *writer_blob(sl_op *op, const fs_writer *w, int64_t cpid, size_t *len)
{
    size_t total = 1 + 4 + 4 + 8 + 8 + 4 + 2 + strlen(w->dir) + 8;
    for (int k = 0; k < w->npend; k++)
        total += 8 + 8 + 2 + strlen(w->pend[k].stage) + 2 + strlen(w->pend[k].final);
    unsigned char *b = sl_malloc(total), *p = b;
    *p++ = FS_BLOB_VERSION;
    memcpy(p, fs_magic, 4);
    p += 4;
    p = sl_put_le_n(p, (uint64_t)op->subtask, 4);
    p = sl_put_le_n(p, (uint64_t)cpid, 8);
    p = sl_put_le_n(p, w->next_n, 8);
    p = sl_put_le_n(p, (uint64_t)w->npend, 4);
    p = put_name(p, w->dir);
    for (int k = 0; k < w->npend; k++) {
        const pending_file *pf = &w->pend[k];
        p = sl_put_le_n(p, (uint64_t)pf->cpid, 8);
        p = sl_put_le_n(p, pf->len, 8);
        p = put_name(p, pf->stage);
        p = put_name(p, pf->final);
    }
    p = sl_put_le_n(p, sl_blob_fnv1a(b, (size_t)(p - b)), 8);
    SL_ASSERT((size_t)(p - b) == total);
    *len = total;
    return b;
}

/* One row to the partition committer. */
static int report(sl_op *op, file_state *st, int kind, int64_t cpid, const fs_writer *w,
                  const pending_file *pf)
{
    sl_value v[7] = {{0}};
    v[0].v.i = kind;
    v[1].v.i = cpid;
    v[2].v.s.p = w->dir;
    v[2].v.s.len = (uint32_t)strlen(w->dir);
    v[3].v.s.p = w->part;
    v[3].v.s.len = (uint32_t)strlen(w->part);
    if (pf) {
        v[4].v.s.p = pf->stage;
        v[4].v.s.len = (uint32_t)strlen(pf->stage);
        v[5].v.s.p = pf->final;
        v[5].v.s.len = (uint32_t)strlen(pf->final);
        v[6].v.i = (int64_t)pf->len;
    } else {
        v[4].isnull = v[5].isnull = v[6].isnull = true;
    }
    sl_row row = {.kind = SL_KIND_INSERT, .n = 7, .vals = v, .ts = SL_TS_NONE};
    int rc = sl_op_emit_to(op, st->rep_out, &row);
    return rc == SL_DONE ? SL_OK : rc;
}

/* The files staged for checkpoint cpid, to the committer (before the barrier). */
static int report_staged(sl_op *op, file_state *st, int64_t cpid)
{
    if (st->rep_out < 0) return SL_OK;
    for (int i = 0; i < st->nw; i++)
        for (int k = 0; k < st->w[i]->npend; k++)
            if (st->w[i]->pend[k].cpid == cpid &&
                report(op, st, FS_REP_FILE, cpid, st->w[i], &st->w[i]->pend[k]) != SL_OK)
                return SL_ERR;
    return SL_OK;
}

static int file_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    file_state *st = op->priv;
    *blob = NULL;
    *len = 0;
    if (!st->twopc) {
        /* A savepoint of a job without checkpointing: make what was
         * written durable; there is nothing to stage. */
        for (int i = 0; i < st->nw; i++) {
            fs_writer *w = st->w[i];
            if (w->fd < 0) continue;
            if (out_flush(op, w) != SL_OK) return SL_ERR;
            int fd = dup(w->fd);
            if (fd < 0)
                return sl_op_fail(op, "file sink: cannot sync '%s': %s", w->fname, strerror(errno));
            defer_fsync(op, fd, w->fname);
        }
        return SL_OK;
    }
    for (int i = 0; i < st->nw; i++)
        if (stage_current(op, st, st->w[i], cpid) != SL_OK) return SL_ERR;
    if (report_staged(op, st, cpid) != SL_OK) return SL_ERR;
    /* the watermark at this barrier: what the partition-time trigger compares */
    int slot = st->nwm < FS_WM_RING ? st->nwm++ : (int)(cpid % FS_WM_RING);
    st->wm_cpid[slot] = cpid;
    st->wm_at[slot] = op->current_watermark;
    /* Checkpoint ids only grow, but names must stay unique even if not. */
    st->next_cpid = SL_MAX(st->next_cpid + 1, cpid + 1);
    if (!st->npart) {
        *blob = writer_blob(op, st->w[0], cpid, len);
        return SL_OK;
    }
    sl_buf b = {0};
    unsigned char hdr[9] = {FS_BLOB_PARTS, 'S', 'L', 'F', 'S'};
    int n = 0;
    for (int i = 0; i < st->nw; i++) n += st->w[i]->npend > 0 || st->w[i]->uncommitted;
    sl_put_le_n(hdr + 5, (uint64_t)n, 4);
    sl_buf_put(&b, (const char *)hdr, sizeof hdr);
    for (int i = 0; i < st->nw; i++) {
        /* a partition waiting for its commit is in the state too (no files) */
        if (!st->w[i]->npend && !st->w[i]->uncommitted) continue;
        size_t l;
        unsigned char *one = writer_blob(op, st->w[i], cpid, &l), lb[4];
        sl_put_le_n(lb, l, 4);
        sl_buf_put(&b, (const char *)lb, 4);
        sl_buf_put(&b, (const char *)one, l);
        free(one);
    }
    *len = b.len;
    *blob = sl_buf_take(&b);
    return SL_OK;
}

static void writer_free(fs_writer *w)
{
    if (!w) return;
    for (int i = 0; i < w->npend; i++) {
        free(w->pend[i].stage);
        free(w->pend[i].final);
    }
    free(w->pend);
    free(w->cur_stage);
    free(w->part);
    free(w->dir);
    free(w->fname);
    sl_buf_free(&w->out);
    free(w);
}

static int file_checkpoint_complete(sl_op *op, int64_t cpid)
{
    file_state *st = op->priv;
    int rc = SL_OK;
    for (int i = 0; i < st->nw && rc == SL_OK; i++) rc = commit_upto(op, st->w[i], cpid);
    if (rc == SL_OK) rc = commit_partitions(op, st, cpid);
    /* a partition with nothing open or pending is forgotten: its metadata
     * does not grow with every partition the job has ever written */
    for (int i = st->nw - 1; rc == SL_OK && st->npart && i >= 0; i--) {
        fs_writer *w = st->w[i];
        if (w->fd >= 0 || w->cur_stage || w->npend || w->uncommitted) continue;
        if (st->last == w) st->last = NULL;
        writer_free(w);
        st->w[i] = st->w[--st->nw];
    }
    return rc;
}

static int file_checkpoint_abort(sl_op *op, int64_t cpid)
{
    /* The staged files stay pending: the next completed checkpoint, which
     * covers everything before it, commits them. */
    return SL_OK;
}

/* A restored blob, checked and decoded. */
typedef struct fs_restored {
    int owner;           /* the old subtask that wrote it */
    int64_t cpid;
    uint64_t next_n;
    pending_file *pend;  /* names point into the blob's copy below */
    int npend;
    char *dir;           /* where its files were written (into names) */
    char *names;         /* NUL-terminated copies of the names */
} fs_restored;

static void fs_restored_free(fs_restored *r)
{
    free(r->pend);
    free(r->names);
}
static int parse_fs_blob(const unsigned char *b, size_t len, fs_restored *r, char *why,
                         size_t whylen)
{
    memset(r, 0, sizeof *r);
    const size_t head = 1 + 4 + 4 + 8 + 8 + 4;
    if (len < head + 8)
        return sl_seterr(why, whylen, "%zu bytes is too short to be file sink state", len);
    if (memcmp(b + 1, fs_magic, 4) != 0)
        return sl_seterr(why, whylen, "not file sink state (unknown header)");
    if (b[0] != FS_BLOB_VERSION)
        return sl_seterr(why, whylen, "format version %u, but this build reads version %d", b[0],
                         FS_BLOB_VERSION);
    const unsigned char *p = b + len - 8, *end = b + len - 8;
    uint64_t sum = 0;
    for (int k = 0; k < 8; k++) sum |= (uint64_t)p[k] << (8 * k);
    if (sum != sl_blob_fnv1a(b, len - 8))
        return sl_seterr(why, whylen, "damaged (checksum mismatch over %zu bytes)", len);
#define GET(var, bytes)                                                        \
    do {                                                                       \
        var = 0;                                                               \
        for (int k_ = 0; k_ < (bytes); k_++) var |= (uint64_t)p[k_] << (8 * k_); \
        p += (bytes);                                                          \
    } while (0)
    uint64_t owner, cpid, npend;
    p = b + 5;
    GET(owner, 4);
    GET(cpid, 8);
    GET(r->next_n, 8);
    GET(npend, 4);
    if (owner > INT32_MAX || npend > (size_t)(end - p) / 20)
        return sl_seterr(why, whylen, "damaged (subtask %llu, %llu pending files in %zu bytes)",
                         (unsigned long long)owner, (unsigned long long)npend, len);
    r->owner = (int)owner;
    r->cpid = (int64_t)cpid;
    r->npend = (int)npend;
    r->pend = sl_calloc(npend + 1, sizeof *r->pend);
    r->names = sl_malloc(len); /* the names with NULs fit in the blob's size */
    char *nm = r->names;
    {
        uint64_t n;
        if (end - p < 2) return sl_seterr(why, whylen, "damaged (directory cut short)");
        GET(n, 2);
        if ((uint64_t)(end - p) < n || n == 0 || p[n - 1] != '/')
            return sl_seterr(why, whylen, "damaged (directory)");
        memcpy(nm, p, n);
        nm[n] = '\0';
        p += n;
        r->dir = nm;
        nm += n + 1;
    }
    for (int k = 0; k < r->npend; k++) {
        pending_file *pf = &r->pend[k];
        uint64_t c, l, n;
        if (end - p < 18) return sl_seterr(why, whylen, "damaged (pending file %d cut short)", k);
        GET(c, 8);
        GET(l, 8);
        pf->cpid = (int64_t)c;
        pf->len = l;
        for (int which = 0; which < 2; which++) {
            if (end - p < 2) return sl_seterr(why, whylen, "damaged (pending file %d cut short)", k);
            GET(n, 2);
            if ((uint64_t)(end - p) < n)
                return sl_seterr(why, whylen, "damaged (pending file %d cut short)", k);
            memcpy(nm, p, n);
            nm[n] = '\0';
            p += n;
            if (which == 0) pf->stage = nm;
            else pf->final = nm;
            nm += n + 1;
        }
        /* Only this sink's own names: nothing else in the directory (or
         * outside it) may be renamed or truncated on a blob's word. */
        int sub;
        uint64_t num;
        if (!parse_part_name(pf->stage, ".part-", ".inprogress", &sub, &num) ||
            sub != r->owner || !parse_part_name(pf->final, "part-", "", &sub, &num) ||
            sub != r->owner)
            return sl_seterr(why, whylen, "damaged (pending file %d has names '%.64s', '%.64s')",
                             k, pf->stage, pf->final);
    }
#undef GET
    if (p != end) return sl_seterr(why, whylen, "damaged (%zu stray bytes)", (size_t)(end - p));
    return SL_OK;
}

/* Commit one pending file of a completed checkpoint: truncate it to its
 * recorded length (bytes after it were never part of the checkpoint) and
 * rename it. Already renamed (the completion was seen before the failure):
 * nothing to do. */
static int recover_one(sl_op *op, const char *dir, const pending_file *pf)
{
    char *from = sl_sprintf("%s%s", dir, pf->stage);
    char *to = sl_sprintf("%s%s", dir, pf->final);
    int rc = SL_OK;
    struct stat sb;
    if (stat(to, &sb) == 0) goto out; /* committed already */
    int fd = open(from, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = sl_op_fail(op, "file sink: cannot restore: pending file '%s' of checkpoint %lld "
                            "(%llu bytes) is gone and '%s' does not exist: %s", from,
                        (long long)pf->cpid, (unsigned long long)pf->len, to, strerror(errno));
        goto out;
    }
    if (fstat(fd, &sb) != 0) {
        rc = sl_op_fail(op, "file sink: cannot restore: cannot stat '%s': %s", from,
                        strerror(errno));
    } else if ((uint64_t)sb.st_size < pf->len) {
        rc = sl_op_fail(op, "file sink: cannot restore: pending file '%s' of checkpoint %lld "
                            "has %lld bytes, but %llu were committed to", from,
                        (long long)pf->cpid, (long long)sb.st_size, (unsigned long long)pf->len);
    } else if ((uint64_t)sb.st_size > pf->len &&
               (ftruncate(fd, (off_t)pf->len) != 0 || fsync(fd) != 0)) {
        rc = sl_op_fail(op, "file sink: cannot restore: cannot truncate '%s' to %llu bytes: %s",
                        from, (unsigned long long)pf->len, strerror(errno));
    }
    close(fd);
    if (rc == SL_OK && rename(from, to) != 0)
        rc = sl_op_fail(op, "file sink: cannot restore: cannot commit '%s' as '%s': %s", from, to,
                        strerror(errno));
out:
    free(from);
    free(to);
    return rc;
}

/* Delete the in-progress files of the given old subtasks in dir and, with
 * partitions, in the partition directories under it (depth levels): rows
 * written after the restored checkpoint, which the restored job writes again. */
static int discard_uncommitted(sl_op *op, const char *dir, int depth, const int *owners,
                               int nowners)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT && depth >= 0) return SL_OK;
        return sl_op_fail(op, "file sink: cannot read directory '%s': %s", dir, strerror(errno));
    }
    int rc = SL_OK;
    struct dirent *e;
    while (rc == SL_OK && (e = readdir(d))) {
        int sub;
        uint64_t c;
        if (depth > 0 && e->d_name[0] != '.' && strchr(e->d_name, '=')) {
            char *sub_dir = sl_sprintf("%s%s/", dir, e->d_name);
            struct stat sb;
            if (stat(sub_dir, &sb) == 0 && S_ISDIR(sb.st_mode))
                rc = discard_uncommitted(op, sub_dir, depth - 1, owners, nowners);
            free(sub_dir);
            continue;
        }
        if (!parse_part_name(e->d_name, ".part-", ".inprogress", &sub, &c)) continue;
        bool mine = false;
        for (int k = 0; k < nowners && !mine; k++) mine = owners[k] == sub;
        if (!mine) continue;
        char *path = sl_sprintf("%s%s", dir, e->d_name);
        if (unlink(path) != 0 && errno != ENOENT)
            rc = sl_op_fail(op, "file sink: cannot delete uncommitted '%s': %s", path,
                            strerror(errno));
        free(path);
    }
    closedir(d);
    return rc;
}

/* The version-2 blobs of one restored blob (a partitioned sink's holds several). */
static int split_blobs(const unsigned char *b, size_t len, const unsigned char **parts,
                       size_t *plens, int *n, int cap, char *why, size_t whylen)
{
    *n = 0;
    if (len < 9 || b[0] != FS_BLOB_PARTS || memcmp(b + 1, fs_magic, 4) != 0) {
        parts[0] = b;
        plens[0] = len;
        *n = 1;
        return SL_OK;
    }
    uint64_t cnt = 0;
    for (int k = 0; k < 4; k++) cnt |= (uint64_t)b[5 + k] << (8 * k);
    size_t at = 9;
    for (uint64_t i = 0; i < cnt; i++) {
        if (len - at < 4 || *n >= cap)
            return sl_seterr(why, whylen, "damaged (partition %llu of %llu cut short)",
                             (unsigned long long)i, (unsigned long long)cnt);
        uint64_t l = 0;
        for (int k = 0; k < 4; k++) l |= (uint64_t)b[at + (size_t)k] << (8 * k);
        at += 4;
        if (len - at < l) return sl_seterr(why, whylen, "damaged (partition %llu cut short)",
                                           (unsigned long long)i);
        parts[*n] = b + at;
        plens[(*n)++] = (size_t)l;
        at += (size_t)l;
    }
    if (at != len) return sl_seterr(why, whylen, "damaged (%zu stray bytes)", len - at);
    return SL_OK;
}

static int file_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    file_state *st = op->priv;
    int cap = 0;
    for (int k = 0; k < nblobs; k++) cap += 1 + (int)(lens[k] / 8);
    const unsigned char **parts = sl_calloc((size_t)cap + 1, sizeof *parts);
    size_t *plens = sl_calloc((size_t)cap + 1, sizeof *plens);
    int nparts = 0, rc = SL_OK;
    for (int k = 0; k < nblobs && rc == SL_OK; k++) {
        char why[300];
        int n = 0;
        if (split_blobs(blobs[k], lens[k], parts + nparts, plens + nparts, &n, cap - nparts, why,
                        sizeof why) != SL_OK)
            rc = sl_op_fail(op, "file sink '%s' subtask %d: cannot restore state %d of %d: %s",
                            op->vertex ? op->vertex->id : "?", op->subtask, k + 1, nblobs, why);
        nparts += n;
    }
    fs_restored *rs = sl_calloc((size_t)nparts + 1, sizeof *rs);
    int *owners = sl_calloc((size_t)nparts + 1, sizeof *owners);
    int nowners = 0;
    owners[nowners++] = op->subtask;
    for (int k = 0; k < nparts && rc == SL_OK; k++) {
        char why[300];
        if (parse_fs_blob(parts[k], plens[k], &rs[k], why, sizeof why) != SL_OK) {
            rc = sl_op_fail(op, "file sink '%s' subtask %d: cannot restore state %d of %d: %s",
                            op->vertex ? op->vertex->id : "?", op->subtask, k + 1, nparts, why);
            break;
        }
        bool seen = false;
        for (int j = 0; j < nowners; j++) seen |= owners[j] == rs[k].owner;
        if (!seen) owners[nowners++] = rs[k].owner;
    }
    /* Commit first: files are only deleted once every recorded one is safe. */
    for (int k = 0; k < nparts && rc == SL_OK; k++) {
        for (int j = 0; j < rs[k].npend && rc == SL_OK; j++)
            rc = recover_one(op, rs[k].dir, &rs[k].pend[j]);
        if (rc == SL_OK && rs[k].npend) rc = sync_dir(op, rs[k].dir);
    }
    if (rc == SL_OK) rc = discard_uncommitted(op, st->base, st->npart, owners, nowners);
    for (int k = 0; k < nparts && rc == SL_OK; k++) {
        if (rs[k].cpid != INT64_MAX) st->next_cpid = SL_MAX(st->next_cpid, rs[k].cpid + 1);
        if (!st->npart && rs[k].owner == op->subtask)
            st->w[0]->next_n = SL_MAX(st->w[0]->next_n, rs[k].next_n);
    }
    if (rc == SL_OK && !st->npart) rc = scan_counter(op, st->w[0]);
    /* the restored partitions wait for their commit again (process-time: the
     * delay starts over); one committed before the failure gets its success
     * file once more, which is harmless */
    const file_plan *pl = op->plan;
    size_t blen = strlen(st->base);
    for (int k = 0; k < nparts && rc == SL_OK && pl->success_name && st->npart; k++) {
        const char *dir = rs[k].dir;
        size_t dlen = dir ? strlen(dir) : 0;
        if (dlen <= blen + 1 || strncmp(dir, st->base, blen) || dir[dlen - 1] != '/') continue;
        sl_buf_reset(&st->pname);
        sl_buf_put(&st->pname, dir + blen, dlen - blen - 1);
        fs_writer *w = writer_for(op, st);
        if (!w) rc = SL_ERR;
        else w->uncommitted = st->rep_out < 0;
    }
    for (int k = 0; k < nparts; k++) fs_restored_free(&rs[k]);
    free(rs);
    free(owners);
    free(parts);
    free(plens);
    return rc;
}

/* ---- partitions ------------------------------------------------------- */

/* Append a partition value to a path as Flink escapes path names: the
 * characters that mean something in a path or URI as %XX. */
static void put_escaped(sl_buf *b, const char *p, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7F || strchr("\"#%'*/:=?\\{[]^", c)) {
            char e[3] = {'%', hex[c >> 4], hex[c & 15]};
            sl_buf_put(b, e, 3);
        } else {
            sl_buf_put(b, (const char *)&c, 1);
        }
    }
}

/* The partition name of row ("dt=2026-01-01/hr=10") into st->pname: each
 * value as the csv format writes it (TIMESTAMP as SQL text), NULL or an
 * empty string as __DEFAULT_PARTITION__. No allocation once the scratch has
 * grown. */
static void partition_name(file_state *st, const sl_schema *in, const sl_row *row)
{
    sl_buf_reset(&st->pname);
    for (int k = 0; k < st->npart; k++) {
        int c = st->pcol[k];
        if (k) sl_buf_put(&st->pname, "/", 1);
        sl_buf_str(&st->pname, in->fields[c].name);
        sl_buf_put(&st->pname, "=", 1);
        const sl_value *v = &row->vals[c];
        sl_buf_reset(&st->ptext);
        if (!v->isnull && in->fields[c].type == SL_T_STRING) {
            sl_buf_put(&st->ptext, v->v.s.p, v->v.s.len);
        } else if (!v->isnull) {
            sl_row one = {SL_KIND_INSERT, row->n, row->vals, SL_TS_NONE};
            kf_codec single = st->pcodec;
            single.n = 1;
            single.slot = &st->pcodec.slot[k];
            single.type = &st->pcodec.type[k];
            single.name = &st->pcodec.name[k];
            single.namelen = &st->pcodec.namelen[k];
            sl_fmt_csv_fields(&st->ptext, &single, &one);
            if (st->ptext.len >= 2 && st->ptext.p[0] == '"') { /* csv quoting off */
                size_t o = 0;
                for (size_t i = 1; i + 1 < st->ptext.len; i++) {
                    st->ptext.p[o++] = st->ptext.p[i];
                    if (st->ptext.p[i] == '"') i++;
                }
                st->ptext.len = o;
            }
        }
        if (st->ptext.len == 0) sl_buf_str(&st->pname, "__DEFAULT_PARTITION__");
        else put_escaped(&st->pname, st->ptext.p, st->ptext.len);
    }
}

/* The time of partition `part` into *ptime (the partition-time trigger): the timestamp
 * pattern with each $col replaced by that column's value (%XX undone), or
 * the first column's value, read as 'yyyy-MM-dd[ HH:mm:ss[.S]]'. */
static int partition_time(sl_op *op, const file_plan *pl, const char *part, sl_tz **tzc,
                          int64_t *ptime)
{
    sl_buf t = {0};
    const char *pat = pl->ts_pattern ? pl->ts_pattern : NULL;
    char first[128] = "";
    if (!pat) {
        const char *eq = strchr(part, '=');
        snprintf(first, sizeof first, "$%.*s", eq ? (int)(eq - part) : 0, part);
        pat = first;
    }
    for (const char *p = pat; *p;) {
        if (*p != '$') {
            sl_buf_put(&t, p++, 1);
            continue;
        }
        size_t n = 1;
        while (p[n] && (p[n] == '_' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
                        (p[n] >= '0' && p[n] <= '9')))
            n++;
        /* the longest column name of the partition matching at p+1 */
        const char *best = NULL, *bval = NULL;
        size_t blen = 0, bvlen = 0;
        for (const char *c = part; *c;) {
            const char *eq = strchr(c, '='), *end = strchr(c, '/');
            if (!eq) break;
            size_t klen = (size_t)(eq - c);
            if (klen <= n - 1 && klen > blen && !strncasecmp(c, p + 1, klen)) {
                best = c;
                blen = klen;
                bval = eq + 1;
                bvlen = end ? (size_t)(end - eq - 1) : strlen(eq + 1);
            }
            if (!end) break;
            c = end + 1;
        }
        if (!best) {
            sl_buf_free(&t);
            return sl_op_fail(op, "file sink: partition.time-extractor.timestamp-pattern '%s': "
                              "'%.*s' is no partition column of '%s'", pat, (int)n, p, part);
        }
        for (size_t i = 0; i < bvlen; i++) {
            if (bval[i] == '%' && i + 2 < bvlen + 1 && bval[i + 1] && bval[i + 2]) {
                char hex[3] = {bval[i + 1], bval[i + 2], 0}, *e;
                long c = strtol(hex, &e, 16);
                if (!*e) {
                    char ch = (char)c;
                    sl_buf_put(&t, &ch, 1);
                    i += 2;
                    continue;
                }
            }
            sl_buf_put(&t, &bval[i], 1);
        }
        p += 1 + blen;
    }
    if (t.len == 10) sl_buf_str(&t, " 00:00:00"); /* a date alone: its midnight */
    int rc = SL_OK;
    if (!t.len || kf_parse_timestamp(t.p, t.len, ptime) != SL_OK)
        rc = sl_op_fail(op, "file sink: partition '%s': '%.*s' (from the timestamp pattern '%s') "
                        "is not a timestamp 'yyyy-MM-dd HH:mm:ss'", part, (int)t.len,
                        t.len ? t.p : "", pat);
    sl_buf_free(&t);
    if (rc == SL_OK && pl->wm_zone) { /* a local time in the watermark time zone */
        if (!*tzc) {
            char zerr[256];
            *tzc = sl_tz_open(pl->wm_zone, SL_TZ_JAVA_TIME, zerr, sizeof zerr);
            if (!*tzc)
                return sl_op_fail(op, "file sink: sink.partition-commit.watermark-time-zone: %s",
                                  zerr);
        }
        *ptime = sl_tz_to_utc(*tzc, *ptime);
    }
    return rc;
}

/* Partition commit at the completion of checkpoint cpid: each partition
 * whose files are all committed, with rows since its last success file,
 * whose trigger has fired (process-time: the delay has passed since this
 * subtask created it; partition-time: the watermark at cpid's barrier is
 * past its time plus the delay; either: the input has ended) gets its
 * success file. */
static int commit_partitions(sl_op *op, file_state *st, int64_t cpid)
{
    const file_plan *pl = op->plan;
    if (!pl->success_name || !st->npart || st->rep_out >= 0) return SL_OK;
    int64_t wm = INT64_MIN, now = sl_now_ms();
    for (int i = 0; i < st->nwm; i++)
        if (st->wm_cpid[i] <= cpid && st->wm_at[i] > wm) wm = st->wm_at[i];
    for (int i = 0; i < st->nw; i++) {
        fs_writer *w = st->w[i];
        if (!w->uncommitted || w->npend) continue;
        bool fire = st->ended || (pl->part_time ? wm != INT64_MIN && wm > w->ptime + pl->delay_ms
                                                : now - w->created_ms >= pl->delay_ms);
        if (!fire) continue;
        char *fn = sl_sprintf("%s%s", w->dir, pl->success_name);
        int fd = open(fn, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int rc = fd < 0 || fsync(fd) != 0 ? sl_op_fail(op, "file sink: cannot write the success "
                                                       "file '%s': %s", fn, strerror(errno))
                                           : SL_OK;
        if (fd >= 0) close(fd);
        free(fn);
        if (rc != SL_OK) return rc;
        w->uncommitted = false;
    }
    return SL_OK;
}

/* The writer of partition st->pname, made (and its directory) when new. */
static fs_writer *writer_for(sl_op *op, file_state *st)
{
    for (int i = 0; i < st->nw; i++)
        if (st->w[i]->part && strlen(st->w[i]->part) == st->pname.len &&
            !memcmp(st->w[i]->part, st->pname.p, st->pname.len))
            return st->w[i];
    fs_writer *w = sl_calloc(1, sizeof *w);
    w->fd = -1;
    w->part = sl_strndup(st->pname.p, st->pname.len);
    w->dir = sl_sprintf("%s%s/", st->base, w->part);
    w->created_ms = sl_now_ms();
    const file_plan *pl = op->plan;
    if (make_dirs(w->dir, op->err, sizeof op->err) != SL_OK ||
        (pl->success_name && pl->part_time && partition_time(op, pl, w->part, &st->wm_tz, &w->ptime) != SL_OK)) {
        writer_free(w);
        return NULL;
    }
    if (st->nw == st->capw) {
        st->capw = st->capw ? st->capw * 2 : 8;
        st->w = sl_realloc(st->w, (size_t)st->capw * sizeof *st->w);
    }
    st->w[st->nw++] = w;
    return w;
}

/* ---- operator --------------------------------------------------------- */

static void file_close(sl_op *op)
{
    file_state *st = op->priv;
    if (!st) return;
    for (int i = 0; i < st->nw; i++) {
        fs_writer *w = st->w[i];
        if (w->fd >= 0) {
            /* Two-phase commit: an open file holds uncommitted rows, dropped.
             * Otherwise close() cannot fail the task; end_input has reported
             * errors. */
            if (!st->twopc && w->out.len) (void)write_all(w->fd, w->out.p, w->out.len);
            close(w->fd);
        }
        writer_free(w);
    }
    free(st->w);
    free(st->base);
    kf_codec_free(&st->codec);
    kf_codec_free(&st->pcodec);
    sl_buf_free(&st->ptext);
    sl_buf_free(&st->pname);
    if (st->wm_tz) sl_tz_destroy(st->wm_tz);
    free(st);
    op->priv = NULL;
}

static int file_open(sl_op *op)
{
    const file_plan *pl = op->plan;
    file_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    if (make_dirs(pl->path, op->err, sizeof op->err) != SL_OK) return SL_ERR;
    size_t plen = strlen(pl->path);
    st->base = sl_sprintf("%s%s", pl->path, plen && pl->path[plen - 1] == '/' ? "" : "/");
    st->twopc = op->checkpointing != 0;
    st->next_cpid = 1;
    int ro = sl_op_output(op, FS_REPORT_OUTPUT);
    st->rep_out = ro > 0 && op->out_connected[ro] ? ro : -1;
    if (op->in && pl->partition_by) {
        char *copy = sl_strdup(pl->partition_by), *save = NULL;
        for (char *c = strtok_r(copy, ";", &save); c && st->npart < SL_MAX_FIELDS;
             c = strtok_r(NULL, ";", &save)) {
            int k = sl_schema_find(op->in, c);
            if (k >= 0) st->pcol[st->npart++] = k;
        }
        free(copy);
    }
    if (!st->npart) { /* one writer, the path itself */
        fs_writer *w = sl_calloc(1, sizeof *w);
        w->fd = -1;
        w->part = sl_strdup("");
        w->dir = sl_strdup(st->base);
        sl_buf_reserve(&w->out, 2 * FILE_BUF);
        st->w = sl_calloc(1, sizeof *st->w);
        st->w[0] = w;
        st->nw = st->capw = 1;
        st->last = w;
        /* without two-phase commit part-<i> is there from the start, as before */
        if (st->twopc ? scan_counter(op, w) != SL_OK : writer_open(op, st, w) != SL_OK)
            return SL_ERR;
    }
    if (op->in) {
        int cols[SL_MAX_FIELDS], n = 0;
        for (int i = 0; i < op->in->n; i++) {
            bool part = false;
            for (int k = 0; k < st->npart; k++) part |= st->pcol[k] == i;
            if (!part) cols[n++] = i;
        }
        if (kf_codec_init(&st->codec, pl->format == FMT_JSON ? KF_JSON : KF_CSV, op->in, cols,
                          n, "file", op->err, sizeof op->err) != SL_OK ||
            kf_json_opts_read(&st->codec, op->vertex ? op->vertex->config : NULL, "file",
                              op->err, sizeof op->err) != SL_OK)
            return SL_ERR;
        if (st->npart && kf_codec_init(&st->pcodec, KF_CSV, op->in, st->pcol, st->npart, "file",
                                       op->err, sizeof op->err) != SL_OK)
            return SL_ERR;
    }
    return SL_OK;
}

static int file_process(sl_op *op, int input, sl_row *row)
{
    const file_plan *pl = op->plan;
    file_state *st = op->priv;
    fs_writer *w = st->last;
    if (st->npart) {
        partition_name(st, op->in, row);
        if (!w || strlen(w->part) != st->pname.len || memcmp(w->part, st->pname.p, st->pname.len)) {
            w = writer_for(op, st);
            if (!w) return SL_ERR;
            st->last = w;
        }
        w->uncommitted = st->rep_out < 0;
    }
    w->used = ++st->rows;
    if (SL_UNLIKELY(w->fd < 0) && writer_open(op, st, w) != SL_OK) return SL_ERR;
    sl_buf *out = &w->out;
    if (pl->format == FMT_JSON) {
        size_t start = out->len;
        sl_buf_reserve(out, 1);
        out->p[out->len++] = '{';
        char why[400];
        if (sl_fmt_json_fields(out, &st->codec, row, why, sizeof why) != SL_OK) {
            out->len = start;
            return sl_op_fail(op, "file sink '%s': %s", op->vertex ? op->vertex->id : "?", why);
        }
        if (row->kind != SL_KIND_INSERT) { /* the kind, last */
            sl_buf_reserve(out, 12);
            if (out->len > start + 1) out->p[out->len++] = ',';
            memcpy(out->p + out->len, "\"op\":\"", 6);
            memcpy(out->p + out->len + 6, sl_rowkind_short(row->kind), 2);
            out->len += 8;
            out->p[out->len++] = '"';
        }
        sl_buf_reserve(out, 2);
        out->p[out->len++] = '}';
    } else {
        if (row->kind != SL_KIND_INSERT)
            return sl_op_fail(op,
                              "file sink '%s': format csv holds inserts only, but a %s row "
                              "arrived (the input is a changelog); use format json, which "
                              "records the kind",
                              w->fname, sl_rowkind_short(row->kind));
        sl_fmt_csv_fields(out, &st->codec, row);
        sl_buf_reserve(out, 1);
    }
    out->p[out->len++] = '\n';
    /* partitions share FILE_PART_BUDGET: each writes out at its share (4 KiB at least) */
    size_t limit = FILE_BUF;
    if (st->npart && (size_t)st->nopen > FILE_PART_BUDGET / FILE_BUF)
        limit = SL_MAX((size_t)4096, FILE_PART_BUDGET / (size_t)st->nopen);
    return out->len >= limit ? out_flush(op, w) : SL_OK;
}

static int file_end_input(sl_op *op, int input)
{
    file_state *st = op->priv;
    if (st->twopc) {
        /* The last rows are staged for the next checkpoint. With a final
         * checkpoint to come, its completion commits them; only a restored
         * job that takes no checkpoints commits at its end of input. */
        for (int i = 0; i < st->nw; i++)
            if (stage_current(op, st, st->w[i], st->next_cpid) != SL_OK) return SL_ERR;
        if (report_staged(op, st, st->next_cpid) != SL_OK) return SL_ERR;
        st->ended = true;
        if (op->final_checkpoint) return SL_OK;
        for (int i = 0; i < st->nw; i++)
            if (commit_upto(op, st->w[i], INT64_MAX) != SL_OK) return SL_ERR;
        return commit_partitions(op, st, INT64_MAX);
    }
    for (int i = 0; i < st->nw; i++) {
        fs_writer *w = st->w[i];
        if (w->fd < 0 && w->out.len == 0) continue;
        if (w->fd < 0 && writer_open(op, st, w) != SL_OK) return SL_ERR;
        if (out_flush(op, w) != SL_OK) return SL_ERR;
        if (fsync(w->fd) != 0)
            return sl_op_fail(op, "file sink: cannot sync '%s': %s", w->fname, strerror(errno));
    }
    st->ended = true; /* without checkpoints (a bounded job) every partition commits now */
    for (int i = 0; i < st->nw && st->rep_out >= 0; i++)
        if (st->w[i]->started && report(op, st, FS_REP_PART, 0, st->w[i], NULL) != SL_OK)
            return SL_ERR;
    return commit_partitions(op, st, INT64_MAX);
}

/* ---- the partition committer ------------------------------------------- */

/* One vertex of parallelism 1 after a partitioned sink's writers (Flink's
 * PartitionCommitter). Each writer reports on its side output, before a
 * checkpoint's barrier, the files it staged for that checkpoint; barrier
 * alignment puts every writer's report for checkpoint c ahead of c's barrier
 * here. At checkpoint_complete(c) the committer commits (renames) every
 * reported file staged at or before c itself -- the writers' own
 * checkpoint_complete(c) may not have run yet, and a rename is atomic, so
 * whichever comes second finds the file in place -- and then writes the
 * success file of each partition whose trigger fired: so a partition's
 * success file appears only once every writer's rows for it up to c are
 * committed. Its state (one blob) holds the partitions waiting for their
 * commit and their files not yet committed; restored, those files are
 * committed (they belong to a completed checkpoint) and the partitions wait
 * again. Without checkpointing, writers report at end of input the
 * partitions they wrote, and the committer's end of input (after every
 * writer's) commits them all. */
typedef struct cm_file {
    char *stage, *final;
    uint64_t len;
    int64_t cpid;
} cm_file;

typedef struct cm_part {
    char *part, *dir;
    int64_t first_ms; /* when the committer first heard of it (process-time) */
    int64_t ptime;    /* partition-time trigger */
    bool dirty;       /* files or rows since its last success file */
    cm_file *f;
    int nf, capf;
} cm_part;

typedef struct cm_state {
    char *base;
    cm_part **p;
    int np, capp;
    int64_t wm_cpid[FS_WM_RING], wm_at[FS_WM_RING];
    int nwm;
    bool ended;
    sl_tz *wm_tz;
} cm_state;

static void cm_part_free(cm_part *c)
{
    for (int i = 0; i < c->nf; i++) {
        free(c->f[i].stage);
        free(c->f[i].final);
    }
    free(c->f);
    free(c->part);
    free(c->dir);
    free(c);
}

static void *committer_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    sl_schema rs;
    report_schema(&rs);
    bool ok = pc->nin == 1 && pc->in[0].schema && sl_schema_equal(pc->in[0].schema, &rs);
    sl_schema_free(&rs);
    if (!ok) {
        sl_seterr(err, errlen, "vertex '%s': a partition committer reads the '%s' output of a "
                  "file sink", v->id, FS_REPORT_OUTPUT);
        return NULL;
    }
    const char *path = sl_vconf_str(v, "path", NULL);
    if (!path || !*path) {
        sl_seterr(err, errlen, "vertex '%s': 'path' (the sink's) is required", v->id);
        return NULL;
    }
    file_plan *pl = sl_calloc(1, sizeof *pl);
    pl->path = sl_strdup(path);
    pl->partition_by = sl_strdup("-");
    if (commit_opts(v, pl, err, errlen) != SL_OK) {
        file_plan_free(pl);
        return NULL;
    }
    if (!pl->success_name) {
        sl_seterr(err, errlen, "vertex '%s': sink.partition-commit.policy.kind is required",
                  v->id);
        file_plan_free(pl);
        return NULL;
    }
    return pl;
}

/* The entry of partition part (made when new, with dir). */
static cm_part *cm_find(sl_op *op, cm_state *cs, const char *part, size_t plen, const char *dir,
                        size_t dlen)
{
    for (int i = 0; i < cs->np; i++)
        if (strlen(cs->p[i]->part) == plen && !memcmp(cs->p[i]->part, part, plen)) return cs->p[i];
    const file_plan *pl = op->plan;
    cm_part *c = sl_calloc(1, sizeof *c);
    c->part = sl_strndup(part, plen);
    c->dir = sl_strndup(dir, dlen);
    c->first_ms = sl_now_ms();
    if (pl->part_time && partition_time(op, pl, c->part, &cs->wm_tz, &c->ptime) != SL_OK) {
        cm_part_free(c);
        return NULL;
    }
    if (cs->np == cs->capp) {
        cs->capp = cs->capp ? cs->capp * 2 : 8;
        cs->p = sl_realloc(cs->p, (size_t)cs->capp * sizeof *cs->p);
    }
    cs->p[cs->np++] = c;
    return c;
}

static void cm_add_file(cm_part *c, const char *stage, size_t sl, const char *final, size_t fl,
                        uint64_t len, int64_t cpid)
{
    if (c->nf == c->capf) {
        c->capf = c->capf ? c->capf * 2 : 4;
        c->f = sl_realloc(c->f, (size_t)c->capf * sizeof *c->f);
    }
    cm_file *f = &c->f[c->nf++];
    f->stage = sl_strndup(stage, sl);
    f->final = sl_strndup(final, fl);
    f->len = len;
    f->cpid = cpid;
}

/* Only the sink's own files under its path: a damaged row or blob cannot
 * rename anything else. */
static bool cm_names_ok(const cm_state *cs, const char *dir, const char *stage, const char *final)
{
    int s1, s2;
    uint64_t n1, n2;
    size_t bl = strlen(cs->base), dl = strlen(dir);
    return dl > bl && !strncmp(dir, cs->base, bl) && dir[dl - 1] == '/' && !strstr(dir, "/../") &&
           parse_part_name(stage, ".part-", ".inprogress", &s1, &n1) &&
           parse_part_name(final, "part-", "", &s2, &n2) && s1 == s2;
}

static int committer_open(sl_op *op)
{
    const file_plan *pl = op->plan;
    cm_state *cs = sl_calloc(1, sizeof *cs);
    op->priv = cs;
    size_t plen = strlen(pl->path);
    cs->base = sl_sprintf("%s%s", pl->path, plen && pl->path[plen - 1] == '/' ? "" : "/");
    return SL_OK;
}

static int committer_process(sl_op *op, int input, sl_row *row)
{
    SL_UNUSED(input);
    cm_state *cs = op->priv;
    const sl_value *v = row->vals;
    if (row->n != 7 || v[2].isnull || v[3].isnull) return SL_OK;
    cm_part *c = cm_find(op, cs, v[3].v.s.p, v[3].v.s.len, v[2].v.s.p, v[2].v.s.len);
    if (!c) return SL_ERR;
    c->dirty = true;
    if (v[0].v.i == FS_REP_FILE && !v[4].isnull && !v[5].isnull) {
        cm_add_file(c, v[4].v.s.p, v[4].v.s.len, v[5].v.s.p, v[5].v.s.len, (uint64_t)v[6].v.i,
                    v[1].v.i);
        cm_file *f = &c->f[c->nf - 1];
        if (!cm_names_ok(cs, c->dir, f->stage, f->final))
            return sl_op_fail(op, "partition committer: a report names '%s%s' / '%s', not a file "
                              "of the sink under '%s'", c->dir, f->stage, f->final, cs->base);
    }
    return SL_OK;
}

/* Rename c's files staged at or before cpid (a file already renamed, by its
 * writer, is in place). */
static int cm_commit_files(sl_op *op, cm_part *c, int64_t cpid)
{
    int keep = 0, done = 0, rc = SL_OK;
    for (int i = 0; i < c->nf; i++) {
        cm_file *f = &c->f[i];
        if (rc != SL_OK || f->cpid > cpid) {
            c->f[keep++] = *f;
            continue;
        }
        char *from = sl_sprintf("%s%s", c->dir, f->stage);
        char *to = sl_sprintf("%s%s", c->dir, f->final);
        struct stat sb;
        if (rename(from, to) != 0 && !(errno == ENOENT && stat(to, &sb) == 0))
            rc = sl_op_fail(op, "partition committer: cannot commit '%s' as '%s': %s", from, to,
                            strerror(errno));
        free(from);
        free(to);
        if (rc != SL_OK) {
            c->f[keep++] = *f;
            continue;
        }
        free(f->stage);
        free(f->final);
        done++;
    }
    c->nf = keep;
    if (rc == SL_OK && done) rc = sync_dir(op, c->dir);
    return rc;
}

/* Checkpoint cpid is complete (INT64_MAX: the end without checkpoints):
 * commit the files, then the partitions whose trigger fired. */
static int cm_commit(sl_op *op, cm_state *cs, int64_t cpid)
{
    const file_plan *pl = op->plan;
    int64_t wm = INT64_MIN, now = sl_now_ms();
    for (int i = 0; i < cs->nwm; i++)
        if (cs->wm_cpid[i] <= cpid && cs->wm_at[i] > wm) wm = cs->wm_at[i];
    for (int i = 0; i < cs->np; i++)
        if (cm_commit_files(op, cs->p[i], cpid) != SL_OK) return SL_ERR;
    for (int i = cs->np - 1; i >= 0; i--) {
        cm_part *c = cs->p[i];
        bool older = false; /* a file up to cpid still to commit: not yet */
        for (int k = 0; k < c->nf; k++) older |= c->f[k].cpid <= cpid;
        /* at the end every partition commits, once all its files are in */
        if (!c->dirty || older || (cs->ended && c->nf)) continue;
        bool fire = cs->ended || (pl->part_time ? wm != INT64_MIN && wm > c->ptime + pl->delay_ms
                                                : now - c->first_ms >= pl->delay_ms);
        if (!fire) continue;
        char *fn = sl_sprintf("%s%s", c->dir, pl->success_name);
        int fd = open(fn, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int rc = fd < 0 || fsync(fd) != 0 ? sl_op_fail(op, "partition committer: cannot write "
                                                       "the success file '%s': %s", fn,
                                                       strerror(errno))
                                           : SL_OK;
        if (fd >= 0) close(fd);
        free(fn);
        if (rc != SL_OK) return rc;
        /* files of a later checkpoint commit it again once they are in */
        c->dirty = c->nf > 0;
        if (!c->dirty) { /* forgotten: nothing of it is pending */
            cm_part_free(c);
            cs->p[i] = cs->p[--cs->np];
        }
    }
    return SL_OK;
}

static int committer_end_input(sl_op *op, int input)
{
    SL_UNUSED(input);
    cm_state *cs = op->priv;
    cs->ended = true;
    /* with a final checkpoint to come its completion commits everything */
    if (op->checkpointing && op->final_checkpoint) return SL_OK;
    return cm_commit(op, cs, INT64_MAX);
}

static int committer_checkpoint_complete(sl_op *op, int64_t cpid)
{
    return cm_commit(op, op->priv, cpid);
}

/* Blob: u8 1, "SLPC", u32 n, n x { u16 + part, u16 + dir, u32 nf, nf x
 * { i64 cpid, u64 len, u16 + stage, u16 + final } }, u64 FNV-1a. */
static void put_str16(sl_buf *b, const char *s)
{
    unsigned char l[2];
    size_t n = strlen(s);
    sl_put_le_n(l, n, 2);
    sl_buf_put(b, (const char *)l, 2);
    sl_buf_put(b, s, n);
}

static void put_u(sl_buf *b, uint64_t v, int n)
{
    unsigned char x[8];
    sl_put_le_n(x, v, n);
    sl_buf_put(b, (const char *)x, (size_t)n);
}

static int committer_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    cm_state *cs = op->priv;
    int slot = cs->nwm < FS_WM_RING ? cs->nwm++ : (int)(cpid % FS_WM_RING);
    cs->wm_cpid[slot] = cpid;
    cs->wm_at[slot] = op->current_watermark;
    sl_buf b = {0};
    sl_buf_put(&b, "\001SLPC", 5);
    put_u(&b, (uint64_t)cs->np, 4);
    for (int i = 0; i < cs->np; i++) {
        cm_part *c = cs->p[i];
        put_str16(&b, c->part);
        put_str16(&b, c->dir);
        put_u(&b, (uint64_t)c->nf, 4);
        for (int k = 0; k < c->nf; k++) {
            put_u(&b, (uint64_t)c->f[k].cpid, 8);
            put_u(&b, c->f[k].len, 8);
            put_str16(&b, c->f[k].stage);
            put_str16(&b, c->f[k].final);
        }
    }
    put_u(&b, sl_blob_fnv1a((const unsigned char *)b.p, b.len), 8);
    *len = b.len;
    *blob = sl_buf_take(&b);
    return SL_OK;
}

static int cm_restore_one(sl_op *op, cm_state *cs, const unsigned char *b, size_t len)
{
#define NEED(n)                                                                                   \
    do {                                                                                          \
        if ((size_t)(end - p) < (size_t)(n)) goto damaged;                                        \
    } while (0)
    if (len < 17 || memcmp(b, "\001SLPC", 5) ||
        sl_get_le64(b + len - 8) != sl_blob_fnv1a(b, len - 8))
        goto damaged;
    const unsigned char *p = b + 5, *end = b + len - 8;
    NEED(4);
    uint32_t n = sl_get_le32(p);
    p += 4;
    for (uint32_t i = 0; i < n; i++) {
        const char *s[2];
        size_t sl[2];
        for (int k = 0; k < 2; k++) {
            NEED(2);
            sl[k] = sl_get_le16(p);
            p += 2;
            NEED(sl[k]);
            s[k] = (const char *)p;
            p += sl[k];
        }
        cm_part *c = cm_find(op, cs, s[0], sl[0], s[1], sl[1]);
        if (!c) return SL_ERR;
        c->dirty = true;
        NEED(4);
        uint32_t nf = sl_get_le32(p);
        p += 4;
        for (uint32_t k = 0; k < nf; k++) {
            NEED(16);
            int64_t cp = sl_get_lei64(p);
            uint64_t fl = sl_get_le64(p + 8);
            p += 16;
            const char *t[2];
            size_t tl[2];
            for (int j = 0; j < 2; j++) {
                NEED(2);
                tl[j] = sl_get_le16(p);
                p += 2;
                NEED(tl[j]);
                t[j] = (const char *)p;
                p += tl[j];
            }
            cm_add_file(c, t[0], tl[0], t[1], tl[1], fl, cp);
            if (!cm_names_ok(cs, c->dir, c->f[c->nf - 1].stage, c->f[c->nf - 1].final))
                goto damaged;
        }
    }
    if (p != end) goto damaged;
    return SL_OK;
damaged:
    return sl_op_fail(op, "partition committer: cannot restore: its state is damaged");
#undef NEED
}

static int committer_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    cm_state *cs = op->priv;
    for (int i = 0; i < nblobs; i++)
        if (lens[i] && cm_restore_one(op, cs, blobs[i], lens[i]) != SL_OK) return SL_ERR;
    /* every restored file belongs to a completed checkpoint: commit them now
     * (those its writer renamed already are in place); the partitions wait for
     * their trigger again (process-time: the delay starts over) */
    int64_t now = sl_now_ms();
    for (int i = 0; i < cs->np; i++) {
        cs->p[i]->first_ms = now;
        if (cm_commit_files(op, cs->p[i], INT64_MAX) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

static void committer_close(sl_op *op)
{
    cm_state *cs = op->priv;
    if (!cs) return;
    for (int i = 0; i < cs->np; i++) cm_part_free(cs->p[i]);
    free(cs->p);
    free(cs->base);
    if (cs->wm_tz) sl_tz_destroy(cs->wm_tz);
    free(cs);
    op->priv = NULL;
}

static const sl_op_option file_options[] = {
    {"path", SL_CT_STRING, NULL, NULL,
     "File or directory."},
    {"format", SL_CT_STRING, NULL, NULL,
     "Row format: csv or json."},
    KF_JSON_OPTIONS,
    {"partition-by", SL_CT_STRING, NULL, NULL,
     "Partition columns, ';'-separated: rows go to <path>/<col>=<value>/... directories "
     "(Flink's partitioned filesystem sink), without those columns."},
    {"sink.partition-commit.policy.kind", SL_CT_STRING, NULL, NULL,
     "success-file: write a success file into a partition once it is committed "
     "('metastore' is refused: no metastore)."},
    {"sink.partition-commit.success-file.name", SL_CT_STRING, "_SUCCESS", NULL,
     "Name of the success file."},
    {"sink.partition-commit.trigger", SL_CT_STRING, "process-time", NULL,
     "process-time: commit at a completed checkpoint once the delay has passed since the "
     "partition was created; partition-time: once the watermark passes the partition's "
     "time plus the delay."},
    {"sink.partition-commit.delay", SL_CT_STRING, "0 s", NULL,
     "The delay of the commit trigger."},
    {"sink.partition-commit.watermark-time-zone", SL_CT_STRING, "UTC", NULL,
     "The zone in which a partition's time (a local time) is read as an instant to "
     "compare with the watermark (partition-time trigger), e.g. 'Asia/Shanghai'."},
    {"partition.time-extractor.timestamp-pattern", SL_CT_STRING, NULL, NULL,
     "The partition's time from its values, e.g. '$dt $hr:00:00' (default: the first "
     "partition column's value)."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_file = {
    .abi = SL_OP_ABI_VERSION,
    .name = "file",
    .flags = SL_OPF_SINK,
    .options = file_options,
    .plan = file_plan_new,
    .plan_free = file_plan_free,
    .open = file_open,
    .process = file_process,
    .end_input = file_end_input,
    .close = file_close,
    .snapshot_state = file_snapshot,
    .restore_state = file_restore,
    .checkpoint_complete = file_checkpoint_complete,
    .checkpoint_abort = file_checkpoint_abort,
};

static const sl_op_option committer_options[] = {
    {"path", SL_CT_STRING, NULL, NULL, "The sink's path: the partitions it commits are under it."},
    {"sink.partition-commit.policy.kind", SL_CT_STRING, NULL, NULL,
     "success-file (as the sink's)."},
    {"sink.partition-commit.success-file.name", SL_CT_STRING, "_SUCCESS", NULL,
     "Name of the success file."},
    {"sink.partition-commit.trigger", SL_CT_STRING, "process-time", NULL,
     "process-time or partition-time (as the sink's)."},
    {"sink.partition-commit.delay", SL_CT_STRING, "0 s", NULL, "The delay of the commit trigger."},
    {"sink.partition-commit.watermark-time-zone", SL_CT_STRING, "UTC", NULL,
     "The zone a partition's local time is read in (as the sink's)."},
    {"partition.time-extractor.timestamp-pattern", SL_CT_STRING, NULL, NULL,
     "The partition's time from its values (as the sink's)."},
    SL_OP_OPTIONS_END,
};

/* The partition committer of a partitioned file sink (parallelism 1, fed by
 * the writers' "partition-commit" output). */
/* The writers' reports reach the committer ahead of each checkpoint's
 * barrier only when barriers are aligned: an unaligned barrier overtakes
 * them, and the committer could write a partition's success file before
 * it heard of that partition's last files. */
static int committer_check_job(const sl_vertex *v, const void *plan, const sl_job_check *jc,
                               char *err, size_t errlen)
{
    SL_UNUSED(plan);
    if (jc->unaligned)
        return sl_seterr(err, errlen, "vertex '%s': a filesystem sink's partition commit needs "
                         "aligned checkpoints (its writers report their files ahead of each "
                         "barrier): turn execution.checkpointing.unaligned.enabled off for this "
                         "job", v->id);
    return SL_OK;
}

const sl_op_def sl_op_partition_commit = {
    .abi = SL_OP_ABI_VERSION,
    .name = "partition_commit",
    .flags = SL_OPF_SINK,
    .options = committer_options,
    .plan = committer_plan_new,
    .plan_free = file_plan_free,
    .open = committer_open,
    .process = committer_process,
    .end_input = committer_end_input,
    .close = committer_close,
    .snapshot_state = committer_snapshot,
    .restore_state = committer_restore,
    .checkpoint_complete = committer_checkpoint_complete,
    .check_job = committer_check_job,
};
