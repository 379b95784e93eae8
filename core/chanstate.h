/*
 * chanstate.h -- the channel-state file of an unaligned checkpoint: the
 * in-flight buffers a barrier overtook, persisted with the checkpoint and
 * replayed into the operator on restore before any new input.
 *
 * One file per task and checkpoint (`channels-<head uid>-<subtask>.state`
 * in the snapshot directory), written only when the task had something to
 * persist. It is a sequence of sections, each one network buffer's bytes
 * exactly as they travelled (elements, exchange.h), tagged with the channel
 * they belong to:
 *   - INPUT: a consumer's buffers that came before the barrier on that
 *     channel but after the consumer's snapshot (queued in its gate when
 *     the barrier overtook them, or processed after its snapshot until the
 *     channel's barrier came), and the bytes of a spanning record it had
 *     partly reassembled, as a SPAN_FIRST element;
 *   - OUTPUT: a producer's buffers still waiting for credit on a remote
 *     channel's send queue when its barrier went ahead of them.
 * A channel is named by its edge (producer vertex uid, consumer vertex uid,
 * the consumer's input index) and the producer and consumer subtasks, so a
 * restore at another parallelism can find every old channel of an edge and
 * re-partition the records in it. A channel's stream on restore is its
 * INPUT sections (from the consumer's file) then its OUTPUT sections (from
 * the producer's file), each in file order.
 *
 * Layout (little endian): a 16-byte header ("SLCHST\0\0", u32 version 1,
 * u32 0); sections: u8 kind (1 input, 2 output), u8 0, u16 producer-uid
 * length, u16 consumer-uid length, u16 0, u32 input, u32 producer subtask,
 * u32 consumer subtask, u32 data length, u32 CRC-32C (of the 28 bytes before
 * it with the CRC field zero, the two uids and the data), the uids, the
 * data; then an end section: u8 0xff, 3 bytes 0, u32 number of sections,
 * u32 CRC-32C of those 8 bytes. A file without its end section is
 * truncated. Data is at most SL_CS_MAX_DATA bytes (a network buffer, or a
 * spanning record's first part).
 *
 * The writer appends straight from the buffers that hold the data (no copy
 * into memory of its own) through stdio into "<path>.tmp"; sl_cs_finish
 * (the snapshot writer thread) fsyncs and renames it. Reading checks every
 * CRC and bound and names the file and section of any damage.
 */
#ifndef SL_CHANSTATE_H
#define SL_CHANSTATE_H

#include "sl.h"
#include "sl_limits.h"

enum { SL_CS_INPUT = 1, SL_CS_OUTPUT = 2 };

#define SL_CS_VERSION 1
#define SL_CS_MAX_DATA ((uint32_t)SL_MAX_RECORD_BYTES + 64u)
#define SL_CS_MAX_UID 1024

/* Which channel a section belongs to. */
typedef struct sl_cs_chan {
    const char *from_uid;       /* producer vertex */
    const char *to_uid;         /* consumer vertex */
    uint32_t input;             /* the consumer's input index of the edge */
    uint32_t from_subtask, to_subtask;
} sl_cs_chan;

typedef struct sl_cs_writer sl_cs_writer;

/* Open "<path>.tmp" for writing. NULL with err set. */
sl_cs_writer *sl_cs_open(const char *path, char *err, size_t errlen);
/* Append one section of data[len] (len <= SL_CS_MAX_DATA). */
int sl_cs_append(sl_cs_writer *w, int kind, const sl_cs_chan *ch, const void *data, uint32_t len,
                 char *err, size_t errlen);
/* As sl_cs_append, the data given in two pieces (a + b). */
int sl_cs_append2(sl_cs_writer *w, int kind, const sl_cs_chan *ch, const void *a, uint32_t alen,
                  const void *b, uint32_t blen, char *err, size_t errlen);
uint64_t sl_cs_bytes(const sl_cs_writer *w); /* written so far */
const char *sl_cs_path(const sl_cs_writer *w); /* the final path */
/* End section, fsync, rename into place, fsync of the directory; *size =
 * the file's bytes. Frees w either way (on error the temp file goes). */
int sl_cs_finish(sl_cs_writer *w, uint64_t *size, char *err, size_t errlen);
/* Drop what was written. NULL is a no-op. */
void sl_cs_abort(sl_cs_writer *w);

/* One section as read back; pointers valid during the callback only. */
typedef struct sl_cs_section {
    int kind;
    sl_cs_chan ch;
    const uint8_t *data;
    uint32_t len;
} sl_cs_section;

/* Every section of the file at path, in order; fn returns SL_OK to go on,
 * else its error stops the read (its message in err). SL_ERR with err
 * naming the file on damage or truncation. */
int sl_cs_read(const char *path, int (*fn)(void *ctx, const sl_cs_section *s, char *err, size_t errlen),
               void *ctx, char *err, size_t errlen);

#endif
