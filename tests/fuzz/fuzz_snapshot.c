/*
 * fuzz_snapshot.c -- libFuzzer target for snapshot files (core/snapshot.c,
 * core/snapshot_verify.c), as a restore reads them. The input is a u16
 * length, that many bytes of _metadata, then the bytes of one state file,
 * written as op-0.state beside it in a scratch directory. The state file
 * is read whole (identity, range, keyed entries of every key group,
 * timers, operator state); _metadata is read, decoded and every file it
 * names verified against it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "snapshot.h"
#include "snapshot.pb-c.h"

static char dir[64];

static int count_entry(void *ctx, const sl_kentry *e)
{
    (void)e;
    (*(size_t *)ctx)++;
    return SL_OK;
}

static int count_timer(void *ctx, const sl_snap_timer *t)
{
    (void)t;
    (*(size_t *)ctx)++;
    return SL_OK;
}

static void put_file(const char *name, const uint8_t *p, size_t n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(p, 1, n, f) != n) abort();
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/dev/shm/sluice-fuzz-snapshot-%d", (int)getpid());
        char err[200];
        if (sl_mkdirs(dir, err, sizeof err) != SL_OK) abort();
    }
    if (size < 2) return 0;
    size_t mlen = sl_get_le16(data);
    if (mlen > size - 2) mlen = size - 2;
    const uint8_t *meta = data + 2, *state = meta + mlen;
    size_t slen = size - 2 - mlen;
    put_file("_metadata", meta, mlen);
    put_file("op-0.state", state, slen);

    char path[128], err[1200];
    snprintf(path, sizeof path, "%s/op-0.state", dir);
    sl_snap_ident id;
    int maxp, first, last;
    err[0] = '\0';
    if (sl_snapr_ident(path, &id, &maxp, &first, &last, err, sizeof err) == SL_OK) {
        size_t n = 0;
        sl_snapr_keyed(path, 0, 32767, count_entry, &n, err, sizeof err);
        sl_snapr_timers(path, 0, 32767, count_timer, &n, err, sizeof err);
        void *blob = NULL;
        size_t blen = 0;
        if (sl_snapr_opstate(path, &blob, &blen, err, sizeof err) == SL_OK) free(blob);
    } else if (!err[0]) {
        abort();
    }
    if (sl_snapr_info(path, &maxp, &first, &last, err, sizeof err) == SL_OK) {
        size_t n = 0;
        sl_snapr_keyed(path, first, first, count_entry, &n, err, sizeof err);
    }

    void *packed = NULL;
    size_t plen = 0;
    err[0] = '\0';
    if (sl_snapshot_read_metadata(dir, &packed, &plen, err, sizeof err) == SL_OK) {
        Sluice__SnapshotMetadata *md = sluice__snapshot_metadata__unpack(NULL, plen, packed);
        if (md) {
            err[0] = '\0';
            if (sl_snapshot_verify(dir, md, err, sizeof err) != SL_OK && !err[0]) abort();
            sluice__snapshot_metadata__free_unpacked(md, NULL);
        }
        free(packed);
    } else if (!err[0]) {
        abort();
    }
    return 0;
}
