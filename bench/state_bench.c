/*
 * state_bench.c -- keyed-state throughput of both backends.
 *
 * For each backend: insert N keys (8-byte keys, 8-byte counter values, one
 * state, empty namespace, key groups of max parallelism 128 as the runtime
 * computes them), then run N read-modify-writes on random keys (set_key,
 * get, put of the incremented counter: what a keyed aggregation does per
 * record). Then take a snapshot and time it, run the read-modify-writes
 * again while the snapshot is alive (the hashmap pays its copy-on-write
 * there), and read the snapshot back key group by key group as a
 * checkpoint writer would.
 *
 * Each figure is printed twice: per wall-clock second and, in brackets,
 * per second of this thread's CPU time, which stays meaningful when the
 * machine is busy with other work (RocksDB's background flushes and
 * compactions run on other threads and are not in the bracketed figure).
 *
 * With --raw, instead: the same operations straight through RocksDB's C
 * API, bypassing Sluice's backend and its write buffer (8-byte keys and
 * values, one default column family, WAL disabled as the backend has it):
 * N puts of sequential keys, N gets of random keys, N random get+put
 * read-modify-writes, and N puts in write batches of 1,000; then, untimed,
 * RocksDB's own count of user-key comparisons (perf_context, counting
 * enabled for that pass only) per get and per put over 10,000 of each: a
 * build with assertions compares more (a build with perf_context compiled
 * out, NPERF_CONTEXT, counts nothing and shows "n/a"). It prints the path of the
 * librocksdb it runs on, so that the same binary can be run
 * against another build of the library (LD_LIBRARY_PATH) and the figures
 * compared.
 *
 * Not part of the test suite; build it by hand (see bench/README.md):
 *   make && cc -O2 -std=c11 -D_GNU_SOURCE -Icommon bench/state_bench.c \
 *      build/libsluice.a $(pkg-config --libs rocksdb) -lm -pthread -o build/state_bench
 *   ./build/state_bench [--raw | --layout] [keys]
 */
#include <dlfcn.h>
#include <errno.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "keygroup.h"
#include "state.h"

#define MAXP 128

static uint64_t rng = 88172645463325252ull;
static inline uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void key_of(uint64_t i, uint8_t k[8])
{
    for (int b = 0; b < 8; b++) k[b] = (uint8_t)(i >> (56 - 8 * b));
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "state_bench: %s: %s\n", what, err);
    exit(1);
}

/* A stopwatch over wall-clock and thread CPU time. */
typedef struct {
    int64_t wall, cpu;
} watch;

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static watch watch_start(void) { return (watch){sl_mono_ns(), cpu_ns()}; }

static watch watch_stop(watch w) { return (watch){sl_mono_ns() - w.wall, cpu_ns() - w.cpu}; }

/* "1.23 M/s (2.34)": n operations in w, per wall second (per CPU second) */
static const char *rate(char *buf, size_t cap, uint64_t n, watch w)
{
    snprintf(buf, cap, "%5.2f M/s (%5.2f)", n / (w.wall / 1e9) / 1e6, n / (w.cpu / 1e9) / 1e6);
    return buf;
}

/* n random read-modify-writes */
static watch rmw(sl_kstate *s, uint64_t nkeys, uint64_t n)
{
    char err[256];
    uint8_t k[8];
    watch w = watch_start();
    for (uint64_t j = 0; j < n; j++) {
        key_of(next_rand() % nkeys, k);
        sl_kstate_set_key(s, k, 8, sl_kg_of_key(k, 8, MAXP));
        const void *v;
        size_t vl;
        uint64_t c = 0;
        int rc = sl_kstate_get(s, 0, NULL, 0, &v, &vl, err, sizeof err);
        if (rc == SL_ERR) die("get", err);
        if (rc == SL_OK && vl == 8) memcpy(&c, v, 8);
        c++;
        if (sl_kstate_put(s, 0, NULL, 0, &c, 8, err, sizeof err) != SL_OK) die("put", err);
    }
    return watch_stop(w);
}

static int count_cb(void *ctx, const sl_kentry *e)
{
    (void)e;
    ++*(uint64_t *)ctx;
    return 0;
}

