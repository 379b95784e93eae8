/*
 * jars.c -- Flink's jar API for C jobs (shared objects): POST /jars/upload,
 * GET /jars, POST /jars/:id/run, GET|POST /jars/:id/plan, DELETE /jars/:id.
 *
 * rest.c hands a /jars path here (jm_jars_path) once the one REST gate
 * (jm_rest_admit: Host, Origin, Content-Type, rest.auth-token; a plan
 * counts as mutating, for it runs the job's code) has let it in on its
 * headers; these handlers then own the request: an upload is fed through
 * libmicrohttpd's post processor into a file as it arrives, never held in
 * memory, and stops counting at web.upload.max-size. A refused upload is
 * never written anywhere.
 *
 * Storage: web.upload.dir (made 0700) holds one file per upload named by
 * its id, "<32 hex>_<name>", where name is the client's file name reduced
 * to its last path component and to [A-Za-z0-9._-] -- the client never
 * chooses a path (a name with "../", a NUL or 300 characters is just a
 * name). Files already in the directory at start-up are listed again.
 * When web.upload.dir is not set, the directory is the JobManager's own,
 * <tmp>/sluice-web-upload-<pid>: removed on a clean exit, and those of
 * dead JobManagers (killed, crashed) are swept at the next start.
 *
 * Running user code: the JobManager never loads an uploaded object. To
 * build a graph (run, plan) it starts itself as a child process
 * (`sluice-jobmanager --build-c-job`, posix_spawn), which loads the object,
 * runs the entry point and prints the job graph; a crash, an exit or a
 * hang (web.submit.build.timeout) of the child is an error naming the signal
 * or the timeout, and the JobManager carries on. The child has the least it
 * needs: no descriptor but its stdin (/dev/null) and its two pipes, a CPU
 * time limit (web.submit.build.cpu-time) and an address-space limit
 * (web.submit.build.memory), no core file, and it dies with its parent. It
 * still runs as the JobManager's user, with its file system and network:
 * uploading a C job means running its code on the JobManager's host, as
 * Flink runs a jar's main() there (docs/SECURITY.md). The graph names the
 * object as "library": "jar:<id>"; the job keeps the object's bytes and
 * every deployment ships them to the TaskManagers (DeployJob.libraries),
 * which need not share a file system with the JobManager.
 *
 * Threads: everything runs on REST threads except jm_jars_on_loop (the
 * loop registers the job). The list of uploads has its own mutex.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <microhttpd.h>
#include "http_reply.h"
#include <jansson.h>

#include "jm.h"
#include "log.h"
#include "datastream.h"
#include "snapshot.h"
#include "userfn.h"

#define TAG "jm:jars"
#define SL_JAR_MAX_GRAPH (8u << 20) /* the child's output at most */
#define SL_JAR_MAX_BODY (64u << 10) /* a run / plan request body at most */
#define SL_JAR_MAX_UPLOAD (15u << 20) /* must fit one control frame to the TaskManagers */
#define SL_JAR_TMP "/tmp"              /* without web.upload.dir: SL_JAR_TMP/SL_JAR_OWN<pid> */
#define SL_JAR_OWN "sluice-web-upload-"
/* AddressSanitizer's shadow memory needs terabytes of address space: a
 * sanitizer build cannot limit it (RLIMIT_AS) */
#if defined(__SANITIZE_ADDRESS__)
#define SL_JAR_LIMIT_AS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SL_JAR_LIMIT_AS 0
#endif
#endif
#ifndef SL_JAR_LIMIT_AS
#define SL_JAR_LIMIT_AS 1
#endif
#define SIGNAL_OPTS "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0"


typedef struct jar {
    char id[160];               /* "<32 hex>_<name>": also the file name */
    char name[120];             /* the sanitized client file name */
    int64_t uploaded;           /* wall ms */
    struct jar *next;
} jar;

typedef struct jar_conn jar_conn;

struct jm_jars {
    pthread_mutex_t mu;
    char *dir;
    int enabled;
    size_t max_size;
    int own_dir;                /* dir is our <tmp>/sluice-web-upload-<pid>: removed at exit */
    int64_t cpu_s;              /* the build child's RLIMIT_CPU, seconds */
    int64_t wall_s;             /* ... and its wall time, seconds */
    int64_t mem;                /* its RLIMIT_AS, bytes */
    jar *list;                  /* newest first */
};

/* One request to a /jars path. */
struct jar_conn {
    struct jm_jars *js;
    struct MHD_PostProcessor *pp;
    int upload;                 /* POST /jars/upload */
    int fd;                     /* the file being written, -1 none */
    char tmp[4200];             /* its path */
    char name[120];
    int nfiles;
    size_t size;
    int too_big, bad;           /* bad: the post processor refused the body */
    char *body;                 /* other requests: the body (bounded) */
    size_t len;
};

/* ---- names ------------------------------------------------------------------ */

