/*
 * match_pattern.h -- the compiled form of a row pattern (match_pattern.c),
 * private to the `match_recognize` operator, which runs it: a program of
 * instructions whose order of exploration is the SQL standard's preference
 * order (a split tries x before y).
 */
#ifndef SL_MATCH_PATTERN_H
#define SL_MATCH_PATTERN_H

#include "match_recognize.h"

/* OP_CHAR takes the next row as var, OP_NOT looks at it (it must not be
 * var), OP_WEND needs the WITHIN window over, OP_MATCH ends a match. */
enum { OP_CHAR, OP_SPLIT, OP_JMP, OP_MATCH, OP_NOT, OP_WEND };

typedef struct inst {
    int op;
    int var;                 /* OP_CHAR, OP_NOT */
    int x, y;                /* OP_SPLIT: preferred, other; OP_JMP: x */
} inst;

struct sl_mr_pattern {
    char *vars[SL_MR_MAX_VARS];
    int nvars;
    inst *prog;
    int nprog, cap;
    int wend;                /* has `$`: it needs WITHIN */
};

#endif
