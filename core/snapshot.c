/*
 * snapshot.c -- the bytes of a snapshot: a subtask's state file, the
 * snapshot's _metadata, and the directory chores around them.
 *
 * State file (format version 2, or 1 without IDNT; all integers little
 * endian):
 *
 *   header   28 bytes: magic "SLSTATE\0" | u32 version | u32 max parallelism
 *            | u32 kg_first | u32 kg_last | u32 CRC-32C of the 24 bytes before
 *   sections keyed entries of each key group in kg order, then timers of
 *            each key group in kg order, then the operator-state blob; a
 *            group with nothing to say has no section at all
 *   index    one more section: per key group of [kg_first, kg_last],
 *            u64 offset + u64 length of its keyed section, then of its
 *            timer section (0, 0 = none); then offset + length of the
 *            operator-state section
 *   trailer  28 bytes: u64 index offset | u64 index length | u32 CRC-32C of
 *            those 16 bytes | magic "SLSTIDX\0"
 *
 * A section is  u32 tag | u32 kg | u64 count | u64 payload length
 * (24 bytes) | payload | u32 CRC-32C of the payload followed by those 24
 * header bytes (payload first, so that the writer can stream a section
 * whose length it learns only at the end and patch the header in place).
 * Tags: "IDNT", "KEYS", "TIMR", "OPST", "INDX"; kg is 0xffffffff for
 * all but KEYS and TIMR.
 *
 *   IDNT payload (count 1; in version 2 files, which differ from version
 *                 1 by this section alone, the first section, right after
 *                 the header): u16 length | job id | u16 length | operator
 *                 uid | u32 subtask -- whose state this is, so a restore
 *                 can check each file against _metadata (a file swapped
 *                 with another one is refused, not restored into the wrong
 *                 subtask). Version 1 files read as "identity unknown".
 *
 *   KEYS payload: `count` entries, each varint sid | varint key length |
 *                 varint namespace length | varint value length | key | ns |
 *                 value, in the encoded-key order sl_ksnap_each gives (the
 *                 key group is the section's);
 *   TIMR payload: `count` timers, each u8 kind (0 event time, 1 processing
 *                 time) | zigzag varint time | varint key length | varint ns
 *                 length | key | ns, sorted by (kind, time, key, ns);
 *   OPST payload: the blob (count 1).
 * Varints are LEB128 and must be minimal, so the same state has exactly one
 * encoding: both backends, any insertion order, give identical bytes.
 *
 * A reader checks the header, the trailer and the whole index first, then
 * preads only the sections of the key groups it asked for (a new key-group
 * range after rescaling covers parts of several old files), checks each
 * section's checksum and structure completely before handing out a single
 * entry, and bounds-checks every length. Every byte of the file sits under
 * a checksum or is compared with an exact expected value, so any damaged
 * byte is an error that names the file and what is wrong.
 *
 * Writing streams through a 1 MiB buffer (one write(2) per full buffer,
 * bigger pieces straight through) into "<path>.tmp", then fsync, rename to
 * <path> and fsync of the directory. A writer belongs to one thread at a
 * time, any thread; the only shared data is the CRC table, built once.
 *
 * _metadata: 24-byte header  magic "SLMETA\0\0" | u32 version | u32
 * CRC-32C of the payload | u64 payload length, then the packed
 * sluice.SnapshotMetadata. Written the same atomic way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "snapshot.h"
#include "snapshot_inc.h"
#include "store.h"

#define FOURCC(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

#define TAG_KEYS FOURCC('K', 'E', 'Y', 'S')
#define TAG_TIMR FOURCC('T', 'I', 'M', 'R')
#define TAG_OPST FOURCC('O', 'P', 'S', 'T')
#define TAG_INDX FOURCC('I', 'N', 'D', 'X')
#define TAG_IDNT FOURCC('I', 'D', 'N', 'T')
#define NO_KG 0xffffffffu

#define HDR_SIZE 28     /* file header */
#define TRAILER_SIZE 28 /* file trailer */
#define SEC_HDR 24      /* tag, kg, count, payload length */
#define SEC_TAIL 4      /* CRC */
#define SEC_MIN (SEC_HDR + SEC_TAIL)
#define IDX_PER_KG 32   /* keyed off/len, timers off/len */
#define META_HDR 24

#define WBUF_SIZE (1u << 20)

/* Limits a reader enforces, the same as keyed state's own. */
#define MAX_PARALLELISM 32768
#define MAX_SID 254
#define MAX_KEY 65535u
#define MAX_NS (1u << 24)
#define MAX_VAL (1u << 30)

static const uint8_t state_magic[8] = {'S', 'L', 'S', 'T', 'A', 'T', 'E', 0};
static const uint8_t trailer_magic[8] = {'S', 'L', 'S', 'T', 'I', 'D', 'X', 0};
static const uint8_t meta_magic[8] = {'S', 'L', 'M', 'E', 'T', 'A', 0, 0};

/* ---- CRC-32C (Castagnoli, reflected 0x82f63b78), slicing by 8 ---------- */

static uint32_t crc_tab[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
        crc_tab[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
}

/* Whether a stored CRC matches the computed one. The fuzz targets
 * (tests/fuzz/, built with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) accept
 * any, so that mutated files reach the parsing behind the checksums. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_MATCH(computed, stored) ((void)(computed), (void)(stored), 1)
#else
#define CRC_MATCH(computed, stored) ((computed) == (stored))
#endif

/* Continue a CRC-32C: crc32c(a || b) == crc_extend(crc_extend(0, a), b). */
static uint32_t crc_extend(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&crc_once, crc_init);
    const uint8_t *p = data;
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo = crc ^ sl_get_le32(p);
        crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^ crc_tab[5][(lo >> 16) & 0xff] ^
              crc_tab[4][lo >> 24] ^ crc_tab[3][p[4]] ^ crc_tab[2][p[5]] ^ crc_tab[1][p[6]] ^
              crc_tab[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--) crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t sl_snap_crc32c(uint32_t crc, const void *data, size_t n) { return crc_extend(crc, data, n); }

/* ---- varints (fixed-width fields: lib/bytes.h) ------------------------ */

/* Append a LEB128 varint at p (at most 10 bytes); returns bytes written. */
static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Read a minimal LEB128 varint from [*p, end). 0 and *p advanced on
 * success; -1 when it runs past end, past 64 bits, or is not minimal. */
static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    uint64_t r = 0;
    for (int shift = 0; q < end && shift < 64; shift += 7) {
        uint8_t b = *q++;
        if (shift == 63 && b > 1) return -1;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            if (b == 0 && shift > 0) return -1; /* a redundant zero group */
            *p = q;
            *v = r;
            return 0;
        }
    }
    return -1;
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* ---- files ---------------------------------------------------------------- */