static void run(sl_backend_kind kind, const char *dir, uint64_t nkeys)
{
    char err[256];
    sl_kstate *s = sl_kstate_open(kind, dir, MAXP, 0, MAXP - 1, err, sizeof err);
    if (!s) die("open", err);
    sl_kstate_register(s, "count");
    uint8_t k[8];
    watch w = watch_start();
    for (uint64_t i = 0; i < nkeys; i++) {
        key_of(i, k);
        sl_kstate_set_key(s, k, 8, sl_kg_of_key(k, 8, MAXP));
        uint64_t c = 1;
        if (sl_kstate_put(s, 0, NULL, 0, &c, 8, err, sizeof err) != SL_OK) die("put", err);
    }
    watch t_ins = watch_stop(w);
    watch t_rmw = rmw(s, nkeys, nkeys);

    w = watch_start();
    sl_ksnap *snap = sl_kstate_snapshot(s, err, sizeof err);
    if (!snap) die("snapshot", err);
    watch t_snap = watch_stop(w);
    watch t_rmw_snap = rmw(s, nkeys, nkeys);
    uint64_t seen = 0;
    w = watch_start();
    for (int kg = 0; kg < MAXP; kg++)
        if (sl_ksnap_each(snap, kg, count_cb, &seen, err, sizeof err) != SL_OK) die("each", err);
    watch t_scan = watch_stop(w);
    if (seen != nkeys) {
        fprintf(stderr, "state_bench: snapshot has %llu entries, expected %llu\n",
                (unsigned long long)seen, (unsigned long long)nkeys);
        exit(1);
    }
    sl_ksnap_release(snap);
    watch t_rmw_after = rmw(s, nkeys, nkeys);

    char b[5][64];
    printf("%s, %llu keys: insert %s, get+put %s, snapshot %.3f ms, get+put while the snapshot "
           "lives %s, get+put after release %s, snapshot read %s\n",
           kind == SL_BACKEND_HASHMAP ? "hashmap" : "rocksdb", (unsigned long long)nkeys,
           rate(b[0], sizeof b[0], nkeys, t_ins), rate(b[1], sizeof b[1], nkeys, t_rmw),
           t_snap.wall / 1e6, rate(b[2], sizeof b[2], nkeys, t_rmw_snap),
           rate(b[3], sizeof b[3], nkeys, t_rmw_after), rate(b[4], sizeof b[4], nkeys, t_scan));
    fflush(stdout);
    sl_kstate_close(s);
}

static void rdb_check(const char *what, char *e)
{
    if (e) die(what, e);
}

/* n gets and n puts of random keys below nkeys, each get followed by the
 * put of its incremented counter; returns how many gets found their key */
static uint64_t raw_rmw(rocksdb_t *db, rocksdb_readoptions_t *ro, rocksdb_writeoptions_t *wo,
                        uint64_t nkeys, uint64_t n, int put)
{
    uint8_t k[8];
    uint64_t found = 0;
    char *e = NULL;
    for (uint64_t j = 0; j < n; j++) {
        key_of(next_rand() % nkeys, k);
        uint64_t c = 0;
        rocksdb_pinnableslice_t *ps = rocksdb_get_pinned(db, ro, (const char *)k, 8, &e);
        rdb_check("rocksdb_get_pinned", e);
        if (ps) {
            size_t vl;
            const char *v = rocksdb_pinnableslice_value(ps, &vl);
            if (vl == 8) memcpy(&c, v, 8);
            rocksdb_pinnableslice_destroy(ps);
            found++;
        }
        if (put) {
            c++;
            rocksdb_put(db, wo, (const char *)k, 8, (const char *)&c, 8, &e);
            rdb_check("rocksdb_put", e);
        }
    }
    return found;
}

