/*
 * stack_sample.c -- stacks of this process's threads (stack_sample.h).
 *
 * One sample of one thread: the sampling thread arms the buffer for that
 * thread's id (g_armed), sends it SAMPLER_SIGNAL with tgkill, and waits on
 * a semaphore. The handler, on the signalled thread, claims the armed
 * buffer with a compare-and-swap (only when it is the thread armed for, so
 * a signal that arrives after its sampler gave up writes nothing), records
 * backtrace() into it and posts the semaphore; backtrace, sem_post and
 * gettid are all async-signal-safe once backtrace has run once (at init).
 * A sampler that times out disarms with the same compare-and-swap; when
 * that fails the handler holds the buffer and will post, so it waits.
 * Samplings are one at a time (g_mu): there is one buffer.
 *
 * Names come as the samples do, once per distinct address, from libdw over
 * this process's mappings as they were when the sampling began
 * (dwfl_linux_proc_report): .symtab names the operators' static functions;
 * equal stacks merge at once, so memory follows the distinct stacks.
 * Return addresses are looked up one byte back, so a call that ends its
 * function is named by its caller.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>

#include "sl.h"
#include "stack_sample.h"

#define SAMPLER_SIGNAL (SIGRTMIN + 4)
#define SAMPLER_MAX_FRAMES 256
#define SAMPLER_WAIT_MS 200      /* a thread that has not answered by then is skipped */

static void *g_frames[SAMPLER_MAX_FRAMES];
static int g_nframes;
static _Atomic int g_armed;      /* the thread id the buffer is for; 0 none, -1 claimed */
static sem_t g_done;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_init_rc = SL_ERR;
static char g_init_err[200];

pid_t sl_stack_self(void)
{
    return (pid_t)syscall(SYS_gettid);
}

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    int want = (int)syscall(SYS_gettid);
    if (atomic_compare_exchange_strong(&g_armed, &want, -1)) {
        g_nframes = backtrace(g_frames, SAMPLER_MAX_FRAMES);
        sem_post(&g_done);
    }
    errno = saved;
}

static void init_once(void)
{
    void *warm[4];
    backtrace(warm, 4); /* loads libgcc's unwinder now, not in the handler */
    if (sem_init(&g_done, 0, 0) != 0) {
        snprintf(g_init_err, sizeof g_init_err, "sem_init: %s", strerror(errno));
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SAMPLER_SIGNAL, &sa, NULL) != 0) {
        snprintf(g_init_err, sizeof g_init_err, "sigaction: %s", strerror(errno));
        return;
    }
    g_init_rc = SL_OK;
}

int sl_stack_init(char *err, size_t errlen)
{
    pthread_once(&g_once, init_once);
    if (g_init_rc != SL_OK)
        return sl_seterr(err, errlen, "cannot install the stack sampler: %s", g_init_err);
    return SL_OK;
}

/* The scheduler state of thread tid ('R', 'S', 'D', ...), or 0 if it is gone. */
static char thread_state(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0) return 0;
    buf[r] = 0;
    char *p = strrchr(buf, ')'); /* the name may hold anything, ')' too */
    return p && p[1] == ' ' && p[2] ? p[2] : 0;
}

