/*
 * async.c -- `async_wait`: async I/O (Flink's AsyncWaitOperator, reached
 * through AsyncDataStream.orderedWait / unorderedWait) hosting a user
 * sl_async_fn from a C job's shared object (api/datastream.h).
 *
 * Config:
 *   "library", "function", "schema"  as for process (the output's columns)
 *   "mode":            "ordered" (default) | "unordered"
 *   "capacity":        requests in flight at most (default 100)
 *   "timeout":         per input, over all its attempts (default 30 s)
 *   "retry-strategy":  "no-retry" (default) | "fixed-delay" | "exponential-delay"
 *   "retry.max-attempts" (default 3), "retry.delay" (1 s),
 *   "retry.max-delay" (exponential: 1 min), "retry.multiplier" (2)
 *   "max-result-bytes": encoded output of one request at most (64 KiB)
 *   "user.*":          the function's own parameters (sl_ds_param)
 *
 * Requests live in `capacity` slots allocated at open, each with its
 * input row (encoded: retried and snapshotted from it) and its result
 * buffer, both grown once and reused. The user completes a request from
 * any thread: sl_async_complete encodes the rows into the slot under the
 * shared mutex, if the handle's generation is still the slot's (a handle
 * of a request that timed out or was already completed is stale and
 * ignored), and writes an eventfd the operator watches (sl_op_watch_fd).
 * Everything else -- emitting, retrying, timing out -- happens on the task
 * thread: in ready() when the task sees the eventfd, in proc_time() for
 * deadlines and retry delays, and whenever an input row arrives.
 *
 * The queue holds records and watermarks in arrival order. Ordered mode
 * emits from its head while the head is complete; unordered mode emits any
 * complete record of the head segment (the records before the first
 * watermark), so results move past each other but never past a watermark.
 * When every slot is taken, process() waits on the eventfd (and the next
 * deadline) until one frees: the task stops reading input, its input
 * buffers fill and the exchange's credits push back upstream. end_input
 * waits the same way until the queue is empty.
 *
 * Checkpoints: the input rows of every request not yet emitted (in flight,
 * waiting for a retry, or complete but held behind an older one) are the
 * operator state, in queue order; a restored subtask issues them again
 * before anything else.
 */
#include <errno.h>
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "dsfn.h"
#include "jobgraph.h"
#include "runtime.h"
#include "userfn.h"
#include "bytes.h"

enum { RETRY_NONE = 0, RETRY_FIXED, RETRY_EXPONENTIAL };

typedef struct async_plan {
    char *library;
    char *function;
    int ordered;
    int capacity;
    int64_t timeout_ms;
    int retry;                  /* RETRY_* */
    int max_attempts;           /* including the first */
    int64_t delay_ms, max_delay_ms;
    double multiplier;
    int64_t max_result;
} async_plan;

/* task thread's view of a slot */
enum { SLOT_FREE = 0, SLOT_INFLIGHT, SLOT_RETRY, SLOT_READY };

typedef struct async_shared {
    pthread_mutex_t mu;
    int efd;                    /* written by sl_async_complete / _fail */
    int signalled;              /* completions the task has not looked at
                                   (__atomic: the task reads it per record) */
    uint64_t next_gen;          /* task thread, under mu */
    const sl_schema *out;
    size_t max_result;
} async_shared;

struct sl_async_slot {
    async_shared *sh;
    /* under sh->mu: */
    uint64_t gen;               /* the live handle's generation; 0 = none */
    int done;                   /* 1 completed, -1 failed, 0 not yet */
    uint8_t *res;               /* [u32 len][row] per result row */
    size_t reslen, rescap;
    int nres;
    char msg[256];              /* sl_async_fail's message */
    /* task thread only: */
    int state;                  /* SLOT_* */
    uint8_t *in;                /* the input row, encoded */
    size_t inlen, incap;
    int64_t ts;                 /* its timestamp */
    int attempts;
    int64_t deadline;           /* wall ms: timeout */
    int64_t retry_at;           /* wall ms: next attempt (SLOT_RETRY) */
    int next_free;
};

