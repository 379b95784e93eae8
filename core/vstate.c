/*
 * vstate.c -- typed state handles over the keyed backend (see vstate.h).
 *
 * Every handle owns one scratch buffer that grows to the largest value it
 * has built and is reused, so list appends and map namespaces allocate only
 * while a state's values keep getting larger.
 */
#include <string.h>

#include "buf.h"
#include "vstate.h"

struct sl_vstate {
    sl_kstate *ks;
    int sid;
    sl_state_kind kind;
    int64_t ttl_ms;
    int update_on_read;         /* SL_TTL_ON_READ_AND_WRITE */
    int return_expired;         /* SL_TTL_RETURN_EXPIRED_IF_NOT_CLEANED_UP */
    char *err;
    size_t errlen;
    sl_buf buf;                 /* scratch: built values and map namespaces */
    sl_buf buf2;                /* a second one, for map namespaces while buf holds a value */
    sl_buf buf3;                /* map iteration with TTL: the entries' namespaces */
    struct sl_vstate *next;
};

int64_t (*sl_vstate_clock)(void) = sl_now_ms;

#define TTL_HDR 8

/* b emptied, with room for need bytes: where to write them (never NULL).
 * The caller ends with sl_buf_added. */
static uint8_t *scratch(sl_buf *b, size_t need)
{
    sl_buf_reset(b);
    return (uint8_t *)sl_buf_room(b, need);
}

sl_vstate *sl_vstate_new(sl_kstate *ks, const char *name, sl_state_kind kind, int64_t ttl_ms,
                         char *err, size_t errlen)
{
    sl_state_ttl ttl = {.ttl_ms = ttl_ms};
    return sl_vstate_new_ttl(ks, name, kind, &ttl, err, errlen);
}

sl_vstate *sl_vstate_new_ttl(sl_kstate *ks, const char *name, sl_state_kind kind,
                             const sl_state_ttl *ttl, char *err, size_t errlen)
{
    int64_t ttl_ms = ttl->ttl_ms;
    if (ttl_ms < 0) {
        sl_seterr(err, errlen, "state '%s': a negative time-to-live", name);
        return NULL;
    }
    if ((unsigned)ttl->update > SL_TTL_ON_READ_AND_WRITE ||
        (unsigned)ttl->visibility > SL_TTL_RETURN_EXPIRED_IF_NOT_CLEANED_UP ||
        (ttl->cleanup & ~(unsigned)(SL_TTL_CLEANUP_ON_READ | SL_TTL_CLEANUP_FULL_SNAPSHOT))) {
        sl_seterr(err, errlen, "state '%s': an unknown StateTtlConfig update type, visibility or "
                  "cleanup", name);
        return NULL;
    }
    int sid = sl_kstate_register(ks, name);
    if (sid < 0) {
        sl_seterr(err, errlen, "state '%s': too many states in one operator", name);
        return NULL;
    }
    sl_vstate *s = sl_calloc(1, sizeof *s);
    s->ks = ks;
    s->sid = sid;
    s->kind = kind;
    s->ttl_ms = ttl_ms;
    s->update_on_read = ttl_ms && ttl->update == SL_TTL_ON_READ_AND_WRITE;
    s->return_expired = ttl_ms && ttl->visibility == SL_TTL_RETURN_EXPIRED_IF_NOT_CLEANED_UP;
    if (ttl_ms && (ttl->cleanup & SL_TTL_CLEANUP_FULL_SNAPSHOT))
        sl_kstate_set_ttl(ks, sid, kind == SL_STATE_LIST ? SL_KTTL_LIST : SL_KTTL_VALUE,
                          sl_vstate_clock);
    s->err = err;
    s->errlen = errlen;
    return s;
}

void sl_vstate_link(sl_vstate **list, sl_vstate *s)
{
    s->next = *list;
    *list = s;
}

void sl_vstate_free_all(sl_vstate *list)
{
    while (list) {
        sl_vstate *next = list->next;
        sl_buf_free(&list->buf);
        sl_buf_free(&list->buf2);
        sl_buf_free(&list->buf3);
        free(list);
        list = next;
    }
}

static int expired_at(const sl_vstate *s, const uint8_t *p, int64_t now)
{
    if (!s->ttl_ms) return 0;
    int64_t at;
    memcpy(&at, p, 8);
    return now >= at;
}

static int expired(const sl_vstate *s, const uint8_t *p)
{
    return s->ttl_ms && expired_at(s, p, sl_vstate_clock());
}