/* One stack of tid into frames (innermost first); its count, or -1. */
static int sample_one(pid_t tid, void **frames)
{
    atomic_store(&g_armed, (int)tid);
    if (syscall(SYS_tgkill, (int)getpid(), (int)tid, SAMPLER_SIGNAL) != 0) {
        atomic_store(&g_armed, 0); /* no signal went: nobody claims it */
        return -1;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += SAMPLER_WAIT_MS * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    int rc;
    while ((rc = sem_timedwait(&g_done, &until)) != 0 && errno == EINTR) {}
    if (rc != 0) {
        int want = (int)tid;
        if (atomic_compare_exchange_strong(&g_armed, &want, 0)) return -1;
        while (sem_wait(&g_done) != 0 && errno == EINTR) {} /* the handler is writing */
    }
    int n = g_nframes;
    memcpy(frames, g_frames, (size_t)n * sizeof *frames);
    atomic_store(&g_armed, 0);
    return n;
}

static int no_debuginfo(Dwfl_Module *m, void **u, const char *mod, Dwarf_Addr base,
                        const char *file, const char *debuglink, GElf_Word crc, char **path)
{
    (void)m, (void)u, (void)mod, (void)base, (void)file, (void)debuglink, (void)crc, (void)path;
    return -1; /* .symtab is enough: no separate debug files, no debuginfod */
}

struct sl_stack_names {
    Dwfl *d;                    /* this process's modules, or NULL: unnamed */
    json_t *names;              /* "<address>/<back>" -> name */
};

sl_stack_names *sl_stack_names_new(char *err, size_t errlen)
{
    static const Dwfl_Callbacks cb = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = no_debuginfo,
    };
    if (sl_stack_init(err, errlen) != SL_OK) return NULL;
    sl_stack_names *nm = sl_calloc(1, sizeof *nm);
    nm->d = dwfl_begin(&cb);
    if (nm->d) {
        dwfl_report_begin(nm->d);
        if (dwfl_linux_proc_report(nm->d, getpid()) != 0 || dwfl_report_end(nm->d, NULL, NULL) != 0) {
            dwfl_end(nm->d);
            nm->d = NULL; /* addresses stay unnamed */
        }
    }
    nm->names = json_object();
    return nm;
}

void sl_stack_names_destroy(sl_stack_names *nm)
{
    if (!nm) return;
    json_decref(nm->names);
    if (nm->d) dwfl_end(nm->d);
    free(nm);
}

/* The name of address a (looked up at a - back), cached in nm. */
static const char *addr_name(sl_stack_names *nm, void *a, int back)
{
    char key[40];
    snprintf(key, sizeof key, "%p/%d", a, back);
    json_t *hit = json_object_get(nm->names, key);
    if (hit) return json_string_value(hit);
    Dwarf_Addr at = (Dwarf_Addr)(uintptr_t)a - (Dwarf_Addr)back;
    Dwfl_Module *m = nm->d ? dwfl_addrmodule(nm->d, at) : NULL;
    const char *fn = m ? dwfl_module_addrname(m, at) : NULL;
    char buf[300];
    if (fn) {
        /* gcc's clones (f.isra.0, f.constprop.0, f.part.0, f.cold) are f */
        snprintf(buf, sizeof buf, "%.*s", (int)strcspn(fn, "."), fn);
    } else {
        Dwarf_Addr start = 0;
        const char *mod = m ? dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL) : NULL;
        const char *base = mod ? strrchr(mod, '/') : NULL;
        snprintf(buf, sizeof buf, "[%s+0x%llx]", base ? base + 1 : mod ? mod : "unknown",
                 (unsigned long long)(at - start));
    }
    json_object_set_new(nm->names, key, json_string(buf));
    return json_string_value(json_object_get(nm->names, key));
}

/* The frames of one stack (n addresses from backtrace() in the handler),
 * named into out[0..depth) innermost first; their number. */
static int name_frames(sl_stack_names *nm, void *const *addr, int n, const char **out, int depth)
{
    /* the handler's own frame, then the signal trampoline (libc's
     * __restore_rt, unnamed in a stripped libc), then where it was */
    int first = 2;
    for (int k = 0; k < n; k++)
        if (!strcmp(addr_name(nm, addr[k], 1), "on_signal")) {
            first = k + 2;
            break;
        }
    int nf = 0;
    for (int k = first; k < n && nf < depth; k++)
        out[nf++] = addr_name(nm, addr[k], k > first); /* the first is where it was */
    return nf;
}

/* The samples of one sampling, named and merged as they come, so that
 * memory grows with the distinct stacks, not with the samples. */
typedef struct {
    sl_stack_names *nm;
    json_t *by_key;             /* "<state>\n<frame>\n..." -> its entry in samples */
    json_t *samples;            /* stack_sample.h's "samples" */
    const char **fr;            /* SAMPLER_MAX_FRAMES names of the sample at hand */
    int depth;
} merge;