/* write(2) all of it, through EINTR and short writes. -1 with errno set. */
static int write_all(int fd, const void *data, size_t n)
{
    const uint8_t *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* pread(2) exactly n bytes at off: 0, -1 with errno set, or 1 at end of file. */
static int pread_all(int fd, void *data, size_t n, uint64_t off)
{
    uint8_t *p = data;
    while (n) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (r == 0) return 1;
        p += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* fsync the directory holding `path`, so a rename into it is durable. */
int sl_fsync_parent(const char *path, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    char *dir = !slash ? sl_strdup(".") : slash == path ? sl_strdup("/")
                                                       : sl_strndup(path, (size_t)(slash - path));
    int rc = SL_OK;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0)
        rc = sl_seterr(err, errlen, "fsync of directory %s: %s", dir, strerror(errno));
    if (fd >= 0) close(fd);
    free(dir);
    return rc;
}

/* ======================================================================== */
/* Writing a state file                                                      */
/* ======================================================================== */

enum { STAGE_OPEN, STAGE_IDENT, STAGE_KEYED, STAGE_TIMERS, STAGE_OPSTATE };

struct sl_snapw {
    int fd;
    char *path;           /* final name */
    char *tmp;            /* "<path>.tmp", written until finish */
    int max_parallelism;
    int kg_first, kg_last;
    int stage;            /* the last section kind written (STAGE_*) */
    int failed;           /* a write failed: errmsg says why; only abort/finish remain */
    uint8_t *buf;         /* WBUF_SIZE bytes; buf[0] lands at file offset buf_off */
    size_t blen;          /* 0 <= blen <= WBUF_SIZE */
    uint64_t buf_off;
    /* the section being written */
    uint64_t sec_off;     /* file offset of its header */
    uint64_t sec_len;     /* payload bytes so far */
    uint64_t sec_count;
    uint32_t sec_crc;     /* CRC-32C of the payload so far */
    int sec_kg;
    uint64_t *idx;        /* 4 per key group: keyed off, len, timers off, len */
    uint64_t op_off, op_len;
    char errmsg[512];
};

static int wfail(sl_snapw *w, const char *fmt, ...) SL_PRINTF(2, 3);

/* Record the writer's first failure; later calls repeat it. */
static int wfail(sl_snapw *w, const char *fmt, ...)
{
    if (!w->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->errmsg, sizeof w->errmsg, fmt, ap);
        va_end(ap);
        w->failed = 1;
    }
    return SL_ERR;
}

static int wflush(sl_snapw *w)
{
    if (!w->blen) return SL_OK;
    if (write_all(w->fd, w->buf, w->blen) != 0)
        return wfail(w, "writing %s: %s", w->tmp, strerror(errno));
    w->buf_off += w->blen;
    w->blen = 0;
    return SL_OK;
}

/* Append raw bytes (no CRC). Pieces bigger than the buffer go straight to
 * the file once the buffer is flushed. */
static int wraw(sl_snapw *w, const void *p, size_t n)
{
    if (n <= WBUF_SIZE - w->blen) {
        if (n) memcpy(w->buf + w->blen, p, n);
        w->blen += n;
        return SL_OK;
    }
    if (wflush(w) != SL_OK) return SL_ERR;
    if (n < WBUF_SIZE) {
        memcpy(w->buf, p, n);
        w->blen = n;
        return SL_OK;
    }
    if (write_all(w->fd, p, n) != 0) return wfail(w, "writing %s: %s", w->tmp, strerror(errno));
    w->buf_off += n;
    return SL_OK;
}

/* Append payload bytes of the current section. */
static int wpay(sl_snapw *w, const void *p, size_t n)
{
    w->sec_crc = crc_extend(w->sec_crc, p, n);
    w->sec_len += n;
    return wraw(w, p, n);
}

static int sec_begin(sl_snapw *w, int kg)
{
    static const uint8_t zero[SEC_HDR];
    /* the header goes in whole (wraw flushes first when it would not fit),
     * so it is either entirely in the buffer or entirely in the file */
    if (WBUF_SIZE - w->blen < SEC_HDR && wflush(w) != SL_OK) return SL_ERR;
    w->sec_off = w->buf_off + w->blen;
    w->sec_len = 0;
    w->sec_count = 0;
    w->sec_crc = 0;
    w->sec_kg = kg;
    return wraw(w, zero, SEC_HDR);
}

/* Drop a section that got no payload: its header is still in the buffer,
 * since nothing was appended after it. */
static void sec_drop(sl_snapw *w)
{
    SL_ASSERT(w->sec_len == 0 && w->sec_off >= w->buf_off && w->sec_off - w->buf_off + SEC_HDR == w->blen);
    w->blen = (size_t)(w->sec_off - w->buf_off);
}

/* Close the current section: patch its header (in the buffer, or in the
 * file if the buffer has moved on), append the CRC. *off, *len = where it is. */
static int sec_end(sl_snapw *w, uint32_t tag, uint64_t *off, uint64_t *len)
{
    uint8_t hdr[SEC_HDR], tail[SEC_TAIL];
    sl_put_le32(hdr, tag);
    sl_put_le32(hdr + 4, w->sec_kg < 0 ? NO_KG : (uint32_t)w->sec_kg);
    sl_put_le64(hdr + 8, w->sec_count);
    sl_put_le64(hdr + 16, w->sec_len);
    sl_put_le32(tail, crc_extend(w->sec_crc, hdr, SEC_HDR));
    if (w->sec_off >= w->buf_off) {
        memcpy(w->buf + (w->sec_off - w->buf_off), hdr, SEC_HDR);
    } else {
        ssize_t n;
        do n = pwrite(w->fd, hdr, SEC_HDR, (off_t)w->sec_off);
        while (n < 0 && errno == EINTR);
        if (n != SEC_HDR)
            return wfail(w, "writing %s: %s", w->tmp, n < 0 ? strerror(errno) : "short write");
    }
    if (wraw(w, tail, SEC_TAIL) != SL_OK) return SL_ERR;
    *off = w->sec_off;
    *len = SEC_HDR + w->sec_len + SEC_TAIL;
    return SL_OK;
}

/* The writer's error into err, for a call that found it failed. */
static int werr(sl_snapw *w, char *err, size_t errlen)
{
    return sl_seterr(err, errlen, "%s", w->errmsg);
}

sl_snapw *sl_snapw_open(const char *path, int max_parallelism, int kg_first, int kg_last, char *err,
                        size_t errlen)
{
    if (!path || !*path) {
        sl_seterr(err, errlen, "state file: no path");
        return NULL;
    }
    if (max_parallelism < 1 || max_parallelism > MAX_PARALLELISM) {
        sl_seterr(err, errlen, "state file %s: max parallelism %d is outside 1..%d", path,
                  max_parallelism, MAX_PARALLELISM);
        return NULL;
    }
    if (kg_first < 0 || kg_last < kg_first || kg_last >= max_parallelism) {
        sl_seterr(err, errlen, "state file %s: key-group range [%d, %d] is not within [0, %d]", path,
                  kg_first, kg_last, max_parallelism - 1);
        return NULL;
    }
    char *tmp = sl_sprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        sl_seterr(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return NULL;
    }
    sl_snapw *w = sl_calloc(1, sizeof *w);
    w->fd = fd;
    w->path = sl_strdup(path);
    w->tmp = tmp;
    w->max_parallelism = max_parallelism;
    w->kg_first = kg_first;
    w->kg_last = kg_last;
    w->buf = sl_malloc(WBUF_SIZE);
    w->idx = sl_calloc((size_t)(kg_last - kg_first + 1) * 4, sizeof *w->idx);

    uint8_t hdr[HDR_SIZE];
    memcpy(hdr, state_magic, 8);
    sl_put_le32(hdr + 8, SL_SNAPSHOT_FORMAT_VERSION);
    sl_put_le32(hdr + 12, (uint32_t)max_parallelism);
    sl_put_le32(hdr + 16, (uint32_t)kg_first);
    sl_put_le32(hdr + 20, (uint32_t)kg_last);
    sl_put_le32(hdr + 24, crc_extend(0, hdr, 24));
    wraw(w, hdr, HDR_SIZE); /* fits the empty buffer */
    return w;
}

/* Sections come in one order (keyed, timers, opstate), each at most once,
 * any of them may be left out: that keeps the bytes canonical. */
static int wstage(sl_snapw *w, int stage, const char *what, char *err, size_t errlen)
{
    if (w->failed) return werr(w, err, errlen);
    if (w->stage >= stage)
        return sl_seterr(err, errlen,
                         "writing %s: %s given after a later section or twice (the order is "
                         "keyed, timers, operator state)",
                         w->path, what);
    w->stage = stage;
    return SL_OK;
}

