/*
 * snapshot.h -- checkpoint and savepoint files: a subtask's state file and
 * the _metadata that ties a snapshot together.
 *
 * Layout of a snapshot directory (checkpoint `<dir>/<jobid>/chk-<n>/` or
 * savepoint `<dir>/savepoint-<6 hex of job id>-<12 hex>/`):
 *   _metadata                      sluice.SnapshotMetadata (proto/snapshot.proto)
 *   <uid>-<subtask>.state          one file per stateful operator subtask
 * Paths inside _metadata are relative to the directory, so a snapshot can be
 * moved and still restored.
 *
 * A state file holds, for one operator subtask: its keyed state entries
 * grouped by key group (in encoded-key order within a group, so the same
 * state always gives the same bytes), its event-time and processing-time
 * timers, also by key group, and its operator-state blob. An index of key
 * groups lets a reader take only the groups of a new key-group range
 * (rescaling) without reading the rest. Every section is length-prefixed and
 * checksummed (CRC-32C); a damaged or truncated file is an error naming the
 * file and what is wrong, never a crash.
 *
 * Files are written to "<path>.tmp", fsynced and renamed into place, and
 * _metadata likewise, so a reader never sees a half-written snapshot.
 */
#ifndef SL_SNAPSHOT_H
#define SL_SNAPSHOT_H

#include "sl.h"
#include "state.h"
#include "timers.h"

#define SL_SNAPSHOT_FORMAT_VERSION 1
/* a state file with its identity (sl_snapw_identity) says version 2 */
#define SL_STATE_FORMAT_IDENT 2

/* ---- writing a subtask's state file (any thread) ---------------------- */

typedef struct sl_snapw sl_snapw;

/* A timer as a snapshot carries it (copied out of sl_timers on the task
 * thread at the barrier). kind 0 = event time, 1 = processing time. */
typedef struct sl_snap_timer {
    int kind;
    int64_t time;
    int kg;
    void *key;      /* owned by the array's creator */
    size_t klen;
    void *ns;
    size_t nslen;
} sl_snap_timer;

sl_snapw *sl_snapw_open(const char *path, int max_parallelism, int kg_first, int kg_last, char *err,
                        size_t errlen);
/* Whose state this is (job id and uid at most SL_SNAP_ID_MAX bytes);
 * right after open, before any other section. Restores check it against
 * _metadata. */
#define SL_SNAP_ID_MAX 1024
int sl_snapw_identity(sl_snapw *w, const char *job_id, const char *uid, int subtask, char *err,
                      size_t errlen);
/* Every entry of the snapshot for key groups [kg_first, kg_last]. */
int sl_snapw_keyed(sl_snapw *w, sl_ksnap *snap, char *err, size_t errlen);
int sl_snapw_timers(sl_snapw *w, const sl_snap_timer *timers, size_t n, char *err, size_t errlen);
int sl_snapw_opstate(sl_snapw *w, const void *blob, size_t len, char *err, size_t errlen);
/* fsync and rename into place; *size = bytes written. Frees w either way. */
int sl_snapw_finish(sl_snapw *w, uint64_t *size, char *err, size_t errlen);
void sl_snapw_abort(sl_snapw *w); /* removes the temp file, frees w */

/* ---- reading -------------------------------------------------------------- */

/* Visit the keyed entries of key groups [kg_first, kg_last] ∩ the file's. */
int sl_snapr_keyed(const char *path, int kg_first, int kg_last,
                   int (*fn)(void *ctx, const sl_kentry *e), void *ctx, char *err, size_t errlen);
int sl_snapr_timers(const char *path, int kg_first, int kg_last,
                    int (*fn)(void *ctx, const sl_snap_timer *t), void *ctx, char *err,
                    size_t errlen);
/* The operator-state blob (*blob malloc'ed, caller frees; *len 0 = none). */
int sl_snapr_opstate(const char *path, void **blob, size_t *len, char *err, size_t errlen);
/* The identity a state file records (known 0: written without one). */
typedef struct sl_snap_ident {
    int known;
    char job_id[SL_SNAP_ID_MAX + 1];
    char uid[SL_SNAP_ID_MAX + 1];
    int subtask;
} sl_snap_ident;
/* Identity, key-group range and max parallelism of a state file, after
 * checking its header, identity, trailer and index. */
int sl_snapr_ident(const char *path, sl_snap_ident *id, int *max_parallelism, int *kg_first,
                   int *kg_last, char *err, size_t errlen);
