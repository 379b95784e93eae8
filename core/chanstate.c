/*
 * chanstate.c -- writing and reading channel-state files (chanstate.h).
 *
 * The writer streams sections through stdio into "<path>.tmp": the task
 * thread appends each buffer's bytes from the buffer itself, so the memory
 * used is stdio's own buffer whatever the amount persisted. The snapshot
 * writer thread finishes the file (end section, fsync, rename), which is
 * the asynchronous part of an unaligned checkpoint. The reader takes one
 * section at a time into a buffer it grows up to the section limit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chanstate.h"
#include "snapshot.h"
#include "bytes.h"

static const uint8_t cs_magic[8] = {'S', 'L', 'C', 'H', 'S', 'T', 0, 0};

#define CS_HDR 16
#define SEC_HDR 32
#define END_KIND 0xff

struct sl_cs_writer {
    FILE *f;
    char *path;                 /* final name; the file is path + ".tmp" */
    char *tmp;
    uint64_t bytes;
    uint32_t nsections;
};

sl_cs_writer *sl_cs_open(const char *path, char *err, size_t errlen)
{
    char *tmp = sl_sprintf("%s.tmp", path);
    FILE *f = fopen(tmp, "wbe");
    if (!f) {
        sl_seterr(err, errlen, "cannot create channel-state file %s: %s", tmp, strerror(errno));
        free(tmp);
        return NULL;
    }
    uint8_t h[CS_HDR];
    memcpy(h, cs_magic, 8);
    sl_put_le32(h + 8, SL_CS_VERSION);
    sl_put_le32(h + 12, 0);
    if (fwrite(h, 1, sizeof h, f) != sizeof h) {
        sl_seterr(err, errlen, "writing %s: %s", tmp, strerror(errno));
        fclose(f);
        unlink(tmp);
        free(tmp);
        return NULL;
    }
    sl_cs_writer *w = sl_calloc(1, sizeof *w);
    w->f = f;
    w->path = sl_strdup(path);
    w->tmp = tmp;
    w->bytes = CS_HDR;
    return w;
}

uint64_t sl_cs_bytes(const sl_cs_writer *w) { return w ? w->bytes : 0; }
const char *sl_cs_path(const sl_cs_writer *w) { return w->path; }

int sl_cs_append2(sl_cs_writer *w, int kind, const sl_cs_chan *ch, const void *a, uint32_t alen,
                  const void *b, uint32_t blen, char *err, size_t errlen)
{
    size_t fl = strlen(ch->from_uid), tl = strlen(ch->to_uid);
    uint64_t len = (uint64_t)alen + blen;
    if (fl > SL_CS_MAX_UID || tl > SL_CS_MAX_UID || len > SL_CS_MAX_DATA)
        return sl_seterr(err, errlen, "channel-state section out of bounds (%llu bytes)",
                         (unsigned long long)len);
    uint8_t h[SEC_HDR];
    h[0] = (uint8_t)kind;
    h[1] = 0;
    sl_put_le16(h + 2, (uint16_t)fl);
    sl_put_le16(h + 4, (uint16_t)tl);
    sl_put_le16(h + 6, 0);
    sl_put_le32(h + 8, ch->input);
    sl_put_le32(h + 12, ch->from_subtask);
    sl_put_le32(h + 16, ch->to_subtask);
    sl_put_le32(h + 20, (uint32_t)len);
    sl_put_le32(h + 24, 0);
    sl_put_le32(h + 28, 0);
    uint32_t crc = sl_snap_crc32c(0, h, 28);
    crc = sl_snap_crc32c(crc, ch->from_uid, fl);
    crc = sl_snap_crc32c(crc, ch->to_uid, tl);
    if (alen) crc = sl_snap_crc32c(crc, a, alen);
    if (blen) crc = sl_snap_crc32c(crc, b, blen);
    sl_put_le32(h + 28, crc);
    if (fwrite(h, 1, SEC_HDR, w->f) != SEC_HDR || fwrite(ch->from_uid, 1, fl, w->f) != fl ||
        fwrite(ch->to_uid, 1, tl, w->f) != tl || (alen && fwrite(a, 1, alen, w->f) != alen) ||
        (blen && fwrite(b, 1, blen, w->f) != blen))
        return sl_seterr(err, errlen, "writing %s: %s", w->tmp, strerror(errno));
    w->bytes += SEC_HDR + fl + tl + len;
    w->nsections++;
    return SL_OK;
}

int sl_cs_append(sl_cs_writer *w, int kind, const sl_cs_chan *ch, const void *data, uint32_t len,
                 char *err, size_t errlen)
{
    return sl_cs_append2(w, kind, ch, data, len, NULL, 0, err, errlen);
}

void sl_cs_abort(sl_cs_writer *w)
{
    if (!w) return;
    if (w->f) fclose(w->f);
    unlink(w->tmp);
    free(w->tmp);
    free(w->path);
    free(w);
}

