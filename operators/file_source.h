/*
 * file_source.h -- the reading half of the `file-source` operator
 * (operators/file_source.c), shared with the lookup join
 * (operators/lookup_join.c), which loads a whole 'filesystem' table into
 * memory: the same options, the same listing of a path's files, the same
 * record framing and decoding, the same errors naming file:line.
 */
#ifndef SL_OP_FILE_SOURCE_H
#define SL_OP_FILE_SOURCE_H

#include <stdbool.h>

#include "jobgraph.h"
#include "operator.h"

/* A filesystem table's reading options, as a vertex's config gives them. */
typedef struct sl_file_opts {
    char *path;          /* a file or a directory, "file://" stripped (owned) */
    int fmt;             /* kf_format: KF_JSON or KF_CSV */
    bool ignore_errors;  /* the format's ignore-parse-errors */
} sl_file_opts;

/* Read "path", "format" (json | csv) and the format's ignore-parse-errors
 * from v's config. SL_ERR with err naming the vertex and the option. */
int sl_file_opts_parse(const sl_vertex *v, sl_file_opts *o, char *err, size_t errlen);
void sl_file_opts_free(sl_file_opts *o);

/* Called with each decoded row (borrowed: strings point into the reader's
 * buffers until fn returns). Anything but SL_OK stops the read and is
 * returned (fn sets op->err for SL_ERR). */
typedef int (*sl_file_row_fn)(void *ctx, const sl_row *row);

/* Read every record of every file under o->path (the files sorted by name,
 * as the file source lists them) decoded as `schema`, calling fn per row.
 * Task thread; blocking reads through one buffer, no allocation per record.
 * SL_OK at the end, SL_ERR with op->err prefixed by `who` (e.g. "lookup
 * table 'rates'"): a path that cannot be read, a record that does not decode
 * (file:line, unless ignore_errors: then skipped and logged), or fn's error. */
int sl_file_read_all(sl_op *op, const char *who, const char *vid, const sl_file_opts *o,
                     const sl_schema *schema, sl_file_row_fn fn, void *ctx);

#endif