typedef struct qentry {
    int slot;                   /* >= 0 a record, -1 a watermark */
    int64_t wm;
} qentry;

typedef struct async_state {
    void *dl;
    const sl_async_fn *fn;
    void *user;                 /* op->priv while the user's callbacks run */
    async_shared sh;
    int mu_init;
    struct sl_async_slot *slots;
    int free_head, nfree;
    qentry *q;                  /* ring of qcap entries */
    int qcap, qhead, qlen;
    sl_value *in_vals, *out_vals;
    uint8_t **restored;         /* rows to issue again, from restore_state */
    size_t *restored_len;
    int64_t *restored_ts;
    int nrestored;
} async_state;

static void async_plan_free(void *p)
{
    async_plan *pl = p;
    if (!pl) return;
    free(pl->library);
    free(pl->function);
    free(pl);
}

static void *async_plan_make(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    if (pc->nin != 1) {
        sl_seterr(err, errlen, "vertex '%s': async_wait takes one input", v->id);
        return NULL;
    }
    if (sl_ds_plan_user(pc, "sl_async_fn", err, errlen) != SL_OK) return NULL;
    async_plan *pl = sl_calloc(1, sizeof *pl);
    pl->library = sl_strdup(sl_vconf_str(v, "library", ""));
    pl->function = sl_strdup(sl_vconf_str(v, "function", ""));
    const char *mode = sl_vconf_str(v, "mode", "ordered");
    const char *retry = sl_vconf_str(v, "retry-strategy", "no-retry");
    const char *mult = sl_vconf_str(v, "retry.multiplier", "2");
    int64_t cap, attempts, maxres;
    char *end;
    pl->multiplier = strtod(mult, &end);
    int rc = SL_OK;
    if (strcmp(mode, "ordered") && strcmp(mode, "unordered"))
        rc = sl_seterr(err, errlen, "vertex '%s': option 'mode': '%s' is not ordered or unordered", v->id, mode);
    else if (!strcmp(retry, "no-retry")) pl->retry = RETRY_NONE;
    else if (!strcmp(retry, "fixed-delay")) pl->retry = RETRY_FIXED;
    else if (!strcmp(retry, "exponential-delay")) pl->retry = RETRY_EXPONENTIAL;
    else
        rc = sl_seterr(err, errlen,
                       "vertex '%s': option 'retry-strategy': '%s' is not no-retry, fixed-delay or exponential-delay",
                       v->id, retry);
    pl->ordered = !strcmp(mode, "ordered");
    if (rc == SL_OK) rc = sl_vconf_int(v, "capacity", 100, &cap, err, errlen);
    if (rc == SL_OK && (cap < 1 || cap > 100000))
        rc = sl_seterr(err, errlen, "vertex '%s': option 'capacity': %lld is not 1 to 100000", v->id,
                       (long long)cap);
    if (rc == SL_OK) rc = sl_vconf_interval(v, "timeout", 30000, &pl->timeout_ms, err, errlen);
    if (rc == SL_OK && pl->timeout_ms <= 0)
        rc = sl_seterr(err, errlen, "vertex '%s': option 'timeout' must be more than 0", v->id);
    if (rc == SL_OK) rc = sl_vconf_int(v, "retry.max-attempts", 3, &attempts, err, errlen);
    if (rc == SL_OK && (attempts < 1 || attempts > 1000))
        rc = sl_seterr(err, errlen, "vertex '%s': option 'retry.max-attempts': %lld is not 1 to 1000",
                       v->id, (long long)attempts);
    if (rc == SL_OK) rc = sl_vconf_interval(v, "retry.delay", 1000, &pl->delay_ms, err, errlen);
    if (rc == SL_OK) rc = sl_vconf_interval(v, "retry.max-delay", 60000, &pl->max_delay_ms, err, errlen);
    if (rc == SL_OK && (*end || pl->multiplier < 1.0))
        rc = sl_seterr(err, errlen, "vertex '%s': option 'retry.multiplier': '%s' is not a number >= 1",
                       v->id, mult);
    if (rc == SL_OK) rc = sl_vconf_int(v, "max-result-bytes", 65536, &maxres, err, errlen);
    if (rc == SL_OK && (maxres < 16 || maxres > (64 << 20)))
        rc = sl_seterr(err, errlen, "vertex '%s': option 'max-result-bytes': %lld is not 16 to 64 MiB",
                       v->id, (long long)maxres);
    if (rc != SL_OK) {
        async_plan_free(pl);
        return NULL;
    }
    pl->capacity = (int)cap;
    pl->max_attempts = pl->retry == RETRY_NONE ? 1 : (int)attempts;
    pl->max_result = maxres;
    return pl;
}

