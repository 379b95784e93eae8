/*
 * unaligned.c -- a task thread's part of unaligned checkpoints
 * (docs/ARCHITECTURE.md, "Unaligned checkpoints"): capturing the buffers a
 * barrier overtook as channel state (core/chanstate.h), switching an
 * aligned checkpoint to unaligned when its aligned-checkpoint-timeout
 * passed, and, on restore, replaying the records that were in flight into
 * the head before any new input, re-partitioned when the parallelism
 * changed. The barrier's way ahead of queued buffers is the exchange's
 * (tm_exchange_priority_barrier, tm_gate_push_priority).
 */
#include <string.h>

#include "task_int.h"
#include "bytes.h"
#include "keygroup.h"
#include "log.h"
#include "store.h"

#define TAG "tm:task"

/* ---- restore: channel state (unaligned checkpoints) --------------------- */

/* One old channel of an edge into the head, while its state is replayed:
 * the spanning record being reassembled across its sections. */
typedef struct replay_chan {
    int edge;
    uint32_t from, to;
} replay_chan;

typedef struct replay {
    run *r;
    int kind;                   /* the pass: SL_CS_INPUT, then SL_CS_OUTPUT */
    replay_chan *chans;
    tm_reader rd;               /* per entry of chans */
    int nchans, cap;
    uint8_t *keybuf;
    uint64_t records, watermarks;
    signed char *same_par;      /* per edge: 1 neither end rescaled, -1 one was, 0 not known yet */
} replay;

/* The head's input edge a section belongs to, or -1. */
static int replay_edge(const run *r, const sl_cs_section *s)
{
    const sl_jobgraph *g = r->d->g;
    const sl_vertex *head = &g->v[r->ch->vertices[0]];
    if (strcmp(s->ch.to_uid, head->uid)) return -1;
    for (int k = 0; k < head->nin; k++) {
        const sl_edge *e = &g->e[head->in_edges[k]];
        if ((uint32_t)e->to_input == s->ch.input && !strcmp(g->v[e->from].uid, s->ch.from_uid))
            return head->in_edges[k];
    }
    return -1;
}

/* Is a record of old channel (e, from, to) this subtask's now? The same
 * channel at the same parallelism. After a rescale, on a hash edge the
 * record's key group decides; on the others old consumer subtask q's
 * channels go to new subtask q mod p, as Flink's ROUND_ROBIN downstream
 * mapping (a broadcast edge too: each old consumer's copy goes to one new
 * subtask, so a new subtask beyond the old parallelism gets none, and
 * after a scale-down one gets the copies of several). */
static int replay_mine(replay *rp, const sl_edge *e, const sl_cs_section *s, const sl_row *row)
{
    run *r = rp->r;
    int me = r->t->subtask, p = r->ch->parallelism;
    if (e->strategy == SL_PART_HASH) {
        const sl_schema *sch = r->ops[0].ins[e->to_input];
        size_t n = sl_row_key_encode(row, sch, e->keys, e->nkeys, rp->keybuf, SL_MAX_KEY_BYTES);
        int kg = sl_kg_of_key(rp->keybuf, n, r->d->g->max_parallelism);
        return sl_kg_operator_index(kg, p, r->d->g->max_parallelism) == me;
    }
    return (int)(s->ch.to_subtask % (uint32_t)p) == me;
}

/* The parallelism vertex uid had in the snapshot, 0 when it does not say
 * (a stateless operator without channel state). */
static int old_parallelism_of(const Sluice__SnapshotMetadata *md, const char *uid)
{
    for (size_t i = 0; i < md->n_operators; i++)
        if (!strcmp(md->operators[i]->uid, uid)) return (int)md->operators[i]->parallelism;
    for (size_t i = 0; i < md->n_channel_states; i++)
        if (!strcmp(md->channel_states[i]->head_uid, uid) && md->channel_states[i]->parallelism)
            return (int)md->channel_states[i]->parallelism;
    return 0;
}

/* ... of vertex v, or of another vertex of its chain (a chain's vertices
 * share their parallelism). */
