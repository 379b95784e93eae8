/*
 * window_tvf.c -- the `window_tvf` operator: Flink's windowing table-valued
 * functions without aggregation (`SELECT * FROM TABLE(TUMBLE(TABLE t,
 * DESCRIPTOR(ts), INTERVAL '10' SECOND))`): each row goes out once per
 * event-time window it falls into, with three columns appended --
 * window_start, window_end (TIMESTAMP) and window_time (window_end - 1 ms,
 * the output's time attribute). A window join (window_join.c) or a window
 * Top-N reads this.
 *
 * Config:
 *   "window": "TUMBLE" | "HOP" | "CUMULATE"
 *   "time":   the input's event-time column (TIMESTAMP), or its PROCTIME()
 *             column with "domain": "processing" (windows of the instant
 *             the row arrives, each row out at once, as Flink 2.3 does)
 *   "size":   the window size (CUMULATE: the largest window), e.g. "10 s"
 *   "slide":  HOP: the distance between window starts (size need not be a
 *             multiple of it)
 *   "step":   CUMULATE: the distance between window ends; divides size
 *   "offset": shifts the window starts: 0 <= offset < the period, which is
 *             the size (TUMBLE, CUMULATE) or the slide (HOP); the planner
 *             reduces Flink's offset (any, also negative) modulo it
 *
 * Windows are aligned to the epoch plus the offset, as Flink's
 * TimeWindow.getWindowStartWithOffset: a TUMBLE window starts at ts - ((ts
 * - offset) mod size); HOP windows are the ones of size `size` starting on
 * offset + multiples of `slide` that contain ts; CUMULATE windows start at
 * ts - ((ts - offset) mod size) and end at each multiple of `step` after
 * that start past ts, up to size. As Flink 2.x's AlignedWindowTableFunctionOperator
 * does, every row goes out for every window it falls into, also when the
 * watermark has passed that window already: lateness is for the operator
 * that reads the windows (a window join or a window Top-N drops and counts
 * a late row). Output rows keep the input's kind (append-only input
 * required) and carry window_end - 1 as their timestamp; the watermark
 * passes through. Stateless.
 *
 * `session_tvf` (below, keyed by "partition-by"): SESSION(TABLE t [PARTITION
 * BY k], DESCRIPTOR(ts), gap) without aggregation, on event or processing
 * time -- rows held in keyed state until their session closes (see "SESSION"
 * below).
 *
 * "time-attribute": "ltz" (the time column is a TIMESTAMP_LTZ) with the
 * session zone ("table.local-time-zone"): windows align in the zone as the
 * window operator's do (window.c "Zones"): window_start and window_end are
 * local times, window_time (a TIMESTAMP_LTZ(3)) the instant of the last
 * local millisecond.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jobgraph.h"
#include "operator.h"
#include "agg.h"
#include "buf.h"
#include "bytes.h"
#include "temporal.h"

typedef enum { TVF_TUMBLE, TVF_HOP, TVF_CUMULATE, TVF_SESSION } tvf_kind;

typedef struct tvf_plan {
    char *vid;
    tvf_kind kind;
    int proc;           /* "proctime": windows on the processing time (time: the
                           PROCTIME() column, not read) */
    int npart;          /* SESSION: the PARTITION BY columns (the key) */
    int part[SL_MAX_KEY_COLS];
    int tcol;           /* the event-time column */
    int nin;            /* input columns; the window's three follow */
    int64_t size, slide, offset; /* ms; slide = CUMULATE's step, TUMBLE's size */
    char *zone;         /* "time-attribute": "ltz" outside UTC: windows align here */
} tvf_plan;

typedef struct tvf_state {
    sl_value *vals;     /* the output row */
    sl_tz *tz;          /* pl->zone, opened; NULL: UTC */
    /* SESSION */
    int sid_meta, sid_rows;
    sl_buf meta;        /* the key's meta value (reused) */
    sl_buf rows;        /* the key's rows of the sessions firing (reused) */
    sl_buf idx;         /* their offsets, sorted (reused) */
    sl_buf enc;         /* one encoded row (reused) */
    sl_value *dvals;    /* a decoded row */
} tvf_state;

static void tvf_plan_free(void *p)
{
    tvf_plan *pl = p;
    if (!pl) return;
    free(pl->vid);
    free(pl->zone);
    free(pl);
}

static const char *const appended[] = {"window_start", "window_end", "window_time"};

