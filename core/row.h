/*
 * row.h -- schemas, values, rows and their compact binary form.
 *
 * A row's schema is fixed per edge, so a value carries no type tag: the
 * schema says how to read it. Integers of every width, BOOLEAN and
 * TIMESTAMP(3) (milliseconds since the epoch, UTC) live in `i`; DOUBLE in
 * `d`; STRING and BYTES are a pointer and a length that are *borrowed* --
 * from the network buffer the row was decoded from, or from an operator's
 * scratch arena -- and are valid only until the operator returns.
 *
 * Binary form, read in place by sl_row_decode:
 *   u8  kind                       (+I -U +U -D)
 *   u8  null bitmap[ceil(n/8)]     (bit i set = field i is NULL)
 *   per non-null field, by type:   BOOLEAN 1 byte; INT 4 bytes; BIGINT,
 *                                  DOUBLE, TIMESTAMP 8 bytes (little endian);
 *                                  STRING, BYTES u32 length + bytes
 *     (the original seven, byte for byte as before), and: TINYINT 1;
 *     SMALLINT 2; FLOAT 4 (float bits); DATE 4 (days); TIME 4 (ms of the
 *     day) + 4 (nanos of the ms) when p > 3; TIMESTAMP(p > 3) 8 (ms) + 4
 *     (nanos of the ms); DECIMAL 8 bytes (p <= 18) or 16 (lo, hi) of the
 *     unscaled two's complement value; INTERVAL YEAR TO MONTH 4 (months),
 *     DAY TO SECOND 8 (ms); ARRAY, MAP, MULTISET, ROW u32 length + their
 *     canonical bytes:
 *       ARRAY    u32 count, null bitmap[ceil(count/8)], non-null elements
 *                each in its type's field encoding (above)
 *       ROW      null bitmap[ceil(nfields/8)], non-null fields likewise
 *       MAP      u32 count, then the keys as an ARRAY body without the
 *                count (bitmap + keys), then the values likewise
 *       MULTISET a MAP<element, INT NOT NULL> of element -> occurrences
 *     Nested values are borrowed through v.s like STRING, so copying, key
 *     bytes and hashing treat them as byte strings; sl_nested_* read them.
 */
#ifndef SL_ROW_H
#define SL_ROW_H

#include <stdbool.h>
#include "sl.h"
#include "text.h" /* sl_ts_format, sl_ts_text */
#include "dtype.h"

struct sl_arena;

typedef enum {
    SL_KIND_INSERT = 0,        /* +I */
    SL_KIND_UPDATE_BEFORE = 1, /* -U */
    SL_KIND_UPDATE_AFTER = 2,  /* +U */
    SL_KIND_DELETE = 3         /* -D */
} sl_rowkind;

#define SL_MAX_FIELDS 256
#define SL_TS_NONE INT64_MIN /* a record without an event timestamp */

typedef struct sl_field {
    char *name;   /* owned */
    sl_type type; /* == dt->kind */
    const sl_dtype *dt; /* the full type (interned, never NULL) */
} sl_field;

typedef struct sl_schema {
    int n;
    sl_field *fields; /* owned, n entries */
} sl_schema;

typedef struct sl_value {
    bool isnull;
    union {
        int64_t i; /* BOOLEAN (0/1), TINYINT, SMALLINT, INT, BIGINT, TIMESTAMP (ms since the
                    * epoch), DATE (days since 1970-01-01), TIME (ms of the day),
                    * INTERVAL_YM (months), INTERVAL_DT (ms) */
        double d;  /* DOUBLE; FLOAT (a value rounded to float) */
        struct {
            const char *p; /* borrowed */
            uint32_t len;
        } s;           /* STRING, BYTES; ARRAY, MAP, MULTISET, ROW: their canonical bytes */
        struct {
            int64_t ms;    /* aliases i */
            int32_t nano;  /* nanoseconds within the millisecond, 0..999999 (p > 3) */
        } ts;          /* TIMESTAMP(p), TIME(p) */
        struct {
            uint64_t lo;
            int64_t hi;
        } dec;         /* DECIMAL: the unscaled value, 128-bit two's complement */
    } v;
} sl_value;
_Static_assert(sizeof(sl_value) == 24, "sl_value must stay 24 bytes");

typedef struct sl_row {
    sl_rowkind kind;
    int n;           /* number of values */
    sl_value *vals;  /* borrowed array of n values */
    int64_t ts;      /* event timestamp or SL_TS_NONE */
} sl_row;

const char *sl_type_name(sl_type t);               /* "BIGINT" */
int sl_type_parse(const char *s, sl_type *out);    /* SL_OK / SL_ERR; accepts TIMESTAMP(3), TIMESTAMP_LTZ(3), VARCHAR, INTEGER... */
const char *sl_rowkind_short(sl_rowkind k);         /* "+I" */

void sl_schema_init(sl_schema *s);
void sl_schema_add(sl_schema *s, const char *name, sl_type t); /* the basic descriptor of t */
void sl_schema_add_dt(sl_schema *s, const char *name, const sl_dtype *dt);
int sl_schema_find(const sl_schema *s, const char *name); /* index or -1, case-insensitive */
void sl_schema_copy(sl_schema *dst, const sl_schema *src);
void sl_schema_free(sl_schema *s);
/* Same names and storage types (sl_dtype.phys) column by column. */
bool sl_schema_equal(const sl_schema *a, const sl_schema *b);
/* Append the columns of "name TYPE, name TYPE" to s (any type sl_dtype_parse
 * reads; commas inside <> and () belong to the type). SL_ERR with err saying which column is wrong,
 * a name twice, or none at all. */
int sl_schema_parse(const char *text, sl_schema *s, char *err, size_t errlen);

