/*
 * test_proc_info.c -- unit tests for lib/proc_info.c: the log files found
 * behind standard output and error (and only those), a thread dump that
 * names every thread of the process with its state and its stack, the environment's
 * command line and architecture.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <dirent.h>
#include <unistd.h>

#include "proc_info.h"
#include "sl_test.h"

/* Run fn with fd 1 and 2 going to two fresh files in a temporary directory. */
static void with_files(void (*fn)(const char *dir))
{
    char dir[] = "/tmp/sl-proc-info-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char out[300], err[300];
    snprintf(out, sizeof out, "%s/daemon.out", dir);
    snprintf(err, sizeof err, "%s/daemon.log", dir);
    fflush(stdout);
    fflush(stderr);
    int saved1 = dup(1), saved2 = dup(2);
    int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fo >= 0 && fe >= 0);
    dup2(fo, 1);
    dup2(fe, 2);
    close(fo);
    close(fe);
    fn(dir);
    dup2(saved1, 1);
    dup2(saved2, 2);
    close(saved1);
    close(saved2);
    unlink(out);
    unlink(err);
    rmdir(dir);
}

static void check_logs(const char *dir)
{
    (void)dir;
    CHECK(write(2, "a log line\n", 11) == 11);
    CHECK(write(1, "printed\n", 8) == 8);
    json_t *list = sl_proc_log_list();
    json_t *logs = json_object_get(list, "logs");
    CHECK_EQ_INT((int)json_array_size(logs), 2);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(logs, 0), "name")), "daemon.log");
    CHECK_EQ_INT((int)json_integer_value(json_object_get(json_array_get(logs, 0), "size")), 11);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(logs, 1), "name")), "daemon.out");
    CHECK(json_integer_value(json_object_get(json_array_get(logs, 1), "mtime")) > 1600000000000LL);
    json_decref(list);

    uint64_t size = 0;
    char err[200], buf[64] = {0};
    int fd = sl_proc_log_open(SL_PROC_LOG, NULL, &size, err, sizeof err);
    CHECK(fd >= 0);
    CHECK_EQ_INT((int)size, 11);
    CHECK_EQ_INT((int)read(fd, buf, sizeof buf - 1), 11); /* from the start: a file of its own */
    CHECK_EQ_STR(buf, "a log line\n");
    close(fd);
    fd = sl_proc_log_open(0, "daemon.out", &size, err, sizeof err);
    CHECK(fd >= 0 && size == 8);
    close(fd);
    /* only the two files, by their names: nothing else in the directory, no paths */
    CHECK_EQ_INT(sl_proc_log_open(0, "../daemon.out", &size, err, sizeof err), -1);
    CHECK_EQ_STR(err, "no log file named '../daemon.out'");
    CHECK_EQ_INT(sl_proc_log_open(0, NULL, &size, err, sizeof err), -1);
}

