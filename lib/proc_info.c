/*
 * proc_info.c -- a daemon's log files, threads and environment as Flink's
 * REST API shows them (see proc_info.h). Reads /proc/self: fd/1 and fd/2 for
 * the files, task/<tid>/{comm,stat,wchan} for the threads (their stacks
 * from stack_sample.c), cmdline and maps for the environment.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "proc_info.h"
#include "buf.h"
#include "sl.h"
#include "stack_sample.h"

/* The file behind descriptor fd when it is a regular one: its name (the last
 * component of its path) into name and its stat into *st; SL_ERR otherwise. */
static int regular_file(int fd, char *name, size_t namelen, struct stat *st)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0 || fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) return SL_ERR;
    path[n] = '\0';
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (strlen(base) >= namelen) return SL_ERR; /* a name no one could ask for */
    memcpy(name, base, strlen(base) + 1);
    return SL_OK;
}

json_t *sl_proc_log_list(void)
{
    json_t *logs = json_array();
    struct stat seen = {0};
    const int fds[] = {SL_PROC_LOG, SL_PROC_STDOUT};
    for (size_t i = 0; i < SL_ARRAY_LEN(fds); i++) {
        char name[256];
        struct stat st;
        if (regular_file(fds[i], name, sizeof name, &st) != SL_OK) continue;
        if (i && st.st_dev == seen.st_dev && st.st_ino == seen.st_ino) continue;
        if (!i) seen = st;
        json_array_append_new(logs, json_pack("{s:s,s:I,s:I}", "name", name, "size",
                                              (json_int_t)st.st_size, "mtime",
                                              (json_int_t)st.st_mtim.tv_sec * 1000 +
                                                  st.st_mtim.tv_nsec / 1000000));
    }
    return json_pack("{s:o}", "logs", logs);
}

int sl_proc_log_open(int which, const char *name, uint64_t *size, char *err, size_t errlen)
{
    const int fds[] = {SL_PROC_LOG, SL_PROC_STDOUT};
    for (size_t i = 0; i < SL_ARRAY_LEN(fds); i++) {
        char have[256], link[64];
        struct stat st;
        if (which && which != fds[i]) continue;
        if (regular_file(fds[i], have, sizeof have, &st) != SL_OK) continue;
        if (!which && (!name || strcmp(name, have))) continue;
        /* reopened through /proc: a file of its own offset, the same inode */
        snprintf(link, sizeof link, "/proc/self/fd/%d", fds[i]);
        int fd = open(link, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            sl_seterr(err, errlen, "cannot open the %s file: %s",
                      fds[i] == SL_PROC_LOG ? "log" : "stdout", strerror(errno));
            return -1;
        }
        struct stat now;
        *size = fstat(fd, &now) == 0 ? (uint64_t)now.st_size : (uint64_t)st.st_size;
        return fd;
    }
    if (which) sl_seterr(err, errlen, "this process writes its %s to no file (not a regular file)",
                         which == SL_PROC_LOG ? "log" : "stdout");
    else sl_seterr(err, errlen, "no log file named '%s'", name ? name : "");
    return -1;
}

/* Java's name of a thread state for the kernel's state letter. */
static const char *java_state(char s)
{
    switch (s) {
    case 'R': return "RUNNABLE";
    case 'D': return "BLOCKED";
    case 'Z': case 'X': return "TERMINATED";
    default: return "WAITING"; /* S (sleeping), T/t (stopped), I (idle) */
    }
}

