/*
 * main.c -- sluice-jobmanager: configuration, the RPC loop, the REST server.
 *
 * The main thread runs the libevent loop, which owns all state (jm.h):
 * RPC, timers and the ops that REST threads and the I/O worker post.
 * libmicrohttpd runs REST on its own threads; io.c runs file work on one
 * more. SIGINT/SIGTERM end the loop; then the op queue is closed (REST
 * threads still waiting get 503), REST stops, the I/O worker finishes what
 * is queued, and all state is freed.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>
#include <event2/event.h>
#include <event2/thread.h>

#include "jm.h"
#include "ha.h"
#include "store.h"
#include "log.h"
#include "operator.h"

#define TAG "jm"

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    jm *j = arg;
    sl_info(TAG, "signal %d: shutting down", (int)sig);
    event_base_loopbreak(j->base);
}

/* The dashboard's files: SLUICE_WEB_ROOT, else web/ beside the binary's
 * build tree, else /usr/share/sluice/web. */
static char *find_web_root(const char *argv0)
{
    const char *env = getenv("SLUICE_WEB_ROOT");
    if (env && *env) return sl_strdup(env);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        static const char *rel[] = {"/../../web", "/../share/sluice/web", NULL};
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        for (int i = 0; rel[i]; i++) {
            char path[PATH_MAX + 64], real[PATH_MAX];
            snprintf(path, sizeof path, "%s%s/index.html", exe, rel[i]);
            if (realpath(path, real)) {
                *strrchr(real, '/') = '\0';
                return sl_strdup(real);
            }
        }
    }
    SL_UNUSED(argv0);
    return sl_strdup("/usr/share/sluice/web");
}

int main(int argc, char **argv)
{
    /* a child the JobManager started to run an uploaded job's entry point */
    if (argc >= 2 && !strcmp(argv[1], "--build-c-job")) return jm_jars_child(argc - 2, argv + 2);
    char err[1024];
    jm j;
    memset(&j, 0, sizeof j);
    signal(SIGPIPE, SIG_IGN);
    j.conf = sl_config_new();
    int rc = sl_config_from_args(j.conf, argc, argv, "conf/sluice.yaml", err, sizeof err);
    if (rc != SL_OK) {
        if (rc != SL_DONE) fprintf(stderr, "sluice-jobmanager: %s\n", err);
        sl_config_destroy(j.conf); /* refused at start-up: exit without leaks */
        return rc == SL_DONE ? 0 : 2;
    }
    if (sl_store_configure(j.conf, err, sizeof err) != SL_OK) { /* s3:// directories */
        fprintf(stderr, "sluice-jobmanager: %s\n", err);
        sl_config_destroy(j.conf);
        return 2;
    }
    sl_log_level = sl_log_parse_level(sl_config_str(j.conf, "log.level"));
    if (sl_log_level < 0) sl_log_level = SL_LOG_INFO;
    sl_ops_register_builtin();
    if (sl_op_plugins_load(sl_config_str(j.conf, "sluice.operator-plugins"), err, sizeof err) != SL_OK) {
        fprintf(stderr, "sluice-jobmanager: %s\n", err);
        sl_config_destroy(j.conf);
        return 2;
    }
    j.heartbeat_interval_ms = sl_config_int(j.conf, "heartbeat.interval");
    j.heartbeat_timeout_ms = sl_config_int(j.conf, "heartbeat.timeout");
    j.slot_timeout_ms = sl_config_int(j.conf, "slot.request.timeout");
    j.default_parallelism = (int)sl_config_int(j.conf, "parallelism.default");
    j.auth_token = sl_config_str(j.conf, "rest.auth-token");
    j.auto_watermark_interval_ms = sl_config_int(j.conf, "pipeline.auto-watermark-interval");
    j.jobstore_capacity = sl_config_int(j.conf, "jobstore.max-capacity");
    j.jobstore_expiration_ms = sl_config_int(j.conf, "jobstore.expiration-time");
    jm_cp_configure(&j);
    char *web_root = find_web_root(argv[0]);
    j.web_root = web_root;
    evthread_use_pthreads();
    j.base = event_base_new();
    j.loop_thread = pthread_self();
    if (!j.base || jm_ops_init(&j) != SL_OK) {
        sl_error(TAG, "cannot set up the event loop");
        return 1;
    }
    if (jm_io_start(&j, err, sizeof err) != SL_OK || jm_rpc_start(&j, err, sizeof err) != SL_OK ||
        jm_jars_start(&j, err, sizeof err) != SL_OK || jm_rest_start(&j, err, sizeof err) != SL_OK ||
        jm_prom_start(&j, err, sizeof err) != SL_OK || jm_ha_start(&j, err, sizeof err) != SL_OK) {
        sl_error(TAG, "%s", err);
        return 1;
    }
    sl_info(TAG, "Sluice JobManager %s started: RPC port %d, REST port %d (%s://%s:%d/), web root %s",
            SL_VERSION, j.rpc_port, j.rest_port,
            sl_config_bool(j.conf, "security.ssl.rest.enabled") ? "https" : "http",
            sl_config_str(j.conf, "rest.bind-address"), j.rest_port, web_root);
    struct event *sigint = evsignal_new(j.base, SIGINT, on_signal, &j);
    struct event *sigterm = evsignal_new(j.base, SIGTERM, on_signal, &j);
    event_add(sigint, NULL);
    event_add(sigterm, NULL);
    event_base_dispatch(j.base);
    jm_ha_stop(&j); /* first: our ephemeral nodes go, a standby takes over */
    jm_ops_close(&j);
    jm_prom_stop(&j);
    jm_rest_stop(&j);
    jm_jars_stop(&j);
    jm_io_stop(&j);
    jm_rpc_stop(&j);
    jm_jobs_destroy(&j);
    jm_ops_destroy(&j);
    event_free(sigint);
    event_free(sigterm);
    event_base_free(j.base);
    sl_config_destroy(j.conf);
    free(web_root);
    sl_info(TAG, "stopped");
    return 0;
}
