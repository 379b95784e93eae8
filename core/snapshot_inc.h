/*
 * snapshot_inc.h -- the files of incremental RocksDB checkpoints.
 *
 * Layout (Flink's): <state.checkpoints.dir>/<job id>/shared/ holds SST
 * files, each uploaded once and referenced by every checkpoint that needs
 * it; chk-<n>/ holds each subtask's state file (timers, operator state) and
 * the private files of its RocksDB checkpoint (MANIFEST, CURRENT, OPTIONS,
 * ...). Names: an SST file is "<instance>-<RocksDB's name>" in shared/, a
 * private file "<instance>-<RocksDB's name>.rdb" in chk-<n>/, where
 * <instance> is the 16 hex digits of the RocksDB instance that wrote it
 * (sl_kstate_rocksdb_instance), so names never collide across subtasks,
 * restarts or TaskManagers, and an SST file already in shared/ is the same
 * immutable file and is not copied again.
 */
#ifndef SL_SNAPSHOT_INC_H
#define SL_SNAPSHOT_INC_H

#include <stddef.h>
#include <stdint.h>

struct Sluice__SubtaskState;

#define SL_INC_SHARED "shared"
#define SL_INC_PRIVATE_SUFFIX ".rdb"

typedef struct sl_inc_files {
    char **shared;   /* names in shared/ */
    size_t nshared;
    char **priv;     /* names in the snapshot directory */
    size_t npriv;
    uint64_t size;   /* bytes of all of them */
    uint64_t written; /* bytes copied anew */
} sl_inc_files;

void sl_inc_files_free(sl_inc_files *f);

/* The shared directory of snapshot directory snap_dir (its sibling). */
char *sl_inc_shared_dir(const char *snap_dir);

/* Upload a local RocksDB checkpoint directory: SST files into shared_dir
 * unless there already, the rest into snap_dir, each by hard link (a copy
 * across file systems), through a temp name and rename; then fsync of both
 * directories. */
int sl_inc_upload(const char *local_dir, const char *instance, const char *snap_dir,
                  sl_inc_files *out, char *err, size_t errlen);

/* Put the files of an incremental subtask state from snapshot snap_dir back
 * under RocksDB's names into stage_dir (created; emptied first), by hard
 * link or copy, ready for sl_rocksdb_read_checkpoint. */
int sl_inc_stage(const char *snap_dir, const struct Sluice__SubtaskState *ss,
                 const char *stage_dir, char *err, size_t errlen);

/* Whether a name is one this module writes ("<16 hex>-<name>" with no '/'),
 * with suffix ".rdb" when priv. */
int sl_inc_name_ok(const char *name, int priv);

/* ---- reference counts of shared files ------------------------------------ */

/* How many retained checkpoints reference each shared file of a job. */
typedef struct sl_shared_refs sl_shared_refs;

sl_shared_refs *sl_shared_refs_new(void);
void sl_shared_refs_free(sl_shared_refs *r);
/* A checkpoint that references these files is retained (a name listed
 * twice in one call counts once). */
void sl_shared_refs_add(sl_shared_refs *r, char *const *names, size_t n);
/* A checkpoint that referenced them is dropped. Returns the names no
 * retained checkpoint references any more (the caller deletes those files
 * and frees the array and its strings); *ndead their number. */
char **sl_shared_refs_release(sl_shared_refs *r, char *const *names, size_t n, size_t *ndead);
/* References to name (0 if unknown). */
int sl_shared_refs_count(const sl_shared_refs *r, const char *name);
size_t sl_shared_refs_size(const sl_shared_refs *r); /* distinct files referenced */
/* The i-th referenced name, in strcmp order (i < sl_shared_refs_size). */
const char *sl_shared_refs_name(const sl_shared_refs *r, size_t i);

/* Delete the files in shared_dir that incremental checkpoints write (and
 * their temp files) but `keep` (n names, strcmp-sorted) does not list; then
 * the directory itself if nothing is left. For the end of a job, when no
 * checkpoint can still reference a file that no retained one does. */
int sl_inc_sweep(const char *shared_dir, const char *const *keep, size_t n, char *err,
                 size_t errlen);

#endif