/* ---- the user's side (any thread) --------------------------------------------- */

static void kick(async_shared *sh)
{
    uint64_t one = 1;
    /* EAGAIN: the counter is already non-zero, the task will look */
    if (write(sh->efd, &one, sizeof one) < 0 && errno != EAGAIN) return;
}

int sl_async_complete(sl_async_req req, const sl_row *rows, int n)
{
    struct sl_async_slot *s = req.slot;
    if (!s || n < 0) return SL_ERR;
    async_shared *sh = s->sh;
    pthread_mutex_lock(&sh->mu);
    if (s->gen != req.gen || s->done) {
        pthread_mutex_unlock(&sh->mu);
        return SL_DONE;
    }
    size_t need = 0;
    for (int i = 0; i < n; i++) need += 4 + sl_row_size(&rows[i], sh->out);
    int rc = SL_OK;
    if (need > sh->max_result) {
        snprintf(s->msg, sizeof s->msg, "a result of %zu bytes (max-result-bytes is %zu)", need,
                 sh->max_result);
        s->done = -1;
        rc = SL_ERR;
    } else {
        if (need > s->rescap) {
            s->res = sl_realloc(s->res, need);
            s->rescap = need;
        }
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            size_t w = sl_row_encode(&rows[i], sh->out, s->res + at + 4, need - at - 4);
            sl_put_le32(s->res + at, (uint32_t)w);
            at += 4 + w;
        }
        s->reslen = at;
        s->nres = n;
        s->done = 1;
    }
    __atomic_store_n(&sh->signalled, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sh->mu);
    kick(sh);
    return rc;
}

int sl_async_fail(sl_async_req req, const char *message)
{
    struct sl_async_slot *s = req.slot;
    if (!s) return SL_ERR;
    async_shared *sh = s->sh;
    pthread_mutex_lock(&sh->mu);
    if (s->gen != req.gen || s->done) {
        pthread_mutex_unlock(&sh->mu);
        return SL_DONE;
    }
    snprintf(s->msg, sizeof s->msg, "%s", message ? message : "failed");
    s->done = -1;
    __atomic_store_n(&sh->signalled, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sh->mu);
    kick(sh);
    return SL_OK;
}

/* ---- the task thread ------------------------------------------------------------ */

#define ENTER(op, st) ((op)->priv = (st)->user)
#define LEAVE(op, st) ((st)->user = (op)->priv, (op)->priv = (st))

static int slot_index(const async_state *st, const struct sl_async_slot *s) { return (int)(s - st->slots); }

/* A new handle for slot s (the old one goes stale). */
static sl_async_req new_handle(async_state *st, struct sl_async_slot *s)
{
    pthread_mutex_lock(&st->sh.mu);
    s->gen = ++st->sh.next_gen;
    s->done = 0;
    s->nres = 0;
    s->reslen = 0;
    sl_async_req req = {s, s->gen};
    pthread_mutex_unlock(&st->sh.mu);
    return req;
}

