/*
 * expr_int.h -- what the parts of Sluice's scalar expressions share: the
 * typed tree (built by expr_check.c from the SQL grammar's syntax tree,
 * walked by expr_eval.c) and a few helpers. Not for use outside lang/expr*.c.
 */
#ifndef SL_EXPR_INT_H
#define SL_EXPR_INT_H

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <stdarg.h>

#include "expr.h"
#include "decimal.h"

#define SL_EXPR_MAX_DEPTH 256 /* tree height limit (checking and evaluation recursion) */
#define SL_EXPR_MAX_ARGS 1000 /* arguments to one function */
#define SL_EXPR_MAX_GROUPS 32 /* groups of a regular expression, the whole match included */

/* ---- the tree ------------------------------------------------------------ */

typedef enum {
    N_LIT, N_COL,
    N_NEG, N_ADD, N_SUB, N_MUL, N_DIV, N_MOD, N_CONCAT,
    N_EQ, N_NE, N_LT, N_LE, N_GT, N_GE,
    N_AND, N_OR, N_NOT,
    N_IS_NULL, N_IS_TRUE, N_IS_FALSE, /* `neg` makes them IS NOT ... */
    N_BETWEEN, N_IN, N_LIKE,           /* `neg` makes them NOT ... */
    N_CASE, N_CAST,
    N_UPPER, N_LOWER, N_CHAR_LENGTH, N_ABS, N_COALESCE, N_IF, N_NULLIF,
    N_FLOOR, N_CEIL, N_TRIM, N_SUBSTRING, N_POSITION, N_TO_TS_LTZ, N_TO_TS,
    N_NOW,          /* CURRENT_TIMESTAMP, LOCALTIMESTAMP, NOW(), CURRENT_ROW_TIMESTAMP() */
    N_UNIX_TS,      /* UNIX_TIMESTAMP([s]) */
    N_FROM_UNIXTIME,
    N_RAND,         /* RAND([seed]) */
    N_RAND_INT,     /* RAND_INTEGER([seed,] bound) */
    N_TS_ADD,       /* TIMESTAMPADD(unit, n, ts); flags: the TU_* unit */
    N_TS_DIFF,      /* TIMESTAMPDIFF(unit, t1, t2); flags: the TU_* unit */
    N_EXTRACT,      /* EXTRACT(unit FROM ts), YEAR(ts), ...; flags: the sl_extract_unit */
    N_REPLACE,      /* REPLACE(s, search, replacement) */
    N_SPLIT_INDEX,  /* SPLIT_INDEX(s, separator, index) */
    N_DATE_FORMAT,  /* DATE_FORMAT(ts | s, format); aux: the compiled constant format */
    N_REGEXP,       /* REGEXP(s, pattern); aux: the compiled pattern (sl_rx) */
    N_REGEXP_EXTRACT, /* REGEXP_EXTRACT(s, pattern [, group]); aux: as REGEXP */
    N_REGEXP_REPLACE, /* REGEXP_REPLACE(s, pattern, replacement); aux: as REGEXP */
    N_SIMILAR,      /* x [NOT] SIMILAR TO p [ESCAPE e]; aux: the compiled pattern (sl_rx) */
    N_DISTINCT,     /* a IS [NOT] DISTINCT FROM b (`neg`: NOT) */
    N_WATERMARK,    /* CURRENT_WATERMARK(ts): the evaluating operator's watermark */
    N_TO_DATE,      /* TO_DATE(s [, format]): a DATE, NULL for text that does not parse */
    N_SINGLE_VALUE, /* SL_SINGLE_VALUE(n, v): v, an error when the count n is above 1 (a
                     * scalar subquery's rows, sql/plan_subquery.c) */
    N_FNX,          /* a function of the table in expr_fn.c; fx: its entry */
    N_UDF           /* a user-defined scalar function; aux: its sl_udf_sig (borrowed from the
                     * function set the tree was built with) */
} n_op;