/* The client's file name as ours: the last component, safe characters
 * only, no leading dots, at most 100 characters ending as it did. */
static void sanitize(const char *filename, char *out, size_t cap)
{
    const char *base = filename;
    for (const char *p = filename; *p; p++)
        if (*p == '/' || *p == '\\') base = p + 1;
    while (*base == '.') base++;
    size_t n = strlen(base), keep = n > 100 ? 100 : n, o = 0;
    const char *from = base + (n - keep); /* the end holds the extension */
    for (size_t i = 0; i < keep && o + 1 < cap; i++) {
        char c = from[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                 c == '_' || c == '-';
        out[o++] = ok ? c : '_';
    }
    out[o] = 0;
}

static int id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n <= 33 || n >= sizeof ((jar *)0)->id || id[32] != '_') return 0;
    char ref[300];
    snprintf(ref, sizeof ref, "jar:%.200s", id);
    return sl_ds_jar_ref_ok(ref);
}

static jar *find_locked(struct jm_jars *js, const char *id)
{
    for (jar *x = js->list; x; x = x->next)
        if (!strcmp(x->id, id)) return x;
    return NULL;
}

/* ---- start and stop ----------------------------------------------------------- */

/* Remove a directory of ours and what it holds: the files directly in it
 * (nothing here makes subdirectories; a link is removed, never followed).
 * Returns SL_OK when the directory is gone. */
static int remove_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return errno == ENOENT ? SL_OK : SL_ERR;
    }
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (unlinkat(fd, e->d_name, 0) != 0 && errno != ENOENT)
            sl_warn(TAG, "cannot remove %s/%s: %s", dir, e->d_name, strerror(errno));
    }
    closedir(d);
    if (rmdir(dir) == 0 || errno == ENOENT) return SL_OK;
    sl_warn(TAG, "cannot remove %s: %s", dir, strerror(errno));
    return SL_ERR;
}

/* The upload directories that JobManagers of this user no longer running
 * (killed, crashed) left behind: removed. A name whose pid is alive, or a
 * directory of another user, stays. */
static void sweep_stale_dirs(void)
{
    size_t plen = strlen(SL_JAR_OWN);
    DIR *d = opendir(SL_JAR_TMP);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (strncmp(e->d_name, SL_JAR_OWN, plen)) continue;
        int64_t pid = 0;
        struct stat st;
        if (sl_parse_int(e->d_name + plen, &pid) != SL_OK || pid <= 0 || pid > INT32_MAX ||
            pid == (int64_t)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to know) */
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        char path[512];
        snprintf(path, sizeof path, SL_JAR_TMP "/%s", e->d_name);
        if (remove_dir(path) == SL_OK)
            sl_info(TAG, "removed %s, left by JobManager %lld (no longer running)", path, (long long)pid);
    }
    closedir(d);
}

int jm_jars_start(jm *j, char *err, size_t errlen)
{
    struct jm_jars *js = sl_calloc(1, sizeof *js);
    j->jars = js;
    pthread_mutex_init(&js->mu, NULL);
    js->enabled = sl_config_bool(j->conf, "web.submit.enable");
    int64_t max = sl_config_int(j->conf, "web.upload.max-size");
    if (max < 1 || max > (int64_t)SL_JAR_MAX_UPLOAD)
        return sl_seterr(err, errlen, "web.upload.max-size: %lld bytes is not 1 byte to 15 mb (a C job "
                         "travels to the TaskManagers in one control message)", (long long)max);
    js->max_size = (size_t)max;
    js->cpu_s = (sl_config_int(j->conf, "web.submit.build.cpu-time") + 999) / 1000;
    js->wall_s = (sl_config_int(j->conf, "web.submit.build.timeout") + 999) / 1000;
    js->mem = sl_config_int(j->conf, "web.submit.build.memory");
    if (js->mem < 0)
        return sl_seterr(err, errlen, "web.submit.build.memory: %lld bytes is negative", (long long)js->mem);
    sweep_stale_dirs();
    const char *dir = sl_config_str(j->conf, "web.upload.dir");
    js->dir = *dir ? sl_strdup(dir) : sl_sprintf(SL_JAR_TMP "/" SL_JAR_OWN "%d", (int)getpid());
    if (!js->enabled) return SL_OK;
    if (sl_mkdirs(js->dir, err, errlen) != SL_OK) return SL_ERR;
    js->own_dir = !*dir;
    chmod(js->dir, 0700);
    DIR *d = opendir(js->dir);
    if (!d) return sl_seterr(err, errlen, "web.upload.dir %s: %s", js->dir, strerror(errno));
    for (struct dirent *e; (e = readdir(d));) {
        if (!id_ok(e->d_name)) continue;
        struct stat st;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", js->dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        jar *x = sl_calloc(1, sizeof *x);
        snprintf(x->id, sizeof x->id, "%.150s", e->d_name); /* id_ok: shorter than that */
        snprintf(x->name, sizeof x->name, "%.110s", e->d_name + 33);
        x->uploaded = (int64_t)st.st_mtime * 1000;
        x->next = js->list;
        js->list = x;
    }
    closedir(d);
    return SL_OK;
}