int sl_snapw_identity(sl_snapw *w, const char *job_id, const char *uid, int subtask, char *err,
                      size_t errlen)
{
    if (wstage(w, STAGE_IDENT, "the identity", err, errlen) != SL_OK) return SL_ERR;
    size_t jl = job_id ? strlen(job_id) : 0, ul = uid ? strlen(uid) : 0;
    if (jl > SL_SNAP_ID_MAX || ul > SL_SNAP_ID_MAX || subtask < 0)
        return sl_seterr(err, errlen, "writing %s: job id, uid (at most %d bytes) or subtask %d invalid",
                         w->path, SL_SNAP_ID_MAX, subtask);
    uint8_t b[2 + SL_SNAP_ID_MAX + 2 + SL_SNAP_ID_MAX + 4], *p = b;
    sl_put_le16(p, (uint16_t)jl);
    memcpy(p + 2, job_id ? job_id : "", jl);
    p += 2 + jl;
    sl_put_le16(p, (uint16_t)ul);
    memcpy(p + 2, uid ? uid : "", ul);
    p += 2 + ul;
    sl_put_le32(p, (uint32_t)subtask);
    p += 4;
    uint64_t off, len;
    if (sec_begin(w, -1) != SL_OK) return werr(w, err, errlen);
    w->sec_count = 1;
    if (wpay(w, b, (size_t)(p - b)) != SL_OK || sec_end(w, TAG_IDNT, &off, &len) != SL_OK)
        return werr(w, err, errlen);
    SL_ASSERT(off == HDR_SIZE && w->buf_off == 0);
    /* the header, still in the buffer, says so: version 2 */
    sl_put_le32(w->buf + 8, SL_STATE_FORMAT_IDENT);
    sl_put_le32(w->buf + 24, crc_extend(0, w->buf, 24));
    return SL_OK;
}

static int put_entry(void *ctx, const sl_kentry *e)
{
    sl_snapw *w = ctx;
    if (e->kg != w->sec_kg)
        return wfail(w, "writing %s: the snapshot gave an entry of key group %d while writing key group %d",
                     w->path, e->kg, w->sec_kg);
    if (e->sid < 0 || e->sid > MAX_SID || e->klen > MAX_KEY || e->nslen > MAX_NS ||
        e->vlen > MAX_VAL)
        return wfail(w,
                     "writing %s: key group %d: entry out of bounds (state id %d, key %zu, "
                     "namespace %zu, value %zu bytes)",
                     w->path, e->kg, e->sid, e->klen, e->nslen, e->vlen);
    uint8_t h[40];
    size_t n = put_varint(h, (uint64_t)e->sid);
    n += put_varint(h + n, e->klen);
    n += put_varint(h + n, e->nslen);
    n += put_varint(h + n, e->vlen);
    size_t total = n + e->klen + e->nslen + e->vlen;
    w->sec_count++;
    if (total <= WBUF_SIZE - w->blen) {
        /* the common case: assemble in the buffer, one CRC pass */
        uint8_t *p = w->buf + w->blen;
        memcpy(p, h, n);
        if (e->klen) memcpy(p + n, e->key, e->klen);
        if (e->nslen) memcpy(p + n + e->klen, e->ns, e->nslen);
        if (e->vlen) memcpy(p + n + e->klen + e->nslen, e->val, e->vlen);
        w->sec_crc = crc_extend(w->sec_crc, p, total);
        w->sec_len += total;
        w->blen += total;
        return SL_OK;
    }
    if (wpay(w, h, n) != SL_OK || wpay(w, e->key, e->klen) != SL_OK ||
        wpay(w, e->ns, e->nslen) != SL_OK || wpay(w, e->val, e->vlen) != SL_OK)
        return SL_ERR;
    return SL_OK;
}

int sl_snapw_keyed(sl_snapw *w, sl_ksnap *snap, char *err, size_t errlen)
{
    if (wstage(w, STAGE_KEYED, "keyed state", err, errlen) != SL_OK) return SL_ERR;
    if (!snap) return sl_seterr(err, errlen, "writing %s: no keyed-state snapshot", w->path);
    for (int kg = w->kg_first; kg <= w->kg_last; kg++) {
        if (sec_begin(w, kg) != SL_OK) return werr(w, err, errlen);
        char e2[400] = "";
        int rc = sl_ksnap_each(snap, kg, put_entry, w, e2, sizeof e2);
        if (rc != SL_OK) {
            if (!w->failed) wfail(w, "writing %s: key group %d: %s", w->path, kg, e2);
            return werr(w, err, errlen);
        }
        uint64_t *ix = &w->idx[(size_t)(kg - w->kg_first) * 4];
        if (w->sec_count == 0)
            sec_drop(w);
        else if (sec_end(w, TAG_KEYS, &ix[0], &ix[1]) != SL_OK)
            return werr(w, err, errlen);
    }
    return SL_OK;
}

static int bytes_cmp(const void *a, size_t na, const void *b, size_t nb)
{
    size_t n = SL_MIN(na, nb);
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c;
    return na < nb ? -1 : na > nb;
}

/* File order of timers: key group, then (kind, time, key, ns). */
static int timer_cmp(const void *pa, const void *pb)
{
    const sl_snap_timer *a = *(const sl_snap_timer *const *)pa;
    const sl_snap_timer *b = *(const sl_snap_timer *const *)pb;
    if (a->kg != b->kg) return a->kg < b->kg ? -1 : 1;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    int c = bytes_cmp(a->key, a->klen, b->key, b->klen);
    return c ? c : bytes_cmp(a->ns, a->nslen, b->ns, b->nslen);
}

int sl_snapw_timers(sl_snapw *w, const sl_snap_timer *timers, size_t n, char *err, size_t errlen)
{
    if (wstage(w, STAGE_TIMERS, "timers", err, errlen) != SL_OK) return SL_ERR;
    if (n && !timers) return sl_seterr(err, errlen, "writing %s: no timer array", w->path);
    for (size_t i = 0; i < n; i++) {
        const sl_snap_timer *t = &timers[i];
        if (t->kg < w->kg_first || t->kg > w->kg_last) {
            wfail(w, "writing %s: timer %zu is of key group %d, outside the file's [%d, %d]", w->path,
                  i, t->kg, w->kg_first, w->kg_last);
            return werr(w, err, errlen);
        }
        if ((t->kind != 0 && t->kind != 1) || t->klen > MAX_KEY || t->nslen > MAX_NS ||
            (t->klen && !t->key) || (t->nslen && !t->ns)) {
            wfail(w, "writing %s: timer %zu is malformed (kind %d, key %zu, namespace %zu bytes)",
                  w->path, i, t->kind, t->klen, t->nslen);
            return werr(w, err, errlen);
        }
    }
    const sl_snap_timer **order = sl_malloc((n ? n : 1) * sizeof *order);
    for (size_t i = 0; i < n; i++) order[i] = &timers[i];
    qsort(order, n, sizeof *order, timer_cmp);
    int rc = SL_OK;
    for (size_t i = 0; i < n && rc == SL_OK;) {
        int kg = order[i]->kg;
        rc = sec_begin(w, kg);
        for (; rc == SL_OK && i < n && order[i]->kg == kg; i++) {
            const sl_snap_timer *t = order[i];
            uint8_t h[40];
            h[0] = (uint8_t)t->kind;
            size_t hn = 1 + put_varint(h + 1, zigzag(t->time));
            hn += put_varint(h + hn, t->klen);
            hn += put_varint(h + hn, t->nslen);
            w->sec_count++;
            if (wpay(w, h, hn) != SL_OK || wpay(w, t->key, t->klen) != SL_OK ||
                wpay(w, t->ns, t->nslen) != SL_OK)
                rc = SL_ERR;
        }
        uint64_t *ix = &w->idx[(size_t)(kg - w->kg_first) * 4];
        if (rc == SL_OK) rc = sec_end(w, TAG_TIMR, &ix[2], &ix[3]);
    }
    free(order);
    return rc == SL_OK ? SL_OK : werr(w, err, errlen);
}