static void drop_handle(async_state *st, struct sl_async_slot *s)
{
    pthread_mutex_lock(&st->sh.mu);
    s->gen = 0;
    pthread_mutex_unlock(&st->sh.mu);
}

static int decode_input(sl_op *op, async_state *st, const struct sl_async_slot *s, sl_row *row)
{
    row->vals = st->in_vals;
    char err[200];
    if (sl_row_decode(s->in, s->inlen, op->in, row, err, sizeof err) != SL_OK)
        return sl_op_fail(op, "%s: an input row kept for a retry is damaged: %s", op->task_name, err);
    row->ts = s->ts;
    return SL_OK;
}

/* One attempt of slot s's request; row is its input (decoded from s->in
 * when NULL). */
static int attempt(sl_op *op, async_state *st, struct sl_async_slot *s, const sl_row *row)
{
    sl_row r;
    if (!row) {
        if (decode_input(op, st, s, &r) != SL_OK) return SL_ERR;
        row = &r;
    }
    s->attempts++;
    s->state = SLOT_INFLIGHT;
    sl_async_req req = new_handle(st, s);
    ENTER(op, st);
    int rc = st->fn->async_invoke(op, req, row);
    LEAVE(op, st);
    return rc;
}

static int64_t retry_delay(const async_plan *pl, int attempts)
{
    if (pl->retry == RETRY_FIXED) return pl->delay_ms;
    double d = (double)pl->delay_ms;
    for (int i = 1; i < attempts && d < (double)pl->max_delay_ms; i++) d *= pl->multiplier;
    return d > (double)pl->max_delay_ms ? pl->max_delay_ms : (int64_t)d;
}

/* Completions handed over since the last look: results become READY,
 * failures wait for a retry or fail the job. */
static int take_completions(sl_op *op, async_state *st)
{
    const async_plan *pl = op->plan;
    /* no syscall unless something was completed; drain the eventfd before
     * clearing the flag, so a completion racing with us leaves it readable */
    if (!__atomic_load_n(&st->sh.signalled, __ATOMIC_ACQUIRE)) return SL_OK;
    uint64_t x;
    if (read(st->sh.efd, &x, sizeof x) < 0 && errno != EAGAIN && errno != EINTR)
        return sl_op_fail(op, "%s: async completions: %s", op->task_name, strerror(errno));
    __atomic_store_n(&st->sh.signalled, 0, __ATOMIC_RELEASE);
    int64_t now = sl_now_ms();
    for (int i = 0; i < pl->capacity; i++) {
        struct sl_async_slot *s = &st->slots[i];
        if (s->state != SLOT_INFLIGHT) continue;
        pthread_mutex_lock(&st->sh.mu);
        int done = s->done;
        if (done) s->gen = 0; /* a second completion of this attempt is stale */
        pthread_mutex_unlock(&st->sh.mu);
        if (done > 0) {
            s->state = SLOT_READY;
        } else if (done < 0 && s->attempts < pl->max_attempts) {
            s->state = SLOT_RETRY;
            s->retry_at = now + retry_delay(pl, s->attempts);
        } else if (done < 0) {
            return sl_op_fail(op, "%s: async request failed after %d attempt%s: %s", op->task_name,
                              s->attempts, s->attempts == 1 ? "" : "s", s->msg);
        }
    }
    return SL_OK;
}

static int emit_slot(sl_op *op, async_state *st, struct sl_async_slot *s)
{
    size_t at = 0;
    int rc = SL_OK;
    for (int i = 0; i < s->nres && rc == SL_OK; i++) {
        uint32_t len = sl_get_le32(s->res + at);
        sl_row r = {.vals = st->out_vals};
        char err[200];
        if (sl_row_decode(s->res + at + 4, len, op->out, &r, err, sizeof err) != SL_OK)
            return sl_op_fail(op, "%s: a result row is damaged: %s", op->task_name, err);
        r.ts = s->ts;
        rc = sl_op_emit(op, &r);
        at += 4 + len;
    }
    s->state = SLOT_FREE;
    s->next_free = st->free_head;
    st->free_head = slot_index(st, s);
    st->nfree++;
    return rc;
}