void jm_jars_stop(jm *j)
{
    struct jm_jars *js = j->jars;
    if (!js) return;
    /* a job's deployments hold their own copy of its object (and HA
     * storage another), so the uploads may go with the process */
    if (js->own_dir) remove_dir(js->dir);
    for (jar *x = js->list; x;) {
        jar *next = x->next;
        free(x);
        x = next;
    }
    pthread_mutex_destroy(&js->mu);
    free(js->dir);
    free(js);
    j->jars = NULL;
}

int jm_jars_path(const char *url)
{
    if (!strncmp(url, "/v1/", 4)) url += 3;
    return !strncmp(url, "/jars", 5) && (url[5] == 0 || url[5] == '/');
}

/* ---- answers ------------------------------------------------------------------ */

static MHD_RESULT send_json(struct MHD_Connection *conn, int status, json_t *body)
{
    sl_reply r = {status, body};
    return sl_reply_send(conn, &r);
}

static MHD_RESULT send_err(struct MHD_Connection *conn, int status, const char *fmt, ...) SL_PRINTF(3, 4);
static MHD_RESULT send_err(struct MHD_Connection *conn, int status, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sl_info(TAG, "-> %d: %s", status, msg);
    return send_json(conn, status, json_pack("{s:[s]}", "errors", msg));
}

/* ---- upload -------------------------------------------------------------------- */

static MHD_RESULT on_file(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                          const char *content_type, const char *transfer_encoding, const char *data,
                          uint64_t off, size_t size)
{
    jar_conn *c = cls;
    struct jm_jars *js = c->js;
    (void)kind;
    (void)key;
    (void)content_type;
    (void)transfer_encoding;
    (void)off;
    if (!filename) return MHD_YES; /* a plain form field */
    if (c->fd < 0 && !c->name[0] && c->nfiles == 0) {
        c->nfiles = 1;
        sanitize(filename, c->name, sizeof c->name);
        char hex[33];
        sl_random_hex(hex, 32);
        snprintf(c->tmp, sizeof c->tmp, "%s/.upload-%s", js->dir, hex);
        c->fd = open(c->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (c->fd < 0) {
            sl_warn(TAG, "cannot write %s: %s", c->tmp, strerror(errno));
            c->bad = 1;
            return MHD_NO;
        }
    } else if (off == 0) {
        c->nfiles++; /* another file: counted, refused at the end */
    }
    if (c->too_big || c->nfiles > 1) return MHD_YES;
    if (c->size + size > js->max_size) {
        c->too_big = 1; /* the rest is read and dropped */
        return MHD_YES;
    }
    size_t at = 0;
    while (at < size) {
        ssize_t w = write(c->fd, data + at, size - at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            c->bad = 1;
            return MHD_NO;
        }
        at += (size_t)w;
    }
    c->size += size;
    return MHD_YES;
}

static void drop_tmp(jar_conn *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
    if (c->tmp[0]) unlink(c->tmp);
    c->tmp[0] = 0;
}

/* The body has arrived: keep the file under its id, or say why not. */
static MHD_RESULT finish_upload(jm *j, struct MHD_Connection *conn, jar_conn *c)
{
    struct jm_jars *js = j->jars;
    if (c->bad) {
        drop_tmp(c);
        return send_err(conn, 400, "the upload could not be read (a multipart/form-data body with one file is expected)");
    }
    if (c->too_big) {
        drop_tmp(c);
        return send_err(conn, 413, "the file is larger than web.upload.max-size (%zu bytes)", js->max_size);
    }
    if (c->nfiles != 1 || c->fd < 0) {
        drop_tmp(c);
        return send_err(conn, 400, "Exactly 1 file must be sent, received %d.", c->nfiles);
    }
    size_t nl = strlen(c->name);
    if (nl < 4 || strcmp(c->name + nl - 3, ".so")) {
        drop_tmp(c);
        return send_err(conn, 400, "Only shared objects (.so) are allowed.");
    }
    unsigned char magic[4] = {0};
    if (pread(c->fd, magic, 4, 0) != 4 || memcmp(magic, "\177ELF", 4)) {
        drop_tmp(c);
        return send_err(conn, 400, "%s is not a shared object (no ELF header)", c->name);
    }
    if (close(c->fd) != 0) {
        c->fd = -1;
        drop_tmp(c);
        return send_err(conn, 500, "cannot store the upload: %s", strerror(errno));
    }
    c->fd = -1;
    jar *x = sl_calloc(1, sizeof *x);
    char hex[33];
    sl_random_hex(hex, 32);
    snprintf(x->id, sizeof x->id, "%s_%s", hex, c->name);
    snprintf(x->name, sizeof x->name, "%s", c->name);
    x->uploaded = sl_now_ms();
    char *path = sl_sprintf("%s/%s", js->dir, x->id);
    if (rename(c->tmp, path) != 0) {
        int e = errno;
        free(x);
        free(path);
        drop_tmp(c);
        return send_err(conn, 500, "cannot store the upload: %s", strerror(e));
    }
    c->tmp[0] = 0;
    pthread_mutex_lock(&js->mu);
    x->next = js->list;
    js->list = x;
    pthread_mutex_unlock(&js->mu);
    sl_info(TAG, "uploaded %s (%zu bytes)", x->id, c->size);
    MHD_RESULT r = send_json(conn, 200, json_pack("{s:s,s:s}", "filename", path, "status", "success"));
    free(path);
    return r;
}

/* ---- the child that builds a graph ------------------------------------------------- */

/* The child's descriptors beyond 0, 1 and 2 (whatever the JobManager had
 * open without O_CLOEXEC): closed before any user code is loaded. */
static void close_inherited(void)
{
    if (close_range(3, ~0u, 0) == 0) return;
    DIR *d = opendir("/proc/self/fd"); /* a kernel before 5.9 */
    if (!d) return;
    int keep = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        int64_t fd;
        if (sl_parse_int(e->d_name, &fd) == SL_OK && fd > 2 && fd != keep) close((int)fd);
    }
    closedir(d);
}

