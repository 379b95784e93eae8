/*
 * agg_kept.c -- the values an operator keeps in its own state for COLLECT,
 * JSON_ARRAYAGG and JSON_OBJECTAGG (operators/agg.h "COLLECT"), read back
 * and turned into the item's result.
 *
 * The operators keep them alike -- group_aggregate per key, window per key
 * and window -- as keyed-state entries whose namespace is the operator's
 * prefix (the item's index, after the window in a window operator) and then:
 *   COLLECT          the value's binary form (row.h) -> i64 copies
 *   JSON_ARRAYAGG    the value's sequence number (u64, big endian) -> its
 *                    JSON text (the json format's, format_json.h)
 *   JSON_OBJECTAGG   the JSON key's bytes -> the member's text `"key":value`
 * A scan of the key's entries (sl_agg_kept_scan_fn) lays one item's entries
 * out in a buffer, sl_agg_kept_index orders them (COLLECT by the values'
 * bytes so that every backend and subtask writes the same MULTISET,
 * JSON_ARRAYAGG by sequence, JSON_OBJECTAGG by the keys' bytes) and
 * sl_agg_kept_build writes the result. The laid-out entries are
 *   COLLECT          [u32 length][value][i64 copies]
 *   JSON_ARRAYAGG    [8 bytes sequence, big endian][u32 length][text]
 *   JSON_OBJECTAGG   [u32 key length][key][u32 member length][member]
 * Everything works in the caller's buffers; nothing allocates once they
 * have grown.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "buf.h"
#include "bytes.h"

void sl_agg_kept_append(const sl_agg_kept_scan *c, const void *tail, size_t tlen,
                        const void *val, size_t vlen)
{
    uint8_t *d;
    switch (c->fn) {
    case SL_AGG_COLLECT:
        d = (uint8_t *)sl_buf_room(c->out, 4 + tlen + 8);
        sl_put_le32(d, (uint32_t)tlen);
        if (tlen) memcpy(d + 4, tail, tlen);
        memcpy(d + 4 + tlen, val, 8);
        sl_buf_added(c->out, 4 + tlen + 8);
        break;
    case SL_AGG_JSON_ARRAYAGG:
        d = (uint8_t *)sl_buf_room(c->out, 12 + vlen);
        memcpy(d, tail, 8);
        sl_put_le32(d + 8, (uint32_t)vlen);
        if (vlen) memcpy(d + 12, val, vlen);
        sl_buf_added(c->out, 12 + vlen);
        break;
    default: /* JSON_OBJECTAGG */
        d = (uint8_t *)sl_buf_room(c->out, 8 + tlen + vlen);
        sl_put_le32(d, (uint32_t)tlen);
        if (tlen) memcpy(d + 4, tail, tlen);
        sl_put_le32(d + 4 + tlen, (uint32_t)vlen);
        if (vlen) memcpy(d + 8 + tlen, val, vlen);
        sl_buf_added(c->out, 8 + tlen + vlen);
        break;
    }
}

int sl_agg_kept_scan_fn(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    const sl_agg_kept_scan *c = ctx;
    if (nslen < c->plen || memcmp(ns, c->prefix, c->plen)) return 0;
    size_t tlen = nslen - c->plen;
    if ((c->fn == SL_AGG_COLLECT && vlen != 8) || (c->fn == SL_AGG_JSON_ARRAYAGG && tlen != 8))
        return 0;
    sl_agg_kept_append(c, (const uint8_t *)ns + c->plen, tlen, val, vlen);
    return 0;
}

size_t sl_agg_kept_size(sl_agg_fn fn, const uint8_t *e)
{
    if (fn == SL_AGG_COLLECT) return 4 + sl_get_le32(e) + 8;
    if (fn == SL_AGG_JSON_ARRAYAGG) return 12 + sl_get_le32(e + 8);
    uint32_t kl = sl_get_le32(e);
    return 8 + kl + sl_get_le32(e + 4 + kl);
}

static int jag_cmp(const void *x, const void *y, void *base)
{
    const uint8_t *a = (const uint8_t *)base + *(const size_t *)x;
    const uint8_t *b = (const uint8_t *)base + *(const size_t *)y;
    return memcmp(a, b, 8);
}

static int jobj_cmp(const void *x, const void *y, void *base)
{
    const uint8_t *a = (const uint8_t *)base + *(const size_t *)x;
    const uint8_t *b = (const uint8_t *)base + *(const size_t *)y;
    return sl_agg_str_cmp((const char *)a + 4, sl_get_le32(a), (const char *)b + 4,
                          sl_get_le32(b));
}

void sl_agg_kept_index(sl_agg_fn fn, const sl_buf *scan, sl_buf *idx)
{
    sl_buf_reset(idx);
    const uint8_t *b = sl_buf_u8(scan);
    for (size_t pos = 0; pos < scan->len; pos += sl_agg_kept_size(fn, b + pos))
        sl_buf_put(idx, &pos, sizeof pos);
    size_t n = idx->len / sizeof(size_t);
    if (fn == SL_AGG_COLLECT) /* agg.c's order, which the OVER aggregation shares */
        sl_agg_multiset_sort(b, (size_t *)idx->p, n);
    else if (n > 1) /* (qsort of nothing would pass a NULL base) */
        qsort_r(idx->p, n, sizeof(size_t), fn == SL_AGG_JSON_ARRAYAGG ? jag_cmp : jobj_cmp,
                scan->p);
}

void sl_agg_kept_build(const sl_agg *a, const sl_buf *scan, const sl_buf *idx, size_t skip,
                       sl_buf *out)
{
    const size_t *ix = (const size_t *)idx->p;
    size_t n = idx->len / sizeof *ix;
    const uint8_t *b = sl_buf_u8(scan);
    if (a->fn == SL_AGG_COLLECT) {
        sl_agg_multiset_build(b, ix, n, a->kept_distinct, out);
        return;
    }
    bool obj = a->fn == SL_AGG_JSON_OBJECTAGG;
    sl_buf_reset(out);
    sl_buf_putc(out, obj ? '{' : '[');
    for (size_t k = 0, any = 0; k < n; k++) {
        if (ix[k] == skip) continue;
        if (any++) sl_buf_putc(out, ',');
        const uint8_t *e = b + ix[k];
        uint32_t kl = obj ? sl_get_le32(e) : 0;
        if (obj) sl_buf_put(out, e + 8 + kl, sl_get_le32(e + 4 + kl));
        else sl_buf_put(out, e + 12, sl_get_le32(e + 8));
    }
    sl_buf_putc(out, obj ? '}' : ']');
}
