/* Unit tests for the exchange (taskmanager/exchange.c): spanning records
 * written and reassembled, damaged span sequences refused, the record and
 * key limits, and the configuration refusing segment sizes the wire cannot
 * carry (lib/sl_limits.h). */
#include <stdint.h>
#include <string.h>

#include <event2/event.h>

#include "sl_test.h"
#include "tm.h"
#include "config.h"
#include "keygroup.h"

/* A deterministic byte pattern, independent of the code under test. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

typedef struct {
    sl_netbuf bufs[64];
    uint8_t mem[64][4096];
    int n;
} seq;

static sl_netbuf *seq_next(seq *s)
{
    sl_netbuf *b = &s->bufs[s->n];
    memset(b, 0, sizeof *b);
    b->data = s->mem[s->n];
    b->cap = sizeof s->mem[0];
    b->chan = 0;
    s->n++;
    return b;
}

static void put_el(sl_netbuf *b, int tag, const void *p, uint32_t len)
{
    b->data[b->len] = (uint8_t)tag;
    memcpy(b->data + b->len + 1, &len, 4);
    memcpy(b->data + b->len + 5, p, len);
    b->len += 5 + len;
}

static void test_spanning_record_roundtrip(void)
{
    static seq s;
    s.n = 0;
    static uint8_t rec[100000], rec2[9000];
    fill(rec, sizeof rec, 1);
    fill(rec2, sizeof rec2, 2);
    /* record 1 spans from an empty buffer; a watermark follows its last part */
    uint32_t done = 0;
    while (done < sizeof rec) {
        sl_netbuf *b = seq_next(&s);
        tm_span_write(b, rec, sizeof rec, &done);
        CHECK(b->len <= b->cap);
    }
    CHECK_EQ_INT(s.n, 25); /* 4087 + 24 * 4091 >= 100000 > 4087 + 23 * 4091 */
    int64_t wm = 42;
    put_el(&s.bufs[s.n - 1], SL_EL_WATERMARK, &wm, 8);
    /* record 2 starts in a fresh buffer too */
    done = 0;
    while (done < sizeof rec2) tm_span_write(seq_next(&s), rec2, sizeof rec2, &done);

    tm_reader rd;
    tm_reader_init(&rd, 1);
    int records = 0, wms = 0, parts = 0;
    uint32_t cap_after_first = 0;
    for (int i = 0; i < s.n; i++) {
        size_t pos = 0;
        tm_element el;
        char err[200];
        int rc;
        while ((rc = tm_exchange_read(&rd, &s.bufs[i], &pos, &el, err, sizeof err)) != SL_DONE) {
            if (rc == SL_AGAIN) { parts++; continue; }
            CHECK_EQ_INT(rc, SL_OK);
            if (el.tag == SL_EL_WATERMARK) {
                CHECK_EQ_INT(records, 1);
                wms++;
                continue;
            }
            CHECK_EQ_INT(el.tag, SL_EL_RECORD);
            const uint8_t *want = records == 0 ? rec : rec2;
            CHECK_EQ_INT(el.len, records == 0 ? sizeof rec : sizeof rec2);
            CHECK(memcmp(el.p, want, el.len) == 0);
            if (records == 0) cap_after_first = rd.chan[0].cap;
            records++;
        }
    }
    CHECK_EQ_INT(records, 2);
    CHECK_EQ_INT(wms, 1);
    CHECK_EQ_INT(parts, 24 + 2);
    /* the reassembly buffer is reused, not grown again for a smaller record */
    CHECK_EQ_INT(rd.chan[0].cap, cap_after_first);
    CHECK(cap_after_first >= sizeof rec && cap_after_first <= SL_MAX_RECORD_BYTES);
    tm_reader_free(&rd);
}