int sl_snapw_opstate(sl_snapw *w, const void *blob, size_t len, char *err, size_t errlen)
{
    if (wstage(w, STAGE_OPSTATE, "operator state", err, errlen) != SL_OK) return SL_ERR;
    if (!len) return SL_OK; /* nothing: no section */
    if (!blob) return sl_seterr(err, errlen, "writing %s: no operator-state blob", w->path);
    if (sec_begin(w, -1) != SL_OK) return werr(w, err, errlen);
    w->sec_count = 1;
    if (wpay(w, blob, len) != SL_OK || sec_end(w, TAG_OPST, &w->op_off, &w->op_len) != SL_OK)
        return werr(w, err, errlen);
    return SL_OK;
}

static void snapw_free(sl_snapw *w)
{
    if (w->fd >= 0) close(w->fd);
    free(w->buf);
    free(w->idx);
    free(w->path);
    free(w->tmp);
    free(w);
}

void sl_snapw_abort(sl_snapw *w)
{
    if (!w) return;
    unlink(w->tmp);
    snapw_free(w);
}

int sl_snapw_finish(sl_snapw *w, uint64_t *size, char *err, size_t errlen)
{
    if (w->failed) {
        werr(w, err, errlen);
        sl_snapw_abort(w);
        return SL_ERR;
    }
    size_t nkg = (size_t)(w->kg_last - w->kg_first + 1);
    uint64_t idx_off = 0, idx_len = 0;
    int rc = sec_begin(w, -1);
    w->sec_count = nkg;
    for (size_t i = 0; rc == SL_OK && i < nkg; i++) {
        uint8_t e[IDX_PER_KG];
        for (int k = 0; k < 4; k++) sl_put_le64(e + 8 * k, w->idx[i * 4 + (size_t)k]);
        rc = wpay(w, e, sizeof e);
    }
    if (rc == SL_OK) {
        uint8_t e[16];
        sl_put_le64(e, w->op_off);
        sl_put_le64(e + 8, w->op_len);
        rc = wpay(w, e, sizeof e);
    }
    if (rc == SL_OK) rc = sec_end(w, TAG_INDX, &idx_off, &idx_len);
    if (rc == SL_OK) {
        uint8_t t[TRAILER_SIZE];
        sl_put_le64(t, idx_off);
        sl_put_le64(t + 8, idx_len);
        sl_put_le32(t + 16, crc_extend(0, t, 16));
        memcpy(t + 20, trailer_magic, 8);
        rc = wraw(w, t, sizeof t);
    }
    if (rc == SL_OK) rc = wflush(w);
    if (rc == SL_OK && fsync(w->fd) != 0) rc = wfail(w, "fsync of %s: %s", w->tmp, strerror(errno));
    if (rc == SL_OK) {
        int fd = w->fd;
        w->fd = -1;
        if (close(fd) != 0) rc = wfail(w, "closing %s: %s", w->tmp, strerror(errno));
    }
    if (rc == SL_OK && rename(w->tmp, w->path) != 0)
        rc = wfail(w, "renaming %s to %s: %s", w->tmp, w->path, strerror(errno));
    if (rc != SL_OK) {
        werr(w, err, errlen);
        sl_snapw_abort(w);
        return SL_ERR;
    }
    if (size) *size = w->buf_off;
    char e2[400];
    if (sl_fsync_parent(w->path, e2, sizeof e2) != SL_OK) {
        /* the file is complete under its name; only its durability is in doubt */
        rc = sl_seterr(err, errlen, "writing %s: %s", w->path, e2);
    }
    snapw_free(w);
    return rc;
}

/* ======================================================================== */
/* Reading a state file                                                      */
/* ======================================================================== */

typedef struct snapr {
    int fd;
    const char *path;
    uint64_t size;
    int max_parallelism;
    int kg_first, kg_last;
    uint64_t idx_off;    /* sections live in [HDR_SIZE, idx_off) */
    uint64_t *idx;       /* 4 per key group, as written */
    uint64_t op_off, op_len;
    uint64_t sec_min;    /* sections the index names start here (after IDNT) */
    sl_snap_ident ident; /* .known 0: no IDNT section */
    uint8_t *buf;        /* the section last read */
    size_t cap;
} snapr;

static void snapr_close(snapr *r)
{
    if (r->fd >= 0) close(r->fd);
    free(r->idx);
    free(r->buf);
}

/* Read `len` bytes at `off` into r->buf. */
static int rread(snapr *r, uint64_t off, uint64_t len, const char *what, char *err, size_t errlen)
{
    if (len > r->cap) {
        free(r->buf);
        r->buf = sl_malloc((size_t)len);
        r->cap = (size_t)len;
    }
    int rc = pread_all(r->fd, r->buf, (size_t)len, off);
    if (rc < 0) return sl_seterr(err, errlen, "%s: reading %s: %s", r->path, what, strerror(errno));
    if (rc > 0)
        return sl_seterr(err, errlen, "%s: truncated: the file ends inside %s", r->path, what);
    return SL_OK;
}

/* Read and check the section at [off, off+len) which should be a `tag` of
 * key group kg (NO_KG for none). Payload in r->buf + SEC_HDR. */
static int rsection(snapr *r, uint64_t off, uint64_t len, uint32_t tag, uint32_t kg,
                    const char *what, uint64_t *count, char *err, size_t errlen)
{
    if (rread(r, off, len, what, err, errlen) != SL_OK) return SL_ERR;
    const uint8_t *h = r->buf;
    uint64_t plen = len - SEC_MIN;
    uint32_t crc = crc_extend(crc_extend(0, h + SEC_HDR, (size_t)plen), h, SEC_HDR);
    uint32_t stored = sl_get_le32(h + SEC_HDR + plen);
    if (!CRC_MATCH(crc, stored))
        return sl_seterr(err, errlen, "%s: %s is damaged (CRC-32C 0x%08x, expected 0x%08x)", r->path,
                         what, crc, stored);
    if (sl_get_le32(h) != tag || sl_get_le32(h + 4) != kg || sl_get_le64(h + 16) != plen)
        return sl_seterr(err, errlen, "%s: %s: the section at offset %llu is not what the index says",
                         r->path, what, (unsigned long long)off);
    *count = sl_get_le64(h + 8);
    return SL_OK;
}

/* A section reference (offset, length) from the index: none, or inside the
 * section area and big enough for a section. */
static int ref_ok(const snapr *r, uint64_t off, uint64_t len)
{
    if (len == 0) return off == 0;
    return off >= r->sec_min && len >= SEC_MIN && off <= r->idx_off && len <= r->idx_off - off;
}

