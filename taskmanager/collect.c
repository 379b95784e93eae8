/*
 * collect.c -- the TaskManager's side of the collect channel (core/collect.h):
 * a collect sink's batches go from its task thread to the network thread,
 * which sends them to the JobManager as CollectRows; CollectCredit from the
 * JobManager returns credit to the deployment, waking a sink that waits.
 *
 * A sink that sends only what it has credit for never waits (the sink keeps
 * the rest, and watches the deployment's eventfd, written whenever credit
 * comes back). One that sends more blocks while the deployment has no credit
 * for its batch: the task thread waits on the deployment's condition
 * variable, waking at least every COLLECT_WAIT_MS to notice a cancellation
 * (the network thread sets d->cancelled without knowing who waits).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "log.h"
#include "tm.h"

#define COLLECT_WAIT_MS 200

int tm_collect_send(void *ctx, const char *rows, size_t len, int nrows, uint64_t offset, int end,
                    char *err, size_t errlen)
{
    tm_task *t = ctx;
    SL_UNUSED(err);
    SL_UNUSED(errlen);
    tm_deploy *d = t->d;
    pthread_mutex_lock(&d->collect_mu);
    while (d->collect_credit < nrows && !__atomic_load_n(&d->cancelled, __ATOMIC_RELAXED)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += COLLECT_WAIT_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&d->collect_cv, &d->collect_mu, &until);
    }
    int cancelled = __atomic_load_n(&d->cancelled, __ATOMIC_RELAXED);
    if (!cancelled) d->collect_credit -= nrows;
    pthread_mutex_unlock(&d->collect_mu);
    if (cancelled) return SL_DONE;

    tm_collect_out *o = sl_calloc(1, sizeof *o);
    memcpy(o->job_id, d->job_id, sizeof o->job_id);
    o->session = d->session;
    o->attempt = d->attempt;
    o->rows = sl_malloc(len ? len : 1);
    memcpy(o->rows, rows, len);
    o->len = len;
    o->nrows = nrows;
    o->offset = offset;
    o->end = end;
    o->qm.type = TM_OP_COLLECT_OUT;
    if (sl_queue_push(d->net->inbox, &o->qm) != SL_OK) tm_collect_out_free(o); /* stopped */
    return SL_OK;
}

int tm_collect_credit_now(void *ctx)
{
    tm_task *t = ctx;
    pthread_mutex_lock(&t->d->collect_mu);
    int credit = t->d->collect_credit;
    pthread_mutex_unlock(&t->d->collect_mu);
    return credit;
}

int tm_collect_credit_fd(void *ctx)
{
    tm_task *t = ctx;
    return t->d->collect_efd;
}

void tm_collect_credit(tm_deploy *d, int rows)
{
    pthread_mutex_lock(&d->collect_mu);
    if (rows > 0 && d->collect_credit <= SL_COLLECT_CREDIT) d->collect_credit += rows;
    if (d->collect_credit > SL_COLLECT_CREDIT) d->collect_credit = SL_COLLECT_CREDIT;
    pthread_cond_broadcast(&d->collect_cv);
    pthread_mutex_unlock(&d->collect_mu);
    uint64_t one = 1;
    if (d->collect_efd >= 0 && write(d->collect_efd, &one, sizeof one) < 0 && errno != EAGAIN)
        sl_warn("collect", "cannot signal credit: %s", strerror(errno));
}

void tm_collect_out_free(tm_collect_out *o)
{
    if (!o) return;
    free(o->rows);
    free(o);
}