static int read_all(tm_reader *rd, sl_netbuf *b, char *err, size_t errlen)
{
    size_t pos = 0;
    tm_element el;
    int rc;
    while ((rc = tm_exchange_read(rd, b, &pos, &el, err, errlen)) == SL_OK || rc == SL_AGAIN) {}
    return rc;
}

static void test_damaged_spans_are_refused(void)
{
    static uint8_t mem[4096];
    sl_netbuf b = {.data = mem, .cap = sizeof mem};
    tm_reader rd;
    char err[200];
    uint8_t part[100] = {0};
    tm_reader_init(&rd, 1);
    /* a continuation without its start */
    put_el(&b, SL_EL_SPAN_MORE, part, 10);
    CHECK_EQ_INT(read_all(&rd, &b, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "without its start") != NULL);
    /* a start announcing more than the maximum record size */
    b.len = 0;
    uint32_t huge = SL_MAX_RECORD_BYTES + 1;
    memcpy(part, &huge, 4);
    put_el(&b, SL_EL_SPAN_FIRST, part, 20);
    CHECK_EQ_INT(read_all(&rd, &b, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "maximum record size") != NULL);
    /* a start, then another element before the record is complete */
    tm_reader_free(&rd);
    tm_reader_init(&rd, 1);
    b.len = 0;
    uint32_t total = 1000;
    memcpy(part, &total, 4);
    put_el(&b, SL_EL_SPAN_FIRST, part, 20);
    int64_t wm = 1;
    put_el(&b, SL_EL_WATERMARK, &wm, 8);
    CHECK_EQ_INT(read_all(&rd, &b, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "inside a spanning record") != NULL);
    /* a part running past the announced total */
    tm_reader_free(&rd);
    tm_reader_init(&rd, 1);
    b.len = 0;
    total = 30;
    memcpy(part, &total, 4);
    put_el(&b, SL_EL_SPAN_FIRST, part, 24); /* 20 of 30 bytes */
    put_el(&b, SL_EL_SPAN_MORE, part, 11);
    CHECK_EQ_INT(read_all(&rd, &b, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "overruns the record") != NULL);
    /* an element header longer than its buffer, and a truncated header */
    tm_reader_free(&rd);
    tm_reader_init(&rd, 1);
    b.len = 0;
    put_el(&b, SL_EL_WATERMARK, &wm, 8);
    b.len -= 3;
    CHECK_EQ_INT(read_all(&rd, &b, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "overruns its buffer") != NULL);
    b.len = 3;
    CHECK_EQ_INT(read_all(&rd, &b, err, sizeof err), SL_ERR);
    tm_reader_free(&rd);
}

/* A producer task with one writer into a local gate, built by hand. */
typedef struct {
    tm_deploy d;
    tm_task t;
    tm_writer wr;
    tm_outchan oc, *chans[1];
    sl_netbuf *cur[1];
    tm_gate gate;
    sl_edge e;
    int keys[1];
    sl_schema schema;
} rig;

static void rig_init(rig *r, sl_partitioning strategy)
{
    memset(r, 0, sizeof *r);
    r->d.seg_size = 32768;
    r->d.buffer_timeout_ms = 100;
    r->t.d = &r->d;
    r->t.out_pool = sl_pool_new(8, r->d.seg_size);
    tm_gate_init(&r->gate, 1);
    r->oc.local = &r->gate;
    r->chans[0] = &r->oc;
    sl_schema_init(&r->schema);
    sl_schema_add(&r->schema, "s", SL_T_STRING);
    r->keys[0] = 0;
    r->e.strategy = strategy;
    r->e.nkeys = 1;
    r->e.keys = r->keys;
    r->wr.e = &r->e;
    r->wr.schema = &r->schema;
    r->wr.nsub = 1;
    r->wr.chans = r->chans;
    r->wr.cur = r->cur;
    r->wr.max_parallelism = 128;
    r->t.writers = &r->wr;
    r->t.nwriters = 1;
    r->t.ws.t = &r->t;
    r->t.ws.vertex = "longrows (1/1)";
    r->t.ws.keybuf = sl_malloc(SL_MAX_KEY_BYTES);
}