static void *plan_common(sl_plan_ctx *pc, bool session, char *err, size_t errlen)
{
    const sl_vertex *v = pc->v;
    tvf_plan *pl = sl_calloc(1, sizeof *pl);
    pl->vid = sl_strdup(v->id ? v->id : "?");
    const sl_schema *in = pc->in[0].schema;
    const char *kind = sl_vconf_str(v, "window", NULL), *time = sl_vconf_str(v, "time", NULL);
    if (!kind || (session ? strcasecmp(kind, "SESSION")
                          : strcasecmp(kind, "TUMBLE") && strcasecmp(kind, "HOP") &&
                                strcasecmp(kind, "CUMULATE"))) {
        sl_seterr(err, errlen, "vertex '%s': 'window' must be %s, not '%s'", pl->vid,
                  session ? "SESSION" : "TUMBLE, HOP or CUMULATE", kind ? kind : "(absent)");
        goto fail;
    }
    pl->kind = session ? TVF_SESSION : !strcasecmp(kind, "TUMBLE") ? TVF_TUMBLE
             : !strcasecmp(kind, "HOP") ? TVF_HOP : TVF_CUMULATE;
    pl->proc = sl_plan_opt_int(pc, "domain") == 1;
    pl->tcol = time ? sl_schema_find(in, time) : -1;
    if (pl->tcol < 0 || in->fields[pl->tcol].type != SL_T_TIMESTAMP) {
        sl_seterr(err, errlen, "vertex '%s': 'time' must name a TIMESTAMP column of the input, not "
                  "'%s'", pl->vid, time ? time : "(absent)");
        goto fail;
    }
    if (session) {
        json_t *jp = sl_vconf_array(v, "partition-by");
        size_t np = !jp ? 0 : json_is_string(jp) ? 1 : json_array_size(jp);
        if (np > SL_MAX_KEY_COLS) {
            sl_seterr(err, errlen, "vertex '%s': too many partition-by columns", pl->vid);
            goto fail;
        }
        for (size_t i = 0; i < np; i++) {
            json_t *ji = json_is_string(jp) ? jp : json_array_get(jp, i);
            int c = json_is_string(ji) ? sl_schema_find(in, json_string_value(ji)) : -1;
            if (c < 0) {
                sl_seterr(err, errlen, "vertex '%s': partition-by item %zu: a column of the "
                          "input is expected", pl->vid, i + 1);
                goto fail;
            }
            pl->part[pl->npart++] = c;
        }
        if (sl_plan_key(pc, 0, pl->part, pl->npart, err, errlen) != SL_OK) goto fail;
    }
    const char *second = pl->kind == TVF_HOP ? "slide" : pl->kind == TVF_CUMULATE ? "step" : NULL;
    const char *unused[] = {pl->kind == TVF_HOP ? NULL : "slide",
                            pl->kind == TVF_CUMULATE ? NULL : "step"};
    for (int i = 0; i < 2; i++)
        if (unused[i] && json_object_get(v->config, unused[i])) {
            sl_seterr(err, errlen, "vertex '%s': option '%s' does not apply to %s windows", pl->vid,
                      unused[i], kind);
            goto fail;
        }
    if (sl_vconf_interval(v, session ? "gap" : "size", 0, &pl->size, err, errlen) != SL_OK)
        goto fail;
    if (pl->size <= 0) {
        sl_seterr(err, errlen, "vertex '%s': '%s' must be a positive interval", pl->vid,
                  session ? "gap" : "size");
        goto fail;
    }
    pl->slide = pl->size;
    if (second) {
        if (sl_vconf_interval(v, second, 0, &pl->slide, err, errlen) != SL_OK) goto fail;
        if (pl->slide <= 0 || pl->slide > pl->size) {
            sl_seterr(err, errlen, "vertex '%s': '%s' must be positive and at most 'size'", pl->vid,
                      second);
            goto fail;
        }
    }
    if (pl->kind == TVF_CUMULATE && pl->size % pl->slide) {
        sl_seterr(err, errlen, "vertex '%s': a CUMULATE window's size (%lld ms) must be a multiple "
                  "of its step (%lld ms)", pl->vid, (long long)pl->size, (long long)pl->slide);
        goto fail;
    }
    if (sl_vconf_interval(v, "offset", 0, &pl->offset, err, errlen) != SL_OK) goto fail;
    if (pl->offset >= (pl->kind == TVF_HOP ? pl->slide : pl->size)) {
        sl_seterr(err, errlen, "vertex '%s': 'offset' must be less than '%s'", pl->vid,
                  pl->kind == TVF_HOP ? "slide" : "size");
        goto fail;
    }
    if (in->n + 3 > SL_MAX_FIELDS) {
        sl_seterr(err, errlen, "vertex '%s': the input has too many columns to add the window's",
                  pl->vid);
        goto fail;
    }
    bool ltz;
    if (sl_window_zone(pc, &ltz, &pl->zone, err, errlen) != SL_OK) goto fail;
    const sl_dtype *wtdt = sl_dtype_basic(SL_T_TIMESTAMP);
    if (ltz && sl_dtype_parse("TIMESTAMP_LTZ(3)", &wtdt, err, errlen) != SL_OK) goto fail;
    sl_schema_copy(pc->out, in);
    for (int i = 0; i < 3; i++) {
        if (sl_schema_find(in, appended[i]) >= 0) {
            sl_seterr(err, errlen, "vertex '%s': the input already has a column '%s'", pl->vid,
                      appended[i]);
            sl_schema_free(pc->out);
            goto fail;
        }
        if (i == 2) sl_schema_add_dt(pc->out, appended[i], wtdt);
        else sl_schema_add(pc->out, appended[i], SL_T_TIMESTAMP);
    }
    pl->nin = in->n;
    return pl;
fail:
    tvf_plan_free(pl);
    return NULL;
}