static qentry *qat(async_state *st, int i) { return &st->q[(st->qhead + i) % st->qcap]; }

static void qpop(async_state *st)
{
    st->qhead = (st->qhead + 1) % st->qcap;
    st->qlen--;
}

/* Take entry i out, keeping the others in order (unordered mode: the ring
 * then never holds more than the slots in use and one watermark between
 * records). */
static void qremove(async_state *st, int i)
{
    for (; i > 0; i--) *qat(st, i) = *qat(st, i - 1);
    qpop(st);
}

/* Emit what may go out now (see the file comment for the two modes). */
static int emit_ready(sl_op *op, async_state *st)
{
    const async_plan *pl = op->plan;
    while (st->qlen) {
        qentry *h = qat(st, 0);
        if (h->slot == -1) {
            int64_t wm = h->wm;
            qpop(st);
            if (sl_op_emit_watermark(op, wm) != SL_OK) return SL_ERR;
            continue;
        }
        if (st->slots[h->slot].state == SLOT_READY) {
            int s = h->slot;
            qpop(st);
            if (emit_slot(op, st, &st->slots[s]) != SL_OK) return SL_ERR;
            continue;
        }
        if (pl->ordered) break;
        /* unordered: whatever of the head segment is complete */
        for (int i = 1; i < st->qlen;) {
            qentry *e = qat(st, i);
            if (e->slot == -1) break;
            if (st->slots[e->slot].state != SLOT_READY) {
                i++;
                continue;
            }
            int s = e->slot;
            qremove(st, i);
            if (emit_slot(op, st, &st->slots[s]) != SL_OK) return SL_ERR;
        }
        break;
    }
    return SL_OK;
}

/* Deadlines and retry delays due at now; then the next one as proc_time_at. */
static int due(sl_op *op, async_state *st, int64_t now)
{
    const async_plan *pl = op->plan;
    int64_t next = INT64_MAX;
    for (int i = 0; i < pl->capacity; i++) {
        struct sl_async_slot *s = &st->slots[i];
        if (s->state != SLOT_INFLIGHT && s->state != SLOT_RETRY) continue;
        if (now >= s->deadline) {
            drop_handle(st, s);
            if (!st->fn->timeout)
                return sl_op_fail(op, "%s: Async function call has timed out.", op->task_name);
            sl_row row;
            if (decode_input(op, st, s, &row) != SL_OK) return SL_ERR;
            sl_async_req req = new_handle(st, s);
            ENTER(op, st);
            int rc = st->fn->timeout(op, req, &row);
            LEAVE(op, st);
            if (rc != SL_OK) return SL_ERR;
            pthread_mutex_lock(&st->sh.mu);
            if (s->done < 0) rc = sl_op_fail(op, "%s: the timeout handler failed: %s", op->task_name, s->msg);
            if (s->done <= 0) s->nres = 0; /* not completed: no output for this input */
            s->gen = 0;
            pthread_mutex_unlock(&st->sh.mu);
            if (rc != SL_OK) return rc;
            s->state = SLOT_READY;
            continue;
        }
        if (s->state == SLOT_RETRY && now >= s->retry_at) {
            if (attempt(op, st, s, NULL) != SL_OK) return SL_ERR;
        }
        int64_t at = s->state == SLOT_RETRY && s->retry_at < s->deadline ? s->retry_at : s->deadline;
        if (at < next) next = at;
    }
    op->proc_time_at = st->nrestored ? 0 : next;
    return SL_OK;
}

/* Completions, deadlines, then what can be emitted. */
static int progress(sl_op *op, async_state *st)
{
    if (take_completions(op, st) != SL_OK || due(op, st, sl_now_ms()) != SL_OK) return SL_ERR;
    return emit_ready(op, st);
}

/* Block (the task reads no input meanwhile) until a completion or the
 * next deadline, then progress. */