/* The child's limits, set on itself before it loads the object (it is our
 * own code until then): CPU seconds (0 none), address space in bytes (0
 * none), no core file; and it dies with the JobManager. */
static int limit_self(int64_t cpu_s, int64_t mem)
{
    struct rlimit no_core = {0, 0};
    if (setrlimit(RLIMIT_CORE, &no_core) != 0) return SL_ERR;
    if (cpu_s > 0) {
        /* SIGXCPU at the soft limit, SIGKILL a second later */
        struct rlimit cpu = {(rlim_t)cpu_s, (rlim_t)cpu_s + 1};
        if (setrlimit(RLIMIT_CPU, &cpu) != 0) return SL_ERR;
    }
    if (mem > 0 && SL_JAR_LIMIT_AS) {
        struct rlimit as = {(rlim_t)mem, (rlim_t)mem};
        if (setrlimit(RLIMIT_AS, &as) != 0) return SL_ERR;
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return SL_ERR;
    return SL_OK;
}

int jm_jars_child(int argc, char **argv)
{
    /* argv: [--cpu-s N] [--mem BYTES] object path, entry symbol, library
     * reference, shown name, program args... */
    close_inherited();
    int64_t cpu_s = 0, mem = 0;
    while (argc >= 2 && (!strcmp(argv[0], "--cpu-s") || !strcmp(argv[0], "--mem"))) {
        int64_t *v = !strcmp(argv[0], "--cpu-s") ? &cpu_s : &mem;
        if (sl_parse_int(argv[1], v) != SL_OK || *v < 0) {
            fprintf(stderr, "--build-c-job: %s needs a number, not '%s'\n", argv[0], argv[1]);
            return 2;
        }
        argc -= 2;
        argv += 2;
    }
    if (argc < 4) {
        fprintf(stderr, "--build-c-job needs [--cpu-s N] [--mem BYTES] PATH ENTRY LIBRARY NAME [ARGS...]\n");
        return 2;
    }
    if (limit_self(cpu_s, mem) != SL_OK) {
        fprintf(stderr, "cannot limit the process that runs the job's entry point: %s", strerror(errno));
        return 1;
    }
    char err[1024];
    char *text = sl_ds_build(argv[0], argv[1], argv[2], argv[3], argc - 4, argv + 4, err, sizeof err);
    if (!text) {
        fprintf(stderr, "%s", err);
        return 1;
    }
    fputs(text, stdout);
    free(text);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* Read fd into *buf (grown, at most max bytes) until EOF; 0 more left. */
static int drain(int fd, char **buf, size_t *len, size_t max)
{
    char tmp[16384];
    ssize_t n = read(fd, tmp, sizeof tmp);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 1;
    if (n <= 0) return 0;
    if (*len + (size_t)n <= max) {
        *buf = sl_realloc(*buf, *len + (size_t)n + 1);
        memcpy(*buf + *len, tmp, (size_t)n);
        *len += (size_t)n;
        (*buf)[*len] = 0;
    }
    return 1;
}

/* Run the entry point of upload x in a child; the graph text (caller
 * frees) or NULL with err. */
static char *build_in_child(jm *j, const jar *x, const char *entry, json_t *args, char *err, size_t errlen)
{
    struct jm_jars *js = j->jars;
    char exe[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        sl_seterr(err, errlen, "cannot find the JobManager's own binary: %s", strerror(errno));
        return NULL;
    }
    exe[n] = 0;
    size_t nargs = json_array_size(args);
    char **argv = sl_calloc(nargs + 12, sizeof(char *));
    char *path = sl_sprintf("%s/%s", js->dir, x->id), *ref = sl_sprintf("jar:%s", x->id);
    char cpu[24], mem[24];
    snprintf(cpu, sizeof cpu, "%lld", (long long)js->cpu_s);
    snprintf(mem, sizeof mem, "%lld", (long long)js->mem);
    int a = 0;
    argv[a++] = "sluice-jobmanager";
    argv[a++] = "--build-c-job";
    argv[a++] = "--cpu-s";
    argv[a++] = cpu;
    argv[a++] = "--mem";
    argv[a++] = mem;
    argv[a++] = path;
    argv[a++] = (char *)(entry && *entry ? entry : SL_DS_JOB_MAIN);
    argv[a++] = ref;
    argv[a++] = (char *)x->name;
    for (size_t i = 0; i < nargs; i++) argv[a++] = (char *)json_string_value(json_array_get(args, i));
    argv[a] = NULL;
    int out[2] = {-1, -1}, errp[2] = {-1, -1};
    char *text = NULL, *etext = NULL;
    size_t tlen = 0, elen = 0;
    pid_t pid = -1;
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
        sl_seterr(err, errlen, "cannot start the job's entry point: %s", strerror(errno));
        goto done;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    /* nothing else of ours reaches the new image, O_CLOEXEC or not (the
     * child closes them again itself where this is missing) */
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
#endif
    /* the environment as ours; in a sanitizer build a crash of the user's
     * code must still end the child by its signal, not by a report */
    extern char **environ;
    size_t ne = 0;
    while (environ[ne]) ne++;
    char **envp = sl_calloc(ne + 2, sizeof(char *));
    char *asan = NULL;
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        if (!strncmp(environ[i], "ASAN_OPTIONS=", 13)) asan = sl_sprintf("%s:%s", environ[i], SIGNAL_OPTS);
        else envp[k++] = environ[i];
    }
    if (!asan) asan = sl_sprintf("ASAN_OPTIONS=%s", SIGNAL_OPTS);
    envp[k++] = asan;
    int e = posix_spawn(&pid, exe, &fa, NULL, argv, envp);
    free(asan);
    free(envp);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    close(errp[1]);
    out[1] = errp[1] = -1;
    if (e != 0) {
        sl_seterr(err, errlen, "cannot start the job's entry point: %s", strerror(e));
        pid = -1;
        goto done;
    }
    int64_t deadline = sl_mono_ms() + js->wall_s * 1000;
    int open_out = 1, open_err = 1, timed_out = 0;
    while (open_out || open_err) {
        int64_t left = deadline - sl_mono_ms();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pf[2] = {{.fd = open_out ? out[0] : -1, .events = POLLIN},
                               {.fd = open_err ? errp[0] : -1, .events = POLLIN}};
        if (poll(pf, 2, (int)SL_MIN(left, 1000)) < 0 && errno != EINTR) break;
        if (pf[0].revents && !drain(out[0], &text, &tlen, SL_JAR_MAX_GRAPH)) open_out = 0;
        if (pf[1].revents && !drain(errp[0], &etext, &elen, 4096)) open_err = 0;
    }
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    pid = -1;
    if (timed_out) {
        sl_seterr(err, errlen, "the entry point of %s did not return within %lld s "
                  "(web.submit.build.timeout; the process was killed)", x->name, (long long)js->wall_s);
    } else if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL)) {
        /* nobody else kills it: its CPU time ran out (SIGKILL at the hard limit) */
        sl_seterr(err, errlen, "the entry point of %s used more than %lld s of CPU time "
                  "(web.submit.build.cpu-time; the process was killed)", x->name, (long long)js->cpu_s);
    } else if (WIFSIGNALED(status)) {
        sl_seterr(err, errlen, "the entry point of %s crashed: signal %d (%s)", x->name, WTERMSIG(status),
                  strsignal(WTERMSIG(status)));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        sl_seterr(err, errlen, "%s", etext && *etext ? etext : "the job's entry point failed");
    } else if (!text || tlen >= SL_JAR_MAX_GRAPH) {
        sl_seterr(err, errlen, "the entry point of %s printed no job graph (or one over %u bytes)", x->name,
                  SL_JAR_MAX_GRAPH);
    } else {
        free(etext);
        etext = NULL;
        goto done_ok;
    }
    free(text);
    text = NULL;