static void *tvf_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    return plan_common(pc, false, err, errlen);
}

static void *session_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    return plan_common(pc, true, err, errlen);
}

static int tvf_open(sl_op *op)
{
    const tvf_plan *pl = op->plan;
    tvf_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->vals = sl_calloc((size_t)pl->nin + 3, sizeof(sl_value));
    char zerr[300];
    if (pl->zone && !(st->tz = sl_tz_open(pl->zone, SL_TZ_JAVA_TIME, zerr, sizeof zerr)))
        return sl_op_fail(op, "vertex '%s': %s", pl->vid, zerr);
    return SL_OK;
}

static void tvf_close(sl_op *op)
{
    tvf_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    free(st->dvals);
    sl_buf_free(&st->meta);
    sl_buf_free(&st->rows);
    sl_buf_free(&st->idx);
    sl_buf_free(&st->enc);
    sl_tz_destroy(st->tz);
    free(st);
    op->priv = NULL;
}

static int64_t floor_mod(int64_t x, int64_t m)
{
    int64_t r = x % m;
    return r < 0 ? r + m : r;
}

/* One window of the row into the output (late or not, as in Flink).
 * SL_OK, or SL_ERR from downstream. */
static int send(sl_op *op, const sl_row *row, int64_t start, int64_t end)
{
    const tvf_plan *pl = op->plan;
    tvf_state *st = op->priv;
    sl_value *vals = st->vals;
    memcpy(vals, row->vals, sizeof *vals * (size_t)pl->nin);
    /* in a zone: start and end are local times, window_time an instant */
    int64_t t[3] = {start, end, st->tz ? sl_tz_to_utc(st->tz, end - 1) : end - 1};
    for (int i = 0; i < 3; i++) vals[pl->nin + i] = (sl_value){.v.i = t[i]};
    sl_row out = {.kind = row->kind, .n = pl->nin + 3, .vals = vals, .ts = t[2]};
    return sl_op_emit(op, &out);
}

/* An input row's time (the clock's on processing time); fails the task on
 * a changelog row or a NULL time. */
static int row_time(sl_op *op, const tvf_plan *pl, const sl_row *row, int64_t *t)
{
    if (SL_UNLIKELY(row->kind != SL_KIND_INSERT))
        return sl_op_fail(op, "vertex '%s': a window TVF takes an append-only input, got a %s row",
                          pl->vid, sl_rowkind_short(row->kind));
    const sl_value *tv = &row->vals[pl->tcol];
    if (SL_UNLIKELY(!pl->proc && tv->isnull))
        return sl_op_fail(op, "vertex '%s': the time attribute is NULL", pl->vid);
    *t = pl->proc ? sl_op_processing_time(op) : tv->v.i;
    return SL_OK;
}