static void test_log_files(void)
{
    with_files(check_logs);
    /* a pipe is no file */
    int p[2], saved = dup(1);
    CHECK(pipe(p) == 0);
    fflush(stdout);
    dup2(p[1], 1);
    uint64_t size;
    char err[200];
    CHECK_EQ_INT(sl_proc_log_open(SL_PROC_STDOUT, NULL, &size, err, sizeof err), -1);
    dup2(saved, 1);
    close(saved);
    close(p[0]);
    close(p[1]);
    CHECK_EQ_STR(err, "this process writes its stdout to no file (not a regular file)");
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stop, started;

static void *sleeper(void *arg)
{
    pthread_setname_np(pthread_self(), (const char *)arg);
    if (!strcmp((const char *)arg, "pi-sleeper-b")) { /* as librdkafka's threads do */
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
    }
    pthread_mutex_lock(&mu);
    started++;
    pthread_cond_broadcast(&cv);
    while (!stop) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return NULL;
}

static void test_thread_dump(void)
{
    pthread_t t[2];
    pthread_create(&t[0], NULL, sleeper, "pi-sleeper-a");
    pthread_create(&t[1], NULL, sleeper, "pi-sleeper-b");
    pthread_mutex_lock(&mu);
    while (started < 2) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    /* asleep in the condition variable once they released the mutex: wait for it */
    json_t *dump = NULL;
    for (int tries = 0; tries < 200; tries++) {
        json_decref(dump);
        dump = sl_proc_thread_dump(SL_PROC_STACK_DEPTH);
        int waiting = 0;
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(dump, "threadInfos"), i, x) {
            const char *name = json_string_value(json_object_get(x, "threadName"));
            const char *text = json_string_value(json_object_get(x, "stringifiedThreadInfo"));
            CHECK(name && text && text[0] == '"' && !strncmp(text + 1, name, strlen(name)));
            if (!strncmp(name, "pi-sleeper-", 11) && strstr(text, " WAITING (state S,")) waiting++;
        }
        if (waiting == 2) break;
        usleep(10000);
    }
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    json_t *infos = json_object_get(dump, "threadInfos");
    CHECK_EQ_INT((int)json_array_size(infos), n);
    CHECK_EQ_INT(n, 3);
    int sleepers = 0;
    size_t i;
    json_t *x;
    json_array_foreach(infos, i, x) {
        const char *text = json_string_value(json_object_get(x, "stringifiedThreadInfo"));
        if (strstr(text, "\"pi-sleeper-") && strstr(text, " WAITING (state S,") &&
            strstr(text, "\tat (kernel) "))
            sleepers++;
    }
    CHECK_EQ_INT(sleepers, 2);
    /* user-space stacks, innermost first: the sleeper in its function, the
     * one blocking signals without a stack, this thread taking the dump */
    int stacks = 0;
    json_array_foreach(infos, i, x) {
        const char *name = json_string_value(json_object_get(x, "threadName"));
        const char *text = json_string_value(json_object_get(x, "stringifiedThreadInfo"));
        if (!strcmp(name, "pi-sleeper-a")) {
            const char *wait = strstr(text, "\tat pthread_cond_wait"), *fn = strstr(text, "\tat sleeper\n");
            CHECK(wait && fn && wait < fn);
            stacks++;
        } else if (!strcmp(name, "pi-sleeper-b")) {
            CHECK(strstr(text, "\t(no user-space stack: the thread blocks signals)\n") != NULL);
            stacks++;
        } else {
            const char *dump_fn = strstr(text, "\tat sl_proc_thread_dump\n");
            const char *test_fn = strstr(text, "\tat test_thread_dump\n");
            CHECK(dump_fn && test_fn && dump_fn < test_fn);
            stacks++;
        }
    }
    CHECK_EQ_INT(stacks, 3);
    json_decref(dump);
    pthread_mutex_lock(&mu);
    stop = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
}

static void test_process_stats(void)
{
    sl_proc_stats st;
    sl_proc_stats_read(&st);
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    CHECK_EQ_INT(st.threads, n);
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    CHECK(f && fscanf(f, "%ld %ld", &pages, &resident) == 2);
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    CHECK(st.rss_bytes > 0 && st.rss_bytes <= (uint64_t)(resident + 64) * (uint64_t)page);
    CHECK(st.virtual_bytes + 64 * (uint64_t)page >= (uint64_t)pages * (uint64_t)page);
    /* 1.5 s of CPU over 1 s of 4 cores: 0.375; never above 1, 0 when it cannot say */
    CHECK(sl_proc_cpu_load(500000000ull, 2000000000ull, 1000, 4) == 0.375);
    CHECK(sl_proc_cpu_load(0, 9000000000ull, 1000, 4) == 1);
    CHECK(sl_proc_cpu_load(5, 1, 1000, 4) == 0 && sl_proc_cpu_load(0, 1, 0, 4) == 0);
}

static void test_environment(void)
{
    json_t *env = sl_proc_environment("Test 1.0");
    struct utsname u;
    CHECK(uname(&u) == 0);
    json_t *jvm = json_object_get(env, "jvm");
    CHECK(!strncmp(json_string_value(json_object_get(jvm, "version")), "Test 1.0 on Linux ", 18));
    CHECK_EQ_STR(json_string_value(json_object_get(jvm, "arch")), u.machine);
    char self[4096] = {0};
    FILE *f = fopen("/proc/self/cmdline", "r");
    CHECK(f && fread(self, 1, sizeof self - 1, f) > 0);
    fclose(f);
    CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(jvm, "options"), 0)), self);
    int libc = 0;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(env, "classpath"), i, x) {
        CHECK(json_string_value(x)[0] == '/');
        libc += strstr(json_string_value(x), "/libc.so") != NULL;
    }
    CHECK_EQ_INT(libc, 1);
    json_decref(env);
}

SL_TEST_MAIN(SL_TEST(test_log_files), SL_TEST(test_thread_dump), SL_TEST(test_process_stats), SL_TEST(test_environment))
