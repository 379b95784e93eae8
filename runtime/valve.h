/*
 * valve.h -- a consumer's input channels and what they say about time.
 *
 * A task that reads from other subtasks has one channel per upstream
 * subtask and edge; the valve turns what each channel says -- watermarks,
 * its watermark status (idle or active), its end -- into calls on the
 * chain's head operator (sl_rt_watermark, sl_rt_input_idle,
 * sl_op_emit_idle), one logical input at a time:
 *
 * - a channel's *first word* is its first watermark, status or end. Every
 *   producer says one before any record (taskmanager/task.c), so a channel
 *   that has not spoken is one whose producer has not started; it is
 *   active at the lowest watermark and holds its input back. The task
 *   holds a channel that has spoken until every channel has
 *   (sl_valve_ready), so no row is judged against a watermark that a
 *   channel not yet heard from could still have held back: which rows are
 *   late does not depend on which producer started first;
 * - an input's watermark is the minimum over its channels that are active,
 *   have not ended and are aligned. A channel that goes idle leaves the
 *   minimum; when it speaks again below the input's watermark it is
 *   unaligned -- its rows are judged against the input's watermark, it
 *   holds nothing back -- until its watermarks catch up, then it rejoins;
 * - when every live channel of an input is idle the input is idle (the
 *   runtime leaves it out of the operator's minimum); if the channel that
 *   went idle last was aligned, the input's watermark first moves to the
 *   largest watermark its channels reached, so the result does not depend
 *   on the order in which they went quiet. Watermarks on an idle channel
 *   are ignored;
 * - when every live channel of the task is idle the head's output is idle.
 *
 * Ended channels count for nothing; the task ends an input whose channels
 * have all ended (sl_rt_end_input) and the chain after the last. Belongs
 * to the task thread; no allocation after sl_valve_init.
 */
#ifndef SL_VALVE_H
#define SL_VALVE_H

#include "operator.h"

typedef struct sl_valve {
    int nchan;
    const int *chan_input;      /* channel -> logical input of the head (borrowed) */
    int64_t *wm;                /* per channel: its last watermark while active */
    unsigned char *flags;       /* per channel: VALVE_* bits (valve.c) */
    int nspoke;                 /* channels that said their first word */
    int nended;                 /* channels that ended */
    unsigned char in_idle[SL_MAX_INPUTS]; /* every live channel of the input is idle */
    int all_idle;               /* every live channel is idle: the head's output is */
} sl_valve;

/* nchan channels (0 for a source: nothing to do), chan_input[c] the
 * logical input of channel c, borrowed for the valve's life. */
void sl_valve_init(sl_valve *v, int nchan, const int *chan_input);
void sl_valve_free(sl_valve *v);

/* Every channel has said its first word. */
static inline int sl_valve_ready(const sl_valve *v) { return v->nspoke == v->nchan; }
int sl_valve_spoke(const sl_valve *v, int c);
int sl_valve_ended(const sl_valve *v, int c);
int sl_valve_idle(const sl_valve *v, int c);

/* Channel c said watermark wm / went idle (1) or active (0) / ended, and
 * head hears what follows for its input. SL_ERR when the head failed (its
 * err says why). sl_valve_end settles the others only while some channel
 * is open: the task ends inputs and the chain itself. */
int sl_valve_watermark(sl_valve *v, sl_op *head, int c, int64_t wm);
int sl_valve_status(sl_valve *v, sl_op *head, int c, int idle);
int sl_valve_end(sl_valve *v, sl_op *head, int c);

#endif