/* Every byte of a state file as a restore would check it, without
 * restoring: header, identity, index and trailer, then each section the
 * index names, its header and CRC-32C, read in 64 KiB pieces whatever its
 * size (so a check of a large or hostile file holds bounded memory). The
 * error names the file and what is wrong (which section, stored and
 * computed CRC). Any thread; reads the file. */
int sl_snapr_check(const char *path, char *err, size_t errlen);
/* The key-group range and max parallelism recorded in a state file. */
int sl_snapr_info(const char *path, int *max_parallelism, int *kg_first, int *kg_last, char *err,
                  size_t errlen);

/* ---- checking files against _metadata (snapshot_verify.c) ---------------- */

struct Sluice__SnapshotMetadata;
struct Sluice__OperatorState;
struct Sluice__SubtaskState;
/* One subtask's file (ss, of operator os, in md) or every file of md, in
 * dir: each must record the uid, subtask, job and key-group range _metadata
 * gives it. The error names the file, what it holds and what was expected
 * (and the file _metadata gives for what it holds). */
int sl_snapshot_verify_file(const char *dir, const struct Sluice__SnapshotMetadata *md,
                            const struct Sluice__OperatorState *os,
                            const struct Sluice__SubtaskState *ss, char *err, size_t errlen);
int sl_snapshot_verify(const char *dir, const struct Sluice__SnapshotMetadata *md, char *err,
                       size_t errlen);
/* Every state file of md in dir, in full and without restoring: what
 * sl_snapshot_verify checks, plus its size against _metadata's and every
 * section's CRC-32C (sl_snapr_check). Goes on past a damaged file: SL_ERR
 * when any is, with one line per damaged file in out (as many as fit, then
 * "(and N more damaged files)"), *nbad of *nfiles state files damaged. */
int sl_snapshot_check(const char *dir, const struct Sluice__SnapshotMetadata *md, int *nbad,
                      int *nfiles, char *out, size_t outlen);

/* ---- _metadata ------------------------------------------------------------ */

/* Write a packed sluice.SnapshotMetadata as <dir>/_metadata atomically
 * (temp file, fsync, rename, fsync of the directory). */
int sl_snapshot_write_metadata(const char *dir, const void *packed, size_t len, char *err,
                               size_t errlen);
/* Read <dir>/_metadata (or `path` itself when it names the file); caller
 * frees *packed. A missing, truncated or foreign file is a clear error. */
int sl_snapshot_read_metadata(const char *path, void **packed, size_t *len, char *err,
                              size_t errlen);

/* What a restoring subtask (subtask of parallelism) of an operator reads
 * of old subtask ss's files -- the one rule for the task's restore and for
 * choosing which files to download: SL_SHARE_KEYED when the operator is
 * keyed and ss's key groups overlap [kg_first, kg_last]; SL_SHARE_OPSTATE
 * when ss holds an operator-state blob dealt to this subtask (every blob
 * for union state, else round-robin by old subtask index) and the operator
 * takes operator state. 0: none of ss. */
#define SL_SHARE_KEYED 1
#define SL_SHARE_OPSTATE 2
int sl_snapshot_share(const struct Sluice__SubtaskState *ss, int keyed, int kg_first, int kg_last,
                      int takes_opstate, int union_state, int subtask, int parallelism);

/* Download the files md names from the s3:// snapshot directory url into
 * local_dir (created), the shared files of an incremental checkpoint into
 * its sibling shared/, so that the local copy restores like the original
 * (snapshot_inc.c): those of each subtask state for which want(ctx, os, ss)
 * is true, or every one when want is NULL. Names are checked before they
 * become local paths. For the threads that may block on the network
 * (store.h). */
int sl_snapshot_fetch(const char *url, const struct Sluice__SnapshotMetadata *md,
                      int (*want)(void *ctx, const struct Sluice__OperatorState *os,
                                  const struct Sluice__SubtaskState *ss),
                      void *ctx, const char *local_dir, char *err, size_t errlen);

/* mkdir -p (nothing for an s3:// URL: S3 has no directories) */
int sl_mkdirs(const char *path, char *err, size_t errlen);
/* CRC-32C continued over data[n] (crc 0 to start): what every snapshot file
 * checksums with. */
uint32_t sl_snap_crc32c(uint32_t crc, const void *data, size_t n);
/* fsync the directory holding `path`, so a rename into it is durable. */
int sl_fsync_parent(const char *path, char *err, size_t errlen);
/* rm -r of a snapshot directory (only files the snapshot format names:
 * _metadata, *.state, *.tmp, and an incremental checkpoint's private
 * <16 hex>-<name>.rdb files), then the directory itself; for an s3://
 * directory the same objects, _metadata first. */
int sl_snapshot_remove(const char *dir, char *err, size_t errlen);

#endif