done_ok:
done:
    if (pid > 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    for (int i = 0; i < 2; i++) {
        if (out[i] >= 0) close(out[i]);
        if (errp[i] >= 0) close(errp[i]);
    }
    free(etext);
    free(path);
    free(ref);
    free(argv);
    return text;
}

/* ---- run and plan ------------------------------------------------------------------- */

/* What POST /jars/:id/run hands the loop. */
typedef struct jar_run {
    sl_jobgraph *g;
    char *restore_dir;
    uint64_t restore_cpid;
    int restore_is_savepoint;
    Sluice__UserLibrary *lib;
    char jobid[33];
    char err[700];              /* when the job was refused (jobid empty) */
} jar_run;

void jm_jars_on_loop(jm *j, void *ctx)
{
    jar_run *run = ctx;
    /* as POST /jobs, plus the object the deployments ship */
    jm_job *job = jm_job_admit(j, run->g, run->restore_dir, run->restore_cpid,
                               run->restore_is_savepoint, run->lib, run->err, sizeof run->err);
    run->g = NULL;
    run->restore_dir = NULL;
    run->lib = NULL;
    if (job) snprintf(run->jobid, sizeof run->jobid, "%s", job->id);
}

/* A request parameter: the query argument, else the JSON body's field. */
static const char *param(struct MHD_Connection *conn, json_t *body, const char *key)
{
    const char *q = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
    if (q) return q;
    json_t *v = json_object_get(body, key);
    if (json_is_string(v)) return json_string_value(v);
    static __thread char num[32];
    if (json_is_integer(v)) {
        snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
        return num;
    }
    if (json_is_boolean(v)) return json_is_true(v) ? "true" : "false";
    return NULL;
}