static int wait_some(sl_op *op, async_state *st)
{
    int64_t now = sl_now_ms(), at = op->proc_time_at;
    int ms = at == INT64_MAX ? 1000 : at <= now ? 0 : (int)SL_MIN(at - now, 1000);
    struct pollfd pf = {.fd = st->sh.efd, .events = POLLIN};
    if (poll(&pf, 1, ms) < 0 && errno != EINTR)
        return sl_op_fail(op, "%s: waiting for async results: %s", op->task_name, strerror(errno));
    return progress(op, st);
}

/* A new request for row (ts: its timestamp) once a slot is free. */
static int submit(sl_op *op, async_state *st, const sl_row *row, const uint8_t *enc, size_t enclen,
                  int64_t ts)
{
    const async_plan *pl = op->plan;
    while (st->nfree == 0)
        if (wait_some(op, st) != SL_OK) return SL_ERR;
    struct sl_async_slot *s = &st->slots[st->free_head];
    st->free_head = s->next_free;
    st->nfree--;
    size_t need = enc ? enclen : sl_row_size(row, op->in);
    if (need > s->incap) {
        s->in = sl_realloc(s->in, need);
        s->incap = need;
    }
    s->inlen = enc ? (memcpy(s->in, enc, enclen), enclen) : sl_row_encode(row, op->in, s->in, need);
    s->ts = ts;
    s->attempts = 0;
    s->deadline = sl_now_ms() + pl->timeout_ms;
    SL_ASSERT(st->qlen < st->qcap); /* records <= capacity, watermarks between them */
    qentry *e = &st->q[(st->qhead + st->qlen++) % st->qcap];
    e->slot = slot_index(st, s);
    if (attempt(op, st, s, row) != SL_OK) return SL_ERR;
    if (s->deadline < op->proc_time_at) op->proc_time_at = s->deadline;
    return SL_OK;
}

/* Restored requests go out again before any new input. */
static int issue_restored(sl_op *op, async_state *st)
{
    if (!st->nrestored) return SL_OK;
    int n = st->nrestored, rc = SL_OK;
    st->nrestored = 0;
    for (int i = 0; i < n; i++) {
        if (rc == SL_OK) rc = submit(op, st, NULL, st->restored[i], st->restored_len[i], st->restored_ts[i]);
        free(st->restored[i]);
    }
    free(st->restored);
    free(st->restored_len);
    free(st->restored_ts);
    st->restored = NULL;
    st->restored_len = NULL;
    st->restored_ts = NULL;
    return rc;
}

static int async_open(sl_op *op)
{
    const async_plan *pl = op->plan;
    async_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->sh.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (st->sh.efd < 0) return sl_op_fail(op, "%s: eventfd: %s", op->task_name, strerror(errno));
    pthread_mutex_init(&st->sh.mu, NULL);
    st->mu_init = 1;
    st->sh.out = op->out;
    st->sh.max_result = (size_t)pl->max_result;
    st->slots = sl_calloc((size_t)pl->capacity, sizeof *st->slots);
    for (int i = 0; i < pl->capacity; i++) {
        st->slots[i].sh = &st->sh;
        st->slots[i].next_free = i + 1 < pl->capacity ? i + 1 : -1;
    }
    st->nfree = pl->capacity;
    st->qcap = 2 * pl->capacity + 2; /* at most one watermark between records */
    st->q = sl_calloc((size_t)st->qcap, sizeof *st->q);
    st->in_vals = sl_calloc((size_t)op->in->n + 1, sizeof(sl_value));
    st->out_vals = sl_calloc((size_t)op->out->n + 1, sizeof(sl_value));
    if (sl_op_watch_fd(op, st->sh.efd, POLLIN) != SL_OK) return SL_ERR;
    st->fn = sl_ds_load_user(op, pl->library, pl->function, &st->dl);
    if (!st->fn) return SL_ERR;
    if (!st->fn->async_invoke)
        return sl_op_fail(op, "vertex '%s': '%s' has no async_invoke", op->vertex->id, pl->function);
    if (!st->fn->open) return SL_OK;
    ENTER(op, st);
    int rc = st->fn->open(op);
    LEAVE(op, st);
    return rc;
}