/* Encoded size of a row (bytes). */
size_t sl_row_size(const sl_row *r, const sl_schema *s);
/* Encode r into dst[cap]; returns bytes written, or 0 if it does not fit. */
size_t sl_row_encode(const sl_row *r, const sl_schema *s, uint8_t *dst, size_t cap);
/* Decode in place: out->vals must have room for s->n values; string values
 * point into src. Checks every length against len: a damaged frame gives
 * SL_ERR with a message, never a read out of bounds. */
int sl_row_decode(const uint8_t *src, size_t len, const sl_schema *s, sl_row *out,
                  char *err, size_t errlen);

/* Serialize the key columns of a row (the bytes that are hashed and compared
 * for keyed state and hash partitioning). Returns bytes written or 0 if it
 * does not fit. */
size_t sl_row_key_encode(const sl_row *r, const sl_schema *s, const int *keys, int nkeys,
                         uint8_t *dst, size_t cap);
/* The inverse of sl_row_key_encode: the key columns' values into out[nkeys]
 * (strings point into src). SL_ERR when the bytes are not such a key. */
int sl_row_key_decode(const uint8_t *src, size_t len, const sl_schema *s, const int *keys,
                      int nkeys, sl_value *out);
/* The number of bytes sl_row_key_encode needs for that key. */
size_t sl_row_key_size(const sl_row *r, const sl_schema *s, const int *keys, int nkeys);

/* Format one value the way Flink's print sink does (TIMESTAMP as
 * 2026-01-01T00:00:00.020, NULL as "null"). Returns chars written (snprintf-like). */
int sl_value_format(char *dst, size_t cap, const sl_value *v, sl_type t);

/* Order two values of one column of type dt, as ORDER BY does: NULL is the
 * smallest (first ascending, last descending); numbers, dates and times by
 * value (TIME/TIMESTAMP with p > 3 to the nanosecond, DECIMAL by its unscaled
 * value, both of the column's scale), strings, bytes and nested values by
 * their bytes. Returns <0, 0 or >0. */
int sl_value_cmp(const sl_dtype *dt, const sl_value *a, const sl_value *b);
/* The same for any type (DECIMAL with its scale, TIME/TIMESTAMP with their
 * precision, ARRAY [1, 2], MAP {a=1}, ROW +I[1, a], nested NULLs). The
 * nested bytes must have been validated (sl_row_decode does). */
int sl_value_format_dt(char *dst, size_t cap, const sl_value *v, const sl_dtype *dt);

/* ---- one value in the binary form (a row field, a nested element) ------ */

/* Bytes a non-null value takes. */
size_t sl_datum_size(const sl_value *v, const sl_dtype *dt);
/* Write a non-null value at p (room for sl_datum_size bytes); returns its size. */
size_t sl_datum_put(uint8_t *p, const sl_value *v, const sl_dtype *dt);
/* Read and check one non-null value from p[0..avail): *used gets its size.
 * Nested content is validated completely. SL_ERR with `why` (no field name). */
int sl_datum_get(const uint8_t *p, size_t avail, const sl_dtype *dt, sl_value *v, size_t *used,
                 char *why, size_t whylen);

/* ---- nested values: readers and a builder ------------------------------- */

/* Reads an ARRAY's elements, a ROW's fields or a MAP's / MULTISET's
 * entries in order, from validated bytes (what sl_row_decode or
 * sl_nested_build produced); values borrow from those bytes. */
typedef struct sl_nested_reader {
    const sl_dtype *dt; /* the ARRAY/MAP/MULTISET/ROW type */
    uint32_t n;         /* elements, entries or fields */
    uint32_t i;         /* the next one */
    const uint8_t *bm, *p;   /* null bitmap and next value (keys for a MAP) */
    const uint8_t *vbm, *vp; /* MAP/MULTISET: the values' bitmap and next value */
} sl_nested_reader;

/* Open a reader on v (non-null, of type dt); returns the count. */
uint32_t sl_nested_open(sl_nested_reader *r, const sl_dtype *dt, const sl_value *v);
/* The next element / field (into *out) or MAP entry (key into *out, value
 * into *mapval, which may be NULL otherwise); false at the end. */
bool sl_nested_next(sl_nested_reader *r, sl_value *out, sl_value *mapval);
/* The type of element/field i (ROW: its field's type; MAP: the key type). */
const sl_dtype *sl_nested_elem_type(const sl_dtype *dt, uint32_t i);
/* Element / field / entry i (O(i): it walks from the start). */
bool sl_nested_get(const sl_dtype *dt, const sl_value *v, uint32_t i, sl_value *out,
                   sl_value *mapval);

/* Build the canonical bytes of a nested value into arena a and point *out
 * at them: ARRAY from vals[n]; ROW from vals[dt->nfields] (n ignored); MAP
 * from keys vals[n] and values mapvals[n]; MULTISET from elements vals[n]
 * and counts mapvals[n] (INT). Element values of nested types are their
 * own canonical bytes. SL_ERR when the arena is full or the value exceeds
 * 4 GiB; MAP keys are written as given (no de-duplication). */
int sl_nested_build(const sl_dtype *dt, const sl_value *vals, uint32_t n, const sl_value *mapvals,
                    struct sl_arena *a, sl_value *out);


/* A bump allocator for per-record scratch (strings made by expressions).
 * Reset per record; grows only up to `limit` bytes, then sl_arena_alloc
 * returns NULL. */
typedef struct sl_arena {
    char *buf;
    size_t used, cap, limit;
} sl_arena;

void sl_arena_init(sl_arena *a, size_t limit);
void *sl_arena_alloc(sl_arena *a, size_t n);
static inline void sl_arena_reset(sl_arena *a) { a->used = 0; }
void sl_arena_free(sl_arena *a);

#endif
