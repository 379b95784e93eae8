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
 */
#ifndef SL_ROW_H
#define SL_ROW_H

#include <stdbool.h>
#include "sl.h"
#include "text.h" /* sl_ts_format, sl_ts_text */

typedef enum {
    SL_T_NULL = 0, /* only the type of a bare NULL literal in expressions */
    SL_T_BOOLEAN,
    SL_T_INT,
    SL_T_BIGINT,
    SL_T_DOUBLE,
    SL_T_STRING,
    SL_T_BYTES,
    SL_T_TIMESTAMP /* TIMESTAMP(3) / TIMESTAMP_LTZ(3): ms since epoch */
} sl_type;

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
    sl_type type;
} sl_field;

typedef struct sl_schema {
    int n;
    sl_field *fields; /* owned, n entries */
} sl_schema;

typedef struct sl_value {
    bool isnull;
    union {
        int64_t i; /* BOOLEAN (0/1), INT, BIGINT, TIMESTAMP */
        double d;  /* DOUBLE */
        struct {
            const char *p; /* borrowed */
            uint32_t len;
        } s;           /* STRING, BYTES */
    } v;
} sl_value;

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
void sl_schema_add(sl_schema *s, const char *name, sl_type t);
int sl_schema_find(const sl_schema *s, const char *name); /* index or -1, case-insensitive */
void sl_schema_copy(sl_schema *dst, const sl_schema *src);
void sl_schema_free(sl_schema *s);
bool sl_schema_equal(const sl_schema *a, const sl_schema *b);
/* Append the columns of "name TYPE, name TYPE" to s (SQL type names as
 * sl_type_parse reads them). SL_ERR with err saying which column is wrong,
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