static int replay_old_parallelism(const run *r, int v)
{
    const sl_jobgraph *g = r->d->g;
    int p = old_parallelism_of(r->d->restore, g->v[v].uid);
    for (int k = 0; k < g->nchains && !p; k++) {
        const sl_chain *ch = &g->chains[k];
        int in = 0;
        for (int i = 0; i < ch->n; i++) in |= ch->vertices[i] == v;
        for (int i = 0; i < ch->n && in && !p; i++) p = old_parallelism_of(r->d->restore, g->v[ch->vertices[i]].uid);
    }
    return p;
}

/* A watermark in old channel s of edge e_idx. Where neither end was
 * rescaled the old channel is this task's gate channel from the same
 * producer subtask: it goes through the valve in its order among the
 * records, as if it had just arrived, and the channel's watermark starts
 * there (the producer's new watermarks count from above it). After a
 * rescale a channel's watermarks say nothing of the new channels': time
 * restarts with the new input. */
static int replay_watermark(replay *rp, int e_idx, const sl_cs_section *s, int64_t wm)
{
    run *r = rp->r;
    const sl_jobgraph *g = r->d->g;
    const sl_edge *e = &g->e[e_idx];
    if ((int)s->ch.to_subtask != r->t->subtask) return SL_OK;
    if (rp->same_par[e_idx] == 0) {
        int from_old = replay_old_parallelism(r, e->from);
        int to_old = replay_old_parallelism(r, e->to);
        rp->same_par[e_idx] = (from_old == g->v[e->from].parallelism && to_old == r->ch->parallelism) ? 1 : -1;
    }
    if (rp->same_par[e_idx] < 0) return SL_OK;
    for (int c = 0; c < r->t->ngate_chan; c++)
        if (r->chan_edge[c] == e_idx && r->chan_from[c] == (int)s->ch.from_subtask) {
            rp->watermarks++;
            int rc = sl_valve_watermark(&r->valve, &r->ops[0], c, wm);
            r->in_wm = r->ops[0].current_watermark;
            return rc;
        }
    return SL_OK;
}

static int replay_section(void *ctx, const sl_cs_section *s, char *err, size_t errlen)
{
    replay *rp = ctx;
    run *r = rp->r;
    if (s->kind != rp->kind) return SL_OK;
    int e_idx = replay_edge(r, s);
    if (e_idx < 0) return SL_OK; /* another task's channels */
    const sl_edge *e = &r->d->g->e[e_idx];
    /* without a rescale only this subtask's own channels can hold its records */
    if (e->strategy != SL_PART_HASH && (int)(s->ch.to_subtask % (uint32_t)r->ch->parallelism) != r->t->subtask)
        return SL_OK;
    int ci = -1;
    for (int i = 0; i < rp->nchans; i++)
        if (rp->chans[i].edge == e_idx && rp->chans[i].from == s->ch.from_subtask && rp->chans[i].to == s->ch.to_subtask)
            ci = i;
    if (ci < 0) {
        if (rp->nchans == rp->cap) {
            rp->cap = rp->cap ? rp->cap * 2 : 8;
            rp->chans = sl_realloc(rp->chans, sizeof *rp->chans * (size_t)rp->cap);
            rp->rd.chan = sl_realloc(rp->rd.chan, sizeof *rp->rd.chan * (size_t)rp->cap);
        }
        ci = rp->nchans++;
        rp->chans[ci] = (replay_chan){e_idx, s->ch.from_subtask, s->ch.to_subtask};
        memset(&rp->rd.chan[ci], 0, sizeof rp->rd.chan[ci]);
        rp->rd.nchan = rp->nchans;
    }
    sl_netbuf b = {0};
    b.data = (uint8_t *)s->data;
    b.len = s->len;
    b.cap = s->len;
    b.chan = ci;
    sl_op *head = &r->ops[0];
    const sl_schema *in = head->ins[e->to_input];
    size_t pos = 0;
    for (;;) {
        tm_element el;
        char xerr[200];
        int x = tm_exchange_read(&rp->rd, &b, &pos, &el, xerr, sizeof xerr);
        if (x == SL_DONE) break;
        if (x == SL_AGAIN) continue;
        if (x != SL_OK) return sl_seterr(err, errlen, "damaged in-flight data of channel %s -> %s (%u -> %u): %s",
                                         s->ch.from_uid, s->ch.to_uid, s->ch.from_subtask + 1,
                                         s->ch.to_subtask + 1, xerr);
        if (el.tag == SL_EL_WATERMARK && el.len == 8) {
            if (replay_watermark(rp, e_idx, s, sl_get_lei64(el.p)) != SL_OK) {
                tm_run_fail(r, head);
                return sl_seterr(err, errlen, "%s", r->err);
            }
            continue;
        }
        if (el.tag != SL_EL_RECORD) continue; /* status, barriers, ends, markers */
        sl_row row;
        char derr[200];
        row.vals = r->in_vals;
        if (el.len < 8 || sl_row_decode(el.p + 8, el.len - 8, in, &row, derr, sizeof derr) != SL_OK)
            return sl_seterr(err, errlen, "damaged in-flight record of channel %s -> %s: %s", s->ch.from_uid,
                             s->ch.to_uid, el.len < 8 ? "too short" : derr);
        row.ts = sl_get_lei64(el.p);
        if (!replay_mine(rp, e, s, &row)) continue;
        rp->records++;
        if (sl_rt_process(head, e->to_input, &row) != SL_OK) {
            tm_run_fail(r, head);
            return sl_seterr(err, errlen, "%s", r->err);
        }
    }
    return SL_OK;
}