/* TRIM sides (node flags) */
enum { TRIM_BOTH = 3, TRIM_LEADING = 1, TRIM_TRAILING = 2 };
/* CASE shape (node flags) */
enum { CASE_OPERAND = 1, CASE_ELSE = 2 };
/* RAND / RAND_INTEGER (node flags): a seed argument, and whether it is a literal */
enum { RAND_SEEDED = 1, RAND_FIXED = 2 };

/* Fields of a day-time interval, smallest first; an interval node records its
 * first and last field (INTERVAL '1:30' MINUTE TO SECOND: MINUTE, SECOND).
 * MILLISECOND is a Sluice extension (Flink writes INTERVAL '0.02' SECOND). */
enum { IV_MS, IV_SECOND, IV_MINUTE, IV_HOUR, IV_DAY, IV_N };
/* A year-month interval node holds months and records its fields with these
 * codes beyond IV_N (INTERVAL '1-2' YEAR TO MONTH: IV_YM_YEAR, IV_YM_MONTH);
 * the two kinds never mix. */
enum { IV_YM_MONTH = IV_N, IV_YM_YEAR };
static inline bool iv_is_ym(int field) { return field >= IV_YM_MONTH; }
/* Temporal arithmetic (N_ADD / N_SUB typed TIMESTAMP, DATE or TIME; node flags):
 * the interval is year-month (add months, clamping the day to the month's end) */
enum { AR_MONTHS = 1 };
/* (a - b) qualifier (N_SUB typed as an interval; node flags): the difference of
 * two DATEs, TIMEs or TIMESTAMPs, in months for a year-month qualifier */
enum { AR_DIFF = 2 };
extern const int64_t sl_expr_iv_ms[IV_N];
extern const char *const sl_expr_iv_name[IV_N];
#define iv_ms sl_expr_iv_ms
#define iv_name sl_expr_iv_name

/* TIMESTAMPADD / TIMESTAMPDIFF units (node flags) */
enum { TU_SECOND, TU_MINUTE, TU_HOUR, TU_DAY, TU_WEEK, TU_MONTH, TU_QUARTER, TU_YEAR, TU_N };
extern const char *const sl_expr_tu_name[TU_N];
extern const int64_t sl_expr_tu_ms[TU_N];
extern const int sl_expr_tu_months[TU_N];
#define tu_name sl_expr_tu_name
#define tu_ms sl_expr_tu_ms
#define tu_months sl_expr_tu_months

typedef struct node node;
struct node {
    n_op op;
    sl_type type;     /* result type */
    sl_type ctype;    /* arithmetic: INT (32-bit wrap), BIGINT (64-bit wrap) or DOUBLE */
    bool interval;    /* a BIGINT holding a span of milliseconds: an INTERVAL ivs TO ive */
    uint8_t ivs, ive; /* interval: first and last field (IV_*), ivs >= ive */
    bool neg;         /* IS NOT / NOT BETWEEN / NOT IN / NOT LIKE; TRY_CAST */
    int flags;        /* TRIM side, CASE shape, TO_TIMESTAMP_LTZ precision (0 or 3) */
    int pos;          /* 1-based byte offset in the text, for run-time messages */
    int ln, cn;       /* line and column, for messages while checking */
    int height;       /* 1 for a leaf; bounds evaluation recursion */
    int col;          /* N_COL: index in the input schema */
    const sl_dtype *dt; /* the full type when it is not the basic one of `type`: a column's,
                         * a DECIMAL(p, s) result, a CAST's target (else NULL) */
    sl_value lit;     /* N_LIT: the value (a string points at `owned`) */
    char *owned;      /* N_LIT strings: the unescaped bytes */
    int nkids;
    node **kids;      /* owned array of nkids borrowed nodes */
    node *next_all;   /* every node of a tree, for freeing */
    uint64_t serial;  /* RAND with a literal seed: names its sequence (see rand_state) */
    const struct sl_fnx *fx; /* N_FNX: the function (static) */
    void *aux;        /* owned, built once at check time: N_DATE_FORMAT's sl_dfmt (NULL
                       * when the format is not a constant), N_REGEXP*'s sl_rx (NULL
                       * when the pattern is the NULL literal) */
};

