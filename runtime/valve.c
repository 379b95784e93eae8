/*
 * valve.c -- a consumer's input channels and the head operator's time
 * (valve.h says the rules).
 *
 * Each channel keeps its last watermark and four bits; every change is
 * followed by settle(), which recomputes each logical input's minimum over
 * its aligned active channels and tells the head what moved. Per element
 * that is a loop over the channels (a task has a few dozen at most) and no
 * allocation.
 */
#include <string.h>

#include "valve.h"
#include "runtime.h"

enum {
    VALVE_SPOKE = 1,            /* said its first word */
    VALVE_IDLE = 2,             /* its producer marked it idle */
    VALVE_ENDED = 4,            /* end of partition */
    VALVE_UNALIGNED = 8,        /* active again below its input's watermark */
};

void sl_valve_init(sl_valve *v, int nchan, const int *chan_input)
{
    memset(v, 0, sizeof *v);
    v->nchan = nchan;
    v->chan_input = chan_input;
    v->wm = sl_calloc((size_t)(nchan ? nchan : 1), sizeof *v->wm);
    v->flags = sl_calloc((size_t)(nchan ? nchan : 1), 1);
    for (int c = 0; c < nchan; c++) v->wm[c] = INT64_MIN;
}

void sl_valve_free(sl_valve *v)
{
    free(v->wm);
    free(v->flags);
    v->wm = NULL;
    v->flags = NULL;
}

int sl_valve_spoke(const sl_valve *v, int c) { return (v->flags[c] & VALVE_SPOKE) != 0; }
int sl_valve_ended(const sl_valve *v, int c) { return (v->flags[c] & VALVE_ENDED) != 0; }
int sl_valve_idle(const sl_valve *v, int c) { return (v->flags[c] & VALVE_IDLE) != 0; }

static void speak(sl_valve *v, int c)
{
    if (v->flags[c] & VALVE_SPOKE) return;
    v->flags[c] |= VALVE_SPOKE;
    v->nspoke++;
}

/* Tell head what the channels now say. flush: the last change was an
 * aligned channel going idle (an input left with only idle channels first
 * moves to their largest watermark). */
static int settle(sl_valve *v, sl_op *head, int flush)
{
    int64_t minwm[SL_MAX_INPUTS], maxwm[SL_MAX_INPUTS];
    int open[SL_MAX_INPUTS] = {0}, active[SL_MAX_INPUTS] = {0}, aligned[SL_MAX_INPUTS] = {0};
    for (int i = 0; i < SL_MAX_INPUTS; i++) {
        minwm[i] = INT64_MAX;
        maxwm[i] = INT64_MIN;
    }
    int live = 0, idle = 0;
    for (int c = 0; c < v->nchan; c++) {
        unsigned char *f = &v->flags[c];
        if (*f & VALVE_ENDED) continue;
        int in = v->chan_input[c];
        if (in < 0 || in >= SL_MAX_INPUTS) continue;
        live++;
        open[in]++;
        if (*f & VALVE_IDLE) {
            idle++;
            if (v->wm[c] > maxwm[in]) maxwm[in] = v->wm[c];
            continue;
        }
        active[in]++;
        if ((*f & VALVE_UNALIGNED) && v->wm[c] >= head->input_wm[in]) *f &= (unsigned char)~VALVE_UNALIGNED;
        if (*f & VALVE_UNALIGNED) continue;
        aligned[in]++;
        if (v->wm[c] < minwm[in]) minwm[in] = v->wm[c];
    }
    int all_idle = live > 0 && idle == live;
    if (!all_idle && v->all_idle) { /* the output speaks before what follows */
        v->all_idle = 0;
        if (sl_op_emit_idle(head, 0) != SL_OK) return SL_ERR;
    }
    for (int in = 0; in < head->nin && in < SL_MAX_INPUTS; in++) {
        if (!open[in]) continue; /* ended: the task ends the input */
        if (!active[in]) {
            if (v->in_idle[in]) continue;
            v->in_idle[in] = 1;
            if (flush && maxwm[in] > head->input_wm[in] && sl_rt_watermark(head, in, maxwm[in]) != SL_OK)
                return SL_ERR;
            if (sl_rt_input_idle(head, in, 1) != SL_OK) return SL_ERR;
            continue;
        }
        if (v->in_idle[in]) {
            v->in_idle[in] = 0;
            if (sl_rt_input_idle(head, in, 0) != SL_OK) return SL_ERR;
        }
        if (aligned[in] && minwm[in] > head->input_wm[in] && sl_rt_watermark(head, in, minwm[in]) != SL_OK)
            return SL_ERR;
    }
    if (all_idle && !v->all_idle) { /* after the watermark it flushed */
        v->all_idle = 1;
        if (sl_op_emit_idle(head, 1) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

int sl_valve_watermark(sl_valve *v, sl_op *head, int c, int64_t wm)
{
    speak(v, c);
    if (v->flags[c] & (VALVE_IDLE | VALVE_ENDED)) return SL_OK; /* an idle channel says nothing of time */
    if (wm <= v->wm[c]) return SL_OK;
    v->wm[c] = wm;
    return settle(v, head, 0);
}

int sl_valve_status(sl_valve *v, sl_op *head, int c, int idle)
{
    speak(v, c);
    unsigned char *f = &v->flags[c];
    if ((*f & VALVE_ENDED) || !!(*f & VALVE_IDLE) == !!idle) return SL_OK;
    int flush = 0;
    if (idle) {
        flush = !(*f & VALVE_UNALIGNED);
        *f = (unsigned char)((*f | VALVE_IDLE) & ~VALVE_UNALIGNED);
    } else {
        *f &= (unsigned char)~VALVE_IDLE;
        int in = v->chan_input[c];
        if (in >= 0 && in < SL_MAX_INPUTS && v->wm[c] < head->input_wm[in]) *f |= VALVE_UNALIGNED;
    }
    return settle(v, head, flush);
}

int sl_valve_end(sl_valve *v, sl_op *head, int c)
{
    speak(v, c);
    if (v->flags[c] & VALVE_ENDED) return SL_OK;
    v->flags[c] |= VALVE_ENDED;
    v->nended++;
    return v->nended < v->nchan ? settle(v, head, 0) : SL_OK;
}