/* Before any new input: the records that were in flight into this task's
 * head at the checkpoint, channel by channel in their order -- what the
 * consumers had persisted (INPUT sections), then what the producers had
 * (OUTPUT sections) -- re-partitioned when the parallelism changed. */
int tm_replay_channels(run *r)
{
    const Sluice__SnapshotMetadata *md = r->d->restore;
    if (!md || !md->n_channel_states || !r->t->ngate_chan) return SL_OK;
    replay rp = {0};
    rp.r = r;
    rp.keybuf = sl_malloc(SL_MAX_KEY_BYTES);
    rp.same_par = sl_calloc((size_t)(r->d->g->ne ? r->d->g->ne : 1), 1);
    int rc = SL_OK;
    for (int pass = 0; pass < 2 && rc == SL_OK; pass++) {
        rp.kind = pass ? SL_CS_OUTPUT : SL_CS_INPUT;
        for (size_t i = 0; i < md->n_channel_states && rc == SL_OK; i++) {
            const char *f = md->channel_states[i]->file;
            if (!f || !*f || strchr(f, '/')) continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", r->d->restore_dir, f);
            rc = sl_cs_read(path, replay_section, &rp, r->err, sizeof r->err);
        }
    }
    if (rc == SL_OK)
        sl_info(TAG, "task %s (%d/%d): replayed %llu in-flight records of the checkpoint (%llu watermarks)",
                r->ch->name, r->t->subtask + 1, r->ch->parallelism, (unsigned long long)rp.records,
                (unsigned long long)rp.watermarks);
    else
        r->failed = 1;
    tm_reader_free(&rp.rd);
    free(rp.chans);
    free(rp.keybuf);
    free(rp.same_par);
    return rc;
}


/* ---- unaligned checkpoints: channel state ------------------------------- */

static void cs_write_counted(run *r, tm_snap_job *job, int kind, const sl_edge *e, int from, int to,
                             const void *a, uint32_t alen, const void *b, uint32_t blen, int counted);

/* Append a section of in-flight data (a + b) for channel (edge e, producer
 * subtask from, consumer subtask to) to job's channel-state file, opened on
 * the first one. A failure declines the checkpoint (job->error), never the
 * task. */
static void cs_write(run *r, tm_snap_job *job, int kind, const sl_edge *e, int from, int to, const void *a,
                     uint32_t alen, const void *b, uint32_t blen)
{
    cs_write_counted(r, job, kind, e, from, to, a, alen, b, blen, 1);
}