static void rig_free(rig *r)
{
    if (r->cur[0]) sl_buf_recycle(r->cur[0]);
    tm_gate_destroy(&r->gate);
    sl_pool_close(r->t.out_pool);
    free(r->t.ws.keybuf);
    free(r->t.ws.span);
    sl_schema_free(&r->schema);
}

static void test_writer_spans_a_row_and_hashes_a_long_key(void)
{
    rig r;
    rig_init(&r, SL_PART_HASH);
    size_t n = 100000;
    char *s = sl_malloc(n);
    fill((uint8_t *)s, n, 3);
    sl_value v = {.isnull = false, .v.s = {s, (uint32_t)n}};
    sl_row row = {SL_KIND_INSERT, 1, &v, 1234};
    char err[300] = "";
    /* a 100 kB key is over the 64 KiB limit */
    CHECK_EQ_INT(tm_exchange_emit(&r.t.ws, 0, &row, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "longrows (1/1): a key of 100005 bytes exceeds the maximum key size of 65535 bytes") != NULL);
    /* a key just under the limit is routed (1 + 4 + len bytes) */
    v.v.s.len = SL_MAX_KEY_BYTES - 5;
    CHECK_EQ_INT(tm_exchange_emit(&r.t.ws, 0, &row, err, sizeof err), SL_OK);
    /* the whole row spanned 3 buffers; hand the last one on and read it all back */
    tm_exchange_flush(&r.t.ws);
    tm_reader rd;
    tm_reader_init(&rd, 1);
    int got = 0, nbufs = 0;
    sl_netbuf *b;
    while ((b = tm_gate_take_nowait(&r.gate))) {
        size_t pos = 0;
        tm_element el;
        int rc;
        nbufs++;
        while ((rc = tm_exchange_read(&rd, b, &pos, &el, err, sizeof err)) != SL_DONE) {
            if (rc == SL_AGAIN) continue;
            CHECK_EQ_INT(rc, SL_OK);
            CHECK_EQ_INT(el.tag, SL_EL_RECORD);
            int64_t ts;
            memcpy(&ts, el.p, 8);
            CHECK_EQ_INT(ts, 1234);
            sl_value out;
            sl_row dec = {.vals = &out};
            CHECK_EQ_INT(sl_row_decode(el.p + 8, el.len - 8, &r.schema, &dec, err, sizeof err), SL_OK);
            CHECK_EQ_INT(out.v.s.len, SL_MAX_KEY_BYTES - 5);
            CHECK(memcmp(out.v.s.p, s, out.v.s.len) == 0);
            got++;
        }
        sl_buf_recycle(b);
    }
    CHECK_EQ_INT(got, 1);
    CHECK_EQ_INT(nbufs, 3);
    tm_reader_free(&rd);
    free(s);
    rig_free(&r);
}

static void test_record_over_the_limit_names_limit_and_vertex(void)
{
    rig r;
    rig_init(&r, SL_PART_FORWARD);
    size_t n = SL_MAX_RECORD_BYTES; /* + 8 timestamp + 1 kind + 1 bitmap + 4 length */
    char *s = sl_calloc(1, n);
    sl_value v = {.isnull = false, .v.s = {s, (uint32_t)n}};
    sl_row row = {SL_KIND_INSERT, 1, &v, 0};
    char err[300] = "";
    CHECK_EQ_INT(tm_exchange_emit(&r.t.ws, 0, &row, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "longrows (1/1): a record of 16777230 bytes exceeds the maximum record size "
                      "of 16777216 bytes") != NULL);
    CHECK_EQ_INT(r.t.ws.span_cap, 0); /* refused before anything was encoded */
    free(s);
    rig_free(&r);
}

/* Early credits: kept per peer under (session, attempt, channel), applied
 * only to the deployment with that session and attempt, bounded, expiring. */