/* The IDNT section right after the header of a version 2 file. */
static int read_ident(snapr *r, char *err, size_t errlen)
{
    if (r->idx_off - HDR_SIZE < SEC_MIN)
        return sl_seterr(err, errlen, "%s: a version %d state file without its identity section",
                         r->path, SL_STATE_FORMAT_IDENT);
    if (rread(r, HDR_SIZE, SEC_HDR, "the identity section", err, errlen) != SL_OK) return SL_ERR;
    uint64_t plen = sl_get_le64(r->buf + 16), count;
    if (plen > 2 + SL_SNAP_ID_MAX + 2 + SL_SNAP_ID_MAX + 4 || plen + SEC_MIN > r->idx_off - HDR_SIZE)
        return sl_seterr(err, errlen, "%s: the identity section is damaged (length %llu)", r->path,
                         (unsigned long long)plen);
    if (rsection(r, HDR_SIZE, plen + SEC_MIN, TAG_IDNT, NO_KG, "the identity section", &count, err,
                 errlen) != SL_OK)
        return SL_ERR;
    const uint8_t *p = r->buf + SEC_HDR, *end = p + plen;
    sl_snap_ident *id = &r->ident;
    size_t jl, ul;
    if (count != 1 || end - p < 2 || (jl = sl_get_le16(p)) > SL_SNAP_ID_MAX || (size_t)(end - p) < 2 + jl + 2)
        goto bad;
    memcpy(id->job_id, p + 2, jl);
    id->job_id[jl] = '\0';
    p += 2 + jl;
    if ((ul = sl_get_le16(p)) > SL_SNAP_ID_MAX || (size_t)(end - p) != 2 + ul + 4) goto bad;
    memcpy(id->uid, p + 2, ul);
    id->uid[ul] = '\0';
    p += 2 + ul;
    id->subtask = (int)sl_get_le32(p);
    if (id->subtask < 0) goto bad;
    id->known = 1;
    r->sec_min = HDR_SIZE + plen + SEC_MIN;
    return SL_OK;
bad:
    return sl_seterr(err, errlen, "%s: the identity section is malformed", r->path);
}

/* Open path and check header, trailer and index. */
static int snapr_open(snapr *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) return sl_seterr(err, errlen, "cannot open state file %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(r->fd, &st) != 0)
        return sl_seterr(err, errlen, "%s: stat: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return sl_seterr(err, errlen, "%s: not a regular file", path);
    r->size = (uint64_t)st.st_size;

    uint8_t h[HDR_SIZE];
    if (r->size < HDR_SIZE)
        return sl_seterr(err, errlen, "%s: truncated: %llu bytes is less than a state file's header",
                         path, (unsigned long long)r->size);
    if (rread(r, 0, HDR_SIZE, "the header", err, errlen) != SL_OK) return SL_ERR;
    memcpy(h, r->buf, HDR_SIZE);
    if (memcmp(h, state_magic, 8) != 0)
        return sl_seterr(err, errlen, "%s: not a Sluice state file (bad magic)", path);
    uint32_t version = sl_get_le32(h + 8);
    if (version != SL_SNAPSHOT_FORMAT_VERSION && version != SL_STATE_FORMAT_IDENT)
        return sl_seterr(err, errlen,
                         "%s: state file format version %u is not supported (this build reads "
                         "versions %d and %d)",
                         path, version, SL_SNAPSHOT_FORMAT_VERSION, SL_STATE_FORMAT_IDENT);
    if (!CRC_MATCH(crc_extend(0, h, 24), sl_get_le32(h + 24)))
        return sl_seterr(err, errlen, "%s: the header is damaged (CRC-32C mismatch)", path);
    uint32_t maxp = sl_get_le32(h + 12), first = sl_get_le32(h + 16), last = sl_get_le32(h + 20);
    if (maxp < 1 || maxp > MAX_PARALLELISM || first > last || last >= maxp)
        return sl_seterr(err, errlen,
                         "%s: key-group range [%u, %u] does not fit max parallelism %u (at most %d)",
                         path, first, last, maxp, MAX_PARALLELISM);
    r->max_parallelism = (int)maxp;
    r->kg_first = (int)first;
    r->kg_last = (int)last;
    uint64_t nkg = last - first + 1;

    uint8_t t[TRAILER_SIZE];
    if (r->size < HDR_SIZE + TRAILER_SIZE)
        return sl_seterr(err, errlen, "%s: truncated: %llu bytes is less than a header and a trailer",
                         path, (unsigned long long)r->size);
    if (rread(r, r->size - TRAILER_SIZE, TRAILER_SIZE, "the trailer", err, errlen) != SL_OK)
        return SL_ERR;
    memcpy(t, r->buf, TRAILER_SIZE);
    if (memcmp(t + 20, trailer_magic, 8) != 0)
        return sl_seterr(err, errlen, "%s: truncated or damaged: no trailer at the end of the file",
                         path);
    if (!CRC_MATCH(crc_extend(0, t, 16), sl_get_le32(t + 16)))
        return sl_seterr(err, errlen, "%s: the trailer is damaged (CRC-32C mismatch)", path);
    uint64_t ioff = sl_get_le64(t), ilen = sl_get_le64(t + 8);
    uint64_t want_ilen = SEC_MIN + nkg * IDX_PER_KG + 16;
    if (ilen != want_ilen || ioff < HDR_SIZE || ioff > r->size - TRAILER_SIZE ||
        r->size - TRAILER_SIZE - ioff != ilen)
        return sl_seterr(err, errlen,
                         "%s: the index (offset %llu, %llu bytes) does not fit a file of %llu bytes "
                         "with %llu key groups",
                         path, (unsigned long long)ioff, (unsigned long long)ilen,
                         (unsigned long long)r->size, (unsigned long long)nkg);
    r->idx_off = ioff;
    r->sec_min = HDR_SIZE;
    if (version == SL_STATE_FORMAT_IDENT && read_ident(r, err, errlen) != SL_OK) return SL_ERR;
    uint64_t count;
    if (rsection(r, ioff, ilen, TAG_INDX, NO_KG, "the index", &count, err, errlen) != SL_OK)
        return SL_ERR;
    if (count != nkg)
        return sl_seterr(err, errlen, "%s: the index counts %llu key groups, the header %llu", path,
                         (unsigned long long)count, (unsigned long long)nkg);
    const uint8_t *p = r->buf + SEC_HDR;
    r->idx = sl_malloc((size_t)nkg * 4 * sizeof *r->idx);
    for (uint64_t i = 0; i < nkg * 4; i++) r->idx[i] = sl_get_le64(p + 8 * i);
    r->op_off = sl_get_le64(p + nkg * IDX_PER_KG);
    r->op_len = sl_get_le64(p + nkg * IDX_PER_KG + 8);
    for (uint64_t i = 0; i < nkg; i++) {
        const uint64_t *ix = &r->idx[i * 4];
        if (!ref_ok(r, ix[0], ix[1]) || !ref_ok(r, ix[2], ix[3]))
            return sl_seterr(err, errlen, "%s: the index entry of key group %llu points outside the file",
                             path, (unsigned long long)(first + i));
    }
    if (!ref_ok(r, r->op_off, r->op_len))
        return sl_seterr(err, errlen, "%s: the index entry of the operator state points outside the file",
                         path);
    return SL_OK;
}

/* Clip [*first, *last] to the file's range; 0 if nothing is left. */
static int clip_range(const snapr *r, int *first, int *last)
{
    *first = SL_MAX(*first, r->kg_first);
    *last = SL_MIN(*last, r->kg_last);
    return *first <= *last;
}

static int check_request(const char *path, int kg_first, int kg_last, char *err, size_t errlen)
{
    if (kg_first < 0 || kg_last < kg_first)
        return sl_seterr(err, errlen, "%s: asked for the invalid key-group range [%d, %d]", path,
                         kg_first, kg_last);
    return SL_OK;
}

/* Walk a KEYS payload. deliver 0: check it all; 1: hand entries to fn
 * (only after a checking pass succeeded). */
static int walk_entries(snapr *r, int kg, uint64_t count, int deliver,
                        int (*fn)(void *ctx, const sl_kentry *e), void *ctx, char *err,
                        size_t errlen)
{
    const uint8_t *p = r->buf + SEC_HDR;
    const uint8_t *end = p + sl_get_le64(r->buf + 16);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t sid, klen, nslen, vlen;
        if (get_varint(&p, end, &sid) || get_varint(&p, end, &klen) ||
            get_varint(&p, end, &nslen) || get_varint(&p, end, &vlen) || sid > MAX_SID ||
            klen > MAX_KEY || nslen > MAX_NS || vlen > MAX_VAL ||
            klen + nslen + vlen > (uint64_t)(end - p))
            return sl_seterr(err, errlen, "%s: key group %d: entry %llu of %llu is malformed", r->path,
                             kg, (unsigned long long)i, (unsigned long long)count);
        if (deliver) {
            sl_kentry e = {.sid = (int)sid,
                           .kg = kg,
                           .key = p,
                           .klen = (size_t)klen,
                           .ns = p + klen,
                           .nslen = (size_t)nslen,
                           .val = p + klen + nslen,
                           .vlen = (size_t)vlen};
            int rc = fn(ctx, &e);
            if (rc != SL_OK) return rc;
        }
        p += klen + nslen + vlen;
    }
    if (p != end)
        return sl_seterr(err, errlen, "%s: key group %d: %llu bytes after the last entry", r->path, kg,
                         (unsigned long long)(end - p));
    return SL_OK;
}

