/*
 * udf.h -- the C ABI of user-defined SQL functions (CREATE FUNCTION ...
 * LANGUAGE C USING JAR 'lib.so'), version SL_UDF_ABI_VERSION.
 *
 * A shared object declares each function it exports with one of the
 * macros below. The declaration is plain text placed in the object's
 * ".sluice_udf" ELF section: the SQL client and the JobManager read a
 * function's kind and SQL signature from the file (core/udf_sig.h) without
 * loading it, so planning never runs user code; only TaskManagers dlopen
 * the object, when an operator that calls it opens.
 *
 *   #include "udf.h"
 *
 *   SL_UDF_SCALAR(add_tax, "DOUBLE", "DOUBLE, INT", SL_UDF_DEFAULT)
 *   int add_tax(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
 *   {
 *       out->v.d = args[0].v.d * (1 + args[1].v.i / 100.0);
 *       return 0;
 *   }
 *
 *   SL_UDF_TABLE(split_words, "word STRING, pos INT", "STRING", SL_UDF_DEFAULT)
 *   int split_words(sl_udf_ctx *ctx, const sl_value *args, int nargs)
 *   {
 *       ... ctx->emit(ctx, row) once per output row (row: one value per column) ...
 *       return 0;
 *   }
 *
 *   typedef struct { int64_t n; double sum; } mean_acc;   // no pointers: it is state
 *   static int mean_create(sl_udf_ctx *c, void *acc) { memset(acc, 0, sizeof(mean_acc)); return 0; }
 *   ... accumulate, retract, merge, get_value ...
 *   SL_UDF_AGGREGATE(mean, "DOUBLE", "DOUBLE", 16, "deterministic strict retract merge")
 *   const sl_udf_aggregate mean = {SL_UDF_ABI_VERSION, sizeof(mean_acc), mean_create,
 *                                  mean_add, mean_sub, mean_merge, mean_value};
 *
 * An aggregate function is a table of functions (sl_udf_aggregate) over an
 * accumulator of a fixed number of bytes, declared in the declaration (a
 * decimal literal, checked against the table's acc_size when the object is
 * loaded). The accumulator is kept in the operator's keyed state as bytes,
 * so it must hold no pointers; it is snapshotted, restored and moved
 * between TaskManagers as it is. Flags "retract" and "merge" declare that
 * the table has retract (GROUP BY over an updating input) and merge (HOP,
 * CUMULATE and SESSION windows share partial accumulators; two-phase
 * aggregation). A "strict" aggregate skips rows with a NULL argument.
 *
 * Types are SQL type names (BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL(p, s),
 * STRING, BYTES, TIMESTAMP(3), TIMESTAMP_LTZ(3)); values are sl_value
 * (core/row.h): integers, BOOLEAN and timestamps in v.i, DOUBLE in v.d,
 * strings as a borrowed pointer and length in v.s, DECIMAL(p, s) in v.dec:
 * the unscaled value (the number times 10^s) as a 128-bit two's-complement
 * integer, lo and hi (an argument arrives at its declared scale: the caller
 * casts an integer or another DECIMAL to it, NULL when it does not fit, as
 * Flink casts implicitly; a result or emitted column is read at its declared
 * scale, and one of more than p digits fails the task). A string result or emitted string
 * must stay valid until the call returns: use ctx->alloc (memory of the
 * current record, freed by the host) or static storage.
 *
 * Flags, one string: "deterministic" or "nondeterministic", and "strict"
 * (the function is not called when an argument is NULL: the result is
 * NULL, and a table function emits no row) or "nullable" (called with
 * NULL arguments, args[i].isnull set).
 *
 * A function returns 0, or non-zero after writing a message into
 * ctx->err: the task fails with that message, the function's name and the
 * row's position. Functions run on task threads, several at once (one per
 * subtask): they must be reentrant.
 */
#ifndef SL_UDF_H
#define SL_UDF_H

#include "row.h"

#define SL_UDF_ABI_VERSION 1
#define SL_UDF_SECTION ".sluice_udf"
#define SL_UDF_MAX_ARGS 16            /* arguments of one function */
#define SL_UDF_MAX_COLS 64            /* columns of a table function */

#define SL_UDF_DEFAULT "deterministic strict"

typedef struct sl_udf_ctx sl_udf_ctx;
struct sl_udf_ctx {
    unsigned abi;                      /* SL_UDF_ABI_VERSION */
    /* n bytes valid until the call returns (NULL when the record's memory is exhausted) */
    void *(*alloc)(sl_udf_ctx *ctx, size_t n);
    /* table functions: emit one row of the declared columns (borrowed); non-zero when
     * the row was refused (the output bound): return non-zero at once */
    int (*emit)(sl_udf_ctx *ctx, const sl_value *row);
    char err[256];                     /* the message of a failure */
    void *host;                        /* the host's, do not touch */
};

typedef int (*sl_udf_scalar_fn)(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out);
typedef int (*sl_udf_table_fn)(sl_udf_ctx *ctx, const sl_value *args, int nargs);

#define SL_UDF_MAX_ACC 4096           /* bytes of one aggregate function's accumulator */

/* An aggregate function: the exported object named by SL_UDF_AGGREGATE.
 * Each member returns 0, or non-zero with a message in ctx->err. acc is
 * acc_size bytes, 8-byte aligned; other (merge) is another accumulator of
 * the same function. get_value writes a result of the declared type; a
 * STRING or BYTES result is not supported in this version. */
typedef struct sl_udf_aggregate {
    unsigned abi;                      /* SL_UDF_ABI_VERSION */
    unsigned acc_size;                 /* bytes, as declared */
    int (*create)(sl_udf_ctx *ctx, void *acc);                       /* a fresh accumulator */
    int (*accumulate)(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs);
    int (*retract)(sl_udf_ctx *ctx, void *acc, const sl_value *args, int nargs); /* or NULL */
    int (*merge)(sl_udf_ctx *ctx, void *acc, const void *other);    /* or NULL */
    int (*get_value)(sl_udf_ctx *ctx, const void *acc, sl_value *out);
} sl_udf_aggregate;

#define SL_UDF_DECL__(sym, text)                                                                  \
    __attribute__((used, section(SL_UDF_SECTION), aligned(1))) static const char                 \
        sl_udf_decl_##sym[] = text;

/* A scalar function `sym` (an sl_udf_scalar_fn): result type, argument types
 * ("" for none), flags. */
#define SL_UDF_SCALAR(sym, result, args, flags)                                                   \
    SL_UDF_DECL__(sym, "sluice-udf 1|scalar|" #sym "|" result "|" args "|" flags)
/* A table function `sym` (an sl_udf_table_fn): its columns ("name TYPE, ..."),
 * argument types, flags. */
#define SL_UDF_TABLE(sym, columns, args, flags)                                                   \
    SL_UDF_DECL__(sym, "sluice-udf 1|table|" #sym "|" columns "|" args "|" flags)

/* An aggregate function `sym` (an exported const sl_udf_aggregate): result
 * type, argument types, the accumulator's bytes (a decimal literal), flags
 * (plus "retract" and "merge" when the table has them). */
#define SL_UDF_AGGREGATE(sym, result, args, acc_bytes, flags)                                     \
    SL_UDF_DECL__(sym, "sluice-udf 1|aggregate|" #sym "|" result "|" args "|" flags               \
                       " accumulator=" #acc_bytes)

#endif