/* The first line of a small /proc file into buf, without its newline; "" when unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f) return;
    if (fgets(buf, (int)len, f)) buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

json_t *sl_proc_thread_dump(int depth)
{
    json_t *infos = json_array();
    DIR *d = opendir("/proc/self/task");
    long tick = sysconf(_SC_CLK_TCK);
    if (tick <= 0) tick = 100;
    if (depth < 1) depth = 1;
    char why[200];
    sl_stack_names *nm = sl_stack_names_new(why, sizeof why);
    const char **frames = sl_malloc((size_t)depth * sizeof *frames);
    sl_buf b = SL_BUF_INIT;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[300], comm[64], stat[1024], wchan[128];
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        read_line(path, comm, sizeof comm);
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        read_line(path, stat, sizeof stat);
        snprintf(path, sizeof path, "/proc/self/task/%s/wchan", e->d_name);
        read_line(path, wchan, sizeof wchan);
        /* stat: "tid (comm) S ppid ... utime(14) stime(15)"; comm may hold spaces
         * and parentheses, so the fields are counted from the last ')' */
        char state = '?';
        unsigned long long utime = 0, stime = 0;
        const char *rp = strrchr(stat, ')');
        if (rp && rp[1] == ' ') {
            state = rp[2];
            const char *p = rp + 2;
            for (int field = 3; *p && field < 14; p++)
                if (*p == ' ') field++;
            if (sscanf(p, "%llu %llu", &utime, &stime) != 2) utime = stime = 0;
        }
        /* the state and wchan as they were before the signal woke it */
        sl_buf_reset(&b);
        sl_buf_fmt(&b, "\"%s\" Id=%s %s (state %c, cpu user %llu ms, system %llu ms)\n"
                          "\tat (kernel) %s\n",
                      comm, e->d_name, java_state(state), state,
                      utime * 1000 / (unsigned long long)tick,
                      stime * 1000 / (unsigned long long)tick,
                      *wchan && strcmp(wchan, "0") ? wchan : "(running)");
        int nf = nm ? sl_stack_of(nm, (pid_t)atoi(e->d_name), frames, depth, why, sizeof why) : -1;
        for (int k = 0; k < nf; k++) sl_buf_fmt(&b, "\tat %s\n", frames[k]);
        if (nf < 0) sl_buf_fmt(&b, "\t(no user-space stack: %s)\n", why);
        else if (nf == depth) sl_buf_fmt(&b, "\t...\n");
        sl_buf_fmt(&b, "\n");
        json_array_append_new(infos, json_pack("{s:s,s:s%}", "threadName", comm,
                                               "stringifiedThreadInfo", b.p, b.len));
    }
    if (d) closedir(d);
    sl_buf_free(&b);
    free(frames);
    sl_stack_names_destroy(nm);
    return json_pack("{s:o}", "threadInfos", infos);
}

json_t *sl_proc_environment(const char *program)
{
    struct utsname u;
    if (uname(&u) != 0) memset(&u, 0, sizeof u);
    char *version = sl_sprintf("%s on %s %s, glibc %s", program, u.sysname, u.release,
                               gnu_get_libc_version());
    json_t *options = json_array(), *classpath = json_array();
    FILE *f = fopen("/proc/self/cmdline", "re");
    if (f) {
        char arg[4096];
        size_t n = 0;
        int c;
        while ((c = fgetc(f)) != EOF) {
            if (c && n < sizeof arg - 1) { arg[n++] = (char)c; continue; }
            if (c) continue; /* longer than arg: the rest is cut */
            arg[n] = '\0';
            json_array_append_new(options, json_string(arg));
            n = 0;
        }
        fclose(f);
    }
    f = fopen("/proc/self/maps", "re");
    if (f) {
        char line[4400];
        while (fgets(line, sizeof line, f)) {
            char *path = strchr(line, '/');
            if (!path) continue;
            path[strcspn(path, "\n")] = '\0';
            if (!strstr(path, ".so")) continue;
            size_t i, dup = 0;
            json_t *x;
            json_array_foreach(classpath, i, x) if (!strcmp(json_string_value(x), path)) dup = 1;
            if (!dup) json_array_append_new(classpath, json_string(path));
        }
        fclose(f);
    }
    json_t *env = json_pack("{s:{s:s,s:s,s:o},s:o}", "jvm", "version", version, "arch", u.machine,
                            "options", options, "classpath", classpath);
    free(version);
    return env;
}

void sl_proc_stats_read(sl_proc_stats *st)
{
    memset(st, 0, sizeof *st);
    char stat[1024];
    read_line("/proc/self/stat", stat, sizeof stat);
    /* from the last ')': state(3) ... utime(14) stime(15) ... num_threads(20)
     * ... vsize(23) rss(24, pages) */
    const char *rp = strrchr(stat, ')');
    if (rp && rp[1] == ' ') {
        unsigned long long f[25] = {0};
        const char *p = rp + 2;
        for (int field = 3; field <= 24 && *p; field++) {
            f[field] = strtoull(p, NULL, 10);
            p = strchr(p, ' ');
            if (!p) break;
            p++;
        }
        long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
        if (tick <= 0) tick = 100;
        if (page <= 0) page = 4096;
        st->cpu_ns = (f[14] + f[15]) * (1000000000ull / (unsigned long long)tick);
        st->threads = (int)f[20];
        st->virtual_bytes = f[23];
        st->rss_bytes = f[24] * (unsigned long long)page;
    }
}

double sl_proc_cpu_load(uint64_t cpu_ns_before, uint64_t cpu_ns_after, int64_t wall_ms, int ncpu)
{
    if (wall_ms <= 0 || ncpu <= 0 || cpu_ns_after < cpu_ns_before) return 0;
    double load = (double)(cpu_ns_after - cpu_ns_before) / ((double)wall_ms * 1e6 * ncpu);
    return load > 1 ? 1 : load;
}