static void cs_write_counted(run *r, tm_snap_job *job, int kind, const sl_edge *e, int from, int to,
                             const void *a, uint32_t alen, const void *b, uint32_t blen, int counted)
{
    if (job->error[0]) return;
    char err[400];
    if (!job->cs) {
        char *base = tm_state_file_name(r->ops[0].vertex->uid, r->t->subtask);
        char *name = sl_sprintf("channels-%s", base);
        free(base);
        char *path;
        if (sl_store_is_s3(job->dir)) {
            char *stage = sl_sprintf("%s/sluice-%s/s3-upload", sl_config_str(r->d->net->conf, "taskmanager.tmp.dirs"),
                                     r->d->net->id ? r->d->net->id : "tm");
            path = sl_sprintf("%s/%s-%llu-%s", stage, job->job_id, (unsigned long long)job->cpid, name);
            int mk = sl_mkdirs(stage, err, sizeof err);
            free(stage);
            if (mk != SL_OK) {
                snprintf(job->error, sizeof job->error, "channel state: %s", err);
                free(path);
                free(name);
                return;
            }
            job->cs_stage = sl_strdup(path);
        } else {
            path = sl_sprintf("%s/%s", job->dir, name);
            if (sl_mkdirs(job->dir, err, sizeof err) != SL_OK) {
                snprintf(job->error, sizeof job->error, "channel state: %s", err);
                free(path);
                free(name);
                return;
            }
        }
        job->cs = sl_cs_open(path, err, sizeof err);
        free(path);
        if (!job->cs) {
            snprintf(job->error, sizeof job->error, "channel state: %s", err);
            free(name);
            return;
        }
        job->cs_file = name;
    }
    const sl_jobgraph *g = r->d->g;
    sl_cs_chan ch = {g->v[e->from].uid, g->v[e->to].uid, (uint32_t)e->to_input, (uint32_t)from, (uint32_t)to};
    if (sl_cs_append2(job->cs, kind, &ch, a, alen, b, blen, err, sizeof err) != SL_OK)
        snprintf(job->error, sizeof job->error, "channel state: %s", err);
    else if (counted)
        job->persisted += (uint64_t)alen + blen;
}

/* Input channel c's buffer b is in-flight data of the capture. */
static int cs_input(void *ctx, const sl_netbuf *b)
{
    run *r = ctx;
    int c = b->chan;
    cs_write(r, r->cap_job, SL_CS_INPUT, &r->d->g->e[r->chan_edge[c]], r->chan_from[c], r->t->subtask, b->data,
             b->len, NULL, 0);
    return SL_OK;
}

/* A remote output channel's buffer still waiting for credit when the
 * barrier went ahead of it (exchange.c). */
int tm_cs_output(void *ctx, const sl_edge *e, int sub, const sl_netbuf *b)
{
    run *r = ctx;
    cs_write(r, r->cap_job, SL_CS_OUTPUT, e, r->t->subtask, sub, b->data, b->len, NULL, 0);
    return SL_OK;
}

static void cap_reset(run *r)
{
    r->cap_cpid = 0;
    r->cap_scan = 0;
    r->cap_job = NULL;
    r->cap_nseen = 0;
    r->window_bytes = 0;
    if (r->t->ngate_chan) {
        memset(r->cap_seen, 0, (size_t)r->t->ngate_chan);
        memset(r->cap_skip, 0, sizeof *r->cap_skip * (size_t)r->t->ngate_chan);
    }
}

/* A capture that will not complete (a newer checkpoint, an abort, the end):
 * its snapshot and file go. */
void tm_cap_abandon(run *r)
{
    if (!r->cap_cpid) return;
    tm_snap_job_free(r->cap_job);
    cap_reset(r);
}

void tm_cap_mark(run *r, int c, int skip)
{
    if (r->cap_seen[c]) return;
    r->cap_seen[c] = 1;
    r->cap_skip[c] = skip;
    r->cap_nseen++;
}