static int put_wrapped(sl_vstate *s, const void *ns, size_t nslen, const void *val, size_t len)
{
    if (!s->ttl_ms) return sl_kstate_put(s->ks, s->sid, ns, nslen, val, len, s->err, s->errlen);
    /* val may be s->buf's own bytes (a value unwrap returned): room for
       them is there already, so the buffer does not move under the copy */
    uint8_t *b = scratch(&s->buf, TTL_HDR + len);
    int64_t at = sl_vstate_clock() + s->ttl_ms;
    if (len) memmove(b + TTL_HDR, val, len);
    memcpy(b, &at, 8);
    sl_buf_added(&s->buf, TTL_HDR + len);
    return sl_kstate_put(s->ks, s->sid, ns, nslen, b, TTL_HDR + len, s->err, s->errlen);
}

/* Backend value (with the TTL header when there is one) -> user bytes,
 * borrowed until the next call on s. An expired value is removed, and
 * returned this once when the visibility allows; a value returned under
 * OnReadAndWrite gets a new expiry. Either way the bytes are first copied
 * into s->buf, as the backend's are gone after the delete or put. */
static int unwrap(sl_vstate *s, const void *ns, size_t nslen, const void *raw, size_t rawlen,
                  const void **val, size_t *len)
{
    size_t hdr = s->ttl_ms ? TTL_HDR : 0;
    if (rawlen < hdr) return sl_seterr(s->err, s->errlen, "state: damaged value");
    if (expired(s, raw)) {
        if (s->return_expired) sl_buf_set(&s->buf, raw, rawlen);
        if (sl_kstate_del(s->ks, s->sid, ns, nslen, s->err, s->errlen) != SL_OK) return SL_ERR;
        if (!s->return_expired) return SL_DONE;
        *val = sl_buf_u8(&s->buf) + hdr;
        *len = rawlen - hdr;
        return SL_OK;
    }
    if (s->update_on_read) {
        sl_buf_set(&s->buf, raw, rawlen);
        if (put_wrapped(s, ns, nslen, sl_buf_u8(&s->buf) + hdr, rawlen - hdr) != SL_OK)
            return SL_ERR;
        *val = sl_buf_u8(&s->buf) + hdr;
        *len = rawlen - hdr;
        return SL_OK;
    }
    *val = (const uint8_t *)raw + hdr;
    *len = rawlen - hdr;
    return SL_OK;
}

int sl_value_get(sl_vstate *s, const void *ns, size_t nslen, const void **val, size_t *len)
{
    const void *raw;
    size_t rawlen;
    int rc = sl_kstate_get(s->ks, s->sid, ns, nslen, &raw, &rawlen, s->err, s->errlen);
    if (rc != SL_OK) return rc;
    return unwrap(s, ns, nslen, raw, rawlen, val, len);
}

int sl_value_put(sl_vstate *s, const void *ns, size_t nslen, const void *val, size_t len)
{
    return put_wrapped(s, ns, nslen, val, len);
}

/* ---- list -------------------------------------------------------------------- */

int sl_list_add(sl_vstate *s, const void *ns, size_t nslen, const void *val, size_t len)
{
    if (len > UINT32_MAX) return sl_seterr(s->err, s->errlen, "state: list element too large");
    const void *raw = NULL;
    size_t rawlen = 0;
    int rc = sl_kstate_get(s->ks, s->sid, ns, nslen, &raw, &rawlen, s->err, s->errlen);
    if (rc == SL_ERR) return rc;
    if (rc == SL_DONE) rawlen = 0;
    size_t hdr = s->ttl_ms ? TTL_HDR : 0, el = 4 + hdr + len;
    /* the old value is borrowed from the backend: copy it first */
    uint8_t *b = scratch(&s->buf, rawlen + el);
    if (rawlen) memmove(b, raw, rawlen);
    uint32_t l32 = (uint32_t)len;
    memcpy(b + rawlen, &l32, 4);
    if (hdr) {
        int64_t at = sl_vstate_clock() + s->ttl_ms;
        memcpy(b + rawlen + 4, &at, 8);
    }
    if (len) memcpy(b + rawlen + 4 + hdr, val, len);
    sl_buf_added(&s->buf, rawlen + el);
    return sl_kstate_put(s->ks, s->sid, ns, nslen, b, rawlen + el, s->err, s->errlen);
}

