/*
 * store.h -- where checkpoints and savepoints live: a local directory or
 * an S3 bucket (`s3://bucket/path`).
 *
 * Every directory of the snapshot code (state.checkpoints.dir,
 * state.savepoints.dir, a savepoint target, a restore path) is either a
 * local path or an s3:// URL. Local directories keep their own code
 * (snapshot.c: temp file, fsync, rename); for an s3:// one the snapshot
 * code asks this module to move whole objects: a state file written
 * locally is uploaded, _metadata is put from memory, a restore downloads
 * the files it needs, retention and disposal delete objects. An object
 * appears only when its upload is complete (S3 has no half-written
 * objects), which stands in for the local temp-and-rename.
 *
 * The S3 client is libcurl (Debian's libcurl4, 7.88), which also signs the
 * requests (AWS signature version 4, CURLOPT_AWS_SIGV4); the server, region,
 * keys, part size and timeouts come from the daemon's configuration (s3.*),
 * set once by sl_store_configure at start-up. Files larger than
 * s3.multipart.part-size are uploaded with S3's multipart upload. Every call
 * is synchronous and blocks on the network: callers are the TaskManager's
 * snapshot writer and deploy worker and the JobManager's I/O worker, never
 * an event loop or a task thread. Any thread may call; each thread keeps
 * its own curl handle (and with it its connections).
 */
#ifndef SL_STORE_H
#define SL_STORE_H

#include <stddef.h>
#include <stdint.h>

struct sl_config;

#define SL_STORE_S3_PREFIX "s3://"

/* Read s3.* from the daemon's configuration and start libcurl (once per
 * process, before any other call; not thread-safe). A bad s3.endpoint is
 * an error naming it. */
int sl_store_configure(const struct sl_config *c, char *err, size_t errlen);

/* Whether path is an s3:// URL (else a local path). */
int sl_store_is_s3(const char *path);

/* How a snapshot directory is shown (REST, CLI): "file:/x" for a local
 * path, the URL itself for s3://. Caller frees. */
char *sl_store_uri(const char *dir);

/* Check the form of an s3:// URL: "s3://<bucket>/<key prefix>" with a
 * valid bucket name, no empty, "." or ".." segment; the error names what
 * is wrong. */
int sl_store_check_url(const char *url, char *err, size_t errlen);

/* Upload the local file at `local` as object `url` (streamed, constant
 * memory); *size (may be NULL) = its bytes. */
int sl_store_put_file(const char *local, const char *url, uint64_t *size, char *err,
                      size_t errlen);
/* Put len bytes from memory as object `url`. */
int sl_store_put_mem(const char *url, const void *data, size_t len, char *err, size_t errlen);
/* Download object `url` to local file `local` (through `local`.tmp and a
 * rename). */
int sl_store_get_file(const char *url, const char *local, char *err, size_t errlen);
/* Read object `url` into memory (*data malloc'ed, caller frees), at most
 * max bytes. SL_DONE (err set) when there is no such object. */
int sl_store_get_mem(const char *url, size_t max, void **data, size_t *len, char *err,
                     size_t errlen);
/* Size of object `url`: SL_OK, SL_DONE when absent, SL_ERR on failure. */
int sl_store_size(const char *url, uint64_t *size, char *err, size_t errlen);
/* Delete object `url` (absent is fine). */
int sl_store_delete(const char *url, char *err, size_t errlen);
/* Every object under directory `url` (recursively): fn(ctx, name, size)
 * with name relative to it ("chk-3/_metadata"); fn returning SL_ERR stops
 * the listing with that result. A page whose request is retried may give
 * some names twice: fn must be idempotent (the callers delete). */
int sl_store_list(const char *url, int (*fn)(void *ctx, const char *name, uint64_t size),
                  void *ctx, char *err, size_t errlen);

#endif