/* One stack (n addresses from backtrace() in the handler) in state st. */
static void merge_add(merge *m, char st, void *const *addr, int n)
{
    int nf = name_frames(m->nm, addr, n, m->fr, m->depth);
    if (!nf) return;
    size_t len = 4;
    for (int k = 0; k < nf; k++) len += strlen(m->fr[k]) + 1;
    char *key = sl_malloc(len), *p = key;
    *p++ = st;
    for (int k = nf - 1; k >= 0; k--) { /* outermost first */
        *p++ = '\n';
        size_t l = strlen(m->fr[k]);
        memcpy(p, m->fr[k], l);
        p += l;
    }
    *p = 0;
    json_t *e = json_object_get(m->by_key, key);
    if (e) {
        json_object_set_new(e, "count", json_integer(json_integer_value(json_object_get(e, "count")) + 1));
    } else {
        json_t *frames = json_array();
        for (int k = nf - 1; k >= 0; k--) json_array_append_new(frames, json_string(m->fr[k]));
        char sts[2] = {st, 0};
        e = json_pack("{s:s,s:i,s:o}", "state", sts, "count", 1, "frames", frames);
        json_object_set(m->by_key, key, e);
        json_array_append_new(m->samples, e);
    }
    free(key);
}

/* stack_sample.h's answer (caller owns); m is freed. */
static json_t *merge_close(merge *m, int nthreads)
{
    free(m->fr);
    json_decref(m->by_key);
    sl_stack_names_destroy(m->nm);
    return json_pack("{s:i,s:o}", "threads", nthreads, "samples", m->samples);
}

json_t *sl_stack_sample(const pid_t *tids, int n, int num, int64_t delay_ms, int depth,
                        const int *cancel, char *err, size_t errlen)
{
    if (sl_stack_init(err, errlen) != SL_OK) return NULL;
    if (n < 0 || num < 1 || delay_ms < 0 || depth < 1) {
        sl_seterr(err, errlen, "bad sampling request: %d threads, %d samples, %lld ms apart, depth %d",
                  n, num, (long long)delay_ms, depth);
        return NULL;
    }
    if (depth > SAMPLER_MAX_FRAMES) depth = SAMPLER_MAX_FRAMES;
    void **frames = sl_malloc(SAMPLER_MAX_FRAMES * sizeof *frames);
    pid_t self = sl_stack_self();
    merge m = {.nm = sl_stack_names_new(err, errlen), .by_key = json_object(), .samples = json_array(),
               .fr = sl_malloc(SAMPLER_MAX_FRAMES * sizeof *m.fr), .depth = depth};
    pthread_mutex_lock(&g_mu);
    for (int round = 0; round < num; round++) {
        if (cancel && __atomic_load_n(cancel, __ATOMIC_ACQUIRE)) break;
        if (round) {
            struct timespec ts = {(time_t)(delay_ms / 1000), (long)(delay_ms % 1000) * 1000000L};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
        }
        for (int i = 0; i < n; i++) {
            if (tids[i] <= 0 || tids[i] == self) continue;
            char st = thread_state(tids[i]); /* before the signal wakes it */
            if (!st) continue;
            int nf = sample_one(tids[i], frames);
            if (nf > 0) merge_add(&m, st, frames, nf);
        }
    }
    pthread_mutex_unlock(&g_mu);
    free(frames);
    return merge_close(&m, n);
}

/* Whether thread tid blocks SAMPLER_SIGNAL (its SigBlk mask in
 * /proc/self/task/<tid>/status): it would never answer. */
static int blocks_signal(pid_t tid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    unsigned long long mask = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = sscanf(line, "SigBlk: %llx", &mask) == 1;
    fclose(f);
    return found && (mask >> (SAMPLER_SIGNAL - 1)) & 1;
}

int sl_stack_of(sl_stack_names *nm, pid_t tid, const char **frames, int max, char *err,
                size_t errlen)
{
    if (!thread_state(tid)) return sl_seterr(err, errlen, "the thread has ended");
    if (blocks_signal(tid)) return sl_seterr(err, errlen, "the thread blocks signals");
    if (max > SAMPLER_MAX_FRAMES) max = SAMPLER_MAX_FRAMES;
    void **addr = sl_malloc(SAMPLER_MAX_FRAMES * sizeof *addr);
    pthread_mutex_lock(&g_mu);
    int n = sample_one(tid, addr);
    pthread_mutex_unlock(&g_mu);
    int nf = n > 0 ? name_frames(nm, addr, n, frames, max) : -1;
    free(addr);
    if (nf < 0) return sl_seterr(err, errlen, "the thread did not answer within %d ms", SAMPLER_WAIT_MS);
    return nf;
}