int sl_list_each(sl_vstate *s, const void *ns, size_t nslen,
                 int (*fn)(void *ctx, const void *val, size_t len), void *ctx)
{
    const void *raw;
    size_t rawlen;
    int rc = sl_kstate_get(s->ks, s->sid, ns, nslen, &raw, &rawlen, s->err, s->errlen);
    if (rc != SL_OK) return rc == SL_DONE ? SL_OK : rc;
    /* copy: fn may call into the state */
    sl_buf_set(&s->buf2, raw, rawlen);
    const uint8_t *b = sl_buf_u8(&s->buf2);
    size_t hdr = s->ttl_ms ? TTL_HDR : 0, pos = 0, kept = 0;
    int changed = 0;
    int64_t now = hdr ? sl_vstate_clock() : 0, renewed = now + s->ttl_ms;
    /* with a TTL, first the list as it stays: expired elements removed (read
     * is cleanup), the others renewed under OnReadAndWrite -- written back
     * before fn runs, as fn may add to the list */
    uint8_t *keep = hdr ? scratch(&s->buf, rawlen) : NULL;
    while (pos < rawlen) {
        uint32_t l;
        if (rawlen - pos < 4 + hdr) return sl_seterr(s->err, s->errlen, "state: damaged list");
        memcpy(&l, b + pos, 4);
        if (rawlen - pos - 4 - hdr < l) return sl_seterr(s->err, s->errlen, "state: damaged list");
        if (hdr && expired_at(s, b + pos + 4, now)) {
            changed = 1;
        } else if (hdr) {
            memcpy(keep + kept, b + pos, 4 + hdr + l);
            if (s->update_on_read) memcpy(keep + kept + 4, &renewed, 8), changed = 1;
            kept += 4 + hdr + l;
        }
        pos += 4 + hdr + l;
    }
    if (hdr) sl_buf_added(&s->buf, kept);
    rc = SL_OK;
    if (changed && kept) rc = sl_kstate_put(s->ks, s->sid, ns, nslen, keep, kept, s->err, s->errlen);
    else if (changed) rc = sl_kstate_del(s->ks, s->sid, ns, nslen, s->err, s->errlen);
    for (pos = 0; rc == SL_OK && pos < rawlen;) {
        uint32_t l;
        memcpy(&l, b + pos, 4);
        int visible = !hdr || s->return_expired || !expired_at(s, b + pos + 4, now);
        if (visible && fn(ctx, b + pos + 4 + hdr, l)) break;
        pos += 4 + hdr + l;
    }
    return rc;
}

static int map_scan_run(sl_vstate *s, const void *ns, size_t nslen,
                        int (*fn)(void *ctx, const void *k, size_t klen, const void *val, size_t len),
                        void *ctx, size_t *collected);

int sl_state_clear(sl_vstate *s, const void *ns, size_t nslen)
{
    if (s->kind != SL_STATE_MAP) return sl_kstate_del(s->ks, s->sid, ns, nslen, s->err, s->errlen);
    /* a map: a scan may not modify the state, so collect the entries of this
     * namespace first ([u32 len][bytes] each, in the handle's buffer), then
     * delete them */
    size_t used = 0;
    int rc = map_scan_run(s, ns, nslen, NULL, NULL, &used);
    for (size_t pos = 0; rc == SL_OK && pos < used;) {
        uint32_t n;
        memcpy(&n, s->buf.p + pos, 4);
        rc = sl_kstate_del(s->ks, s->sid, s->buf.p + pos + 4, n, s->err, s->errlen);
        pos += 4 + n;
    }
    return rc;
}

/* ---- map --------------------------------------------------------------------- */

static const uint8_t *map_ns(sl_vstate *s, const void *ns, size_t nslen, const void *k, size_t klen,
                             size_t *outlen)
{
    uint8_t *b = scratch(&s->buf2, 4 + nslen + klen);
    uint32_t n32 = (uint32_t)nslen;
    memcpy(b, &n32, 4);
    if (nslen) memcpy(b + 4, ns, nslen);
    if (klen) memcpy(b + 4 + nslen, k, klen);
    *outlen = 4 + nslen + klen;
    sl_buf_added(&s->buf2, *outlen);
    return b;
}

int sl_map_get(sl_vstate *s, const void *ns, size_t nslen, const void *k, size_t klen,
               const void **val, size_t *len)
{
    size_t mlen;
    const uint8_t *m = map_ns(s, ns, nslen, k, klen, &mlen);
    const void *raw;
    size_t rawlen;
    int rc = sl_kstate_get(s->ks, s->sid, m, mlen, &raw, &rawlen, s->err, s->errlen);
    if (rc != SL_OK) return rc;
    return unwrap(s, m, mlen, raw, rawlen, val, len);
}

