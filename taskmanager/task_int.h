/*
 * task_int.h -- what a task thread's two files share: task.c (the loops,
 * the chain, restore of operator state, aligned checkpoints) and
 * unaligned.c (unaligned checkpoints: capturing in-flight data as channel
 * state, the aligned-checkpoint-timeout switch, and replaying channel
 * state on restore). Everything here belongs to one task thread.
 */
#ifndef SL_TASK_INT_H
#define SL_TASK_INT_H

#include "tm.h"
#include "runtime.h"
#include "valve.h"

/* Per-thread runtime state (lives on the task thread's stack). */
typedef struct run {
    tm_task *t;
    tm_deploy *d;
    const sl_chain *ch;
    sl_op *ops;
    int nops;
    sl_value *in_vals;          /* decode target for the head's input rows */
    sl_valve valve;             /* the input channels' watermarks, status, ends */
    int said;                   /* our first word went to every output */
    int out_idle;               /* our output is marked idle downstream */
    int64_t in_wm;              /* combined input watermark */
    int64_t out_wm;
    int64_t start_ns;
    uint64_t idle_ns, bp_ns;
    int64_t next_flush_ns;
    int64_t next_marker_ns;     /* sources: when the next latency marker is due */
    int failed;                 /* an operator failed: t->err holds why */
    /* checkpoints */
    uint64_t aligning;          /* checkpoint whose barriers are arriving, 0 = none */
    int64_t align_ts;
    int align_flags;
    char *align_dir;
    int64_t align_start_ns;
    char *chan_barrier;         /* per channel: barrier `aligning` arrived */
    int nbarriers;
    sl_netbuf **held_head, **held_tail; /* exactly-once: buffers of channels that
                                        delivered the barrier, held until all have */
    int nheld;
    int stopped;                /* an input ended by stop-with-savepoint (no drain) */
    uint64_t last_cp;           /* newest checkpoint taken here */
    uint64_t stop_cpid;         /* stop-with-savepoint: the savepoint to see complete */
    uint64_t last_aborted;      /* newest checkpoint the JobManager said was aborted */
    int stop_done;              /* 1 it completed, -1 it was aborted */
    int stop_drain;             /* ... with drain: everything fired before it */
    /* checkpoints after tasks finish (FLIP-147) */
    int out_ended;              /* END went to every output: snapshots send no barrier */
    uint64_t trig_cpid;         /* newest trigger heard while running without a
                                   barrier yet; taken at end of input if none came */
    int64_t trig_ts;
    int trig_flags;
    int64_t trig_timeout_ms;    /* its aligned-checkpoint-timeout (SL_CP_ALIGN_TIMEOUT) */
    char *trig_dir;
    int64_t align_timeout_ms;   /* the aligning checkpoint's (SL_CP_ALIGN_TIMEOUT) */
    /* unaligned checkpoints: the snapshot of cap_cpid was taken at its first
     * barrier (or when its alignment timed out); the buffers of each channel
     * from then until that channel's barrier are its in-flight data, written
     * to the job's channel-state file, which is submitted once every live
     * channel's barrier came */
    uint64_t cap_cpid;          /* 0 = no capture */
    tm_snap_job *cap_job;       /* its snapshot, not yet submitted */
    char *cap_seen;             /* per channel: its barrier came, or it ended */
    int *cap_skip;              /* per channel: buffers still queued that were
                                   persisted already (not to persist again) */
    int cap_nseen;
    uint64_t window_bytes;      /* processed between the first and last barrier (aligned or not) */
    int cap_scan;               /* the capture began with a timeout: barriers come
                                   in-band, look for them in the gate as they queue */
    uint64_t cap_scanned;       /* the gate's `pushed` when last looked */
    int *chan_edge, *chan_from; /* per channel: its edge (g->e index) and producer subtask */
    /* the output side of an aligned-checkpoint-timeout: the snapshot of
     * out_cpid (aligned) waits here while its in-band barrier is queued on
     * a remote channel; when the timeout passes first, the barrier overtakes
     * what is queued ahead of it (output channel state) */
    uint64_t out_cpid;          /* 0 = none */
    tm_snap_job *out_job;
    int64_t out_deadline_ms;    /* wall clock: trigger time + the timeout */
    int64_t out_next_ns;        /* monotonic: when to look at the queues again */
    uint64_t final_from;        /* first checkpoint taken after out_ended, 0 = none */
    int final_done;             /* a checkpoint >= final_from completed */
    uint8_t barrier_el[4200];   /* the barrier element's payload being sent */
    size_t barrier_len;
    char err[600];
} run;

/* task.c */
int tm_run_fail(run *r, const sl_op *op);            /* an operator failed: r->err says why */
/* The synchronous part of checkpoint cpid (task.c's take_snapshot). */
int tm_run_snapshot(run *r, uint64_t cpid, int64_t ts, int flags, const char *dir, uint64_t alignment_ns);
char *tm_state_file_name(const char *uid, int subtask); /* caller frees */

/* unaligned.c */
void tm_chan_map(run *r);                             /* r->chan_edge, r->chan_from */
/* The output side of an unaligned barrier: a remote channel's buffer
 * overtaken (exchange.c's callback), into r->cap_job's channel state. */
int tm_cs_output(void *ctx, const sl_edge *e, int sub, const sl_netbuf *b);
void tm_cap_start(run *r, uint64_t cpid, tm_snap_job *job);  /* at the snapshot */
void tm_cap_maybe_done(run *r);                       /* every barrier came: submit */
void tm_cap_abandon(run *r);                          /* drop an unfinished capture */
void tm_cap_channel(run *r, int c, const sl_netbuf *b); /* channel c's barrier came in b */
void tm_cap_mark(run *r, int c, int skip);            /* channel c needs no more */
void tm_cap_on_process(run *r, const sl_netbuf *b);   /* b is about to be processed */
void tm_cap_scan_gate(run *r, uint64_t cpid);         /* in-band barriers queued at the gate */
int tm_align_timeout(run *r);                         /* switch a timed-out alignment */
/* An aligned barrier of checkpoint r->aligning came as an unaligned one
 * (upstream's timeout passed first): unaligned from now, the channels
 * whose barrier came are aligned. */
int tm_align_switch(run *r);
/* The output side (out_cpid above): hold job while its barrier is queued
 * remotely; look again (every few ms unless force), submitting it once the
 * barriers left or after overtaking them once the timeout passed; drop it
 * (an abort, the end). */
void tm_out_hold(run *r, uint64_t cpid, int64_t deadline_ms, tm_snap_job *job);
void tm_out_poll(run *r, int force);
void tm_out_abandon(run *r);
int tm_replay_channels(run *r);                       /* restore: the in-flight records */

#endif