static int tvf_process(sl_op *op, int input, sl_row *row)
{
    const tvf_plan *pl = op->plan;
    SL_UNUSED(input);
    int64_t t;
    if (row_time(op, pl, row, &t) != SL_OK) return SL_ERR;
    tvf_state *st = op->priv;
    int64_t ts = st->tz ? sl_tz_to_local(st->tz, t) : t; /* align in the zone */
    int rc = SL_OK;
    switch (pl->kind) {
    case TVF_TUMBLE: {
        int64_t start = ts - floor_mod(ts - pl->offset, pl->size);
        rc = send(op, row, start, start + pl->size);
        break;
    }
    case TVF_HOP:
        /* the latest start at or before ts, then back while the window still holds ts */
        for (int64_t s = ts - floor_mod(ts - pl->offset, pl->slide); rc == SL_OK && s > ts - pl->size;
             s -= pl->slide)
            rc = send(op, row, s, s + pl->size);
        break;
    case TVF_CUMULATE: {
        int64_t start = ts - floor_mod(ts - pl->offset, pl->size);
        for (int64_t e = start + pl->slide; rc == SL_OK && e <= start + pl->size; e += pl->slide)
            if (e > ts) rc = send(op, row, start, e);
        break;
    }
    case TVF_SESSION: break; /* session_tvf's */
    }
    return rc;
}

/* ---- SESSION: rows held until their session closes ------------------------------ */

/* State (per key: the PARTITION BY columns, or none):
 *   "session-tvf-meta" (no namespace): i64 the next row number, then the
 *     open sessions as i64 start and end (window_end, exclusive; local
 *     times in a zone), none overlapping;
 *   "session-tvf-rows" (namespace: u64 time with its sign bit flipped, u64
 *     row number, big-endian -- so a scan orders them by time, then
 *     arrival): a held row, encoded.
 * A row opens the window [t, t + gap), which swallows every open session it
 * intersects (touching counts, as Flink's TimeWindow.intersects); a timer
 * at the merged session's last millisecond (end - 1, event or processing
 * time) fires it: its rows go out, in time then arrival order, with
 * window_start, window_end and window_time = end - 1, and leave the state.
 * Event time: a row whose merged session ends at or before the watermark
 * is late -- dropped and counted in numLateRecordsDropped --, as Flink 2.3's
 * session window TVF drops it (a row inside an open session is not late). A
 * timer of a session that a later row extended finds nothing due. */
#define SS_NS 16

static void ss_ns(uint8_t ns[SS_NS], int64_t t, int64_t seq)
{
    sl_put_be64(ns, (uint64_t)t ^ 0x8000000000000000ull);
    sl_put_be64(ns + 8, (uint64_t)seq);
}

static int ss_err(sl_op *op, const char *what, const char *err)
{
    const tvf_plan *pl = op->plan;
    return sl_op_fail(op, "vertex '%s': %s: %s", pl->vid, what, err);
}

/* The key's meta value into st->meta (empty: none). */
static int ss_meta_read(sl_op *op, tvf_state *st)
{
    char err[256];
    const void *val;
    size_t vlen;
    int rc = sl_kstate_get(op->kstate, st->sid_meta, "", 0, &val, &vlen, err, sizeof err);
    if (rc == SL_ERR) return ss_err(op, "state", err);
    sl_buf_reset(&st->meta);
    if (rc == SL_DONE) {
        uint8_t z[8] = {0};
        sl_buf_put(&st->meta, z, 8);
        return SL_OK;
    }
    if (vlen < 8 || (vlen - 8) % 16) return ss_err(op, "state", "a session list is damaged");
    sl_buf_put(&st->meta, val, vlen);
    return SL_OK;
}

static int ss_meta_write(sl_op *op, tvf_state *st)
{
    char err[256];
    int rc = st->meta.len == 8 ? sl_kstate_del(op->kstate, st->sid_meta, "", 0, err, sizeof err)
                               : sl_kstate_put(op->kstate, st->sid_meta, "", 0, st->meta.p,
                                               st->meta.len, err, sizeof err);
    return rc == SL_OK ? SL_OK : ss_err(op, "state", err);
}

static int64_t ss_utc(const tvf_state *st, int64_t local)
{
    return st->tz ? sl_tz_to_utc(st->tz, local) : local;
}