struct sl_expr {
    node *root;
    node *all;  /* list through next_all: owns every node */
    char *zone; /* the session time zone (table.local-time-zone); NULL: UTC */
};

/* ms (an instant, UTC) as wall-clock time in `zone`, and back (a gap moves
 * forward, an overlap takes the earlier offset); zone NULL: ms unchanged.
 * The zone is opened once per thread and kept (sl_tz is one thread's). */
int64_t sl_expr_zone_local(const char *zone, int64_t ms);
int64_t sl_expr_zone_utc(const char *zone, int64_t ms);
/* sl_expr_zone_utc as SimpleDateFormat resolves a time (UNIX_TIMESTAMP(s)):
 * an overlap takes the later, standard-time offset. */
int64_t sl_expr_zone_utc_sdf(const char *zone, int64_t ms);

/* ---- small helpers ------------------------------------------------------- */

/* A node's full type. */
static inline const sl_dtype *ndt(const node *n) { return n->dt ? n->dt : sl_dtype_basic(n->type); }

/* The integers (TINYINT, SMALLINT, INT, BIGINT: v.i) and the binary
 * floating-point numbers (FLOAT, DOUBLE: v.d, a FLOAT's value rounded to
 * float). Each computes at its own width, as Java's byte, short, int, long,
 * float and double do in Flink's generated code. */
static inline bool is_int_type(sl_type t)
{
    return t == SL_T_INT || t == SL_T_BIGINT || t == SL_T_TINYINT || t == SL_T_SMALLINT;
}
static inline bool is_fp_type(sl_type t) { return t == SL_T_DOUBLE || t == SL_T_FLOAT; }
static inline bool is_num_type(sl_type t) { return is_int_type(t) || is_fp_type(t); }
static inline bool is_str_type(sl_type t) { return t == SL_T_STRING || t == SL_T_BYTES; }
/* Widening order (Flink's least-restrictive numeric type is the higher rank). */
static inline int num_rank(sl_type t) { return sl_type_num_order(t); }
static inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Wrap to 32 / 64 bits the way Java's int and long overflow, without UB. */
static inline int64_t wrap32(int64_t x)
{
    uint32_t u = (uint32_t)(uint64_t)x;
    return u >= 0x80000000u ? (int64_t)u - 0x100000000LL : (int64_t)u;
}