int sl_map_put(sl_vstate *s, const void *ns, size_t nslen, const void *k, size_t klen,
               const void *val, size_t len)
{
    size_t mlen;
    const uint8_t *m = map_ns(s, ns, nslen, k, klen, &mlen);
    return put_wrapped(s, m, mlen, val, len);
}

int sl_map_remove(sl_vstate *s, const void *ns, size_t nslen, const void *k, size_t klen)
{
    size_t mlen;
    const uint8_t *m = map_ns(s, ns, nslen, k, klen, &mlen);
    return sl_kstate_del(s->ks, s->sid, m, mlen, s->err, s->errlen);
}

typedef struct map_scan {
    sl_vstate *s;
    const void *ns;
    size_t nslen;
    int (*fn)(void *ctx, const void *k, size_t klen, const void *val, size_t len);
    void *ctx;
    int stopped;
    size_t *collected;          /* fn NULL: every entry's namespace appended to s->buf */
} map_scan;

static int map_visit(void *ctx, const void *mns, size_t mlen, const void *val, size_t vlen)
{
    map_scan *ms = ctx;
    const uint8_t *m = mns;
    uint32_t n32;
    if (mlen < 4) return 0;
    memcpy(&n32, m, 4);
    if (n32 != ms->nslen || mlen < 4 + (size_t)n32 || (n32 && memcmp(m + 4, ms->ns, n32))) return 0;
    size_t hdr = ms->s->ttl_ms ? TTL_HDR : 0;
    if (!ms->fn) {
        if (*ms->collected == 0) sl_buf_reset(&ms->s->buf);
        char *b = sl_buf_room(&ms->s->buf, 4 + mlen);
        uint32_t l32 = (uint32_t)mlen;
        memcpy(b, &l32, 4);
        memcpy(b + 4, mns, mlen);
        sl_buf_added(&ms->s->buf, 4 + mlen);
        *ms->collected += 4 + mlen;
        return 0;
    }
    if (vlen < hdr || expired(ms->s, val)) return 0;
    if (ms->fn(ms->ctx, m + 4 + n32, mlen - 4 - n32, (const uint8_t *)val + hdr, vlen - hdr)) {
        ms->stopped = 1;
        return 1;
    }
    return 0;
}

static int map_scan_run(sl_vstate *s, const void *ns, size_t nslen,
                        int (*fn)(void *ctx, const void *k, size_t klen, const void *val, size_t len),
                        void *ctx, size_t *collected)
{
    map_scan ms = {s, ns, nslen, fn, ctx, 0, collected};
    return sl_kstate_scan_key(s->ks, s->sid, map_visit, &ms, s->err, s->errlen);
}

int sl_map_each(sl_vstate *s, const void *ns, size_t nslen,
                int (*fn)(void *ctx, const void *k, size_t klen, const void *val, size_t len),
                void *ctx)
{
    if (!fn) return SL_OK; /* nothing to call */
    if (!s->ttl_ms) return map_scan_run(s, ns, nslen, fn, ctx, NULL);
    /* with a TTL, reading an entry may remove or renew it, which a scan may
     * not: collect the entries' namespaces (into buf3), then read each */
    size_t used = 0;
    int rc = map_scan_run(s, ns, nslen, NULL, NULL, &used);
    if (rc != SL_OK) return rc;
    sl_buf_set(&s->buf3, s->buf.p, used); /* s->buf.p is NULL until something was collected */
    const uint8_t *keys = sl_buf_u8(&s->buf3);
    for (size_t pos = 0; pos < used;) {
        uint32_t n;
        memcpy(&n, keys + pos, 4);
        const uint8_t *m = keys + pos + 4;
        pos += 4 + n;
        const void *raw, *val;
        size_t rawlen, len;
        rc = sl_kstate_get(s->ks, s->sid, m, n, &raw, &rawlen, s->err, s->errlen);
        if (rc == SL_OK) rc = unwrap(s, m, n, raw, rawlen, &val, &len);
        if (rc == SL_DONE) continue;
        if (rc != SL_OK) return rc;
        if (fn(ctx, m + 4 + nslen, n - 4 - nslen, val, len)) break;
    }
    return SL_OK;
}
