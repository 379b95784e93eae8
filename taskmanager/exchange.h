/*
 * exchange.h -- how records travel between subtasks: input gates, output
 * pools, writers, channels, local and remote hand-over, credit bookkeeping.
 *
 * A producer task serializes elements (exchange.c, "Elements") into the
 * current buffer of a subpartition; a full buffer (or a partly filled one
 * at every execution.buffer-timeout) is handed on: pushed into the
 * consumer's gate when the consumer runs on this TaskManager, else queued
 * on the channel's send queue, which the transport (net.c) puts on the wire
 * only against credit. On the receiving side the exchange grants credit
 * (one per free receive buffer: buffers-per-channel exclusive buffers per
 * remote channel, floating-buffers-per-gate lent to channels with a
 * backlog), fills a granted buffer with an arriving DATA frame and pushes
 * it into the gate; the consumer recycles it, and it becomes credit again.
 *
 * Latency markers go to one random channel (tm_exchange_latency). With
 * buffer debloating a consumer's gate announces a buffer size (buf_size;
 * remote producers learn it from CREDIT frames) and a producer fills each
 * buffer it starts for that channel only up to it (debloat.h).
 *
 * A record larger than a buffer travels as a spanning record: SPAN_FIRST
 * (u32 total length, then the first bytes) in one buffer, SPAN_MORE with
 * the rest in the following buffers of the same channel, nothing else in
 * between. The reader reassembles it into a per-channel buffer that grows
 * up to SL_MAX_RECORD_BYTES and is reused. See sl_limits.h.
 *
 * Threads: writers and readers belong to their task thread; gates are
 * shared under their lock; send queues under their peer's lock; credit
 * counters, receive buffers and early credits belong to the network thread.
 * Every queue is bounded by the pools its buffers come from.
 */
#ifndef SL_EXCHANGE_H
#define SL_EXCHANGE_H

#include <pthread.h>

#include "sl.h"
#include "sl_limits.h"
#include "row.h"
#include "jobgraph.h"
#include "buffer.h"

typedef struct tm_net tm_net;
typedef struct tm_deploy tm_deploy;
typedef struct tm_task tm_task;
typedef struct tm_peer tm_peer;

/* Element tags beyond buffer.h's: the parts of a spanning record. */
enum {
    SL_EL_SPAN_FIRST = 6, /* u32 total payload length, then its first bytes */
    SL_EL_SPAN_MORE = 7,  /* the next bytes of the record being spanned */
};

/* ---- mail and gates ------------------------------------------------------ */

/* Control messages for a task, delivered through its gate. */
typedef enum {
    TM_MAIL_TRIGGER = 1,        /* sources: take checkpoint cpid now */
    TM_MAIL_COMPLETE,           /* checkpoint cpid completed */
    TM_MAIL_ABORT               /* checkpoint cpid was aborted */
} tm_mail_kind;

typedef struct tm_mail {
    tm_mail_kind kind;
    uint64_t cpid;
    int64_t ts;                 /* trigger time (wall ms) */
    int flags;                  /* SL_CP_* */
    int64_t align_timeout_ms;   /* with SL_CP_ALIGN_TIMEOUT */
    char *dir;                  /* TRIGGER: where state files go */
    struct tm_mail *next;
} tm_mail;

/* Where a task's input arrives -- and its mail. */
typedef struct tm_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sl_netbuf *head, *tail;        /* buffers ready for the task, in arrival order */
    int queued;
    uint64_t pushed;            /* buffers ever pushed (a task looking for barriers
                                   queued since it last looked) */
    int closed;                 /* cancelled: the task should stop */
    int nchan;                  /* input channels */
    tm_mail *mail_head, *mail_tail;
    int efd;                    /* eventfd written with every mail and on close,
                                   so a source polling its descriptors wakes */
    int polling;                /* the task polls efd and its operators'
                                   descriptors: a pushed buffer writes efd too */
    uint32_t buf_size;          /* debloating: the buffer size announced to its
                                   producers, 0 = full (relaxed atomic) */
} tm_gate;

void tm_gate_init(tm_gate *g, int nchan);
void tm_gate_push(tm_gate *g, sl_netbuf *b);   /* any thread; takes b */
/* A priority barrier (b->prio): ahead of every queued buffer, behind the
 * priority ones already there; b->overtaken is set to the number of queued
 * buffers of its channel it went ahead of. Any thread; takes b. */