int sl_snapr_keyed(const char *path, int kg_first, int kg_last,
                   int (*fn)(void *ctx, const sl_kentry *e), void *ctx, char *err, size_t errlen)
{
    if (check_request(path, kg_first, kg_last, err, errlen) != SL_OK) return SL_ERR;
    snapr r;
    int rc = snapr_open(&r, path, err, errlen);
    if (rc == SL_OK && clip_range(&r, &kg_first, &kg_last)) {
        for (int kg = kg_first; rc == SL_OK && kg <= kg_last; kg++) {
            const uint64_t *ix = &r.idx[(size_t)(kg - r.kg_first) * 4];
            if (!ix[1]) continue;
            char what[64];
            snprintf(what, sizeof what, "the entries of key group %d", kg);
            uint64_t count;
            rc = rsection(&r, ix[0], ix[1], TAG_KEYS, (uint32_t)kg, what, &count, err, errlen);
            if (rc == SL_OK) rc = walk_entries(&r, kg, count, 0, fn, ctx, err, errlen);
            if (rc == SL_OK) rc = walk_entries(&r, kg, count, 1, fn, ctx, err, errlen);
        }
    }
    snapr_close(&r);
    return rc;
}

/* Walk a TIMR payload, like walk_entries. */
static int walk_timers(snapr *r, int kg, uint64_t count, int deliver,
                       int (*fn)(void *ctx, const sl_snap_timer *t), void *ctx, char *err,
                       size_t errlen)
{
    uint8_t *p = r->buf + SEC_HDR;
    const uint8_t *end = p + sl_get_le64(r->buf + 16);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t zt, klen, nslen;
        const uint8_t *q = p + 1;
        if (p >= end || *p > 1 || get_varint(&q, end, &zt) || get_varint(&q, end, &klen) ||
            get_varint(&q, end, &nslen) || klen > MAX_KEY || nslen > MAX_NS ||
            klen + nslen > (uint64_t)(end - q))
            return sl_seterr(err, errlen, "%s: key group %d: timer %llu of %llu is malformed", r->path,
                             kg, (unsigned long long)i, (unsigned long long)count);
        uint8_t *key = p + (q - p);
        if (deliver) {
            sl_snap_timer t = {.kind = *p,
                               .time = unzigzag(zt),
                               .kg = kg,
                               .key = key,
                               .klen = (size_t)klen,
                               .ns = key + klen,
                               .nslen = (size_t)nslen};
            int rc = fn(ctx, &t);
            if (rc != SL_OK) return rc;
        }
        p = key + klen + nslen;
    }
    if (p != end)
        return sl_seterr(err, errlen, "%s: key group %d: %llu bytes after the last timer", r->path, kg,
                         (unsigned long long)(end - p));
    return SL_OK;
}

int sl_snapr_timers(const char *path, int kg_first, int kg_last,
                    int (*fn)(void *ctx, const sl_snap_timer *t), void *ctx, char *err,
                    size_t errlen)
{
    if (check_request(path, kg_first, kg_last, err, errlen) != SL_OK) return SL_ERR;
    snapr r;
    int rc = snapr_open(&r, path, err, errlen);
    if (rc == SL_OK && clip_range(&r, &kg_first, &kg_last)) {
        for (int kg = kg_first; rc == SL_OK && kg <= kg_last; kg++) {
            const uint64_t *ix = &r.idx[(size_t)(kg - r.kg_first) * 4];
            if (!ix[3]) continue;
            char what[64];
            snprintf(what, sizeof what, "the timers of key group %d", kg);
            uint64_t count;
            rc = rsection(&r, ix[2], ix[3], TAG_TIMR, (uint32_t)kg, what, &count, err, errlen);
            if (rc == SL_OK) rc = walk_timers(&r, kg, count, 0, fn, ctx, err, errlen);
            if (rc == SL_OK) rc = walk_timers(&r, kg, count, 1, fn, ctx, err, errlen);
        }
    }
    snapr_close(&r);
    return rc;
}

int sl_snapr_opstate(const char *path, void **blob, size_t *len, char *err, size_t errlen)
{
    *blob = NULL;
    *len = 0;
    snapr r;
    int rc = snapr_open(&r, path, err, errlen);
    if (rc == SL_OK && r.op_len) {
        uint64_t count;
        rc = rsection(&r, r.op_off, r.op_len, TAG_OPST, NO_KG, "the operator state", &count, err,
                      errlen);
        if (rc == SL_OK && count != 1)
            rc = sl_seterr(err, errlen, "%s: the operator-state section counts %llu blobs, not 1",
                           path, (unsigned long long)count);
        if (rc == SL_OK) {
            size_t n = (size_t)(r.op_len - SEC_MIN);
            *blob = sl_malloc(n ? n : 1);
            if (n) memcpy(*blob, r.buf + SEC_HDR, n);
            *len = n;
        }
    }
    snapr_close(&r);
    return rc;
}

/* ---- checking every section without restoring (POST /savepoints/check) -- */

#define CHECK_CHUNK (64u * 1024) /* the most a check holds of a section at a time */

/* The section at [off, off+len), which the index says is a `tag` of key
 * group kg: its header as the index says and its CRC-32C, streamed through
 * chunk (CHECK_CHUNK bytes), so a section of any size costs no more memory
 * than that. The same checks rsection makes, bar the payload's structure. */