/* The --raw mode: RocksDB's C API alone (see the top of the file). */
static void run_raw(const char *dir, uint64_t nkeys)
{
    Dl_info info;
    const char *lib = dladdr((void *)rocksdb_open, &info) && info.dli_fname ? info.dli_fname
                                                                             : "(unknown)";
    char *e = NULL;
    rocksdb_options_t *o = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(o, 1);
    rocksdb_t *db = rocksdb_open(o, dir, &e);
    rdb_check("rocksdb_open", e);
    rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_disable_WAL(wo, 1);
    rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
    uint8_t k[8];

    watch w = watch_start();
    for (uint64_t i = 0; i < nkeys; i++) {
        key_of(i, k);
        uint64_t c = 1;
        rocksdb_put(db, wo, (const char *)k, 8, (const char *)&c, 8, &e);
        rdb_check("rocksdb_put", e);
    }
    watch t_put = watch_stop(w);
    w = watch_start();
    uint64_t found = raw_rmw(db, ro, wo, nkeys, nkeys, 0);
    watch t_get = watch_stop(w);
    if (found != nkeys) {
        fprintf(stderr, "state_bench: %llu of %llu gets found their key\n",
                (unsigned long long)found, (unsigned long long)nkeys);
        exit(1);
    }
    w = watch_start();
    raw_rmw(db, ro, wo, nkeys, nkeys, 1);
    watch t_rmw = watch_stop(w);
    w = watch_start();
    rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
    for (uint64_t i = 0; i < nkeys; i++) {
        key_of(next_rand() % nkeys, k);
        uint64_t c = i;
        rocksdb_writebatch_put(wb, (const char *)k, 8, (const char *)&c, 8);
        if (rocksdb_writebatch_count(wb) == 1000 || i + 1 == nkeys) {
            rocksdb_write(db, wo, wb, &e);
            rdb_check("rocksdb_write", e);
            rocksdb_writebatch_clear(wb);
        }
    }
    watch t_batch = watch_stop(w);
    rocksdb_writebatch_destroy(wb);

    /* untimed: key comparisons per get and per put, as RocksDB counts them */
    enum { COUNTED = 10000 };
    rocksdb_perfcontext_t *pc = rocksdb_perfcontext_create();
    rocksdb_set_perf_level(rocksdb_enable_count);
    rocksdb_perfcontext_reset(pc);
    raw_rmw(db, ro, wo, nkeys, COUNTED, 0);
    uint64_t cmp_get = rocksdb_perfcontext_metric(pc, rocksdb_user_key_comparison_count);
    rocksdb_perfcontext_reset(pc);
    for (uint64_t i = 0; i < COUNTED; i++) {
        key_of(next_rand() % nkeys, k);
        uint64_t c = i;
        rocksdb_put(db, wo, (const char *)k, 8, (const char *)&c, 8, &e);
        rdb_check("rocksdb_put", e);
    }
    uint64_t cmp_put = rocksdb_perfcontext_metric(pc, rocksdb_user_key_comparison_count);
    rocksdb_set_perf_level(rocksdb_disable);
    rocksdb_perfcontext_destroy(pc);

    char b[4][64], cmps[96] = "n/a (no perf_context counters in this build)";
    if (cmp_get || cmp_put)
        snprintf(cmps, sizeof cmps, "%.1f per get, %.1f per put", (double)cmp_get / COUNTED,
                 (double)cmp_put / COUNTED);
    printf("raw rocksdb C API (%s), %llu keys: put %s %.2f us/op CPU, get %s %.2f us/op CPU, "
           "get+put %s, batched put %s; key comparisons %s\n",
           lib, (unsigned long long)nkeys, rate(b[0], sizeof b[0], nkeys, t_put),
           t_put.cpu / 1e3 / nkeys, rate(b[1], sizeof b[1], nkeys, t_get),
           t_get.cpu / 1e3 / nkeys, rate(b[2], sizeof b[2], nkeys, t_rmw),
           rate(b[3], sizeof b[3], nkeys, t_batch), cmps);
    fflush(stdout);
    rocksdb_readoptions_destroy(ro);
    rocksdb_writeoptions_destroy(wo);
    rocksdb_close(db);
    rocksdb_options_destroy(o);
}

/* Removes the database a run left in dir. */
static void remove_db(const char *dir)
{
    char *e = NULL;
    rocksdb_options_t *o = rocksdb_options_create();
    rocksdb_destroy_db(o, dir, &e);
    rocksdb_options_destroy(o);
    if (e) {
        fprintf(stderr, "state_bench: could not remove %s: %s\n", dir, e);
        rocksdb_free(e);
    }
    rmdir(dir);
}


/* ---- --layout: bytes per stored row ------------------------------------- */

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kib;
}

static int scan_nop(void *ctx, const void *ns, size_t nslen, const void *val, size_t vlen)
{
    (void)ns, (void)nslen, (void)val, (void)vlen;
    ++*(uint64_t *)ctx;
    return 0;
}

/* The stored rows of three operators, with the bytes those operators write
 * (core/vstate.h's map encoding: namespace [u32 0][map key]), on the
 * hashmap backend, N rows each in a fresh state:
 *   regular-join   workload 8: key 1+INT over N/2 values, two sides, map key
 *                  the row (18 bytes: INT, INT, TIMESTAMP(3)), value u32
 *                  count | u32 associations; both sides scanned per key
 *                  (the join's probe), so the key index exists;
 *   interval-join  workload 7: key 1+INT, map key the time (8 bytes), value
 *                  u8 matched | u32 length | row;
 *   window         a window's accumulator: key 1+INT over N/10 values,
 *                  namespace the window end (8 bytes), value COUNT + SUM.
 * Prints the RSS growth per entry (what peak RSS sees), each shape in a
 * child process of its own. */
