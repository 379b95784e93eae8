/*
 * udf_sig.h -- user-defined functions as Sluice sees them (the ABI their
 * objects implement is udf.h): signatures read from an object's
 * ".sluice_udf" ELF section without loading it, a function set carried in
 * a vertex's "functions" config, and its resolution on a TaskManager.
 *
 * Why an ELF section and not a side file: the declaration is compiled into
 * the object from the same source as the function, so it cannot go stale
 * or be lost on the way; and it is plain text (no pointers), so reading it
 * needs no relocation -- a small reader of section headers (sl_udf_read_decls)
 * gets it from the file while nothing of the object runs. The SQL client
 * type-checks calls with it; the TaskManager checks it again against the
 * object it loads.
 */
#ifndef SL_UDF_SIG_H
#define SL_UDF_SIG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <jansson.h>

#include "row.h"
#include "udf.h"

typedef enum { SL_UDF_SCALAR_KIND, SL_UDF_TABLE_KIND, SL_UDF_AGG_KIND } sl_udf_kind;

typedef struct sl_udf_sig {
    char *name;          /* the SQL name (CREATE FUNCTION name); the symbol for a bare decl */
    char *symbol;        /* the C function in the object */
    char *library;       /* the object: a path, or jar:<id> once uploaded */
    char *decl;          /* the declaration's text as found in the object */
    sl_udf_kind kind;
    sl_type result;      /* scalar, aggregate: the result type */
    const sl_dtype *resdt; /* ... its full type (DECIMAL(p, s); else the basic one) */
    sl_schema cols;      /* table: the columns */
    int nargs;
    sl_type args[SL_UDF_MAX_ARGS];
    const sl_dtype *argdt[SL_UDF_MAX_ARGS]; /* their full types (interned, never NULL) */
    bool deterministic;
    bool strict;         /* NULL in, NULL out (not called); aggregates skip the row */
    unsigned acc_size;   /* aggregate: its accumulator's bytes (declared) */
    bool python;         /* LANGUAGE PYTHON: symbol is the function in module `module`,
                            whose text is `source`; fn is the Python host's handle */
    char *module;        /* python: the module's name */
    char *source;        /* python: the module's text (travels inside the job graph) */
    bool retract;        /* aggregate: declares retract */
    bool merge;          /* aggregate: declares merge */
    _Atomic(void *) fn;  /* resolved on a TaskManager (sl_udf_set_resolve), else NULL */
} sl_udf_sig;

typedef struct sl_udf_set {
    int n;
    sl_udf_sig **f;      /* owned */
    pthread_mutex_t mu;  /* resolution */
    int ndl;
    void **dl;           /* dlopen handles, closed at destroy */
} sl_udf_set;

/* The Python host (LANGUAGE PYTHON), registered by the TaskManager, which
 * alone links libpython; elsewhere there is none and Python functions do
 * not resolve. The callbacks are thread-safe. */
typedef enum {
    SL_UDF_AGG_CREATE,
    SL_UDF_AGG_ACCUMULATE,
    SL_UDF_AGG_RETRACT,
    SL_UDF_AGG_MERGE,
    SL_UDF_AGG_VALUE
} sl_udf_agg_step;

typedef struct sl_udf_host {
    /* Load s->module from s->source (once per module text) and find
     * s->symbol in it: *handle, or SL_ERR with err (the exception's last
     * line: "SyntaxError: ..."). */
    int (*resolve)(sl_udf_sig *s, void **handle, char *err, size_t errlen);
    /* Call scalar function `handle` of signature s with args (of the
     * declared types); a string result is copied into scratch. SL_ERR with
     * err: the exception's last line, or a result of the wrong type. */
    int (*call)(void *handle, const sl_udf_sig *s, const sl_value *args, int nargs,
                sl_arena *scratch, sl_value *out, char *err, size_t errlen);
    /* Call table function `handle` as an sl_udf_table_fn is called: each
     * row it yields goes to ctx->emit (strings from ctx->alloc), the GIL
     * released around each emit; 0, or non-zero with ctx->err. */
    int (*call_table)(void *handle, const sl_udf_sig *s, sl_udf_ctx *ctx, const sl_value *args,
                      int nargs);
    /* One step of aggregate function `handle` (an AggregateFunction object)
     * on its accumulator acc: s->acc_size bytes, a little-endian u32 length
     * then that many bytes of the pickled accumulator (the operator keeps
     * them in keyed state). CREATE writes a fresh one into acc; ACCUMULATE
     * and RETRACT apply args and write it back; MERGE merges `other` (the
     * same layout) into acc; VALUE writes get_value's result to out (strings
     * into scratch). SL_ERR with err: the exception, or an accumulator that
     * pickles past its bytes. */
    int (*agg)(void *handle, const sl_udf_sig *s, sl_udf_agg_step step, uint8_t *acc,
               const uint8_t *other, const sl_value *args, int nargs, sl_arena *scratch,
               sl_value *out, char *err, size_t errlen);
    /* Bundles (python.fn-execution.bundle.size): between begin and end the
     * calling thread holds the interpreter, so the calls in between (call,
     * agg) take no lock of their own. Nothing may block on another task
     * inside a bundle (emit only after end). */
    void (*bundle_begin)(void);
    void (*bundle_end)(void);
} sl_udf_host;

