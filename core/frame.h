/*
 * frame.h -- length-prefixed protobuf frames on libevent buffers.
 *
 * A frame is a 4-byte big-endian length n (1 <= n <= SL_FRAME_MAX) followed
 * by n bytes of a protobuf-encoded sluice.Envelope. Pulling a frame never
 * trusts the peer: a zero or oversized length, or bytes that do not decode,
 * is SL_ERR with a message, and the caller drops the connection.
 */
#ifndef SL_FRAME_H
#define SL_FRAME_H

#include <event2/buffer.h>
#include "sl.h"
#include "control.pb-c.h"
#include "sl_limits.h"

#define SL_PROTOCOL_VERSION 1
#define SL_FRAME_MAX SL_MAX_CONTROL_FRAME_BYTES

/* SL_OK with *out set (caller frees with sluice__envelope__free_unpacked(*out, NULL)),
 * SL_AGAIN when the buffer holds no whole frame yet, SL_ERR on a bad frame. */
int sl_frame_pull(struct evbuffer *in, Sluice__Envelope **out, char *err, size_t errlen);
/* The same with a tighter bound on the frame's length (1 <= max <=
 * SL_FRAME_MAX): a length over max is SL_ERR as soon as its 4 bytes are in,
 * before any of the body is waited for -- SL_MAX_PREAUTH_FRAME_BYTES for a
 * peer that has not proven itself yet. */
int sl_frame_pull_max(struct evbuffer *in, uint32_t max, Sluice__Envelope **out, char *err,
                      size_t errlen);

/* Append one frame holding env to out. */
void sl_frame_push(struct evbuffer *out, const Sluice__Envelope *env);

#endif