int sl_cs_finish(sl_cs_writer *w, uint64_t *size, char *err, size_t errlen)
{
    uint8_t e[12];
    e[0] = END_KIND;
    e[1] = e[2] = e[3] = 0;
    sl_put_le32(e + 4, w->nsections);
    sl_put_le32(e + 8, sl_snap_crc32c(0, e, 8));
    int rc = SL_OK;
    if (fwrite(e, 1, sizeof e, w->f) != sizeof e || fflush(w->f) != 0 || fsync(fileno(w->f)) != 0)
        rc = sl_seterr(err, errlen, "writing %s: %s", w->tmp, strerror(errno));
    int closed = fclose(w->f);
    w->f = NULL;
    if (rc == SL_OK && closed != 0) rc = sl_seterr(err, errlen, "closing %s: %s", w->tmp, strerror(errno));
    if (rc == SL_OK && rename(w->tmp, w->path) != 0)
        rc = sl_seterr(err, errlen, "renaming %s: %s", w->tmp, strerror(errno));
    if (rc == SL_OK) rc = sl_fsync_parent(w->path, err, errlen);
    if (rc == SL_OK && size) *size = w->bytes + sizeof e;
    if (rc != SL_OK) unlink(w->tmp);
    free(w->tmp);
    free(w->path);
    free(w);
    return rc;
}

/* ---- reading ------------------------------------------------------------ */

static int read_exact(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n ? 0 : -1; }

int sl_cs_read(const char *path, int (*fn)(void *ctx, const sl_cs_section *s, char *err, size_t errlen),
               void *ctx, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rbe");
    if (!f) return sl_seterr(err, errlen, "cannot open channel-state file %s: %s", path, strerror(errno));
    uint8_t h[SEC_HDR];
    uint8_t *buf = NULL;
    size_t cap = 0;
    char uids[2][SL_CS_MAX_UID + 1];
    uint32_t n = 0;
    int rc = SL_OK;
    if (read_exact(f, h, CS_HDR) || memcmp(h, cs_magic, 8)) {
        rc = sl_seterr(err, errlen, "%s is not a channel-state file", path);
        goto out;
    }
    if (sl_get_le32(h + 8) != SL_CS_VERSION) {
        rc = sl_seterr(err, errlen, "%s: channel-state version %u (this build reads %d)", path,
                       sl_get_le32(h + 8), SL_CS_VERSION);
        goto out;
    }
    for (;;) {
        if (read_exact(f, h, 1)) {
            rc = sl_seterr(err, errlen, "%s is truncated after section %u (no end section)", path, n);
            break;
        }
        if (h[0] == END_KIND) {
            if (read_exact(f, h + 1, 11) || sl_get_le32(h + 8) != sl_snap_crc32c(0, h, 8)) {
                rc = sl_seterr(err, errlen, "%s: damaged end section", path);
            } else if (sl_get_le32(h + 4) != n) {
                rc = sl_seterr(err, errlen, "%s: the end section counts %u sections, the file has %u",
                               path, sl_get_le32(h + 4), n);
            } else if (fgetc(f) != EOF) {
                rc = sl_seterr(err, errlen, "%s: data after the end section", path);
            }
            break;
        }
        if (read_exact(f, h + 1, SEC_HDR - 1)) {
            rc = sl_seterr(err, errlen, "%s is truncated in section %u", path, n + 1);
            break;
        }
        uint32_t fl = sl_get_le16(h + 2), tl = sl_get_le16(h + 4), len = sl_get_le32(h + 20);
        uint32_t stored = sl_get_le32(h + 28);
        if ((h[0] != SL_CS_INPUT && h[0] != SL_CS_OUTPUT) || fl > SL_CS_MAX_UID || tl > SL_CS_MAX_UID ||
            len > SL_CS_MAX_DATA) {
            rc = sl_seterr(err, errlen, "%s: section %u has a damaged header", path, n + 1);
            break;
        }
        if (len > cap) {
            size_t nc = cap ? cap : 64u << 10;
            while (nc < len) nc *= 2;
            free(buf);
            buf = sl_malloc(nc);
            cap = nc;
        }
        if (read_exact(f, uids[0], fl) || read_exact(f, uids[1], tl) || (len && read_exact(f, buf, len))) {
            rc = sl_seterr(err, errlen, "%s is truncated in section %u", path, n + 1);
            break;
        }
        uids[0][fl] = uids[1][tl] = '\0';
        sl_put_le32(h + 28, 0);
        uint32_t crc = sl_snap_crc32c(0, h, 28);
        crc = sl_snap_crc32c(crc, uids[0], fl);
        crc = sl_snap_crc32c(crc, uids[1], tl);
        crc = sl_snap_crc32c(crc, buf, len);
        if (crc != stored) {
            rc = sl_seterr(err, errlen, "%s: section %u fails its checksum", path, n + 1);
            break;
        }
        n++;
        sl_cs_section s = {.kind = h[0],
                           .ch = {uids[0], uids[1], sl_get_le32(h + 8), sl_get_le32(h + 12),
                                  sl_get_le32(h + 16)},
                           .data = buf,
                           .len = len};
        if ((rc = fn(ctx, &s, err, errlen)) != SL_OK) break;
    }
out:
    free(buf);
    fclose(f);
    return rc;
}