void sl_udf_set_host(const sl_udf_host *h);  /* at start-up, before any task */
const sl_udf_host *sl_udf_host_get(void);   /* NULL: none in this process */

/* LANGUAGE PYTHON: the signature of function `func` of the module text in
 * the file at `path` (the module named `module`), read from its decorator
 * without running it -- PyFlink's
 *     @udf(result_type=DataTypes.BIGINT(), input_types=[DataTypes.BIGINT()])
 *     def add_one(x): ...
 * (types also as strings, 'BIGINT'; deterministic=False). Caller frees;
 * NULL with err naming the file and line. */
sl_udf_sig *sl_udf_python_decl(const char *path, const char *module, const char *func,
                               char *err, size_t errlen);

/* Read every declaration in the object at `path`: an array of *n signatures
 * (caller frees each with sl_udf_sig_free, then the array), named by their
 * symbols. SL_ERR with err when the file is not a 64-bit ELF object of this
 * machine's byte order, has no .sluice_udf section, or a declaration is
 * malformed (naming it). Loads nothing. */
int sl_udf_read_decls(const char *path, sl_udf_sig ***out, int *n, char *err, size_t errlen);

/* The declaration of `symbol` in the object at `path` (caller frees), or
 * NULL with err ("... declares no function 'x' (it declares a, b)"). */
sl_udf_sig *sl_udf_find_decl(const char *path, const char *symbol, char *err, size_t errlen);

/* Does the object at `path` export `symbol` as kind needs it -- a function,
 * or for an aggregate the data object of its sl_udf_aggregate table (its
 * dynamic symbol table, read without loading it)? SL_ERR with err when not. */
int sl_udf_exports(const char *path, const char *symbol, sl_udf_kind kind, char *err,
                   size_t errlen);

/* One declaration's text ("sluice-udf 1|scalar|..."), as the section holds
 * it, into a signature named by its symbol (caller frees), or NULL with err. */
sl_udf_sig *sl_udf_parse_decl(const char *text, char *err, size_t errlen);

/* A type of a declaration: BOOLEAN, INT, BIGINT, DOUBLE, STRING, BYTES,
 * TIMESTAMP(3), TIMESTAMP_LTZ(3) (both SL_T_TIMESTAMP), DATE, and
 * DECIMAL(p, s) (DECIMAL alone is DECIMAL(10, 0), as in Flink); *dt (when
 * not NULL) gets the full type. */
int sl_udf_type_parse(const char *text, sl_type *t);
int sl_udf_dtype_parse(const char *text, const sl_dtype **dt);
/* A C function's DECIMAL value (result, table column) of declared type dt:
 * SL_OK when it is not a DECIMAL, NULL, or of at most dt's precision in
 * digits; else SL_ERR with "returned an unscaled DECIMAL of more than p
 * digits where DECIMAL(p, s) was declared". */
int sl_udf_check_dec(const sl_dtype *dt, const sl_value *v, char *err, size_t errlen);

sl_udf_sig *sl_udf_sig_copy(const sl_udf_sig *s);
void sl_udf_sig_free(sl_udf_sig *s);   /* NULL is a no-op */

/* "BIGINT add_one(BIGINT)" / "TABLE(word STRING, pos INT) split(STRING)" /
 * (an aggregate's as a scalar's); caller frees. */
char *sl_udf_sig_text(const sl_udf_sig *s);

/* As a vertex's "functions" entry, and back (checking every field). */
json_t *sl_udf_sig_json(const sl_udf_sig *s);
sl_udf_set *sl_udf_set_from_json(const json_t *arr, char *err, size_t errlen);

sl_udf_set *sl_udf_set_new(void);
void sl_udf_set_add(sl_udf_set *set, sl_udf_sig *s);     /* takes s */
void sl_udf_set_destroy(sl_udf_set *set);                /* NULL is a no-op */
sl_udf_sig *sl_udf_set_find(const sl_udf_set *set, const char *name); /* case-insensitive */

/* On a TaskManager, when an operator opens: load each function's object
 * (a path by now), check that it still declares the same signature, and
 * find the function (an aggregate's table: its ABI, accumulator size and
 * declared retract/merge checked). Idempotent and thread-safe (subtasks of one plan
 * open concurrently). SL_ERR with err naming the function and the object. */
int sl_udf_set_resolve(sl_udf_set *set, char *err, size_t errlen);

#endif
