/*
 * frame.c -- see frame.h. Encoding packs straight into the evbuffer's free
 * space with evbuffer_reserve_space, so a frame costs no intermediate copy.
 */
#include <string.h>
#include <event2/buffer.h>

#include "bytes.h"
#include "frame.h"

int sl_frame_pull(struct evbuffer *in, Sluice__Envelope **out, char *err, size_t errlen)
{
    return sl_frame_pull_max(in, SL_FRAME_MAX, out, err, errlen);
}

int sl_frame_pull_max(struct evbuffer *in, uint32_t max, Sluice__Envelope **out, char *err,
                      size_t errlen)
{
    unsigned char hdr[4];
    if (max == 0 || max > SL_FRAME_MAX) max = SL_FRAME_MAX;
    size_t avail = evbuffer_get_length(in);
    if (avail < 4) return SL_AGAIN;
    evbuffer_copyout(in, hdr, 4);
    uint32_t n = sl_get_be32(hdr);
    if (n == 0 || n > max)
        return sl_seterr(err, errlen, "bad frame length %u (allowed 1..%u%s)", n, max,
                         max < SL_FRAME_MAX ? " before the peer has proven itself" : "");
    if (avail < 4 + (size_t)n) return SL_AGAIN;
    evbuffer_drain(in, 4);
    unsigned char *body = evbuffer_pullup(in, n);
    Sluice__Envelope *env = sluice__envelope__unpack(NULL, n, body);
    evbuffer_drain(in, n);
    if (!env) return sl_seterr(err, errlen, "frame of %u bytes does not decode as a message", n);
    if (env->msg_case == SLUICE__ENVELOPE__MSG__NOT_SET) {
        sluice__envelope__free_unpacked(env, NULL);
        return sl_seterr(err, errlen, "frame carries no known message");
    }
    *out = env;
    return SL_OK;
}

void sl_frame_push(struct evbuffer *out, const Sluice__Envelope *env)
{
    size_t n = sluice__envelope__get_packed_size(env);
    struct evbuffer_iovec v;
    SL_ASSERT(n <= SL_FRAME_MAX);
    if (evbuffer_reserve_space(out, n + 4, &v, 1) < 1 || v.iov_len < n + 4) {
        /* evbuffer cannot reserve: only on allocation failure */
        SL_ASSERT(!"evbuffer_reserve_space failed");
    }
    unsigned char *p = v.iov_base;
    sl_put_be32(p, (uint32_t)n);
    sluice__envelope__pack(env, p + 4);
    v.iov_len = n + 4;
    evbuffer_commit_space(out, &v, 1);
}