static void run_layout(uint64_t n)
{
    static const char *const shapes[] = {"regular-join", "interval-join", "window"};
    for (int sh = 0; sh < 3; sh++) {
        /* each shape in a process of its own: freed memory is not returned to the system */
        pid_t pid = fork();
        if (pid < 0) die("fork", strerror(errno));
        if (pid > 0) {
            int wst;
            waitpid(pid, &wst, 0);
            continue;
        }
        char err[256];
        long before = rss_kib();
        sl_kstate *s = sl_kstate_open(SL_BACKEND_HASHMAP, NULL, MAXP, 0, MAXP - 1, err, sizeof err);
        if (!s) die("open", err);
        sl_kstate_register(s, "left");
        sl_kstate_register(s, "right");
        uint64_t nkeys = sh == 0 ? n / 2 : sh == 1 ? n / 2 : n / 10, seen = 0;
        if (nkeys == 0) nkeys = 1;
        watch w = watch_start();
        for (uint64_t i = 0; i < n; i++) {
            uint32_t id = (uint32_t)(next_rand() % nkeys);
            uint8_t key[5] = {1, (uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16),
                              (uint8_t)(id >> 24)};
            uint8_t ns[64] = {0}, val[64] = {0};
            size_t nsl, vl;
            int sid = (int)(i & 1);
            int64_t t = 1700000000000 + (int64_t)i;
            if (sh == 0) { /* [u32 0][kind|nulls|INT|INT|TIMESTAMP] -> count|assoc */
                memcpy(ns + 6, &id, 4);
                memcpy(ns + 10, &i, 4);
                memcpy(ns + 14, &t, 8);
                nsl = 4 + 18;
                val[0] = 1;
                vl = 8;
            } else if (sh == 1) { /* [u32 0][time] -> matched|len|row */
                for (int b = 0; b < 8; b++) ns[4 + b] = (uint8_t)((uint64_t)t >> (56 - 8 * b));
                nsl = 12;
                val[1] = 18;
                memcpy(val + 7, &id, 4);
                vl = 1 + 4 + 18;
            } else { /* window end -> COUNT, SUM */
                sid = 0;
                int64_t end = (t / 10000 + 1) * 10000;
                memcpy(ns, &end, 8);
                nsl = 8;
                const void *v;
                size_t l;
                sl_kstate_set_key(s, key, 5, sl_kg_of_key(key, 5, MAXP));
                int rc = sl_kstate_get(s, sid, ns, nsl, &v, &l, err, sizeof err);
                if (rc == SL_ERR) die("get", err);
                if (rc == SL_OK) memcpy(val, v, 16);
                ((int64_t *)(void *)val)[0]++;
                ((int64_t *)(void *)val)[1] += id;
                vl = 16;
            }
            sl_kstate_set_key(s, key, 5, sl_kg_of_key(key, 5, MAXP));
            if (sh == 0 && sl_kstate_scan_key(s, !sid, scan_nop, &seen, err, sizeof err) != SL_OK)
                die("scan", err);
            if (sl_kstate_put(s, sid, ns, nsl, val, vl, err, sizeof err) != SL_OK) die("put", err);
        }
        watch t = watch_stop(w);
        long after = rss_kib();
        uint64_t entries = sl_kstate_entries(s), bytes = sl_kstate_bytes(s);
        char b[64];
        printf("%-13s %llu rows, %llu entries: %.1f bytes of RSS per entry (%.1f of them key + "
               "namespace + value), %s\n",
               shapes[sh], (unsigned long long)n, (unsigned long long)entries,
               (after - before) * 1024.0 / (double)entries, (double)bytes / (double)entries,
               rate(b, sizeof b, n, t));
        fflush(stdout);
        sl_kstate_close(s);
        _exit(0);
    }
}

int main(int argc, char **argv)
{
    int raw = argc > 1 && strcmp(argv[1], "--raw") == 0;
    if (argc > 1 && strcmp(argv[1], "--layout") == 0) {
        run_layout(argc > 2 ? strtoull(argv[2], NULL, 10) : 2000000);
        return 0;
    }
    if (raw) {
        argc--;
        argv++;
    }
    uint64_t nkeys = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    if (nkeys == 0) {
        fprintf(stderr, "usage: state_bench [--raw] [keys]\n");
        return 2;
    }
    char root[] = "/tmp/sl-state-bench-XXXXXX", dir[64];
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(dir, sizeof dir, "%s/db", root);
    if (raw) {
        run_raw(dir, nkeys);
    } else {
        run(SL_BACKEND_HASHMAP, NULL, nkeys);
        run(SL_BACKEND_ROCKSDB, dir, nkeys);
    }
    remove_db(dir);
    rmdir(root);
    return 0;
}