static void test_early_credits_by_session(void)
{
    static tm_net n;
    static tm_peer p, other;
    memset(&n, 0, sizeof n);
    memset(&p, 0, sizeof p);
    memset(&other, 0, sizeof other);
    p.id = "tm-b";
    p.net = &n;
    other.id = "tm-c";
    other.net = &n;
    char err[200];
    /* the old session's attempt 1 and the new session's attempt 1 */
    CHECK_EQ_INT(tm_exchange_credit(&p, NULL, 0xaaaa, 1, 0, 2, 0, err, sizeof err), SL_OK);
    CHECK_EQ_INT(tm_exchange_credit(&p, NULL, 0xbbbb, 1, 0, 3, 0, err, sizeof err), SL_OK);
    CHECK_EQ_INT(tm_exchange_credit(&p, NULL, 0xbbbb, 1, 0, 1, 0, err, sizeof err), SL_OK); /* summed */
    CHECK_EQ_INT(p.nearly, 2);
    CHECK_EQ_INT(tm_exchange_credit(&p, NULL, 0xbbbb, 1, 0, 0, 0, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "bad credit count") != NULL);
    tm_deploy d;
    memset(&d, 0, sizeof d);
    memcpy(d.job_id, "0123456789abcdef0123456789abcdef", 33);
    d.session = 0xbbbb;
    d.attempt = 1;
    tm_outchan oc, *outs[1] = {&oc};
    tm_inchan *ins[1] = {NULL};
    memset(&oc, 0, sizeof oc);
    oc.peer = &p;
    d.nchan = 1;
    d.out_by_id = outs;
    d.in_by_id = ins;
    tm_exchange_take_early(&d, &other); /* another peer's credits are not ours */
    CHECK_EQ_INT(oc.credit, 0);
    tm_exchange_take_early(&d, &p);
    CHECK_EQ_INT(oc.credit, 4);         /* the new session's only */
    CHECK_EQ_INT(p.nearly, 1);          /* the old session's stays, until it expires */
    /* credit for the live deployment goes straight to its channel; an
     * unknown channel of it closes the connection */
    CHECK_EQ_INT(tm_exchange_credit(&p, &d, 0xbbbb, 1, 0, 5, 0, err, sizeof err), SL_OK);
    CHECK_EQ_INT(oc.credit, 9);
    CHECK_EQ_INT(tm_exchange_credit(&p, &d, 0xbbbb, 1, 7, 5, 0, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "unknown channel 7") != NULL);
    /* expiry: an entry older than the time limit goes at the next arrival */
    p.early[0].at_ms -= TM_EARLY_TTL_MS + 1;
    CHECK_EQ_INT(tm_exchange_credit(&p, NULL, 0xcccc, 9, 1, 1, 0, err, sizeof err), SL_OK);
    CHECK_EQ_INT(p.nearly, 1);
    CHECK_EQ_INT(p.early[0].session, 0xcccc);
    /* bounded: the oldest gives way */
    for (uint32_t c = 0; c < TM_EARLY_MAX + 10; c++)
        CHECK_EQ_INT(tm_exchange_credit(&p, NULL, 0xdddd, 2, c, 1, 0, err, sizeof err), SL_OK);
    CHECK_EQ_INT(p.nearly, TM_EARLY_MAX);
    /* credits of a deployment freed here lately are dropped */
    n.ended[0].session = 0xeeee;
    n.ended[0].attempt = 4;
    tm_exchange_drop_early(&p, 0xdddd, 2);
    CHECK_EQ_INT(p.nearly, 0);
    CHECK_EQ_INT(tm_exchange_credit(&p, NULL, 0xeeee, 4, 0, 1, 0, err, sizeof err), SL_OK);
    CHECK_EQ_INT(p.nearly, 0);
    free(p.early);
}