/* Flink's programArgsList (an array), else programArg split at spaces. */
static json_t *program_args(struct MHD_Connection *conn, json_t *body)
{
    json_t *list = json_object_get(body, "programArgsList");
    if (json_is_array(list)) {
        json_t *out = json_array(), *v;
        size_t i;
        json_array_foreach(list, i, v) if (json_is_string(v)) json_array_append(out, v);
        return out;
    }
    json_t *out = json_array();
    const char *s = param(conn, body, "programArg");
    if (!s) s = param(conn, body, "program-args");
    char *copy = sl_strdup(s ? s : ""), *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
        json_array_append_new(out, json_string(t));
    free(copy);
    return out;
}

int jm_jars_read_object(const char *path, Sluice__UserLibrary *lib, const char *id, char *err,
                        size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) close(fd);
        return sl_seterr(err, errlen, "cannot read %s: %s", path, strerror(errno));
    }
    sluice__user_library__init(lib);
    lib->id = sl_strdup(id);
    lib->data.len = (size_t)st.st_size;
    lib->data.data = sl_malloc(lib->data.len ? lib->data.len : 1);
    size_t at = 0;
    while (at < lib->data.len) {
        ssize_t r = read(fd, lib->data.data + at, lib->data.len - at);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        at += (size_t)r;
    }
    close(fd);
    if (at != lib->data.len) return sl_seterr(err, errlen, "cannot read %s: short read", path);
    return SL_OK;
}

int jm_jars_collect_functions(jm *j, const sl_jobgraph *g, Sluice__UserLibrary ***libs,
                              size_t *n, char *err, size_t errlen)
{
    struct jm_jars *js = j->jars;
    *libs = NULL;
    *n = 0;
    int rc = SL_OK;
    for (int i = 0; rc == SL_OK && i < g->nv; i++) {
        json_t *fns = json_object_get(g->v[i].config, "functions"), *f;
        size_t k;
        json_array_foreach(fns, k, f) {
            const char *lib = json_string_value(json_object_get(f, "library"));
            if (!lib || strncmp(lib, "jar:", 4)) continue;
            const char *id = lib + 4;
            int have = 0;
            for (size_t q = 0; q < *n; q++)
                if (!strcmp((*libs)[q]->id, id)) have = 1;
            if (have) continue;
            pthread_mutex_lock(&js->mu);
            int known = id_ok(id) && find_locked(js, id) != NULL;
            pthread_mutex_unlock(&js->mu);
            if (!known) {
                rc = sl_seterr(err, errlen, "vertex '%s': function '%s': no upload %s (POST /jars/upload)",
                               g->v[i].id, json_string_value(json_object_get(f, "name")), lib);
                break;
            }
            Sluice__UserLibrary *l = sl_calloc(1, sizeof *l);
            char *path = sl_sprintf("%s/%s", js->dir, id);
            rc = jm_jars_read_object(path, l, id, err, errlen);
            free(path);
            *libs = sl_realloc(*libs, sizeof **libs * (*n + 1));
            (*libs)[(*n)++] = l;
            if (rc != SL_OK) break;
        }
    }
    if (rc != SL_OK) {
        for (size_t q = 0; q < *n; q++) jm_user_library_free((*libs)[q]);
        free(*libs);
        *libs = NULL;
        *n = 0;
    }
    return rc;
}