void tm_gate_push_priority(tm_gate *g, sl_netbuf *b);
/* The head of the queue if it is a priority barrier, else NULL. Task thread. */
sl_netbuf *tm_gate_take_priority(tm_gate *g);
/* fn(ctx, b) on the first n queued buffers of channel chan (priority ones
 * not counted), under the gate's lock: they stay queued. SL_ERR when fn
 * failed or fewer than n are there. Task thread (only it takes buffers, so
 * what it counted is still queued). */
int tm_gate_each_queued(tm_gate *g, int chan, int n, int (*fn)(void *ctx, const sl_netbuf *b), void *ctx);
void tm_gate_close(tm_gate *g);             /* any thread: recycles what is queued */
void tm_gate_destroy(tm_gate *g);
/* Wait for a buffer until deadline_ns (monotonic); NULL on timeout, close
 * or mail (the caller looks at its mail after every call). Task thread. */
sl_netbuf *tm_gate_take(tm_gate *g, int64_t deadline_ns);
sl_netbuf *tm_gate_take_nowait(tm_gate *g);
/* tm_gate_take that also returns (NULL) when one of fds[0..nfds) is ready
 * (revents set). Task thread. */
struct pollfd;
sl_netbuf *tm_gate_take_poll(tm_gate *g, int64_t deadline_ns, struct pollfd *fds, int nfds);
tm_mail *tm_gate_take_mail(tm_gate *g);     /* all mail, oldest first; caller frees */
void tm_mail_free(tm_mail *m);              /* a list */
void tm_task_wake(tm_task *t);
void tm_task_mail(tm_task *t, tm_mail *m);  /* any thread; takes m */

/* ---- channels ------------------------------------------------------------ */

/* The sending end of one channel (producer subtask -> consumer subtask). */
typedef struct tm_outchan {
    uint32_t id;                /* channel id within the deployment */
    tm_gate *local;             /* consumer gate when the consumer runs here */
    int local_idx;              /* channel index at that gate */
    tm_peer *peer;              /* else the TaskManager it runs on */
    /* remote only; queue under peer->mu, credit owned by the network thread */
    sl_netbuf *qhead, *qtail;
    int qlen;
    sl_netbuf *phead, *ptail;   /* priority barriers: sent before qhead, without credit */
    int credit;
    uint32_t buf_size;          /* remote: the size its consumer announced (debloating),
                                   0 = full; written by the network thread (atomic) */
    tm_deploy *d;
    struct tm_outchan *peer_next; /* peer's list of its channels */
} tm_outchan;

/* The receiving end of a remote channel (network thread only). */
typedef struct tm_inchan {
    uint32_t id;
    tm_gate *gate;
    int gate_idx;
    tm_peer *peer;
    sl_netbuf *reserved;           /* buffers granted as credit, waiting for data */
    int nreserved;
    int announced;              /* credits sent and not yet used */
    int backlog;                /* sender's last announced backlog */
} tm_inchan;

/* Credits that arrived before their deployment (another TaskManager
 * deployed first), kept per peer: at most TM_EARLY_MAX entries, each
 * forgotten TM_EARLY_TTL_MS after it arrived. */
#define TM_EARLY_MAX 1024
#define TM_EARLY_TTL_MS 30000

typedef struct tm_early_credit {
    uint64_t session;
    uint32_t attempt, chan, credits;
    int64_t at_ms;              /* monotonic arrival time */
} tm_early_credit;

/* ---- writers and readers (task thread) ----------------------------------- */

typedef struct tm_writer {
    const sl_edge *e;
    const sl_schema *schema;    /* of the rows this edge carries */
    int output;                 /* which output of the tail it serves (0 = main,
                                   else a side output its operator declared) */
    int nsub;
    tm_outchan **chans;         /* per consumer subtask; NULL = not connected */
    sl_netbuf **cur;               /* buffer being filled, per subpartition */
    int rr;                     /* rebalance: next subpartition */
    int max_parallelism;
} tm_writer;