static void test_segment_size_limits(void)
{
    sl_config *c = sl_config_new();
    char err[300];
    CHECK_EQ_INT(sl_config_set(c, "taskmanager.memory.segment-size", "1mb", NULL, err, sizeof err), SL_OK);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.memory.segment-size"), SL_MAX_DATA_FRAME_BYTES);
    CHECK_EQ_INT(sl_config_set(c, "taskmanager.memory.segment-size", "4kb", NULL, err, sizeof err), SL_OK);
    /* more than one data frame carries, or less than the minimum: refused */
    CHECK_EQ_INT(sl_config_set(c, "taskmanager.memory.segment-size", "2mb", NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "taskmanager.memory.segment-size") != NULL);
    CHECK(strstr(err, "1048576") != NULL);
    CHECK_EQ_INT(sl_config_set(c, "taskmanager.memory.segment-size", "64mb", NULL, err, sizeof err), SL_ERR);
    CHECK_EQ_INT(sl_config_set(c, "taskmanager.memory.segment-size", "2kb", NULL, err, sizeof err), SL_ERR);
    CHECK(strstr(err, "4096") != NULL);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.memory.segment-size"), 4096);
    sl_config_destroy(c);
    /* the limits agree with each other */
    CHECK(SL_MAX_DATA_FRAME_BYTES >= SL_MAX_SEGMENT_BYTES);
    CHECK(SL_MAX_RECORD_BYTES > SL_MAX_SEGMENT_BYTES);
    CHECK(SL_MAX_KEY_BYTES < SL_MAX_RECORD_BYTES);
}

static int count_visit(void *ctx, const sl_netbuf *b)
{
    int *seen = ctx; /* [visits, visits out of order] */
    /* the visits come in queue order: each buffer's first record is its number */
    int64_t ts;
    memcpy(&ts, b->data + SL_EL_HDR, 8);
    seen[1] += ts != seen[0];
    seen[0]++;
    return SL_OK;
}

/* An unaligned checkpoint's barrier goes ahead of the buffers queued at a
 * local consumer's gate, says how many of its channel it overtook, and
 * leaves them queued in order; an in-band barrier is found at the end of
 * the buffer it closes. */
static void test_priority_barrier_overtakes_the_gate(void)
{
    rig r;
    rig_init(&r, SL_PART_FORWARD);
    char err[300] = "";
    char s[2000];
    memset(s, 'x', sizeof s);
    sl_value v = {.isnull = false, .v.s = {s, (uint32_t)sizeof s}};
    /* three buffers, the k-th starting with a record of timestamp k */
    for (int k = 0; k < 3; k++) {
        sl_row row = {SL_KIND_INSERT, 1, &v, k};
        CHECK_EQ_INT(tm_exchange_emit(&r.t.ws, 0, &row, err, sizeof err), SL_OK);
        tm_exchange_flush(&r.t.ws);
    }
    uint8_t payload[27] = {0};
    uint64_t id = 42;
    memcpy(payload, &id, 8);
    CHECK_EQ_INT(tm_exchange_priority_barrier(&r.t.ws, payload, sizeof payload, NULL, NULL, err, sizeof err), SL_OK);
    CHECK_EQ_INT(r.gate.queued, 4);
    sl_netbuf *b = tm_gate_take_priority(&r.gate);
    CHECK(b != NULL && b->prio == 1);
    CHECK_EQ_INT(b->overtaken, 3);
    uint64_t got = 0;
    CHECK(tm_buffer_barrier(b, &got) && got == 42);
    sl_buf_recycle(b);
    CHECK(tm_gate_take_priority(&r.gate) == NULL); /* data next: not a priority one */
    int seen[2] = {0, 0};
    CHECK_EQ_INT(tm_gate_each_queued(&r.gate, 0, 3, count_visit, seen), SL_OK);
    CHECK_EQ_INT(seen[0], 3);
    CHECK_EQ_INT(seen[1], 0);
    CHECK_EQ_INT(tm_gate_each_queued(&r.gate, 0, 4, count_visit, (int[]){0, 0}), SL_ERR); /* only 3 */
    CHECK_EQ_INT(r.gate.queued, 3);
    /* an in-band barrier after a record closes that buffer */
    sl_row row = {SL_KIND_INSERT, 1, &v, 9};
    CHECK_EQ_INT(tm_exchange_emit(&r.t.ws, 0, &row, err, sizeof err), SL_OK);
    id = 43;
    memcpy(payload, &id, 8);
    CHECK_EQ_INT(tm_exchange_broadcast(&r.t.ws, SL_EL_BARRIER, 0, payload, sizeof payload, err, sizeof err), SL_OK);
    tm_exchange_flush(&r.t.ws);
    int k = 0;
    while ((b = tm_gate_take_nowait(&r.gate))) {
        CHECK(!b->prio);
        got = 0;
        CHECK_EQ_INT(tm_buffer_barrier(b, &got), k == 3);
        if (k == 3) CHECK(got == 43);
        sl_buf_recycle(b);
        k++;
    }
    CHECK_EQ_INT(k, 4);
    rig_free(&r);
}