static json_t *plan_json(const sl_jobgraph *g)
{
    json_t *nodes = json_array();
    for (int i = 0; i < g->nv; i++) {
        const sl_vertex *v = &g->v[g->topo[i]];
        json_t *inputs = json_array();
        for (int k = 0; k < v->nin; k++) {
            const sl_edge *e = &g->e[v->in_edges[k]];
            static const char *const ship[] = {"FORWARD", "REBALANCE", "HASH", "BROADCAST"};
            json_array_append_new(inputs, json_pack("{s:i,s:s,s:s,s:s}", "num", k, "id", g->v[e->from].id,
                                                    "ship_strategy", ship[e->strategy], "exchange",
                                                    "pipelined_bounded"));
        }
        json_array_append_new(nodes, json_pack("{s:s,s:i,s:s,s:s,s:s,s:o,s:{}}", "id", v->id,
                                               "parallelism", v->parallelism, "operator", v->type,
                                               "operator_strategy", "", "description", v->name,
                                               "inputs", inputs, "optimizer_properties"));
    }
    return json_pack("{s:{s:s,s:s,s:s,s:o}}", "plan", "jid", "", "name", g->name ? g->name : "",
                     "type", "STREAMING", "nodes", nodes);
}

static MHD_RESULT run_or_plan(jm *j, struct MHD_Connection *conn, jar_conn *c, const char *id, int run_it)
{
    struct jm_jars *js = j->jars;
    json_t *body = NULL;
    if (c->len) {
        json_error_t jerr;
        body = json_loadb(c->body, c->len, 0, &jerr);
        if (!json_is_object(body)) {
            json_decref(body);
            return send_err(conn, 400, "the request body must be a JSON object: %s", jerr.text);
        }
    }
    pthread_mutex_lock(&js->mu);
    jar *found = find_locked(js, id);
    jar x = found ? *found : (jar){0};
    pthread_mutex_unlock(&js->mu);
    if (!found) {
        json_decref(body);
        return send_err(conn, 404, "Jar file %s does not exist in %s.", id, js->dir);
    }
    char err[1100];
    int64_t p = 0;
    const char *ps = param(conn, body, "parallelism");
    if (ps && *ps && (sl_parse_int(ps, &p) != SL_OK || p < 1 || p > 32768)) {
        json_decref(body);
        return send_err(conn, 400, "parallelism must be an integer between 1 and 32768, got '%s'", ps);
    }
    json_t *args = program_args(conn, body);
    const char *entry = param(conn, body, "entryClass");
    if (!entry) entry = param(conn, body, "entry-class");
    char *text = build_in_child(j, &x, entry, args, err, sizeof err);
    json_decref(args);
    if (!text) {
        json_decref(body);
        return send_err(conn, 400, "%s", err);
    }
    sl_jobgraph *g = sl_jobgraph_parse(text, strlen(text), j->default_parallelism, (int)p, err, sizeof err);
    free(text);
    if (!g || jm_job_graph_check(j, g, err, sizeof err) != SL_OK) {
        sl_jobgraph_destroy(g);
        json_decref(body);
        return send_err(conn, 400, "%s", err);
    }
    if (!run_it) {
        json_decref(body);
        json_t *plan = plan_json(g);
        sl_jobgraph_destroy(g);
        return send_json(conn, 200, plan);
    }
    jar_run run;
    memset(&run, 0, sizeof run);
    run.g = g;
    const char *sp = param(conn, body, "savepointPath");
    const char *anr = param(conn, body, "allowNonRestoredState");
    MHD_RESULT ret;
    if (sp && *sp) {
        jm_io_job io;
        memset(&io, 0, sizeof io);
        io.qm.type = JM_IO_RESTORE_PLAN;
        io.g = g;
        io.path = sp;
        io.allow_non_restored = anr && (!strcmp(anr, "true") || !strcmp(anr, "1"));
        io.dir_out = &run.restore_dir;
        io.cpid_out = &run.restore_cpid;
        io.is_savepoint_out = &run.restore_is_savepoint;
        if (jm_io_call(j, &io) != SL_OK) {
            ret = send_err(conn, 400, "%s", io.err);
            goto out;
        }
    }
    run.lib = sl_calloc(1, sizeof *run.lib);
    char *path = sl_sprintf("%s/%s", js->dir, x.id);
    int rc = jm_jars_read_object(path, run.lib, x.id, err, sizeof err);
    free(path);
    if (rc != SL_OK) {
        ret = send_err(conn, 500, "%s", err);
        goto out;
    }
    jm_op op;
    memset(&op, 0, sizeof op);
    op.qm.type = JM_OP_JAR_RUN;
    op.u.rest.ctx = &run;
    if (jm_op_call(j, &op) != SL_OK) ret = send_err(conn, 503, "the JobManager is shutting down");
    else if (!run.jobid[0]) ret = send_err(conn, 503, "%s", run.err);
    else ret = send_json(conn, 200, json_pack("{s:s}", "jobid", run.jobid));
out:
    json_decref(body);
    if (run.g) sl_jobgraph_destroy(run.g);
    free(run.restore_dir);
    jm_user_library_free(run.lib);
    return ret;
}

