/*
 * load_marker.c -- a C job that says who loaded it, for the REST security
 * tests (tests/integration/test_rest_security.py, test_jars.py).
 *
 * Its constructor runs whenever a process loads the object and, before
 * anything else, writes "sluice-loaded-<pid>" into that process's working
 * directory (the tests start every daemon in their scratch directory):
 *     pid <pid>
 *     ppid <parent pid>
 *     fds <the open descriptors, ascending, comma-separated>
 *     argv <the command line, one space between arguments>
 * written under a temporary name and renamed, so a reader sees all or
 * nothing. A test that finds no such file knows that no process ran the
 * object's code; one that finds it knows which process did and what it had
 * open.
 *
 * Entry points (entryClass): sluice_job_main, a bounded datagen through
 * marker_pass (a function of this object's, so TaskManagers load it too)
 * into a blackhole; burn_main, which spins on the CPU for ever; hog_main, which
 * asks for 1 GiB (not touched) and returns 3 when it gets none.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datastream.h"

__attribute__((constructor)) static void mark_loaded(void)
{
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text, "pid %d\nppid %d\nfds ", (int)getpid(), (int)getppid());
    /* the descriptors first, before this constructor opens any of its own
     * (the directory's own is left out) */
    int fds[512], nfds = 0;
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        for (struct dirent *e; (e = readdir(d));)
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && atoi(e->d_name) != dirfd(d) && nfds < 512)
                fds[nfds++] = atoi(e->d_name);
        closedir(d);
    }
    for (int i = 1; i < nfds; i++) /* ascending */
        for (int k = i; k > 0 && fds[k - 1] > fds[k]; k--) {
            int t = fds[k];
            fds[k] = fds[k - 1];
            fds[k - 1] = t;
        }
    for (int i = 0; i < nfds && n < sizeof text - 16; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%d", i ? "," : "", fds[i]);
    n += (size_t)snprintf(text + n, sizeof text - n, "\nargv");
    int cf = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (cf >= 0) {
        char cmd[4096];
        ssize_t r = read(cf, cmd, sizeof cmd - 1);
        close(cf);
        for (ssize_t i = 0; i < r && n < sizeof text - 2; i++) {
            if (i == 0 || cmd[i - 1] == '\0') text[n++] = ' ';
            if (cmd[i]) text[n++] = cmd[i];
        }
    }
    text[n++] = '\n';
    char tmp[64], name[64];
    snprintf(tmp, sizeof tmp, ".sluice-loading-%d", (int)getpid());
    snprintf(name, sizeof name, "sluice-loaded-%d", (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    int ok = write(fd, text, n) == (ssize_t)n;
    close(fd);
    if (ok) rename(tmp, name);
    else unlink(tmp);
}

static int pass(sl_op *ctx, int input, const sl_row *row)
{
    (void)input;
    return sl_op_emit(ctx, (sl_row *)row);
}

/* a function of the object's own, so a TaskManager loads it too */
const sl_process_fn marker_pass = {.abi = SL_DS_ABI_VERSION, .process_element = pass};

int sluice_job_main(sl_ds_env *env, int argc, char **argv);
int sluice_job_main(sl_ds_env *env, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const char *gen_opts[] = {"fields.id.kind", "sequence", "fields.id.start", "1", "fields.id.end", "10", NULL};
    sl_ds_stream *s = sl_ds_source(env, "gen", "datagen", "id BIGINT", gen_opts);
    s = sl_ds_process(s, "pass", "marker_pass", "id BIGINT", NULL);
    sl_ds_sink(s, "out", "blackhole", NULL);
    return 0;
}

int burn_main(sl_ds_env *env, int argc, char **argv);
int burn_main(sl_ds_env *env, int argc, char **argv)
{
    (void)env;
    (void)argc;
    (void)argv;
    for (volatile unsigned long i = 0;; i++) {}
    return 0;
}

int hog_main(sl_ds_env *env, int argc, char **argv);
int hog_main(sl_ds_env *env, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    void *p = malloc((size_t)1 << 30);
    if (!p) return 3;
    free(p);
    return sluice_job_main(env, 0, NULL);
}
