/*
 * sl_limits.h -- every size limit of the data and control planes, once.
 *
 * (Named sl_limits.h, not limits.h: lib/ is on every include path, and a
 * lib/limits.h would shadow the C library's <limits.h>.)
 *
 * What the wire can carry decides what the configuration may ask for:
 *  - a network buffer (taskmanager.memory.segment-size) travels as one DATA
 *    frame, so the largest segment is the largest data frame payload;
 *  - a record larger than a buffer travels as a spanning record (its bytes
 *    continued over consecutive buffers of one channel) and is reassembled
 *    by the receiver into a per-channel buffer that grows up to
 *    SL_MAX_RECORD_BYTES, never beyond;
 *  - a key is serialized (sl_row_key_encode) into a buffer of
 *    SL_MAX_KEY_BYTES to be hashed for its key group.
 * A record or key over its limit fails the task with a message that names
 * the limit and the vertex; a configured value out of range is refused at
 * start-up; a frame over its limit closes the connection it came on.
 */
#ifndef SL_LIMITS_H
#define SL_LIMITS_H

/* A serialized key (the bytes hashed for key groups and compared by keyed
 * state): at most 64 KiB - 1, since keyed state stores its length in a u16
 * (core/state_int.h). */
#define SL_MAX_KEY_BYTES ((64u << 10) - 1)

/* One record through an exchange (event timestamp + row encoding): at most
 * 16 MiB. */
#define SL_MAX_RECORD_BYTES (16u << 20)

/* taskmanager.memory.segment-size: 4 KiB .. 1 MiB. */
#define SL_MIN_SEGMENT_BYTES (4u << 10)
#define SL_MAX_SEGMENT_BYTES (1u << 20)

/* Payload of one DATA frame between TaskManagers: one network buffer. */
#define SL_MAX_DATA_FRAME_BYTES SL_MAX_SEGMENT_BYTES

/* One control frame (protobuf Envelope) between the JobManager and a
 * TaskManager: at most 16 MiB. */
#define SL_MAX_CONTROL_FRAME_BYTES (16u << 20)

/* Before a peer has proven itself -- on the RPC port until it has said
 * Hello (and proved the cluster secret when one is set) and registered; on a
 * data port until its HELLO (and proof) -- one control frame is at most
 * 64 KiB: a Hello or a RegisterTaskManager is a few hundred bytes, and an
 * unknown peer must not make a daemon buffer 16 MiB per connection. */
#define SL_MAX_PREAUTH_FRAME_BYTES (64u << 10)

/* A peer has this long from its connection's accept to prove itself (the
 * handshake deadline; Flink's Pekko handshake plays this role), and at most
 * this many connections per listening port may be unproven at once: a new
 * one beyond that closes the oldest unproven one first, so a flood of
 * silent or dribbling connections cannot lock a real TaskManager out. */
#define SL_HANDSHAKE_TIMEOUT_MS 10000
#define SL_MAX_PREAUTH_CONNECTIONS 64

#endif