/* A task's sending state beside its writers (t->writers, t->out_pool). */
typedef struct tm_wset {
    tm_task *t;
    const char *vertex;         /* the chain's tail, for messages */
    uint8_t *keybuf;            /* SL_MAX_KEY_BYTES: a key being hashed */
    uint8_t *span;              /* a spanning record's bytes; grows, reused */
    size_t span_cap;
    /* backpressure accounting: called around a wait for an output buffer */
    void (*wait_begin)(void *ctx, int64_t now_ns);
    void (*wait_end)(void *ctx, int64_t waited_ns);
    void *wait_ctx;
    uint64_t rng;               /* xorshift state: latency markers' random channel */
    int debloat;                /* start buffers at their consumer's announced size */
    /* called every few ms while waiting for an output buffer, as long as
     * `ticking` (an aligned-checkpoint-timeout that may pass meanwhile) */
    void (*tick)(void *ctx);    /* wait_ctx */
    int ticking;
} tm_wset;

/* Reassembly of spanning records, per input channel. */
typedef struct tm_span_in {
    uint8_t *buf;               /* grows up to SL_MAX_RECORD_BYTES, reused */
    uint32_t cap, have, want;   /* want > 0: a record is being reassembled */
} tm_span_in;

typedef struct tm_reader {
    int nchan;
    tm_span_in *chan;
} tm_reader;

/* One element read from a buffer; p points into the buffer or into the
 * channel's reassembly buffer, valid until the next read on that channel. */
typedef struct tm_element {
    int tag;                    /* SL_EL_* (spans come out as SL_EL_RECORD) */
    const uint8_t *p;
    uint32_t len;
} tm_element;

/* ---- building and wiring (network thread) -------------------------------- */

/* The writers and output pool of task t (after t->d->g, t->chain, t->subtask
 * are set) and its reader. */
int tm_exchange_build_task(tm_task *t, char *err, size_t errlen);
/* Every channel of d between the tasks built here and the slots in
 * `slots` (TaskManager id, host, data port per slot), receive pools and
 * first credits included; applies early credits from each peer. */
typedef struct tm_slot_loc {
    const char *tm_id, *host;
    int data_port;
} tm_slot_loc;
int tm_exchange_wire(tm_net *n, tm_deploy *d, const tm_slot_loc *slots, char *err, size_t errlen);
/* Undo tm_exchange_wire and tm_exchange_build_task for every task of d
 * (once its threads have ended). */
void tm_exchange_unwire(tm_net *n, tm_deploy *d);

/* ---- the task's side ----------------------------------------------------- */

void tm_exchange_set_wait(tm_wset *ws, void (*begin)(void *, int64_t), void (*end)(void *, int64_t),
                          void *ctx);
/* Route and serialize one row into every writer serving `output`
 * (0 = main, else a declared side output). SL_ERR with err set (cancelled, a key or record over its
 * limit, which the message names together with the vertex). */
int tm_exchange_emit(tm_wset *ws, int output, const sl_row *row, char *err, size_t errlen);
/* A control element to every subpartition of every writer (forward
 * writers: to their own subtask only). x is the 8-byte value of a
 * watermark, the flag of IDLE / END; BARRIER takes payload[len]. */
int tm_exchange_broadcast(tm_wset *ws, int tag, int64_t x, const void *payload, size_t len,
                          char *err, size_t errlen);
/* A latency marker (payload[len], SL_EL_LATENCY) to one channel: of one
 * writer of the main output chosen at random, the subpartition at random
 * (a forward writer's own), as Flink's randomEmit; nothing without writers.
 * It goes into that channel's current buffer like a record. */
int tm_exchange_latency(tm_wset *ws, const uint8_t *payload, size_t len, char *err, size_t errlen);
/* Hand on every partly filled buffer. */
void tm_exchange_flush(tm_wset *ws);
/* An unaligned checkpoint's barrier (payload[len]) to every subpartition,
 * ahead of what is queued: partly filled buffers are handed on first; then
 * on a local channel the barrier goes into the consumer's gate ahead of its
 * buffers (the consumer persists what it overtook); on a remote channel the
 * buffers still waiting for credit are given to out(ctx, edge, consumer
 * subtask, buffer) -- the producer's output channel state -- and the
 * barrier is sent ahead of them, without credit. SL_ERR with err set when
 * out failed. */
int tm_exchange_priority_barrier(tm_wset *ws, const void *payload, size_t len,
                                 int (*out)(void *ctx, const sl_edge *e, int sub, const sl_netbuf *b),
                                 void *ctx, char *err, size_t errlen);
int tm_exchange_has_output(const tm_task *t, int output);
/* Whether t sends on a remote channel. */
int tm_exchange_has_remote(const tm_task *t);
/* The remote channels whose send queue still holds the in-band barrier of
 * cpid (waiting for credit). */