static int check_section(snapr *r, uint8_t *chunk, uint64_t off, uint64_t len, uint32_t tag,
                         uint32_t kg, const char *what, char *err, size_t errlen)
{
    uint8_t h[SEC_HDR], tail[SEC_TAIL];
    uint64_t plen = len - SEC_MIN; /* ref_ok: len >= SEC_MIN */
    int rc = pread_all(r->fd, h, SEC_HDR, off);
    if (rc < 0) return sl_seterr(err, errlen, "%s: reading %s: %s", r->path, what, strerror(errno));
    if (rc > 0) return sl_seterr(err, errlen, "%s: truncated: the file ends inside %s", r->path, what);
    uint32_t crc = 0;
    for (uint64_t done = 0; done < plen;) {
        size_t n = (size_t)SL_MIN(plen - done, (uint64_t)CHECK_CHUNK);
        rc = pread_all(r->fd, chunk, n, off + SEC_HDR + done);
        if (rc < 0) return sl_seterr(err, errlen, "%s: reading %s: %s", r->path, what, strerror(errno));
        if (rc > 0)
            return sl_seterr(err, errlen, "%s: truncated: the file ends inside %s", r->path, what);
        crc = crc_extend(crc, chunk, n);
        done += n;
    }
    crc = crc_extend(crc, h, SEC_HDR);
    rc = pread_all(r->fd, tail, SEC_TAIL, off + SEC_HDR + plen);
    if (rc < 0) return sl_seterr(err, errlen, "%s: reading %s: %s", r->path, what, strerror(errno));
    if (rc > 0) return sl_seterr(err, errlen, "%s: truncated: the file ends inside %s", r->path, what);
    uint32_t stored = sl_get_le32(tail);
    if (!CRC_MATCH(crc, stored))
        return sl_seterr(err, errlen,
                         "%s: %s (offset %llu, %llu bytes) is damaged: CRC-32C mismatch (stored "
                         "%08x, computed %08x)",
                         r->path, what, (unsigned long long)off, (unsigned long long)len, stored, crc);
    if (sl_get_le32(h) != tag || sl_get_le32(h + 4) != kg || sl_get_le64(h + 16) != plen)
        return sl_seterr(err, errlen, "%s: %s: the section at offset %llu is not what the index says",
                         r->path, what, (unsigned long long)off);
    if (tag == TAG_OPST && sl_get_le64(h + 8) != 1)
        return sl_seterr(err, errlen, "%s: the operator-state section counts %llu blobs, not 1",
                         r->path, (unsigned long long)sl_get_le64(h + 8));
    return SL_OK;
}

int sl_snapr_check(const char *path, char *err, size_t errlen)
{
    snapr r;
    int rc = snapr_open(&r, path, err, errlen); /* header, identity, index, trailer */
    uint8_t *chunk = rc == SL_OK ? sl_malloc(CHECK_CHUNK) : NULL;
    for (int kg = r.kg_first; rc == SL_OK && kg <= r.kg_last; kg++) {
        const uint64_t *ix = &r.idx[(size_t)(kg - r.kg_first) * 4];
        char what[64];
        if (ix[1]) {
            snprintf(what, sizeof what, "the entries of key group %d", kg);
            rc = check_section(&r, chunk, ix[0], ix[1], TAG_KEYS, (uint32_t)kg, what, err, errlen);
        }
        if (rc == SL_OK && ix[3]) {
            snprintf(what, sizeof what, "the timers of key group %d", kg);
            rc = check_section(&r, chunk, ix[2], ix[3], TAG_TIMR, (uint32_t)kg, what, err, errlen);
        }
    }
    if (rc == SL_OK && r.op_len)
        rc = check_section(&r, chunk, r.op_off, r.op_len, TAG_OPST, NO_KG, "the operator state",
                           err, errlen);
    free(chunk);
    snapr_close(&r);
    return rc;
}

int sl_snapr_ident(const char *path, sl_snap_ident *id, int *max_parallelism, int *kg_first,
                   int *kg_last, char *err, size_t errlen)
{
    snapr r;
    int rc = snapr_open(&r, path, err, errlen);
    if (rc == SL_OK) {
        *id = r.ident;
        if (max_parallelism) *max_parallelism = r.max_parallelism;
        if (kg_first) *kg_first = r.kg_first;
        if (kg_last) *kg_last = r.kg_last;
    }
    snapr_close(&r);
    return rc;
}

int sl_snapr_info(const char *path, int *max_parallelism, int *kg_first, int *kg_last, char *err,
                  size_t errlen)
{
    snapr r;
    int rc = snapr_open(&r, path, err, errlen);
    if (rc == SL_OK) {
        if (max_parallelism) *max_parallelism = r.max_parallelism;
        if (kg_first) *kg_first = r.kg_first;
        if (kg_last) *kg_last = r.kg_last;
    }
    snapr_close(&r);
    return rc;
}

/* ======================================================================== */
/* _metadata                                                                 */
/* ======================================================================== */

int sl_snapshot_write_metadata(const char *dir, const void *packed, size_t len, char *err,
                               size_t errlen)
{
    if (!dir || !*dir) return sl_seterr(err, errlen, "snapshot metadata: no directory");
    if (len && !packed) return sl_seterr(err, errlen, "snapshot metadata: no bytes");
    char *path = sl_sprintf("%s/_metadata", dir);
    char *tmp = sl_sprintf("%s/_metadata.tmp", dir);
    uint8_t h[META_HDR];
    memcpy(h, meta_magic, 8);
    sl_put_le32(h + 8, SL_SNAPSHOT_FORMAT_VERSION);
    sl_put_le32(h + 12, crc_extend(0, packed, len));
    sl_put_le64(h + 16, len);

    int rc = SL_OK;
    if (sl_store_is_s3(dir)) {
        /* one PUT: the object appears whole or not at all */
        uint8_t *all = sl_malloc(sizeof h + len);
        memcpy(all, h, sizeof h);
        if (len) memcpy(all + sizeof h, packed, len);
        rc = sl_store_put_mem(path, all, sizeof h + len, err, errlen);
        free(all);
        free(path);
        free(tmp);
        return rc;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = sl_seterr(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    } else {
        if (write_all(fd, h, sizeof h) != 0 || write_all(fd, packed, len) != 0)
            rc = sl_seterr(err, errlen, "writing %s: %s", tmp, strerror(errno));
        else if (fsync(fd) != 0)
            rc = sl_seterr(err, errlen, "fsync of %s: %s", tmp, strerror(errno));
        if (close(fd) != 0 && rc == SL_OK)
            rc = sl_seterr(err, errlen, "closing %s: %s", tmp, strerror(errno));
        if (rc == SL_OK && rename(tmp, path) != 0)
            rc = sl_seterr(err, errlen, "renaming %s to %s: %s", tmp, path, strerror(errno));
        if (rc != SL_OK) unlink(tmp);
    }
    if (rc == SL_OK) rc = sl_fsync_parent(path, err, errlen);
    free(path);
    free(tmp);
    return rc;
}

/* The packed metadata of a whole _metadata file's bytes (data, size) read
 * from `file` (for messages): header, version, length and CRC checked.
 * *packed is malloc'ed. */
static int meta_parse(const char *file, const uint8_t *data, uint64_t size, void **packed,
                      size_t *len, char *err, size_t errlen)
{
    const uint8_t *h = data;
    if (size < META_HDR)
        return sl_seterr(err, errlen, "%s: truncated: %llu bytes is less than the %d-byte header",
                         file, (unsigned long long)size, META_HDR);
    if (memcmp(h, meta_magic, 8) != 0)
        return sl_seterr(err, errlen, "%s: not a Sluice snapshot metadata file (bad magic)", file);
    if (sl_get_le32(h + 8) != SL_SNAPSHOT_FORMAT_VERSION)
        return sl_seterr(err, errlen,
                         "%s: metadata format version %u is not supported (this build reads "
                         "version %d)",
                         file, sl_get_le32(h + 8), SL_SNAPSHOT_FORMAT_VERSION);
    if (sl_get_le64(h + 16) != size - META_HDR)
        return sl_seterr(err, errlen,
                         "%s: the header announces %llu bytes of metadata but the file holds "
                         "%llu (truncated?)",
                         file, (unsigned long long)sl_get_le64(h + 16),
                         (unsigned long long)(size - META_HDR));
    size_t n = (size_t)(size - META_HDR);
    if (!CRC_MATCH(crc_extend(0, data + META_HDR, n), sl_get_le32(h + 12)))
        return sl_seterr(err, errlen, "%s: the metadata is damaged (CRC-32C mismatch)", file);
    *packed = sl_malloc(n ? n : 1);
    if (n) memcpy(*packed, data + META_HDR, n);
    *len = n;
    return SL_OK;
}

#define META_MAX ((size_t)1 << 30) /* a _metadata larger than this is not one */

int sl_snapshot_read_metadata(const char *path, void **packed, size_t *len, char *err,
                              size_t errlen)
{
    *packed = NULL;
    *len = 0;
    uint8_t *data = NULL;
    size_t size = 0;
    if (sl_store_is_s3(path)) {
        size_t pl = strlen(path);
        while (pl && path[pl - 1] == '/') pl--;
        char *file = pl >= 10 && !strncmp(path + pl - 10, "/_metadata", 10)
                         ? sl_strndup(path, pl)
                         : sl_sprintf("%.*s/_metadata", (int)pl, path);
        char why[600];
        int rc = sl_store_get_mem(file, META_MAX, (void **)&data, &size, why, sizeof why);
        if (rc == SL_DONE)
            rc = sl_seterr(err, errlen, "%s does not exist (not a completed snapshot)", file);
        else if (rc != SL_OK)
            rc = sl_seterr(err, errlen, "%s", why);
        else
            rc = meta_parse(file, data, size, packed, len, err, errlen);
        free(data);
        free(file);
        return rc;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return sl_seterr(err, errlen, "snapshot %s: %s", path, strerror(errno));
    char *file = S_ISDIR(st.st_mode) ? sl_sprintf("%s/_metadata", path) : sl_strdup(path);
    int rc = SL_OK;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            rc = sl_seterr(err, errlen, "%s does not exist (not a completed snapshot)", file);
        else
            rc = sl_seterr(err, errlen, "cannot open %s: %s", file, strerror(errno));
    } else if (fstat(fd, &st) != 0) {
        rc = sl_seterr(err, errlen, "%s: stat: %s", file, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        rc = sl_seterr(err, errlen, "%s: not a regular file", file);
    } else if ((uint64_t)st.st_size > META_MAX) {
        rc = sl_seterr(err, errlen, "%s: %llu bytes is too large for a _metadata file", file,
                       (unsigned long long)st.st_size);
    } else {
        size = (size_t)st.st_size;
        data = sl_malloc(size ? size : 1);
        int r = pread_all(fd, data, size, 0);
        if (r != 0)
            rc = sl_seterr(err, errlen, "reading %s: %s", file,
                           r < 0 ? strerror(errno) : "the file shrank while being read");
        else
            rc = meta_parse(file, data, size, packed, len, err, errlen);
    }
    if (fd >= 0) close(fd);
    free(data);
    free(file);
    return rc;
}

/* ======================================================================== */
/* Directories                                                               */
/* ======================================================================== */

int sl_mkdirs(const char *path, char *err, size_t errlen)
{
    if (!path || !*path) return sl_seterr(err, errlen, "mkdir: empty path");
    if (sl_store_is_s3(path)) return SL_OK; /* S3 has keys, no directories */
    char *p = sl_strdup(path);
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    int rc = SL_OK;
    /* each prefix ending before a '/', then the whole path */
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0') continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0755) == 0) {
            if (sl_fsync_parent(p, NULL, 0) != SL_OK) {
                /* not fatal: the directory exists; a crash might lose it */
            }
        } else {
            struct stat st;
            if (errno != EEXIST)
                rc = sl_seterr(err, errlen, "cannot create directory %s: %s", p, strerror(errno));
            else if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
                rc = sl_seterr(err, errlen, "cannot create directory %s: %s exists and is not a directory",
                               path, p);
        }
        *s = c;
        if (rc != SL_OK || c == '\0') break;
    }
    free(p);
    return rc;
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && strcmp(s + n - m, suf) == 0;
}