static int async_process(sl_op *op, int input, sl_row *row)
{
    async_state *st = op->priv;
    SL_UNUSED(input);
    if (issue_restored(op, st) != SL_OK || take_completions(op, st) != SL_OK) return SL_ERR;
    if (submit(op, st, row, NULL, 0, row->ts) != SL_OK) return SL_ERR;
    return emit_ready(op, st);
}

static int async_watermark(sl_op *op, int input, int64_t wm)
{
    async_state *st = op->priv;
    SL_UNUSED(input);
    wm = op->current_watermark; /* the combined one */
    if (issue_restored(op, st) != SL_OK) return SL_ERR;
    if (!st->qlen) return sl_op_emit_watermark(op, wm);
    qentry *t = qat(st, st->qlen - 1);
    if (t->slot == -1) {
        t->wm = wm;
    } else {
        SL_ASSERT(st->qlen < st->qcap);
        qentry *e = &st->q[(st->qhead + st->qlen++) % st->qcap];
        e->slot = -1;
        e->wm = wm;
    }
    return progress(op, st);
}

static int async_end_input(sl_op *op, int input)
{
    async_state *st = op->priv;
    SL_UNUSED(input);
    if (issue_restored(op, st) != SL_OK) return SL_ERR;
    while (st->qlen) {
        if (progress(op, st) != SL_OK) return SL_ERR;
        if (st->qlen && wait_some(op, st) != SL_OK) return SL_ERR;
    }
    return SL_OK;
}

static int async_ready(sl_op *op)
{
    async_state *st = op->priv;
    if (issue_restored(op, st) != SL_OK) return SL_ERR;
    return progress(op, st);
}

static int async_proc_time(sl_op *op, int64_t now_ms)
{
    async_state *st = op->priv;
    SL_UNUSED(now_ms);
    if (issue_restored(op, st) != SL_OK) return SL_ERR;
    return progress(op, st);
}

/* Blob: per request not yet emitted, in queue order: [i64 ts][u32 len][row]. */
static int async_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    async_state *st = op->priv;
    SL_UNUSED(cpid);
    size_t n = 0;
    for (int i = 0; i < st->nrestored; i++) n += 12 + st->restored_len[i];
    for (int i = 0; i < st->qlen; i++)
        if (qat(st, i)->slot >= 0) n += 12 + st->slots[qat(st, i)->slot].inlen;
    *len = n;
    *blob = NULL;
    if (!n) return SL_OK;
    uint8_t *b = sl_malloc(n), *p = b;
    for (int i = 0; i < st->nrestored; i++) {
        sl_put_lei64(p, st->restored_ts[i]);
        sl_put_le32(p + 8, (uint32_t)st->restored_len[i]);
        memcpy(p + 12, st->restored[i], st->restored_len[i]);
        p += 12 + st->restored_len[i];
    }
    for (int i = 0; i < st->qlen; i++) {
        int si = qat(st, i)->slot;
        if (si < 0) continue;
        const struct sl_async_slot *s = &st->slots[si];
        sl_put_lei64(p, s->ts);
        sl_put_le32(p + 8, (uint32_t)s->inlen);
        memcpy(p + 12, s->in, s->inlen);
        p += 12 + s->inlen;
    }
    *blob = b;
    return SL_OK;
}