static int ss_process(sl_op *op, int input, sl_row *row)
{
    const tvf_plan *pl = op->plan;
    tvf_state *st = op->priv;
    SL_UNUSED(input);
    char err[256];
    int64_t t;
    if (row_time(op, pl, row, &t) != SL_OK) return SL_ERR;
    int64_t lt = st->tz ? sl_tz_to_local(st->tz, t) : t;
    if (ss_meta_read(op, st) != SL_OK) return SL_ERR;
    uint8_t *m = sl_buf_u8(&st->meta);
    size_t n = (st->meta.len - 8) / 16, keep = 0;
    int64_t start = lt, end = lt + pl->size;
    for (size_t i = 0; i < n; i++) { /* merge what intersects */
        int64_t s = sl_get_lei64(m + 8 + 16 * i), e = sl_get_lei64(m + 16 + 16 * i);
        if (s <= lt + pl->size && lt <= e) {
            if (s < start) start = s;
            if (e > end) end = e;
        } else {
            if (keep != i) memmove(m + 8 + 16 * keep, m + 8 + 16 * i, 16);
            keep++;
        }
    }
    int64_t fire = ss_utc(st, end - 1);
    if (!pl->proc && fire <= op->current_watermark) { /* late: its session has fired */
        op->metrics.late_dropped++;
        return SL_OK;
    }
    st->meta.len = 8 + 16 * keep;
    uint8_t se[16];
    sl_put_lei64(se, start);
    sl_put_lei64(se + 8, end);
    sl_buf_put(&st->meta, se, 16);
    m = sl_buf_u8(&st->meta);
    int64_t seq = sl_get_lei64(m);
    sl_put_lei64(m, seq + 1);
    size_t sz = sl_row_size(row, op->in);
    sl_buf_reset(&st->enc);
    sl_buf_reserve(&st->enc, sz);
    if (sl_row_encode(row, op->in, sl_buf_u8(&st->enc), sz) != sz)
        return sl_op_fail(op, "vertex '%s': cannot encode a row", pl->vid);
    uint8_t ns[SS_NS];
    ss_ns(ns, lt, seq);
    if (sl_kstate_put(op->kstate, st->sid_rows, ns, SS_NS, st->enc.p, sz, err, sizeof err) != SL_OK)
        return ss_err(op, "state", err);
    if (ss_meta_write(op, st) != SL_OK) return SL_ERR;
    return sl_op_timer_register(op, pl->proc ? SL_TIME_PROCESSING : SL_TIME_EVENT, fire, "", 0);
}

/* "session-tvf-rows" entries of the key into st->rows: [u32 ns length][ns]
 * [u32 value length][value]. */
static int ss_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    sl_buf *b = ctx;
    if (nslen != SS_NS) return 0;
    uint8_t hdr[4];
    sl_put_le32(hdr, (uint32_t)vlen);
    sl_buf_put(b, ns, SS_NS);
    sl_buf_put(b, hdr, 4);
    sl_buf_put(b, val, vlen);
    return 0;
}

static _Thread_local const uint8_t *t_ss_base; /* ss_cmp's rows */

static int ss_cmp(const void *a, const void *b)
{
    return memcmp(t_ss_base + *(const size_t *)a, t_ss_base + *(const size_t *)b, SS_NS);
}

static int ss_on_timer(sl_op *op, sl_time_domain domain, int64_t time, const void *ns,
                       size_t nslen)
{
    const tvf_plan *pl = op->plan;
    tvf_state *st = op->priv;
    SL_UNUSED(domain);
    SL_UNUSED(ns);
    SL_UNUSED(nslen);
    char err[256];
    int64_t now = pl->proc ? time : op->current_watermark > time ? op->current_watermark : time;
    if (ss_meta_read(op, st) != SL_OK) return SL_ERR;
    size_t n = (st->meta.len - 8) / 16, due = 0;
    for (size_t i = 0; i < n; i++)
        if (ss_utc(st, sl_get_lei64(sl_buf_u8(&st->meta) + 16 + 16 * i) - 1) <= now) due++;
    if (!due) return SL_OK; /* a session a later row extended */
    sl_buf_reset(&st->rows);
    sl_buf_reset(&st->idx);
    if (sl_kstate_scan_key(op->kstate, st->sid_rows, ss_scan_fn, &st->rows, err, sizeof err) ==
        SL_ERR)
        return ss_err(op, "state", err);
    const uint8_t *b = sl_buf_u8(&st->rows);
    for (size_t pos = 0; pos < st->rows.len; pos += SS_NS + 4 + sl_get_le32(b + pos + SS_NS))
        sl_buf_put(&st->idx, &pos, sizeof pos);
    size_t nr = st->idx.len / sizeof(size_t);
    size_t *ix = (size_t *)st->idx.p;
    t_ss_base = b;
    if (nr > 1) qsort(ix, nr, sizeof *ix, ss_cmp);
    size_t keep = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t *se = sl_buf_u8(&st->meta) + 8 + 16 * i;
        int64_t s = sl_get_lei64(se), e = sl_get_lei64(se + 8);
        if (ss_utc(st, e - 1) > now) {
            if (keep != i) memmove(sl_buf_u8(&st->meta) + 8 + 16 * keep, se, 16);
            keep++;
            continue;
        }
        for (size_t k = 0; k < nr; k++) {
            const uint8_t *r = b + ix[k];
            int64_t t = (int64_t)(sl_get_be64(r) ^ 0x8000000000000000ull);
            if (t < s || t >= e) continue;
            sl_row in;
            memset(&in, 0, sizeof in);
            in.vals = st->dvals;
            if (sl_row_decode(r + SS_NS + 4, sl_get_le32(r + SS_NS), op->in, &in, err,
                              sizeof err) != SL_OK)
                return ss_err(op, "a held row is damaged", err);
            if (send(op, &in, s, e) != SL_OK) return SL_ERR;
            if (sl_kstate_del(op->kstate, st->sid_rows, r, SS_NS, err, sizeof err) != SL_OK)
                return ss_err(op, "state", err);
        }
    }
    st->meta.len = 8 + 16 * keep;
    return ss_meta_write(op, st);
}