static inline int64_t wrap64(uint64_t u)
{
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* Wrap x to the width of integer type t (Java's narrowing to byte, short,
 * int; a BIGINT is already 64 bits). */
static inline int64_t wrap_int(int64_t x, sl_type t)
{
    switch (t) {
    case SL_T_TINYINT: return (int64_t)(int8_t)(uint8_t)(uint64_t)x;
    case SL_T_SMALLINT: return (int64_t)(int16_t)(uint16_t)(uint64_t)x;
    case SL_T_INT: return wrap32(x);
    default: return x;
    }
}

static inline bool word_eq(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* Parse an optionally signed decimal integer s[0..n) into *out (no overflow). */
bool sl_expr_parse_i64(const char *s, size_t n, int64_t *out);

/* Parse 'YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]]' (blanks around are allowed; digits
 * beyond milliseconds are dropped) into ms since the epoch, UTC. */
bool sl_expr_ts_parse(const char *s, size_t n, int64_t *out);

/* ---- DATE_FORMAT patterns (expr_datefmt.c) -------------------------------------
 * A format is compiled into a list of ops, each a field (a pattern letter
 * repeated `count` times) or a run of literal bytes borrowed from the
 * pattern text, which must outlive the ops. */
typedef struct sl_dfmt_op {
    char letter;    /* 'y', 'M', ...; 0 for literal text */
    uint8_t count;  /* how many times the letter is repeated */
    uint32_t off;   /* literal text: its bytes in the pattern */
    uint32_t len;
} sl_dfmt_op;

typedef struct sl_dfmt {
    const char *pat; /* the pattern text (borrowed: the literal node's bytes) */
    int nops;
    size_t maxlen;   /* no output is longer */
    sl_dfmt_op ops[]; /* nops */
} sl_dfmt;

/* Compile pat[0..n) into ops[0..cap). `sdf`: the format applies to a STRING
 * input (Flink formats those with SimpleDateFormat): refuse the letters
 * whose output would differ from DateTimeFormatter's. Returns SL_OK with
 * *nops and *maxlen, or SL_ERR with a message naming the letter. */
int sl_dfmt_compile(const char *pat, size_t n, bool sdf, sl_dfmt_op *ops, int cap, int *nops,
                    size_t *maxlen, char *err, size_t errlen);

/* Write ms (UTC) formatted by ops into dst (room for maxlen bytes); returns
 * the length. Allocates nothing. */
size_t sl_dfmt_write(const sl_dfmt_op *ops, int nops, const char *pat, int64_t ms, char *dst);

/* Can ops parse text (TO_TIMESTAMP / UNIX_TIMESTAMP with a format)? Only
 * the numeric letters y M d H m s, SSS and literal text: SL_ERR with a
 * message naming the letter otherwise. */
int sl_dfmt_parse_check(const sl_dfmt_op *ops, int nops, char *err, size_t errlen);

/* Parse s[0..n) by ops (checked by sl_dfmt_parse_check) into ms, UTC;
 * fields left out are 1970-01-01 00:00:00.000. A field followed by another
 * field takes exactly its letters' width, else up to 2 digits (the year 9).
 * `full`: the whole text must be used (DateTimeFormatter), else trailing
 * text is ignored (SimpleDateFormat). False for text that does not fit. */
bool sl_dfmt_parse(const sl_dfmt_op *ops, int nops, const char *pat, const char *s, size_t n,
                   bool full, int64_t *ms);

/* Parse Flink's default DATE_FORMAT input 'yyyy-MM-dd HH:mm:ss' (trailing
 * text ignored, as SimpleDateFormat does) into ms, UTC. */
bool sl_dfmt_parse_default(const char *s, size_t n, int64_t *ms);

/* ---- Java regular expressions on POSIX ERE (expr_regex.c) -------------------- */

/* A compiled pattern, and a text every match contains (so a subject
 * without it needs no regexec). */
typedef struct sl_rx {
    regex_t re;
    size_t litlen;  /* 0: no such text was found */
    char lit[64];
} sl_rx;

/* Compile pat[0..n), written in Java's syntax, as a POSIX extended regular
 * expression into *rx (the caller regfree()s rx->re on SL_OK). Constructs
 * that POSIX cannot honour are refused with a message. */
int sl_expr_regex_compile(sl_rx *rx, const char *pat, size_t n, bool nosub, char *err,
                          size_t errlen);

/* ---- the table of further scalar functions (expr_fn.c, expr_math.c, expr_str.c) ----
 * Each entry names its arguments' classes and its result's type; the
 * checker applies them (expr_check.c) and the evaluator calls `eval` with
 * the arguments already evaluated (NULL in, NULL out for a `strict` one,
 * handled by the caller). An eval function allocates only from the
 * scratch arena. */
typedef struct sl_fnx_cx {
    sl_arena *scratch;
    char *err;
    size_t errlen;
} sl_fnx_cx;

typedef int (*sl_fnx_eval)(const node *n, const sl_value *v, sl_value *out, sl_fnx_cx *cx);

typedef struct sl_fnx {
    const char *name;
    int min, max;      /* argument counts (max SL_EXPR_MAX_ARGS: variadic) */
    const char *args;  /* a class per argument, the last one repeating: 'n' number, 'i'
                        * integer, 's' STRING, 'x' STRING or integer, 'a' any */
    char result;       /* 'D' DOUBLE, 'S' STRING, 'I' INT, 'L' BIGINT, 'B' BOOLEAN,
                        * '0' the first argument's type, 'C' the arguments' common type */
    bool strict;       /* NULL when any argument is NULL */
    sl_fnx_eval eval;
} sl_fnx;

/* The entry named `name` (any case), or NULL. */
const sl_fnx *sl_fnx_find(const char *name);
/* The collection functions (expr_coll.c): entries typed by sl_coll_type
 * instead of the classes above, since their results' full types follow
 * from their arguments' (n->kids built; sets n->type and n->dt, or SL_ERR
 * with the reason). */
const sl_fnx *sl_coll_find(const char *name);
int sl_coll_type(node *n, char *why, size_t whylen);
/* The JSON functions (expr_json.c), typed the same way (internal entries SL_JSON_VALUE,
 * SL_JSON_QUERY, SL_JSON_OBJECT, SL_JSON_ARRAY, SL_IS_JSON carry the grammar's clauses). */
const sl_fnx *sl_json_fn_find(const char *name);
int sl_json_fn_type(node *n, char *why, size_t whylen);

/* Constructors, element and field access and CASTs of nested values
 * (expr_nest.c): entries SL_ARRAY, SL_MAP, ROW, SL_ELEMENT, SL_FIELD (`field`:
 * the name; sets n->flags to its index) and SL_CAST (n->dt: the target; n->neg:
 * TRY_CAST), typed by sl_nest_type (n->kids built). */
const sl_fnx *sl_nest_find(const char *name);
int sl_nest_type(node *n, const char *field, char *why, size_t whylen);

/* Nested values compared (expr_nest.c): the least restrictive type of two
 * (nullable; NULL when they have none), and Flink's `=` on non-null values
 * of one nested type (see value_eq there). */
const sl_dtype *sl_nest_common(const sl_dtype *a, const sl_dtype *b);
bool sl_nest_equal(const sl_dtype *dt, const sl_value *a, const sl_value *b);

/* Helpers the function families share (expr_fn.c). */
int sl_fnx_err(const node *n, sl_fnx_cx *cx, const char *fmt, ...) SL_PRINTF(3, 4);
/* An evaluation error "<message> at position <pos>" into err (may be NULL);
 * returns SL_ERR. The one formatter behind every evaluator's errors. */
int sl_expr_verr(char *err, size_t errlen, int pos, const char *fmt, va_list ap);
char *sl_fnx_alloc(const node *n, sl_fnx_cx *cx, size_t len); /* NULL: error set */
double sl_fnx_num(const node *n, const sl_value *v, int i);    /* argument i as a DOUBLE */
size_t sl_fnx_cplen(const char *s, size_t left);                /* one UTF-8 sequence */
int64_t sl_fnx_cpcount(const char *s, size_t n);
size_t sl_fnx_cpoff(const char *s, size_t n, int64_t k);        /* byte offset of code point k */
static inline void fnx_set_s(sl_value *out, const char *p, size_t len)
{
    out->isnull = false;
    out->v.s.p = p;
    out->v.s.len = (uint32_t)len;
}

/* SQL's SIMILAR TO pattern pat[0..n) with escape character esc (-1: none)
 * rewritten as an anchored POSIX extended regular expression and compiled
 * into *rx. SL_ERR with a message for a malformed pattern. */
int sl_expr_similar_compile(sl_rx *rx, const char *pat, size_t n, int esc, char *err,
                            size_t errlen);

/* ---- user-defined functions (expr_udf.c) ------------------------------------- */

/* Call the user function of N_UDF node n with its arguments' values (args,
 * n->nkids of them, converted here to the declared types); strings the
 * function makes come from scratch. SL_ERR with err naming the function. */
int sl_expr_udf_call(const node *n, sl_value *args, sl_arena *scratch, sl_value *out, char *err,
                     size_t errlen);

/* Free every node of a tree (the next_all list). */
void sl_expr_free_nodes(node *all);

#endif