/* ---- list and delete ---------------------------------------------------------------- */

static MHD_RESULT list_jars(jm *j, struct MHD_Connection *conn)
{
    struct jm_jars *js = j->jars;
    json_t *files = json_array();
    pthread_mutex_lock(&js->mu);
    for (jar *x = js->list; x; x = x->next)
        json_array_append_new(files, json_pack("{s:s,s:s,s:I,s:[{s:s,s:n}]}", "id", x->id, "name", x->name,
                                               "uploaded", (json_int_t)x->uploaded, "entry", "name",
                                               SL_DS_JOB_MAIN, "description"));
    pthread_mutex_unlock(&js->mu);
    char *addr = sl_sprintf("http://%s:%d", sl_config_str(j->conf, "rest.address"), j->rest_port);
    MHD_RESULT r = send_json(conn, 200, json_pack("{s:s,s:o}", "address", addr, "files", files));
    free(addr);
    return r;
}

static MHD_RESULT delete_jar(jm *j, struct MHD_Connection *conn, const char *id)
{
    struct jm_jars *js = j->jars;
    pthread_mutex_lock(&js->mu);
    jar **pp = &js->list;
    while (*pp && strcmp((*pp)->id, id)) pp = &(*pp)->next;
    jar *x = *pp;
    if (x) *pp = x->next;
    pthread_mutex_unlock(&js->mu);
    if (!x) return send_err(conn, 404, "File %s does not exist in %s.", id, js->dir);
    char *path = sl_sprintf("%s/%s", js->dir, x->id);
    if (unlink(path) != 0) sl_warn(TAG, "cannot remove %s: %s", path, strerror(errno));
    free(path);
    free(x);
    return send_json(conn, 200, json_object());
}

/* ---- the access handler --------------------------------------------------------------- */

int jm_jars_request(jm *j, struct MHD_Connection *conn, const char *url, const char *method,
                    const char *upload_data, size_t *upload_size, void **state)
{
    struct jm_jars *js = j->jars;
    if (!strncmp(url, "/v1/", 4)) url += 3;
    char path[512];
    snprintf(path, sizeof path, "%s", url + 5); /* after "/jars" */
    char *seg[4] = {0};
    int nseg = 0;
    char *save = NULL;
    for (char *s = strtok_r(path, "/", &save); s && nseg < 4; s = strtok_r(NULL, "/", &save)) seg[nseg++] = s;
    int post = !strcmp(method, "POST"), get = !strcmp(method, "GET"), del = !strcmp(method, "DELETE");
    int upload = post && nseg == 1 && !strcmp(seg[0], "upload");
    jar_conn *c = *state;
    if (!c) {
        /* jm_rest_admit has let the request in: an upload from a foreign
         * origin, or without the token, never gets this far */
        c = sl_calloc(1, sizeof *c);
        c->fd = -1;
        c->js = js;
        c->upload = upload;
        *state = c;
        if (upload && js->enabled) c->pp = MHD_create_post_processor(conn, 65536, on_file, c);
        if (upload && !c->pp) c->bad = 1;
        return MHD_YES;
    }
    if (*upload_size) {
        if (c->pp && !c->bad && MHD_post_process(c->pp, upload_data, *upload_size) != MHD_YES && !c->too_big)
            c->bad = 1;
        else if (!c->upload && c->len + *upload_size <= SL_JAR_MAX_BODY) {
            c->body = sl_realloc(c->body, c->len + *upload_size + 1);
            memcpy(c->body + c->len, upload_data, *upload_size);
            c->len += *upload_size;
        } else if (!c->upload) {
            c->too_big = 1;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (!js->enabled)
        return send_err(conn, 404, "Not found: jar submission is disabled (web.submit.enable: false)");
    if (upload) {
        /* the processor hands over what it still holds, and says whether
         * the body ended as a multipart body must */
        if (c->pp && MHD_destroy_post_processor(c->pp) != MHD_YES && !c->too_big) c->bad = 1;
        c->pp = NULL;
        return finish_upload(j, conn, c);
    }
    if (c->too_big) return send_err(conn, 413, "request body larger than %u bytes", SL_JAR_MAX_BODY);
    if (get && nseg == 0) return list_jars(j, conn);
    if (nseg == 2 && !strcmp(seg[1], "run") && post) return run_or_plan(j, conn, c, seg[0], 1);
    if (nseg == 2 && !strcmp(seg[1], "plan") && (get || post)) return run_or_plan(j, conn, c, seg[0], 0);
    if (nseg == 1 && del) return delete_jar(j, conn, seg[0]);
    return send_err(conn, 404, "Not found: %s /jars%s", method, url + 5);
}

void jm_jars_completed(void *state)
{
    jar_conn *c = state;
    if (!c) return;
    if (c->pp) MHD_destroy_post_processor(c->pp);
    drop_tmp(c);
    free(c->body);
    free(c);
}
