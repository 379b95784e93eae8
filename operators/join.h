/*
 * join.h -- what the two-input join operators share (operators/join.c):
 * the join type, the equi-key of both inputs, the output schema and the
 * assembly of output rows.
 *
 * Input 0 is the left side, input 1 the right side. Both sides' key
 * columns ("left-keys", "right-keys") are declared with sl_plan_key, so the
 * runtime sets the same current key for matching rows of either side; the
 * key columns must therefore have the same types pairwise. A row with a
 * NULL key column matches nothing (SQL's NULL = NULL is not true).
 *
 * Output: the left columns, then the right columns; a right column whose
 * name the output already has is renamed with the smallest numeric suffix
 * free ("order_id" -> "order_id0"), as Flink names them.
 */
#ifndef SL_OP_JOIN_H
#define SL_OP_JOIN_H

#include "buf.h"
#include "jobgraph.h"
#include "operator.h"

typedef enum { SL_JOIN_INNER = 0, SL_JOIN_LEFT, SL_JOIN_RIGHT, SL_JOIN_FULL } sl_join_type;

typedef struct sl_join_spec {
    char *vid;
    sl_join_type type;
    int nkeys;
    int lkeys[SL_MAX_KEY_COLS], rkeys[SL_MAX_KEY_COLS];
    int nleft, nright;      /* columns per side */
    sl_schema left, right;  /* copies of the input schemas */
} sl_join_spec;

/* "inner" | "left" | "right" | "full" (Flink's JoinType, any case). */
const char *sl_join_type_name(sl_join_type t);
/* Read "join-type", "left-keys", "right-keys"; declare the keys; fill
 * pc->out. SL_ERR with err naming the vertex and the option. */
int sl_join_plan(sl_plan_ctx *pc, sl_join_spec *js, char *err, size_t errlen);
void sl_join_spec_free(sl_join_spec *js);

/* Outer on that side: its unmatched rows go out with NULLs for the other. */
static inline int sl_join_outer(const sl_join_spec *js, int side)
{
    return side == 0 ? js->type == SL_JOIN_LEFT || js->type == SL_JOIN_FULL
                     : js->type == SL_JOIN_RIGHT || js->type == SL_JOIN_FULL;
}

/* A row's key columns of `side` hold a NULL. */
int sl_join_null_key(const sl_join_spec *js, int side, const sl_row *row);

/* Emit kind[left | right] on the main output; either side may be NULL
 * (all its columns NULL). vals has room for nleft + nright values. */
int sl_join_emit(sl_op *op, const sl_join_spec *js, sl_value *vals, sl_rowkind kind,
                 const sl_row *left, const sl_row *right, int64_t ts);

/* A time as 8 state-key bytes whose byte order is time order (big-endian,
 * sign flipped), and back. */
void sl_join_time_key(uint8_t *k, int64_t t);
int64_t sl_join_time_of(const uint8_t *k);

/* Encode row (of schema s) at the end of b (a buffer kept per subtask,
 * never freed per record), prefixed by a u32 length. */
void sl_jbuf_put_row(sl_buf *b, const sl_row *row, const sl_schema *s);

#endif