static int async_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    async_state *st = op->priv;
    for (int k = 0; k < nblobs; k++) {
        const uint8_t *p = blobs[k], *end = p + lens[k];
        while (p < end) {
            uint32_t l = end - p >= 12 ? sl_get_le32(p + 8) : 0;
            if (end - p < 12 || (size_t)(end - p - 12) < l)
                return sl_op_fail(op, "%s: async state %d of %d is damaged (a request cut short)",
                                  op->task_name, k + 1, nblobs);
            int i = st->nrestored++;
            st->restored = sl_realloc(st->restored, (size_t)st->nrestored * sizeof *st->restored);
            st->restored_len = sl_realloc(st->restored_len, (size_t)st->nrestored * sizeof(size_t));
            st->restored_ts = sl_realloc(st->restored_ts, (size_t)st->nrestored * sizeof(int64_t));
            st->restored_ts[i] = sl_get_lei64(p);
            st->restored_len[i] = l;
            st->restored[i] = sl_malloc(l ? l : 1);
            memcpy(st->restored[i], p + 12, l);
            p += 12 + l;
        }
    }
    if (st->nrestored) op->proc_time_at = 0; /* issue them at the first chance */
    return SL_OK;
}

static void async_close(sl_op *op)
{
    async_state *st = op->priv;
    if (!st) return;
    const async_plan *pl = op->plan;
    if (st->fn && st->fn->close) {
        ENTER(op, st);
        st->fn->close(op); /* joins the user's threads: no completion after this */
        LEAVE(op, st);
    }
    if (st->dl) dlclose(st->dl);
    for (int i = 0; st->slots && i < pl->capacity; i++) {
        free(st->slots[i].in);
        free(st->slots[i].res);
    }
    for (int i = 0; i < st->nrestored; i++) free(st->restored[i]);
    free(st->restored);
    free(st->restored_len);
    free(st->restored_ts);
    free(st->slots);
    free(st->q);
    free(st->in_vals);
    free(st->out_vals);
    if (st->sh.efd >= 0) {
        sl_op_unwatch_fd(op, st->sh.efd);
        close(st->sh.efd);
    }
    if (st->mu_init) pthread_mutex_destroy(&st->sh.mu);
    free(st);
    op->priv = NULL;
}

static const sl_op_option async_options[] = {
    {"library", SL_CT_STRING, NULL, NULL,
     "Shared object (an uploaded C job's id or a path) holding the user function."},
    {"function", SL_CT_STRING, NULL, NULL,
     "Name of the function table the library exports."},
    {"schema", SL_CT_JSON, NULL, NULL,
     "Output columns: a list of {\"name\", \"type\"}."},
    {"mode", SL_CT_STRING, NULL, NULL,
     "ordered or unordered: whether results keep the input order."},
    {"capacity", SL_CT_STRING, NULL, NULL,
     "Most requests in flight per subtask."},
    {"timeout", SL_CT_STRING, NULL, NULL,
     "How long one request may take (a duration) before the retry strategy decides."},
    {"retry-strategy", SL_CT_STRING, NULL, NULL,
     "no-retry, fixed-delay or exponential-delay."},
    {"retry.max-attempts", SL_CT_STRING, NULL, NULL,
     "Retries after the first attempt."},
    {"retry.delay", SL_CT_STRING, NULL, NULL,
     "Wait before a retry (a duration); the first with exponential-delay."},
    {"retry.max-delay", SL_CT_STRING, NULL, NULL,
     "Longest wait between retries with exponential-delay."},
    {"retry.multiplier", SL_CT_STRING, NULL, NULL,
     "Factor the wait grows by with exponential-delay."},
    {"max-result-bytes", SL_CT_STRING, NULL, NULL,
     "Largest result one request may produce."},
    {"user.*", SL_CT_STRING, NULL, NULL,
     "Passed to the user function as its own configuration."},
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_async_wait = {
    .abi = SL_OP_ABI_VERSION,
    .name = "async_wait",
    .options = async_options,
    .plan = async_plan_make,
    .plan_free = async_plan_free,
    .open = async_open,
    .process = async_process,
    .watermark = async_watermark,
    .end_input = async_end_input,
    .proc_time = async_proc_time,
    .ready = async_ready,
    .close = async_close,
    .snapshot_state = async_snapshot,
    .restore_state = async_restore,
};
