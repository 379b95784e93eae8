/*
 * dtype.h -- SQL data types: the root kinds and full, interned type
 * descriptors.
 *
 * A value carries no type tag (row.h); its column's descriptor says how to
 * read it. `sl_type` is the root kind (what the binary form and the value
 * union depend on); `sl_dtype` adds what Flink's logical types add: NOT
 * NULL, a length or precision and scale, the CHAR/VARCHAR, BINARY/VARBINARY,
 * TIMESTAMP/TIMESTAMP_LTZ and interval-qualifier variants, element, key,
 * value and field types of the collections and rows, and the canonical text
 * (`DECIMAL(10, 2) NOT NULL`, `ROW<`a` INT, `b` ARRAY<STRING>>`).
 *
 * Descriptors are interned and immutable: equal types are the same pointer
 * (compare with ==), a schema field copies a pointer, and a descriptor lives
 * as long as the process. The table grows as types arrive and is bounded
 * (SL_DTYPE_MAX distinct types); beyond it sl_dtype_parse and the
 * constructors fail with a message, the table never grows without bound. Every function here is thread-safe.
 */
#ifndef SL_DTYPE_H
#define SL_DTYPE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Root kinds. The first eight are the original ones and keep their numbers;
 * new kinds are only ever appended. */
typedef enum {
    SL_T_NULL = 0, /* only the type of a bare NULL literal in expressions */
    SL_T_BOOLEAN,
    SL_T_INT,
    SL_T_BIGINT,
    SL_T_DOUBLE,
    SL_T_STRING,    /* CHAR(n), VARCHAR(n), STRING */
    SL_T_BYTES,     /* BINARY(n), VARBINARY(n), BYTES */
    SL_T_TIMESTAMP, /* TIMESTAMP(p), TIMESTAMP_LTZ(p): ms since epoch (+ nanos of the ms, p > 3) */
    SL_T_TINYINT,
    SL_T_SMALLINT,
    SL_T_FLOAT,
    SL_T_DECIMAL,     /* 128-bit unscaled integer (sl_value.v.dec) */
    SL_T_DATE,        /* days since 1970-01-01 */
    SL_T_TIME,        /* ms of the day (+ nanos of the ms, p > 3) */
    SL_T_INTERVAL_YM, /* months */
    SL_T_INTERVAL_DT, /* milliseconds */
    SL_T_ARRAY,       /* canonical nested bytes (see row.h) */
    SL_T_MAP,
    SL_T_MULTISET,
    SL_T_ROW
} sl_type;
#define SL_T_COUNT ((int)SL_T_ROW + 1)

/* Variants of a kind (sl_dtype.variant). */
enum {
    SL_DV_NONE = 0,
    SL_DV_CHAR, SL_DV_VARCHAR,      /* STRING = VARCHAR(SL_DTYPE_MAX_LEN) */
    SL_DV_BINARY, SL_DV_VARBINARY,  /* BYTES = VARBINARY(SL_DTYPE_MAX_LEN) */
    SL_DV_LTZ,                      /* TIMESTAMP WITH LOCAL TIME ZONE */
    /* interval qualifiers: YEAR TO MONTH kinds, then DAY TO SECOND kinds */
    SL_DV_YEAR, SL_DV_YEAR_TO_MONTH, SL_DV_MONTH,
    SL_DV_DAY, SL_DV_DAY_TO_HOUR, SL_DV_DAY_TO_MINUTE, SL_DV_DAY_TO_SECOND, SL_DV_HOUR,
    SL_DV_HOUR_TO_MINUTE, SL_DV_HOUR_TO_SECOND, SL_DV_MINUTE, SL_DV_MINUTE_TO_SECOND,
    SL_DV_SECOND
};

#define SL_DTYPE_MAX 262144         /* distinct descriptors a process holds (the table grows up to it) */
#define SL_DTYPE_MAX_DEPTH 32       /* nesting of ARRAY/MAP/MULTISET/ROW */
#define SL_DTYPE_MAX_LEN 2147483647 /* VARCHAR/VARBINARY length of STRING/BYTES */
#define SL_DECIMAL_MAX_PRECISION 38
#define SL_MAX_FIELDS_DT 256        /* fields of a ROW type (as SL_MAX_FIELDS of a schema) */