/* The capture starts with the snapshot: every channel's partly reassembled
 * spanning record is in flight (its rest comes after the snapshot), as a
 * SPAN_FIRST of what arrived so far; ended channels need no barrier. */
void tm_cap_start(run *r, uint64_t cpid, tm_snap_job *job)
{
    cap_reset(r);
    r->cap_cpid = cpid;
    r->cap_job = job;
    for (int c = 0; c < r->t->ngate_chan; c++) {
        if (sl_valve_ended(&r->valve, c)) {
            tm_cap_mark(r, c, 0);
            continue;
        }
        if (!sl_valve_idle(&r->valve, c) && r->valve.wm[c] > INT64_MIN) {
            /* the channel's watermark at the snapshot, before its in-flight
             * data: a restore at the same parallelism starts the channel
             * there, so its rows are judged late or not as they were */
            uint8_t w[SL_EL_HDR + 8];
            w[0] = SL_EL_WATERMARK;
            sl_put_le32(w + 1, 8);
            sl_put_lei64(w + SL_EL_HDR, r->valve.wm[c]);
            cs_write_counted(r, job, SL_CS_INPUT, &r->d->g->e[r->chan_edge[c]], r->chan_from[c], r->t->subtask, w,
                             sizeof w, NULL, 0, 0);
        }
        tm_span_in *sp = &r->t->rd.chan[c];
        if (!sp->want) continue;
        uint8_t h[SL_EL_HDR + 4];
        h[0] = SL_EL_SPAN_FIRST;
        sl_put_le32(h + 1, 4 + sp->have);
        sl_put_le32(h + SL_EL_HDR, sp->want);
        cs_write(r, job, SL_CS_INPUT, &r->d->g->e[r->chan_edge[c]], r->chan_from[c], r->t->subtask, h, sizeof h,
                 sp->buf, sp->have);
    }
}

/* Every live channel's barrier came: the snapshot goes to the writer. */
void tm_cap_maybe_done(run *r)
{
    if (!r->cap_cpid) return;
    int live = 0;
    for (int c = 0; c < r->t->ngate_chan; c++)
        if (!r->cap_seen[c] && !sl_valve_ended(&r->valve, c)) live++;
    if (live) return;
    tm_snap_job *job = r->cap_job;
    job->processed = r->window_bytes;
    cap_reset(r);
    tm_snapshotter_submit(r->d->net, job);
}

/* Channel c's barrier of the capture came in b. A priority barrier went
 * ahead of the buffers held here for c and of b->overtaken buffers of c
 * still queued at the gate: those are in flight, persisted now and not
 * again when they are processed. An in-band one came after everything
 * before it (persisted as it was processed). */
void tm_cap_channel(run *r, int c, const sl_netbuf *b)
{
    if (r->cap_seen[c]) return;
    int n = 0;
    if (b->prio) {
        for (sl_netbuf *x = r->held_head[c]; x; x = x->next, n++) cs_input(r, x);
        if (b->overtaken && tm_gate_each_queued(&r->t->gate, c, b->overtaken, cs_input, r) == SL_OK)
            n += b->overtaken;
    }
    tm_cap_mark(r, c, n);
}

/* A buffer about to be processed during a capture: before its channel's
 * barrier it is in flight (unless persisted already, when the barrier
 * overtook it). */
void tm_cap_on_process(run *r, const sl_netbuf *b)
{
    if (!r->cap_cpid && !r->aligning) return;
    r->window_bytes += b->len;
    if (!r->cap_cpid || b->prio) return;
    int c = b->chan;
    if (!r->cap_seen[c]) cs_input(r, b);
    else if (r->cap_skip[c] > 0) r->cap_skip[c]--;
}


/* Buffers queued at the gate for channels whose barrier of cpid has not
 * come, up to and including one that ends with that barrier in-band: in
 * flight, persisted now; the channel counts as aligned. Channels whose
 * barrier is not queued yet are persisted as their buffers are processed.
 * (An alignment that timed out, or a trigger that did before any barrier
 * came: the barriers queued behind data are as good as overtaking it.) */
