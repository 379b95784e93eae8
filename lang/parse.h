/*
 * Layer lang/ (docs/ARCHITECTURE.md, "Layers"): the language, over core/.
 * The tokenizer, the lemon grammar and the syntax tree of Flink SQL, the
 * unparser, and the expressions built on them (calc text parsed with the
 * same grammar, type-checked, evaluated). Plans nothing.
 *
 * parse.h -- Sluice's Flink SQL front end: the hand-written tokenizer
 * (lang/tokenize.c) and the lemon-generated parser (lang/grammar.y, built
 * into $(B)/gen/grammar.c at build time).
 *
 * sql_parse turns a script into a LIST of statement nodes (lang/ast.h).
 * Errors say where and what, in one line:
 *   "line 3, column 17: unexpected ')', expected an expression"
 * and never abort: bad SQL is outside input.
 */
#ifndef SL_SQL_PARSE_H
#define SL_SQL_PARSE_H

#include <stddef.h>

#include "sl.h"
#include "buf.h"
#include "ast.h"

typedef struct sql_tok {
    int type;        /* TK_* of the generated grammar.h; 0 at end of input */
    const char *z;   /* text in the script (borrowed) */
    int n;           /* its length */
    int line, col;   /* 1-based */
} sql_tok;

typedef struct sql_lexer {
    const char *p, *end;  /* next character, end of input */
    int line, col;        /* of p */
} sql_lexer;

void sql_lexer_init(sql_lexer *lx, const char *text, size_t len, int line, int col);

/* Next token into *t: SL_OK, SL_DONE at the end (t->type 0), or SL_ERR with
 * "line L, column C: ..." in err (an unterminated string or comment, a
 * character no token starts with). */
int sql_next_token(sql_lexer *lx, sql_tok *t, char *err, size_t errlen);

/* Keyword token type of an identifier's text, or 0 when it is none. */
int sql_keyword(const char *z, int n);

/* The i-th keyword in alphabetical order (upper case), or NULL past the last:
 * what completion offers (the SQL gateway's complete-statement). */
const char *sql_keyword_name(size_t i);

/* A token type's name for messages: "')'", "FROM", "an identifier". */
const char *sql_token_display(int type);

/* Parse `len` bytes of `text` whose first character sits at line:col of the
 * script. Returns the LIST of statements (arena-owned) or NULL with err. */
sql_node *sql_parse(sql_arena *a, const char *text, size_t len, int line, int col, char *err,
                    size_t errlen);

/* Parse `len` bytes of `text` as one expression (item 0) or one projection
 * item "expr [AS alias]" (item 1: an SQL_ITEM node) -- the `calc` operator's
 * texts, through the same grammar. Returns the node (arena-owned) or NULL
 * with "line L, column C: ..." in err. */
sql_node *sql_parse_expr(sql_arena *a, const char *text, size_t len, int item, char *err,
                         size_t errlen);

/* A CAST target as calc names it: a synonym Sluice stores alike becomes the
 * canonical name ("VARCHAR(20)" -> "STRING", "SMALLINT" -> "INT");
 * other names come back as given. */
const char *sql_cast_type(const char *t);

/* Statement splitting for the client: find the end of the first complete
 * statement in text[0..len) -- the ';' that ends it, outside quotes and
 * comments and outside EXECUTE STATEMENT SET BEGIN ... END. Returns 1 with
 * *end just past that ';', 0 when the text holds no complete statement yet
 * (more lines needed), or -1 when only whitespace and comments remain. */
int sql_split(const char *text, size_t len, size_t *end);

/* internal: the lemon parser's interface (gen/grammar.c) */
typedef struct sql_pctx {
    sql_arena *a;
    sql_node *result;  /* LIST of statements */
    char *err;
    size_t errlen;
    int failed;
    int line, col;     /* of the token being fed, for errors without one */
    int snap[420];     /* the parser's state stack before that token (expected tokens) */
    int nsnap;
    int names;         /* a script (not a calc expression): Flink's reserved words are
                          refused as names (lang/reserved.c) */
} sql_pctx;
/* Whether the n bytes at s are a word Flink SQL reserves (lang/reserved.c),
 * in any case. */
int sql_flink_reserved(const char *s, size_t n);
/* The same, but 0 for the reserved words an expression takes bare as no
 * column: CURRENT_TIMESTAMP and the other niladic functions, YEAR .. SECOND. */
int sql_flink_reserved_column(const char *s, size_t n);
void *sqlParseAlloc(void *(*alloc)(size_t));
void sqlParse(void *p, int type, sql_tok tok, sql_pctx *ctx);
void sqlParseFree(void *p, void (*freefn)(void *));
/* Copy the parser's state stack into ctx->snap (before each token). */
void sql_parse_snapshot(void *p, sql_pctx *ctx);

/* Write an expression back as calc expression text (caller frees). */
char *sql_unparse(const sql_node *e);
/* The same text for a message: a column keeps its table qualifier as written
 * (`a.r.id`, not `r.id`), a ROW field its plain name. Not for calc text. */
char *sql_unparse_written(const sql_node *e);

/* An identifier as calc reads it: bare when plain, else `back-quoted`
 * (caller frees). */
char *sql_quote_ident(const char *s);

/* A growing NUL-terminated string; {0} is empty. It is lib's one byte
 * buffer (buf.h) under the names the planner's many call sites use: the
 * text is b.p (NUL-terminated once anything was appended), its length
 * b.len; these wrappers only forward. */
typedef sl_buf sql_sbuf;
static inline void sql_sb_put(sql_sbuf *b, const char *s, size_t n) { sl_buf_put(b, s, n); }
static inline void sql_sb_str(sql_sbuf *b, const char *s) { sl_buf_str(b, s); }
#define sql_sb_fmt sl_buf_fmt
/* the string (caller frees; "" when empty) */
static inline char *sql_sb_take(sql_sbuf *b) { return sl_buf_take(b); }

#endif