static void no_wake(evutil_socket_t fd, short what, void *arg)
{
    SL_UNUSED(fd);
    SL_UNUSED(what);
    SL_UNUSED(arg);
}

/* What an overtaking barrier hands over as output channel state. */
typedef struct {
    int bufs, other_sub;
    uint32_t bytes, last_len;
} persisted;

static int persist_visit(void *ctx, const sl_edge *e, int sub, const sl_netbuf *b)
{
    persisted *p = ctx;
    SL_UNUSED(e);
    p->other_sub += sub != 0;
    p->bufs++;
    p->bytes += b->len;
    p->last_len = b->len;
    return SL_OK;
}

/* An aligned barrier still queued on a remote channel when its
 * aligned-checkpoint-timeout passes: the buffers ahead of it, and its own
 * buffer's record before it, are output channel state and stay queued; the
 * barrier goes on the priority queue with the payload it is given; a buffer
 * that held only the barrier goes. */
static void test_queued_remote_barrier_overtakes(void)
{
    rig r;
    rig_init(&r, SL_PART_FORWARD);
    tm_peer peer;
    memset(&peer, 0, sizeof peer);
    pthread_mutex_init(&peer.mu, NULL);
    struct event_base *eb = event_base_new();
    peer.wake = event_new(eb, -1, 0, no_wake, NULL);
    r.oc.local = NULL;
    r.oc.peer = &peer;
    char err[300] = "";
    char s[2000];
    memset(s, 'x', sizeof s);
    sl_value v = {.isnull = false, .v.s = {s, (uint32_t)sizeof s}};
    for (int k = 0; k < 3; k++) {
        sl_row row = {SL_KIND_INSERT, 1, &v, k};
        CHECK_EQ_INT(tm_exchange_emit(&r.t.ws, 0, &row, err, sizeof err), SL_OK);
        tm_exchange_flush(&r.t.ws);
    }
    uint32_t first3 = r.oc.qhead->len * 3;
    sl_row row = {SL_KIND_INSERT, 1, &v, 3};
    CHECK_EQ_INT(tm_exchange_emit(&r.t.ws, 0, &row, err, sizeof err), SL_OK);
    uint8_t payload[27] = {0};
    uint64_t id = 43;
    memcpy(payload, &id, 8);
    CHECK_EQ_INT(tm_exchange_broadcast(&r.t.ws, SL_EL_BARRIER, 0, payload, sizeof payload, err, sizeof err), SL_OK);
    tm_exchange_flush(&r.t.ws);
    CHECK_EQ_INT(r.oc.qlen, 4);
    uint32_t fourth = r.oc.qtail->len;
    CHECK_EQ_INT(tm_exchange_queued_barriers(&r.t.ws, 43), 1);
    CHECK_EQ_INT(tm_exchange_queued_barriers(&r.t.ws, 44), 0);
    CHECK(tm_exchange_has_remote(&r.t));
    payload[16] = 8; /* unaligned */
    persisted p = {0, 0, 0, 0};
    int nch = 0, nbuf = 0;
    CHECK_EQ_INT(tm_exchange_overtake_queued(&r.t.ws, 43, payload, sizeof payload, persist_visit, &p, &nch,
                                             &nbuf, err, sizeof err), SL_OK);
    CHECK_EQ_INT(nch, 1);
    CHECK_EQ_INT(nbuf, 4);
    CHECK_EQ_INT(p.bufs, 4);
    CHECK_EQ_INT(p.other_sub, 0);
    CHECK_EQ_INT((int)p.last_len, (int)(fourth - SL_EL_HDR - sizeof payload));
    CHECK_EQ_INT((int)p.bytes, (int)(first3 + fourth - SL_EL_HDR - sizeof payload));
    /* still queued, the barrier cut off the last buffer and ahead of them all */
    CHECK_EQ_INT(r.oc.qlen, 4);
    CHECK_EQ_INT((int)r.oc.qtail->len, (int)(fourth - SL_EL_HDR - sizeof payload));
    uint64_t got = 0;
    CHECK(!tm_buffer_barrier(r.oc.qtail, &got));
    CHECK(r.oc.phead != NULL && r.oc.phead == r.oc.ptail && r.oc.phead->prio);
    CHECK(tm_buffer_barrier(r.oc.phead, &got) && got == 43);
    CHECK_EQ_INT(r.oc.phead->data[SL_EL_HDR + 16], 8);
    CHECK_EQ_INT(tm_exchange_queued_barriers(&r.t.ws, 43), 0);
    /* a barrier alone in its buffer: that buffer goes */
    id = 44;
    memcpy(payload, &id, 8);
    payload[16] = 0;
    CHECK_EQ_INT(tm_exchange_broadcast(&r.t.ws, SL_EL_BARRIER, 0, payload, sizeof payload, err, sizeof err), SL_OK);
    tm_exchange_flush(&r.t.ws);
    CHECK_EQ_INT(r.oc.qlen, 5);
    p = (persisted){0, 0, 0, 0};
    CHECK_EQ_INT(tm_exchange_overtake_queued(&r.t.ws, 44, payload, sizeof payload, persist_visit, &p, &nch,
                                             &nbuf, err, sizeof err), SL_OK);
    CHECK_EQ_INT(p.bufs, 4);
    CHECK_EQ_INT(nbuf, 4);
    CHECK_EQ_INT(r.oc.qlen, 4);
    int n = 0;
    for (sl_netbuf *x = r.oc.qhead; x; x = x->next) n++;
    CHECK_EQ_INT(n, 4);
    CHECK(r.oc.qtail && !r.oc.qtail->next);
    while (r.oc.qhead) {
        sl_netbuf *x = r.oc.qhead;
        r.oc.qhead = x->next;
        sl_buf_recycle(x);
    }
    while (r.oc.phead) {
        sl_netbuf *x = r.oc.phead;
        r.oc.phead = x->next;
        sl_buf_recycle(x);
    }
    event_free(peer.wake);
    event_base_free(eb);
    pthread_mutex_destroy(&peer.mu);
    rig_free(&r);
}

SL_TEST_MAIN(SL_TEST(test_spanning_record_roundtrip), SL_TEST(test_damaged_spans_are_refused),
             SL_TEST(test_writer_spans_a_row_and_hashes_a_long_key),
             SL_TEST(test_record_over_the_limit_names_limit_and_vertex),
             SL_TEST(test_early_credits_by_session), SL_TEST(test_segment_size_limits),
             SL_TEST(test_priority_barrier_overtakes_the_gate),
             SL_TEST(test_queued_remote_barrier_overtakes))
