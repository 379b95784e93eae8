/*
 * main.c -- sluice-taskmanager: configuration, then the network thread's
 * event loop (net.c), which spawns a thread per deployed task.
 * SIGINT/SIGTERM cancel every task and end the loop.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <event2/event.h>
#include <event2/thread.h>

#include "udf_guard.h"
#include "prom.h"
#include "tm.h"
#include "store.h"
#include "log.h"
#include "operator.h"
#include "state.h"

#define TAG "tm"

/* The one memory budget of this TaskManager's RocksDB states (Flink's
 * managed memory): fixed-per-slot times the slots when set, else the
 * managed size; none when state.backend.rocksdb.memory.managed is false. */
static int rocksdb_budget(const tm_net *n, char *err, size_t errlen)
{
    const sl_config *c = n->conf;
    int64_t per_slot = sl_config_int(c, "state.backend.rocksdb.memory.fixed-per-slot");
    double ratio = sl_config_double(c, "state.backend.rocksdb.memory.write-buffer-ratio");
    uint64_t budget = 0;
    const char *from = "";
    if (per_slot > 0) {
        budget = (uint64_t)per_slot * (uint64_t)n->slots;
        from = "state.backend.rocksdb.memory.fixed-per-slot x slots";
    } else if (sl_config_bool(c, "state.backend.rocksdb.memory.managed")) {
        budget = (uint64_t)sl_config_int(c, "taskmanager.memory.managed.size");
        from = "taskmanager.memory.managed.size";
    }
    if (sl_rocksdb_memory_configure(budget, ratio, err, errlen) != SL_OK) return SL_ERR;
    if (!budget) {
        sl_info(TAG, "RocksDB memory: not managed, each RocksDB state has RocksDB's defaults");
        return SL_OK;
    }
    sl_rocksdb_memory m;
    sl_rocksdb_memory_stats(&m);
    sl_info(TAG, "RocksDB memory budget %llu bytes (%s), shared by all RocksDB states: block cache "
            "%llu bytes, memtables %llu bytes", (unsigned long long)m.budget, from,
            (unsigned long long)m.cache_capacity, (unsigned long long)m.write_buffer_total);
    return SL_OK;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    tm_net *n = arg;
    sl_info(TAG, "signal %d: shutting down", (int)sig);
    event_base_loopbreak(n->base);
}

int main(int argc, char **argv)
{
    char err[1024];
    tm_net n;
    memset(&n, 0, sizeof n);
    signal(SIGPIPE, SIG_IGN);
    n.conf = sl_config_new();
    int rc = sl_config_from_args(n.conf, argc, argv, "conf/sluice.yaml", err, sizeof err);
    if (rc != SL_OK) {
        if (rc != SL_DONE) fprintf(stderr, "sluice-taskmanager: %s\n", err);
        sl_config_destroy(n.conf); /* refused at start-up: exit without leaks */
        return rc == SL_DONE ? 0 : 2;
    }
    if (sl_store_configure(n.conf, err, sizeof err) != SL_OK) { /* s3:// directories */
        fprintf(stderr, "sluice-taskmanager: %s\n", err);
        sl_config_destroy(n.conf);
        return 2;
    }
    sl_log_level = sl_log_parse_level(sl_config_str(n.conf, "log.level"));
    if (sl_log_level < 0) sl_log_level = SL_LOG_INFO;
    sl_ops_register_builtin();
    tm_python_register();
    sl_udf_guard_install(); /* a crash in a C function fails its task, not this process */
    if (sl_op_plugins_load(sl_config_str(n.conf, "sluice.operator-plugins"), err, sizeof err) != SL_OK) {
        fprintf(stderr, "sluice-taskmanager: %s\n", err);
        sl_config_destroy(n.conf);
        return 2;
    }
    n.slots = (int)sl_config_int(n.conf, "taskmanager.numberOfTaskSlots");
    n.host = sl_strdup(sl_config_str(n.conf, "taskmanager.host"));
    if (rocksdb_budget(&n, err, sizeof err) != SL_OK) {
        fprintf(stderr, "sluice-taskmanager: %s\n", err);
        sl_config_destroy(n.conf);
        free(n.host);
        return 2;
    }
    evthread_use_pthreads();
    n.base = event_base_new();
    /* stdout carries the print sink's rows: line-buffer it so they show up */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (tm_net_start(&n, err, sizeof err) != SL_OK) {
        sl_error(TAG, "%s", err);
        return 1;
    }
    const char *rid = sl_config_str(n.conf, "taskmanager.resource-id");
    if (rid && *rid) {
        n.id = sl_strdup(rid);
    } else {
        char host[128], hex[7];
        if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
        host[sizeof host - 1] = '\0';
        sl_random_hex(hex, 6);
        n.id = sl_sprintf("%s:%d-%s", host, n.data_port, hex);
    }
    if (n.leader_rt)
        sl_info(TAG, "Sluice TaskManager %s started: %d slot%s, data port %d, JobManager: the leader "
                "ZooKeeper names (%s)", n.id, n.slots, n.slots == 1 ? "" : "s", n.data_port,
                sl_config_str(n.conf, "high-availability.zookeeper.quorum"));
    else
        sl_info(TAG, "Sluice TaskManager %s started: %d slot%s, data port %d, JobManager at %s:%lld",
                n.id, n.slots, n.slots == 1 ? "" : "s", n.data_port,
                sl_config_str(n.conf, "jobmanager.rpc.address"),
                (long long)sl_config_int(n.conf, "jobmanager.rpc.port"));
    if (sl_prom_enabled(n.conf)) {
        n.prom = sl_prom_start(n.conf, err, sizeof err);
        if (!n.prom) {
            sl_error(TAG, "%s", err);
            return 1;
        }
        sl_info(TAG, "Prometheus reporter serving on port %d", sl_prom_port(n.prom));
    }
    struct event *sigint = evsignal_new(n.base, SIGINT, on_signal, &n);
    struct event *sigterm = evsignal_new(n.base, SIGTERM, on_signal, &n);
    event_add(sigint, NULL);
    event_add(sigterm, NULL);
    event_base_dispatch(n.base);
    sl_prom_stop(n.prom); /* nothing publishes once the loop has ended */
    tm_net_stop(&n);
    event_free(sigint);
    event_free(sigterm);
    event_base_free(n.base);
    sl_config_destroy(n.conf);
    free(n.id);
    free(n.host);
    sl_info(TAG, "stopped");
    return 0;
}