void tm_cap_scan_gate(run *r, uint64_t cpid)
{
    int n = r->t->ngate_chan;
    int *upto = sl_calloc((size_t)n, sizeof *upto), *count = sl_calloc((size_t)n, sizeof *count);
    tm_gate *g = &r->t->gate;
    pthread_mutex_lock(&g->mu);
    r->cap_scanned = g->pushed;
    for (sl_netbuf *x = g->head; x; x = x->next) {
        if (x->prio || x->chan < 0 || x->chan >= n || r->cap_seen[x->chan] || upto[x->chan]) continue;
        count[x->chan]++;
        uint64_t id;
        if (tm_buffer_barrier(x, &id) && id == cpid) upto[x->chan] = count[x->chan];
    }
    pthread_mutex_unlock(&g->mu);
    for (int c = 0; c < n; c++) {
        if (!upto[c]) continue;
        int held = 0;
        for (sl_netbuf *x = r->held_head[c]; x; x = x->next, held++) cs_input(r, x);
        tm_gate_each_queued(g, c, upto[c], cs_input, r);
        tm_cap_mark(r, c, held + upto[c]);
    }
    free(upto);
    free(count);
}

/* Switch checkpoint cpid to unaligned (its aligned-checkpoint-timeout
 * passed): snapshot now; channels whose barrier came (seen[c]) are aligned,
 * the rest are captured. Takes dir. */
static int switch_unaligned(run *r, uint64_t cpid, int64_t ts, int flags, char *dir, uint64_t align_ns,
                            const char *seen)
{
    sl_info(TAG, "task %s (%d/%d): checkpoint %llu switches to unaligned (aligned-checkpoint-timeout)",
            r->ch->name, r->t->subtask + 1, r->ch->parallelism, (unsigned long long)cpid);
    char *pre = sl_calloc((size_t)(r->t->ngate_chan ? r->t->ngate_chan : 1), 1);
    if (seen) memcpy(pre, seen, (size_t)r->t->ngate_chan);
    r->aligning = 0;
    r->nbarriers = 0;
    memset(r->chan_barrier, 0, (size_t)r->t->ngate_chan);
    flags = (flags & ~SL_CP_ALIGN_TIMEOUT) | SL_CP_UNALIGNED;
    int rc = tm_run_snapshot(r, cpid, ts, flags, dir, align_ns);
    if (rc == SL_OK && r->cap_cpid == cpid) {
        for (int c = 0; c < r->t->ngate_chan; c++)
            if (pre[c]) tm_cap_mark(r, c, 0); /* what is held came after its barrier */
        r->cap_scan = 1;
        tm_cap_scan_gate(r, cpid);
        tm_cap_maybe_done(r);
    }
    free(pre);
    free(dir);
    return rc;
}

int tm_align_switch(run *r)
{
    char *dir = r->align_dir;
    r->align_dir = NULL;
    return switch_unaligned(r, r->aligning, r->align_ts, r->align_flags, dir,
                            (uint64_t)(sl_mono_ns() - r->align_start_ns), r->chan_barrier);
}

/* An aligned checkpoint whose aligned-checkpoint-timeout passed, here
 * aligning or triggered and not yet taken: unaligned from now. */
int tm_align_timeout(run *r)
{
    if (r->aligning && (r->align_flags & SL_CP_ALIGN_TIMEOUT)) {
        if (sl_now_ms() - r->align_ts < r->align_timeout_ms) return SL_OK;
        char *dir = r->align_dir;
        r->align_dir = NULL;
        return switch_unaligned(r, r->aligning, r->align_ts, r->align_flags, dir,
                                (uint64_t)(sl_mono_ns() - r->align_start_ns), r->chan_barrier);
    }
    if (!r->aligning && !r->cap_cpid && r->trig_cpid > r->last_cp && (r->trig_flags & SL_CP_ALIGN_TIMEOUT) &&
        !r->out_ended && sl_now_ms() - r->trig_ts >= r->trig_timeout_ms)
        return switch_unaligned(r, r->trig_cpid, r->trig_ts, r->trig_flags, sl_strdup(r->trig_dir), 0, NULL);
    return SL_OK;
}