static int ss_open(sl_op *op)
{
    const tvf_plan *pl = op->plan;
    if (!op->kstate)
        return sl_op_fail(op, "vertex '%s': no keyed state backend was opened", pl->vid);
    if (tvf_open(op) != SL_OK) return SL_ERR;
    tvf_state *st = op->priv;
    st->sid_meta = sl_kstate_register(op->kstate, "session-tvf-meta");
    st->sid_rows = sl_kstate_register(op->kstate, "session-tvf-rows");
    if (st->sid_meta < 0 || st->sid_rows < 0)
        return sl_op_fail(op, "vertex '%s': cannot register its keyed state", pl->vid);
    st->dvals = sl_calloc((size_t)pl->nin + 1, sizeof *st->dvals);
    return SL_OK;
}

static int ss_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    return sl_op_restore_proc_timers(op, blobs, lens, nblobs);
}

static const sl_op_option tvf_options[] = {
    {"window", SL_CT_JSON, NULL, NULL, "TUMBLE, HOP or CUMULATE (SESSION: session_tvf)."},
    {"time", SL_CT_STRING, NULL, NULL,
     "The event-time column (TIMESTAMP), or the PROCTIME() column with domain processing."},
    {"size", SL_CT_STRING, NULL, NULL,
     "Window size (an interval)."},
    {"slide", SL_CT_STRING, NULL, NULL,
     "HOP: the slide (an interval)."},
    {"step", SL_CT_STRING, NULL, NULL,
     "CUMULATE: the step (an interval)."},
    {"offset", SL_CT_STRING, NULL, NULL,
     "Window offset (an interval)."},
    {"domain", SL_CT_ENUM, "event", "event,processing",
     "Windows on the event time (the 'time' column) or on the processing time."},
    SL_WINDOW_ZONE_OPTIONS,
    SL_OP_OPTIONS_END,
};

static const sl_op_option ss_options[] = {
    {"window", SL_CT_STRING, NULL, NULL, "SESSION."},
    {"time", SL_CT_STRING, NULL, NULL,
     "The event-time column (TIMESTAMP), or the PROCTIME() column with domain processing."},
    {"gap", SL_CT_STRING, NULL, NULL, "The session gap (an interval)."},
    {"partition-by", SL_CT_JSON, NULL, NULL,
     "The PARTITION BY columns (a list; none: one global partition)."},
    {"domain", SL_CT_ENUM, "event", "event,processing",
     "Sessions on the event time (the 'time' column) or on the processing time."},
    SL_WINDOW_ZONE_OPTIONS,
    SL_OP_OPTIONS_END,
};

const sl_op_def sl_op_session_tvf = {
    .abi = SL_OP_ABI_VERSION,
    .name = "session_tvf",
    .flags = SL_OPF_KEYED,
    .options = ss_options,
    .plan = session_plan_new,
    .plan_free = tvf_plan_free,
    .open = ss_open,
    .process = ss_process,
    .close = tvf_close,
    .on_timer = ss_on_timer,
    .restore_state = ss_restore,
};

const sl_op_def sl_op_window_tvf = {
    .abi = SL_OP_ABI_VERSION,
    .name = "window_tvf",
    .options = tvf_options,
    .plan = tvf_plan_new,
    .plan_free = tvf_plan_free,
    .open = tvf_open,
    .process = tvf_process,
    .close = tvf_close,
};