typedef struct sl_dtype sl_dtype;
struct sl_dtype {
    sl_type kind;
    bool notnull;
    uint8_t variant;    /* SL_DV_* */
    int32_t p;          /* DECIMAL precision; CHAR/VARCHAR/BINARY/VARBINARY length; TIME and
                         * TIMESTAMP fractional precision; interval leading precision */
    int32_t s;          /* DECIMAL scale; interval fractional-second precision */
    const sl_dtype *elem; /* ARRAY/MULTISET element, MAP key */
    const sl_dtype *val;  /* MAP value */
    int nfields;          /* ROW */
    const char *const *names;        /* ROW field names */
    const sl_dtype *const *ftypes;   /* ROW field types */
    const char *text;     /* the canonical text, as DESCRIBE shows it */
    const sl_dtype *phys; /* the storage type: what the binary form depends on (nullable,
                           * STRING/BYTES for every length, TIMESTAMP for LTZ, nested alike;
                           * phys->phys == phys). Two columns of equal phys read alike. */
};

/* The descriptor of a basic kind: BOOLEAN, INT, BIGINT, DOUBLE, STRING,
 * BYTES, TIMESTAMP(3), TINYINT, SMALLINT, FLOAT, DECIMAL(10, 0), DATE,
 * TIME(0), INTERVAL YEAR(2) TO MONTH, INTERVAL DAY(2) TO SECOND(3), NULL.
 * NULL for ARRAY, MAP, MULTISET and ROW (they need their element types). */
const sl_dtype *sl_dtype_basic(sl_type t);

/* Parse Flink's type syntax (any of the names, nesting, NOT NULL) into an
 * interned descriptor. SL_ERR with a message naming the position. */
int sl_dtype_parse(const char *text, const sl_dtype **out, char *err, size_t errlen);

/* Constructors (interned; NULL with a message when the table is full or an
 * argument is out of range). */
const sl_dtype *sl_dtype_decimal(int p, int s, char *err, size_t errlen);
const sl_dtype *sl_dtype_array(const sl_dtype *elem, char *err, size_t errlen);
const sl_dtype *sl_dtype_map(const sl_dtype *key, const sl_dtype *val, char *err, size_t errlen);
const sl_dtype *sl_dtype_row(int n, const char *const *names, const sl_dtype *const *types,
                             char *err, size_t errlen);
/* The same type with NOT NULL set or cleared. */
const sl_dtype *sl_dtype_nullable(const sl_dtype *dt, bool notnull);
/* CHAR(len) / VARCHAR(len) (chr) or BINARY / VARBINARY, len 0 (Flink's type of
 * the empty literal '') up to SL_DTYPE_MAX_LEN; a longer length is capped and
 * gives STRING (BYTES). */
const sl_dtype *sl_dtype_text(bool chr, bool fixed, int64_t len, bool notnull, char *err,
                              size_t errlen);
/* A table column's type (CREATE TABLE, CTAS): refused when a CHAR, VARCHAR,
 * BINARY or VARBINARY in it has length 0, in Flink's words (the parser takes
 * length 0: the empty literal's CHAR(0) appears in plans, and CAST(x AS
 * CHAR(0)) is Flink's too). */
int sl_dtype_check_declared(const sl_dtype *d, char *err, size_t errlen);

/* Is a value of this kind a borrowed byte string in v.s (STRING, BYTES and
 * the nested kinds)? */
static inline bool sl_type_is_var(sl_type t)
{
    return t == SL_T_STRING || t == SL_T_BYTES || t == SL_T_ARRAY || t == SL_T_MAP ||
           t == SL_T_MULTISET || t == SL_T_ROW;
}
static inline bool sl_type_is_nested(sl_type t)
{
    return t == SL_T_ARRAY || t == SL_T_MAP || t == SL_T_MULTISET || t == SL_T_ROW;
}
/* A scalar kind: every one but the intervals and the nested kinds (what the
 * csv format carries). New kinds are appended after ROW, so they are not. */
static inline bool sl_type_is_scalar(sl_type t) { return t <= SL_T_TIME; }
/* The widening order of the binary numbers, as Flink's least-restrictive
 * type picks the higher (0: not a binary number; DECIMAL is not one). */
static inline int sl_type_num_order(sl_type t)
{
    switch (t) {
    case SL_T_TINYINT: return 1;
    case SL_T_SMALLINT: return 2;
    case SL_T_INT: return 3;
    case SL_T_BIGINT: return 4;
    case SL_T_FLOAT: return 5;
    case SL_T_DOUBLE: return 6;
    default: return 0;
    }
}
/* Is it one of the original seven kinds (what expressions and most
 * operators understand today)? */
static inline bool sl_type_is_classic(sl_type t) { return t <= SL_T_TIMESTAMP; }
/* TIME / TIMESTAMP with nanoseconds beyond the millisecond stored. */
static inline bool sl_dtype_has_nanos(const sl_dtype *dt)
{
    return (dt->kind == SL_T_TIMESTAMP || dt->kind == SL_T_TIME) && dt->p > 3;
}

/* The number of distinct descriptors interned so far (tests). */
int sl_dtype_count(void);

#endif