/* Which edge and producer subtask each input channel is (the order
 * exchange.c's wiring numbers them in: per input edge of the head, one
 * channel per producer subtask, one for a forward edge). */
void tm_chan_map(run *r)
{
    tm_task *t = r->t;
    const sl_jobgraph *g = r->d->g;
    const sl_vertex *head = &g->v[r->ch->vertices[0]];
    int n = t->ngate_chan ? t->ngate_chan : 1;
    r->chan_edge = sl_calloc((size_t)n, sizeof(int));
    r->chan_from = sl_calloc((size_t)n, sizeof(int));
    int idx = 0;
    for (int k = 0; k < head->nin && idx < t->ngate_chan; k++) {
        const sl_edge *e = &g->e[head->in_edges[k]];
        int np = e->strategy == SL_PART_FORWARD ? 1 : g->v[e->from].parallelism;
        for (int i = 0; i < np && idx < t->ngate_chan; i++, idx++) {
            r->chan_edge[idx] = head->in_edges[k];
            r->chan_from[idx] = e->strategy == SL_PART_FORWARD ? t->subtask : i;
        }
    }
}



/* ---- the output side of an aligned-checkpoint-timeout -------------------- */

static void out_tick(void *ctx) { tm_out_poll(ctx, 0); }

void tm_out_hold(run *r, uint64_t cpid, int64_t deadline_ms, tm_snap_job *job)
{
    tm_out_abandon(r);
    r->out_cpid = cpid;
    r->out_job = job;
    r->out_deadline_ms = deadline_ms;
    r->out_next_ns = 0;
    r->t->ws.tick = out_tick;
    r->t->ws.ticking = 1; /* a producer blocked on its pool looks too */
    tm_out_poll(r, 0);
}

void tm_out_abandon(run *r)
{
    if (!r->out_cpid) return;
    tm_snap_job_free(r->out_job);
    r->out_job = NULL;
    r->out_cpid = 0;
    r->t->ws.ticking = 0;
}

static void out_submit(run *r)
{
    tm_snap_job *job = r->out_job;
    r->out_job = NULL;
    r->out_cpid = 0;
    r->t->ws.ticking = 0;
    tm_snapshotter_submit(r->d->net, job);
}

void tm_out_poll(run *r, int force)
{
    if (!r->out_cpid) return;
    int64_t now = sl_mono_ns();
    if (!force && now < r->out_next_ns) return;
    r->out_next_ns = now + 2000000;
    tm_wset *ws = &r->t->ws;
    if (!tm_exchange_queued_barriers(ws, r->out_cpid)) {
        out_submit(r); /* every barrier went out in-band: aligned here */
        return;
    }
    if (!force && sl_now_ms() < r->out_deadline_ms) return;
    /* the timeout passed with the barrier still waiting for credit: it
     * overtakes, as an unaligned barrier */
    uint8_t *b = r->barrier_el;
    b[16] = (uint8_t)((b[16] & ~SL_CP_ALIGN_TIMEOUT) | SL_CP_UNALIGNED);
    int nch = 0, nbuf = 0;
    char err[300];
    tm_snap_job *cap = r->cap_job;
    r->cap_job = r->out_job; /* for tm_cs_output */
    if (tm_exchange_overtake_queued(ws, r->out_cpid, b, r->barrier_len, tm_cs_output, r, &nch, &nbuf, err,
                                    sizeof err) != SL_OK && !r->out_job->error[0])
        snprintf(r->out_job->error, sizeof r->out_job->error, "%s", err);
    r->cap_job = cap;
    r->out_job->unaligned = 1;
    sl_info(TAG, "task %s (%d/%d): checkpoint %llu: the barrier overtook %d queued buffers on %d remote "
            "channels (aligned-checkpoint-timeout)", r->ch->name, r->t->subtask + 1, r->ch->parallelism,
            (unsigned long long)r->out_cpid, nbuf, nch);
    out_submit(r);
}