/* A name the snapshot format writes (a regular file is required too). */
static int snapshot_file_name(const char *name)
{
    return strcmp(name, "_metadata") == 0 || has_suffix(name, ".state") || has_suffix(name, ".tmp") ||
           sl_inc_name_ok(name, 1); /* an incremental checkpoint's private files */
}

/* Names under an s3:// snapshot directory (listing callback). */
typedef struct s3_names {
    char **v;
    size_t n;
    char bad[256]; /* the first name that is not a snapshot file */
} s3_names;

static int s3_name(void *ctx, const char *name, uint64_t size)
{
    s3_names *a = ctx;
    SL_UNUSED(size);
    if (strchr(name, '/') || !snapshot_file_name(name)) {
        if (!a->bad[0]) snprintf(a->bad, sizeof a->bad, "%s", name);
        return SL_OK;
    }
    a->v = sl_realloc(a->v, (a->n + 1) * sizeof *a->v);
    a->v[a->n++] = sl_strdup(name);
    return SL_OK;
}

/* sl_snapshot_remove of an s3:// directory: the same rule (only snapshot
 * files, else refuse and delete nothing), object by object. */
static int remove_s3(const char *dir, char *err, size_t errlen)
{
    s3_names a = {0};
    int rc = sl_store_list(dir, s3_name, &a, err, errlen);
    if (rc == SL_OK && a.bad[0])
        rc = sl_seterr(err, errlen,
                       "refusing to remove snapshot directory %s: it holds '%s', which is not a "
                       "snapshot file (only _metadata, *.state, *.tmp and incremental *.rdb files are removed)",
                       dir, a.bad);
    /* _metadata first: what is left of a half-deleted snapshot is never taken for a whole one */
    for (size_t i = 1; i < a.n; i++)
        if (!strcmp(a.v[i], "_metadata")) {
            char *t = a.v[0];
            a.v[0] = a.v[i];
            a.v[i] = t;
        }
    for (size_t i = 0; i < a.n; i++) {
        if (rc == SL_OK) {
            char *url = sl_sprintf("%s/%s", dir, a.v[i]);
            rc = sl_store_delete(url, err, errlen);
            free(url);
        }
        free(a.v[i]);
    }
    free(a.v);
    return rc;
}

int sl_snapshot_remove(const char *dir, char *err, size_t errlen)
{
    if (!dir || !*dir) return sl_seterr(err, errlen, "remove snapshot: no directory");
    if (sl_store_is_s3(dir)) return remove_s3(dir, err, errlen);
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return SL_OK; /* nothing to remove */
        return sl_seterr(err, errlen, "remove snapshot %s: %s", dir, strerror(errno));
    }
    /* first pass: refuse unless every entry is a snapshot file */
    int rc = SL_OK;
    size_t nfiles = 0;
    struct dirent *de;
    while (rc == SL_OK && (errno = 0, de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            rc = sl_seterr(err, errlen, "remove snapshot %s: %s: %s", dir, de->d_name, strerror(errno));
        else if (!snapshot_file_name(de->d_name) || !S_ISREG(st.st_mode))
            rc = sl_seterr(err, errlen,
                           "refusing to remove snapshot directory %s: it holds '%s', which is not a "
                           "snapshot file (only _metadata, *.state, *.tmp and incremental *.rdb files are removed)",
                           dir, de->d_name);
        nfiles++;
    }
    if (rc == SL_OK && errno != 0)
        rc = sl_seterr(err, errlen, "remove snapshot %s: reading the directory: %s", dir, strerror(errno));
    /* second pass: remove them */
    if (rc == SL_OK && nfiles) {
        rewinddir(d);
        while (rc == SL_OK && (de = readdir(d))) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
            if (!snapshot_file_name(de->d_name)) continue; /* appeared since: rmdir will say */
            if (unlinkat(dirfd(d), de->d_name, 0) != 0 && errno != ENOENT)
                rc = sl_seterr(err, errlen, "remove snapshot %s: %s: %s", dir, de->d_name,
                               strerror(errno));
        }
    }
    closedir(d);
    if (rc == SL_OK && rmdir(dir) != 0)
        rc = sl_seterr(err, errlen, "remove snapshot %s: %s", dir, strerror(errno));
    return rc;
}