int tm_exchange_queued_barriers(tm_wset *ws, uint64_t cpid);
/* An aligned barrier of cpid that its aligned-checkpoint-timeout caught in
 * a remote send queue overtakes it, as Flink's producer does: the queued
 * buffers ahead of it, and its own buffer's elements before it, are given
 * to out(ctx, edge, consumer subtask, buffer) -- output channel state --
 * and stay queued; the barrier (its element taken out of that buffer) goes
 * ahead of them as a priority barrier with payload[len] (flags unaligned).
 * *channels and *buffers count what was overtaken. SL_ERR with err set
 * when out failed. */
int tm_exchange_overtake_queued(tm_wset *ws, uint64_t cpid, const void *payload, size_t len,
                                int (*out)(void *ctx, const sl_edge *e, int sub, const sl_netbuf *b),
                                void *ctx, int *channels, int *buffers, char *err, size_t errlen);

/* The next element of b from *pos (advanced): SL_OK with *el set; SL_AGAIN
 * when the element was a part of a spanning record not yet complete;
 * SL_DONE at the end of the buffer; SL_ERR when the buffer is damaged
 * (err says how). */
int tm_exchange_read(tm_reader *rd, const sl_netbuf *b, size_t *pos, tm_element *el, char *err,
                     size_t errlen);

/* Whether b's last element is a barrier (its checkpoint id into *cpid):
 * walks the element headers. */
int tm_buffer_barrier(const sl_netbuf *b, uint64_t *cpid);

/* Writing a spanning record into a buffer sequence, and reading it back:
 * the encode/decode pair exposed for unit tests. tm_span_write writes as
 * much of rec[len] from *done as fits in b (SPAN_FIRST when *done == 0). */
void tm_span_write(sl_netbuf *b, const uint8_t *rec, uint32_t len, uint32_t *done);
int tm_reader_init(tm_reader *rd, int nchan);
void tm_reader_free(tm_reader *rd);

/* ---- the network thread's side ------------------------------------------- */

/* Credit from the receiver of channel chan of deployment (session, attempt);
 * d NULL when no such deployment is here (yet): kept as an early credit.
 * buf_size: the buffer size the receiver's gate announced (debloating), 0 =
 * full. */
int tm_exchange_credit(tm_peer *p, tm_deploy *d, uint64_t session, uint32_t attempt,
                       uint32_t chan, uint32_t credits, uint32_t buf_size, char *err, size_t errlen);
/* A DATA frame of len bytes for channel chan of d from p: the granted
 * buffer to copy it into (then call tm_exchange_deliver), or NULL with err
 * set (unknown channel, no credit, too long). */
sl_netbuf *tm_exchange_recv_buffer(tm_peer *p, tm_deploy *d, uint32_t chan, uint32_t len, char *err,
                                size_t errlen);
void tm_exchange_deliver(tm_deploy *d, uint32_t chan, sl_netbuf *b, uint32_t backlog);
/* A priority barrier of len bytes for channel chan of d from p (an EVENT
 * frame, sent without credit): a buffer of its own to copy it into (then
 * call tm_exchange_deliver_priority), or NULL with err set. */
sl_netbuf *tm_exchange_event_buffer(tm_peer *p, tm_deploy *d, uint32_t chan, uint32_t len, char *err,
                                    size_t errlen);
void tm_exchange_deliver_priority(tm_deploy *d, uint32_t chan, sl_netbuf *b);
/* A receive buffer came back from a task (via the inbox). */
void tm_exchange_recv_back(tm_net *n, sl_netbuf *b);
/* p's connection is up: announce the credits granted meanwhile. */
void tm_exchange_peer_up(tm_net *n, tm_peer *p);
/* Apply p's early credits for d (same session and attempt) to its channels. */
void tm_exchange_take_early(tm_deploy *d, tm_peer *p);
/* Forget p's early credits for (session, attempt), or all expired ones. */
void tm_exchange_drop_early(tm_peer *p, uint64_t session, uint32_t attempt);
/* Does d have a channel through p? */
int tm_exchange_uses_peer(const tm_deploy *d, const tm_peer *p);
/* Has every buffer of d's remote channels left for the wire? */
int tm_exchange_sends_drained(tm_deploy *d);

/* The receive buffers' recycle callback (any thread). */
void tm_exchange_recycle_recv(sl_netbuf *b);

#endif
