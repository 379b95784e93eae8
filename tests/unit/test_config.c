/*
 * test_config.c -- the configuration table, its YAML reader and parsers.
 *
 * Files are written to mkstemp() temporaries; every expected number and
 * message below is written out by hand from the documented defaults, units
 * and error formats, not computed with the code under test.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "sl_test.h"

/* Write `text` to a fresh temporary file whose name goes into `path`. */
static void write_temp(char path[64], const char *text)
{
    snprintf(path, 64, "/tmp/sl_test_config_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); abort(); }
    size_t n = strlen(text);
    if (write(fd, text, n) != (ssize_t)n) { perror("write"); abort(); }
    close(fd);
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void test_defaults(void)
{
    sl_config *c = sl_config_new();
    CHECK_EQ_STR(sl_config_str(c, "jobmanager.rpc.address"), "localhost");
    CHECK_EQ_INT(sl_config_int(c, "jobmanager.rpc.port"), 6123);
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 8081);
    CHECK_EQ_STR(sl_config_str(c, "rest.address"), "localhost");
    CHECK_EQ_STR(sl_config_str(c, "rest.bind-address"), "127.0.0.1");
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.numberOfTaskSlots"), 1);
    CHECK_EQ_STR(sl_config_str(c, "taskmanager.host"), "");
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.data.port"), 0);
    CHECK_EQ_STR(sl_config_str(c, "taskmanager.resource-id"), "");
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.memory.process.size"), 1811939328LL);
    CHECK_EQ_STR(sl_config_str(c, "taskmanager.tmp.dirs"), "/tmp");
    CHECK_EQ_INT(sl_config_int(c, "parallelism.default"), 1);
    CHECK_EQ_INT(sl_config_int(c, "heartbeat.interval"), 10000);
    CHECK_EQ_INT(sl_config_int(c, "heartbeat.timeout"), 50000);
    CHECK_EQ_INT(sl_config_int(c, "slot.request.timeout"), 300000);
    CHECK_EQ_INT(sl_config_int(c, "execution.buffer-timeout"), 100);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.network.memory.buffers-per-channel"), 2);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.network.memory.floating-buffers-per-gate"), 8);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.memory.segment-size"), 32768);
    CHECK_EQ_STR(sl_config_str(c, "state.backend.type"), "hashmap");
    CHECK_EQ_INT(sl_config_int(c, "state.backend.type"), 0);
    CHECK_EQ_STR(sl_config_str(c, "state.checkpoints.dir"), "");
    CHECK_EQ_STR(sl_config_str(c, "state.savepoints.dir"), "");
    CHECK_EQ_INT(sl_config_int(c, "state.checkpoints.num-retained"), 1);
    CHECK_EQ_INT(sl_config_int(c, "execution.checkpointing.interval"), 0);
    CHECK_EQ_INT(sl_config_int(c, "execution.checkpointing.timeout"), 600000);
    CHECK_EQ_INT(sl_config_int(c, "execution.checkpointing.min-pause"), 0);
    CHECK_EQ_INT(sl_config_int(c, "execution.checkpointing.max-concurrent-checkpoints"), 1);
    CHECK_EQ_INT(sl_config_int(c, "execution.checkpointing.tolerable-failed-checkpoints"), 0);
    CHECK_EQ_STR(sl_config_str(c, "execution.checkpointing.mode"), "EXACTLY_ONCE");
    /* no default, as in Flink: the strategy follows checkpointing */
    CHECK_EQ_STR(sl_config_str(c, "restart-strategy.type"), "");
    CHECK_EQ_STR(sl_config_restart_strategy(c), "none");
    CHECK_EQ_INT(sl_config_int(c, "restart-strategy.fixed-delay.attempts"), 3);
    CHECK_EQ_INT(sl_config_int(c, "restart-strategy.fixed-delay.delay"), 1000);
    CHECK_EQ_INT(sl_config_int(c, "pipeline.auto-watermark-interval"), 200);
    /* Flink's exponential-delay and job store defaults */
    CHECK_EQ_INT(sl_config_int(c, "restart-strategy.exponential-delay.initial-backoff"), 1000);
    CHECK_EQ_INT(sl_config_int(c, "restart-strategy.exponential-delay.max-backoff"), 60000);
    CHECK(sl_config_double(c, "restart-strategy.exponential-delay.backoff-multiplier") == 1.5);
    CHECK_EQ_INT(sl_config_int(c, "restart-strategy.exponential-delay.reset-backoff-threshold"),
                 3600000);
    CHECK(sl_config_double(c, "restart-strategy.exponential-delay.jitter-factor") == 0.1);
    CHECK_EQ_INT(sl_config_int(c, "restart-strategy.exponential-delay.attempts-before-reset-backoff"),
                 2147483647);
    CHECK_EQ_INT(sl_config_int(c, "jobstore.max-capacity"), 2147483647);
    CHECK_EQ_INT(sl_config_int(c, "jobstore.expiration-time"), 3600000);
    CHECK_EQ_STR(sl_config_str(c, "rest.auth-token"), "");
    CHECK_EQ_INT(sl_config_int(c, "web.checkpoints.history"), 10);
    CHECK_EQ_STR(sl_config_str(c, "log.level"), "INFO");
    CHECK_EQ_STR(sl_config_str(c, "sluice.local.print-file"), "");
    sl_config_destroy(c);
    sl_config_destroy(NULL);
}

static void test_entries(void)
{
    /* The keys this library promises; others may be added to the table. */
    static const char *const required[] = {
        "jobmanager.rpc.address", "jobmanager.rpc.port", "rest.port", "rest.address",
        "rest.bind-address", "taskmanager.numberOfTaskSlots", "taskmanager.host",
        "taskmanager.data.port", "taskmanager.resource-id", "taskmanager.memory.process.size",
        "taskmanager.tmp.dirs", "parallelism.default", "heartbeat.interval",
        "heartbeat.timeout", "slot.request.timeout", "execution.buffer-timeout",
        "taskmanager.network.memory.buffers-per-channel",
        "taskmanager.network.memory.floating-buffers-per-gate",
        "taskmanager.memory.segment-size", "state.backend.type", "state.checkpoints.dir",
        "state.savepoints.dir", "state.checkpoints.num-retained",
        "execution.checkpointing.interval", "execution.checkpointing.timeout",
        "execution.checkpointing.min-pause",
        "execution.checkpointing.max-concurrent-checkpoints",
        "execution.checkpointing.tolerable-failed-checkpoints",
        "execution.checkpointing.mode", "restart-strategy.type",
        "restart-strategy.fixed-delay.attempts", "restart-strategy.fixed-delay.delay",
        "pipeline.auto-watermark-interval", "rest.auth-token", "web.checkpoints.history",
        "log.level", "sluice.local.print-file",
    };
    sl_config *c = sl_config_new();
    CHECK(sl_config_count(c) >= (int)(sizeof required / sizeof required[0]));
    for (size_t r = 0; r < sizeof required / sizeof required[0]; r++) {
        int found = 0;
        for (int i = 0; i < sl_config_count(c); i++) {
            const char *k;
            sl_config_entry(c, i, &k, NULL);
            found |= strcmp(k, required[r]) == 0;
        }
        if (!found) fprintf(stderr, "missing key %s\n", required[r]);
        CHECK(found);
    }
    int seen_rest_port = 0;
    for (int i = 0; i < sl_config_count(c); i++) {
        const char *k, *v;
        sl_config_entry(c, i, &k, &v);
        CHECK(k != NULL && v != NULL);
        for (int j = 0; j < i; j++) {
            const char *k2;
            sl_config_entry(c, j, &k2, NULL);
            CHECK(strcmp(k, k2) != 0);
        }
        if (strcmp(k, "rest.port") == 0) {
            CHECK_EQ_STR(v, "8081");
            seen_rest_port = 1;
        }
    }
    CHECK(seen_rest_port);
    sl_config_destroy(c);
}

static void test_parse_duration(void)
{
    int64_t v = -1;
    CHECK(sl_parse_duration_ms("10 s", &v) == SL_OK); CHECK_EQ_INT(v, 10000);
    CHECK(sl_parse_duration_ms("10s", &v) == SL_OK); CHECK_EQ_INT(v, 10000);
    CHECK(sl_parse_duration_ms("500 ms", &v) == SL_OK); CHECK_EQ_INT(v, 500);
    CHECK(sl_parse_duration_ms("1 min", &v) == SL_OK); CHECK_EQ_INT(v, 60000);
    CHECK(sl_parse_duration_ms("3m", &v) == SL_OK); CHECK_EQ_INT(v, 180000);
    CHECK(sl_parse_duration_ms("2 h", &v) == SL_OK); CHECK_EQ_INT(v, 7200000);
    CHECK(sl_parse_duration_ms("1 d", &v) == SL_OK); CHECK_EQ_INT(v, 86400000);
    CHECK(sl_parse_duration_ms("50000", &v) == SL_OK); CHECK_EQ_INT(v, 50000);
    CHECK(sl_parse_duration_ms("0", &v) == SL_OK); CHECK_EQ_INT(v, 0);
    CHECK(sl_parse_duration_ms(" 7 SECONDS ", &v) == SL_OK); CHECK_EQ_INT(v, 7000);
    CHECK(sl_parse_duration_ms("5 minutes", &v) == SL_OK); CHECK_EQ_INT(v, 300000);
    v = 42;
    CHECK(sl_parse_duration_ms("", &v) == SL_ERR);
    CHECK(sl_parse_duration_ms("abc", &v) == SL_ERR);
    CHECK(sl_parse_duration_ms("s", &v) == SL_ERR);
    CHECK(sl_parse_duration_ms("-1 s", &v) == SL_ERR);
    CHECK(sl_parse_duration_ms("1.5 s", &v) == SL_ERR);
    CHECK(sl_parse_duration_ms("10 parsecs", &v) == SL_ERR);
    CHECK(sl_parse_duration_ms("10 s x", &v) == SL_ERR);
    CHECK(sl_parse_duration_ms("99999999999999999999", &v) == SL_ERR);
    CHECK(sl_parse_duration_ms("9223372036854775807 d", &v) == SL_ERR);
    CHECK_EQ_INT(v, 42); /* untouched on failure */
}

static void test_parse_memory(void)
{
    int64_t v = -1;
    CHECK(sl_parse_memory("32kb", &v) == SL_OK); CHECK_EQ_INT(v, 32768);
    CHECK(sl_parse_memory("64 mb", &v) == SL_OK); CHECK_EQ_INT(v, 67108864);
    CHECK(sl_parse_memory("1g", &v) == SL_OK); CHECK_EQ_INT(v, 1073741824);
    CHECK(sl_parse_memory("1728m", &v) == SL_OK); CHECK_EQ_INT(v, 1811939328LL);
    CHECK(sl_parse_memory("1024", &v) == SL_OK); CHECK_EQ_INT(v, 1024);
    CHECK(sl_parse_memory("3 KB", &v) == SL_OK); CHECK_EQ_INT(v, 3072);
    CHECK(sl_parse_memory("2t", &v) == SL_OK); CHECK_EQ_INT(v, 2199023255552LL);
    CHECK(sl_parse_memory("7 bytes", &v) == SL_OK); CHECK_EQ_INT(v, 7);
    CHECK(sl_parse_memory("", &v) == SL_ERR);
    CHECK(sl_parse_memory("mb", &v) == SL_ERR);
    CHECK(sl_parse_memory("1.5g", &v) == SL_ERR);
    CHECK(sl_parse_memory("10 ms", &v) == SL_ERR);
    CHECK(sl_parse_memory("-1", &v) == SL_ERR);
    CHECK(sl_parse_memory("9999999999 tb", &v) == SL_ERR);
}

static void test_parse_int_bool(void)
{
    int64_t v = 0;
    CHECK(sl_parse_int("42", &v) == SL_OK); CHECK_EQ_INT(v, 42);
    CHECK(sl_parse_int("-7", &v) == SL_OK); CHECK_EQ_INT(v, -7);
    CHECK(sl_parse_int("+3", &v) == SL_OK); CHECK_EQ_INT(v, 3);
    CHECK(sl_parse_int(" 5 ", &v) == SL_OK); CHECK_EQ_INT(v, 5);
    CHECK(sl_parse_int("9223372036854775807", &v) == SL_OK); CHECK(v == INT64_MAX);
    CHECK(sl_parse_int("-9223372036854775808", &v) == SL_OK); CHECK(v == INT64_MIN);
    CHECK(sl_parse_int("9223372036854775808", &v) == SL_ERR);
    CHECK(sl_parse_int("", &v) == SL_ERR);
    CHECK(sl_parse_int("-", &v) == SL_ERR);
    CHECK(sl_parse_int("4x", &v) == SL_ERR);
    CHECK(sl_parse_int("1 2", &v) == SL_ERR);
    int b = -1;
    CHECK(sl_parse_bool("true", &b) == SL_OK); CHECK_EQ_INT(b, 1);
    CHECK(sl_parse_bool("FALSE", &b) == SL_OK); CHECK_EQ_INT(b, 0);
    CHECK(sl_parse_bool("yes", &b) == SL_OK); CHECK_EQ_INT(b, 1);
    CHECK(sl_parse_bool("off", &b) == SL_OK); CHECK_EQ_INT(b, 0);
    CHECK(sl_parse_bool("maybe", &b) == SL_ERR);
}

static void test_set_values(void)
{
    sl_config *c = sl_config_new();
    char err[256] = "";
    CHECK(sl_config_set(c, "rest.port", "9091", "test", err, sizeof err) == SL_OK);
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 9091);
    CHECK_EQ_STR(sl_config_str(c, "rest.port"), "9091");
    CHECK(sl_config_set(c, "heartbeat.timeout", "2 min", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_INT(sl_config_int(c, "heartbeat.timeout"), 120000);
    CHECK_EQ_STR(sl_config_str(c, "heartbeat.timeout"), "2 min");
    CHECK(sl_config_set(c, "state.backend.type", "RocksDB", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "state.backend.type"), "rocksdb");
    CHECK_EQ_INT(sl_config_int(c, "state.backend.type"), 1);
    /* not set: exponential-delay with checkpointing on, none with it off;
     * set: what it says, checkpointing or not */
    CHECK(sl_config_set(c, "execution.checkpointing.interval", "10 s", NULL, err,
                        sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_restart_strategy(c), "exponential-delay");
    CHECK(sl_config_set(c, "restart-strategy.type", "disable", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "restart-strategy.type"), "none");
    CHECK_EQ_STR(sl_config_restart_strategy(c), "none");
    CHECK(sl_config_set(c, "restart-strategy.type", "", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_restart_strategy(c), "exponential-delay");
    CHECK(sl_config_set(c, "execution.checkpointing.interval", "0", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_restart_strategy(c), "none");
    CHECK(sl_config_set(c, "restart-strategy.type", "fixed-delay", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_restart_strategy(c), "fixed-delay");
    CHECK(sl_config_set(c, "restart-strategy.type", "disable", NULL, err, sizeof err) == SL_OK);
    CHECK(sl_config_set(c, "restart-strategy.type", "fixed-delay", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "restart-strategy.type"), "fixed-delay");
    CHECK(sl_config_set(c, "restart-strategy.type", "off", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "restart-strategy.type"), "none");
    CHECK(sl_config_set(c, "restart-strategy.type", "exponentialdelay", NULL, err,
                        sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "restart-strategy.type"), "exponential-delay");
    CHECK(sl_config_set(c, "log.level", "debug", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "log.level"), "DEBUG");
    CHECK(sl_config_set(c, "log.level", "Warning", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "log.level"), "WARN");
    CHECK(sl_config_set(c, "execution.checkpointing.mode", "at_least_once", NULL, err,
                        sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "execution.checkpointing.mode"), "AT_LEAST_ONCE");
    CHECK(sl_config_set(c, "taskmanager.memory.process.size", "2g", NULL, err, sizeof err) ==
          SL_OK);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.memory.process.size"), 2147483648LL);

    /* errors: exact text, and the old value survives */
    CHECK(sl_config_set(c, "rest.port", "abc", "conf/sluice.yaml:7", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "conf/sluice.yaml:7: rest.port: 'abc' is not a port number (0-65535)");
    CHECK(sl_config_set(c, "rest.port", "65536", "x", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "x: rest.port: '65536' is not a port number (0-65535)");
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 9091);
    CHECK(sl_config_set(c, "taskmanager.numberOfTaskSlots", "0", "-D", err, sizeof err) ==
          SL_ERR);
    CHECK_EQ_STR(err, "-D: taskmanager.numberOfTaskSlots: '0' is out of range (1 to 65536)");
    CHECK(sl_config_set(c, "parallelism.default", "two", NULL, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "parallelism.default: 'two' is not an integer");
    CHECK(sl_config_set(c, "state.backend.type", "memory", NULL, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "state.backend.type: 'memory' is not one of: hashmap, rocksdb");
    CHECK(sl_config_set(c, "restart-strategy.type", "failure-rate", NULL, err, sizeof err) ==
          SL_ERR);
    CHECK_EQ_STR(err, "restart-strategy.type: 'failure-rate' is not one of: none, fixed-delay, "
                      "exponential-delay");
    CHECK(sl_config_set(c, "heartbeat.interval", "soon", NULL, err, sizeof err) == SL_ERR);
    CHECK(starts_with(err, "heartbeat.interval: 'soon' is not a duration (like '500 ms'"));
    CHECK(sl_config_set(c, "heartbeat.interval", "0", NULL, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "heartbeat.interval: '0' is out of range (at least 1 ms)");
    CHECK(sl_config_set(c, "taskmanager.memory.segment-size", "lots", NULL, err, sizeof err) ==
          SL_ERR);
    CHECK(starts_with(err, "taskmanager.memory.segment-size: 'lots' is not a memory size"));
    CHECK(sl_config_set(c, "rest.prot", "1", "-D", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "-D: unknown configuration key 'rest.prot'; did you mean 'rest.port'?");
    CHECK(sl_config_set(c, "taskmanager.numberoftaskslots", "1", "-D", err, sizeof err) ==
          SL_ERR);
    CHECK_EQ_STR(err, "-D: unknown configuration key 'taskmanager.numberoftaskslots'; did you "
                      "mean 'taskmanager.numberOfTaskSlots'?");
    CHECK(sl_config_set(c, "completely.different", "1", "-D", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "-D: unknown configuration key 'completely.different'");
    CHECK(sl_config_set(c, "rest.port", "1", NULL, NULL, 0) == SL_OK); /* err may be NULL */
    CHECK(sl_config_set(c, "rest.port", "x", NULL, NULL, 0) == SL_ERR);
    sl_config_destroy(c);
}

static void test_set_kv(void)
{
    sl_config *c = sl_config_new();
    char err[256] = "";
    CHECK(sl_config_set_kv(c, "rest.port=8082", err, sizeof err) == SL_OK);
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 8082);
    CHECK(sl_config_set_kv(c, " rest.auth-token = a=b ", err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "rest.auth-token"), "a=b");
    CHECK(sl_config_set_kv(c, "state.checkpoints.dir=", err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "state.checkpoints.dir"), "");
    CHECK(sl_config_set_kv(c, "rest.port", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "-D: expected key=value, got 'rest.port'");
    CHECK(sl_config_set_kv(c, "=5", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "-D: expected key=value, got '=5'");
    CHECK(sl_config_set_kv(c, "rest.prot=1", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "-D: unknown configuration key 'rest.prot'; did you mean 'rest.port'?");
    sl_config_destroy(c);
}

static void test_yaml_flat_and_nested(void)
{
    const char *text =
        "# Sluice test configuration\n"
        "\n"
        "jobmanager.rpc.address: jm.example   # trailing comment\n"
        "rest.port: 9000\n"
        "rest.auth-token: \"se#cret: 'x'\"  # quoted hash is no comment\n"
        "state.checkpoints.dir: 'file:///tmp/it''s'\n"
        "taskmanager.host: a#b\n"
        "taskmanager:\n"
        "  numberOfTaskSlots: 4\n"
        "  memory:\n"
        "    process.size: 2 gb\n"
        "    segment-size: 64kb\n"
        "\n"
        "  # comment inside a map\n"
        "  data.port: 6121\n"
        "state.savepoints.dir:\n"
        "heartbeat:\n"
        "    interval: 3 s\n"
        "    timeout: \"1 min\"\n"
        "log.level: warn\r\n"
        "sluice.local.print-file: \"tab\\there\"\n"
        "rest.address:";
    sl_config *c = sl_config_new();
    char err[256] = "";
    sl_config_set(c, "state.savepoints.dir", "/old", NULL, NULL, 0);
    sl_config_set(c, "rest.address", "old", NULL, NULL, 0);
    int rc = sl_config_load_text(c, text, "mem", err, sizeof err);
    if (rc != SL_OK) fprintf(stderr, "error: %s\n", err);
    CHECK(rc == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "jobmanager.rpc.address"), "jm.example");
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 9000);
    CHECK_EQ_STR(sl_config_str(c, "rest.auth-token"), "se#cret: 'x'");
    CHECK_EQ_STR(sl_config_str(c, "state.checkpoints.dir"), "/tmp/it's"); /* a file:// URI is its path */
    CHECK_EQ_STR(sl_config_str(c, "taskmanager.host"), "a#b");
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.numberOfTaskSlots"), 4);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.memory.process.size"), 2147483648LL);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.memory.segment-size"), 65536);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.data.port"), 6121);
    CHECK_EQ_STR(sl_config_str(c, "state.savepoints.dir"), "");
    CHECK_EQ_INT(sl_config_int(c, "heartbeat.interval"), 3000);
    CHECK_EQ_INT(sl_config_int(c, "heartbeat.timeout"), 60000);
    CHECK_EQ_STR(sl_config_str(c, "log.level"), "WARN");
    CHECK_EQ_STR(sl_config_str(c, "sluice.local.print-file"), "tab\there");
    CHECK_EQ_STR(sl_config_str(c, "rest.address"), "");
    sl_config_destroy(c);
}

/* Load `text` and expect failure with exactly `expected`. */
static int yaml_error_is(const char *text, const char *expected)
{
    sl_config *c = sl_config_new();
    char err[256] = "";
    int rc = sl_config_load_text(c, text, "conf/sluice.yaml", err, sizeof err);
    sl_config_destroy(c);
    if (rc != SL_ERR) {
        fprintf(stderr, "expected an error for: %s\n", text);
        return 0;
    }
    if (strcmp(err, expected) != 0) {
        fprintf(stderr, "got      \"%s\"\nexpected \"%s\"\n", err, expected);
        return 0;
    }
    return 1;
}

static void test_yaml_errors(void)
{
    CHECK(yaml_error_is("a: b\n", "conf/sluice.yaml:1: unknown configuration key 'a'"));
    CHECK(yaml_error_is("# one\n# two\n\n\n\n\nrest.port: abc\n",
                        "conf/sluice.yaml:7: rest.port: 'abc' is not a port number (0-65535)"));
    CHECK(yaml_error_is("rest:\n\tport: 1\n",
                        "conf/sluice.yaml:2: tab character used for indentation (use spaces)"));
    CHECK(yaml_error_is("rest.port 8081\n",
                        "conf/sluice.yaml:1: expected 'key: value', got 'rest.port 8081'"));
    CHECK(yaml_error_is("rest.port:8081\n",
                        "conf/sluice.yaml:1: expected 'key: value', got 'rest.port:8081'"));
    CHECK(yaml_error_is("taskmanager.tmp.dirs:\n  - /a\n  - /b\n",
                        "conf/sluice.yaml:2: lists are not supported in the configuration"));
    CHECK(yaml_error_is("taskmanager.tmp.dirs: [/a, /b]\n",
                        "conf/sluice.yaml:1: lists are not supported in the configuration "
                        "(quote the value if it is text)"));
    CHECK(yaml_error_is("rest.auth-token: \"abc\n",
                        "conf/sluice.yaml:1: unterminated quoted value or bad escape"));
    CHECK(yaml_error_is("rest.auth-token: 'abc' def\n",
                        "conf/sluice.yaml:1: unexpected text after the closing quote"));
    CHECK(yaml_error_is("rest:\n  port: 1\n   address: x\n",
                        "conf/sluice.yaml:3: inconsistent indentation"));
    CHECK(yaml_error_is("  rest.port: 1\nrest.address: x\n",
                        "conf/sluice.yaml:2: inconsistent indentation"));
    CHECK(yaml_error_is("rest.port: 1\n  rest.address: x\n",
                        "conf/sluice.yaml:2: inconsistent indentation"));
    CHECK(yaml_error_is("rest:\n  prot: 1\n",
                        "conf/sluice.yaml:2: unknown configuration key 'rest.prot'; did you "
                        "mean 'rest.port'?"));
    CHECK(yaml_error_is("rest port: 1\n",
                        "conf/sluice.yaml:1: invalid configuration key 'rest port'"));
    CHECK(yaml_error_is(": 1\n", "conf/sluice.yaml:1: missing key before ':'"));
    CHECK(yaml_error_is("rest.port: |\n  8081\n",
                        "conf/sluice.yaml:1: multi-line values are not supported (quote the "
                        "value)"));
    /* a bare `key:` at the end sets the empty value, which a port refuses */
    CHECK(yaml_error_is("rest.port:\n",
                        "conf/sluice.yaml:1: rest.port: '' is not a port number (0-65535)"));
}

static void test_load_file(void)
{
    char path[64];
    write_temp(path, "rest.port: 7070\nparallelism.default: 3\n");
    sl_config *c = sl_config_new();
    char err[256] = "";
    CHECK(sl_config_load_file(c, path, 1, err, sizeof err) == SL_OK);
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 7070);
    CHECK_EQ_INT(sl_config_int(c, "parallelism.default"), 3);
    unlink(path);

    write_temp(path, "rest.port: 1\nheartbeat.timeout: never\n");
    CHECK(sl_config_load_file(c, path, 1, err, sizeof err) == SL_ERR);
    char expected[256];
    snprintf(expected, sizeof expected, "%s:2: heartbeat.timeout: 'never' is not a duration",
             path);
    CHECK(starts_with(err, expected));
    unlink(path);

    /* missing: fine when optional, an error when required */
    CHECK(sl_config_load_file(c, "/nonexistent/sluice.yaml", 0, err, sizeof err) == SL_OK);
    CHECK(sl_config_load_file(c, "/nonexistent/sluice.yaml", 1, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "configuration file '/nonexistent/sluice.yaml' does not exist");
    sl_config_destroy(c);
}

/* Run sl_config_from_args with stdout captured into `out`. */
static int from_args(sl_config *c, int argc, char **argv, const char *dflt, char *err,
                     size_t errlen, char *out, size_t outlen)
{
    char path[64];
    write_temp(path, "");
    fflush(stdout);
    int saved = dup(1);
    int fd = open(path, O_WRONLY | O_TRUNC);
    dup2(fd, 1);
    close(fd);
    int rc = sl_config_from_args(c, argc, argv, dflt, err, errlen);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(out, 1, outlen - 1, f) : 0;
    out[n] = '\0';
    if (f) fclose(f);
    unlink(path);
    return rc;
}

static void test_from_args_precedence(void)
{
    char path[64];
    write_temp(path, "rest.port: 1000\nparallelism.default: 2\njobmanager.rpc.port: 7000\n"
                     "rest.address: from-file\n");
    char *argv[] = {"/usr/bin/sluice-jobmanager", "--config", path, "-D", "rest.port=3000",
                    "-Drest.address=from-flag"};
    setenv("SLUICE_PROPERTIES", "rest.port: 2000\nparallelism.default: 3\n"
                                "rest.address: from-env\n", 1);
    sl_config *c = sl_config_new();
    char err[256] = "", out[256];
    int rc = from_args(c, 6, argv, "/nonexistent/default.yaml", err, sizeof err, out, sizeof out);
    unsetenv("SLUICE_PROPERTIES");
    unlink(path);
    CHECK(rc == SL_OK);
    CHECK_EQ_STR(out, "");
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 3000);           /* -D wins */
    CHECK_EQ_INT(sl_config_int(c, "parallelism.default"), 3);     /* env over file */
    CHECK_EQ_INT(sl_config_int(c, "jobmanager.rpc.port"), 7000);  /* file over default */
    CHECK_EQ_STR(sl_config_str(c, "rest.address"), "from-flag");  /* -Dkey=value form */
    CHECK_EQ_INT(sl_config_int(c, "heartbeat.timeout"), 50000);   /* default */
    sl_config_destroy(c);
}

static void test_from_args_default_path(void)
{
    char path[64];
    write_temp(path, "rest.port: 4444\n");
    char *argv[] = {"sluice-taskmanager"};
    sl_config *c = sl_config_new();
    char err[256] = "", out[64];
    CHECK(from_args(c, 1, argv, path, err, sizeof err, out, sizeof out) == SL_OK);
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 4444);
    unlink(path);
    /* a missing default file is not an error */
    CHECK(from_args(c, 1, argv, path, err, sizeof err, out, sizeof out) == SL_OK);
    CHECK(from_args(c, 1, argv, NULL, err, sizeof err, out, sizeof out) == SL_OK);
    sl_config_destroy(c);
}

static void test_from_args_errors(void)
{
    sl_config *c = sl_config_new();
    char err[256] = "", out[64];
    char *a1[] = {"jm", "--config", "/nonexistent/x.yaml"};
    CHECK(from_args(c, 3, a1, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "configuration file '/nonexistent/x.yaml' does not exist");
    char *a2[] = {"jm", "--verbose"};
    CHECK(from_args(c, 2, a2, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "unknown argument '--verbose' (try --help)");
    char *a3[] = {"jm", "-D"};
    CHECK(from_args(c, 2, a3, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "-D needs key=value");
    char *a4[] = {"jm", "-Drest.prot=1"};
    CHECK(from_args(c, 2, a4, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "-D: unknown configuration key 'rest.prot'; did you mean 'rest.port'?");
    char *a5[] = {"jm", "--config"};
    CHECK(from_args(c, 2, a5, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "--config needs a file name");
    char *a6[] = {"jm", "stray"};
    CHECK(from_args(c, 2, a6, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "unknown argument 'stray' (try --help)");
    setenv("SLUICE_PROPERTIES", "rest.port: 1\nrest.port: no\n", 1);
    char *a7[] = {"jm"};
    int rc = from_args(c, 1, a7, NULL, err, sizeof err, out, sizeof out);
    unsetenv("SLUICE_PROPERTIES");
    CHECK(rc == SL_ERR);
    CHECK_EQ_STR(err, "SLUICE_PROPERTIES:2: rest.port: 'no' is not a port number (0-65535)");
    sl_config_destroy(c);
}

/* Checks across keys, made at start-up (sl_config_from_args -> sl_config_check). */
static void test_cross_checks(void)
{
    sl_config *c = sl_config_new();
    char err[256] = "", out[64];
    CHECK(sl_config_check(c, err, sizeof err) == SL_OK); /* the defaults pass */

    char *a1[] = {"jm", "-Dheartbeat.interval=10 s", "-Dheartbeat.timeout=5 s"};
    CHECK(from_args(c, 3, a1, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "heartbeat.timeout (5000 ms) must be larger than heartbeat.interval "
                      "(10000 ms): a peer would be declared lost between two heartbeats");
    /* equal is refused too: the timeout must be larger */
    char *a2[] = {"jm", "-Dheartbeat.interval=2 s", "-Dheartbeat.timeout=2000"};
    CHECK(from_args(c, 3, a2, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "heartbeat.timeout (2000 ms) must be larger than heartbeat.interval "
                      "(2000 ms): a peer would be declared lost between two heartbeats");
    char *a3[] = {"jm", "-Dheartbeat.interval=200 ms", "-Dheartbeat.timeout=201 ms"};
    CHECK(from_args(c, 3, a3, NULL, err, sizeof err, out, sizeof out) == SL_OK);

    char *a4[] = {"jm", "-Dexecution.checkpointing.max-concurrent-checkpoints=2"};
    CHECK(from_args(c, 2, a4, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "execution.checkpointing.max-concurrent-checkpoints: 2 is not supported: "
                      "Sluice runs one checkpoint at a time (set it to 1)");
    CHECK(sl_config_set(c, "execution.checkpointing.max-concurrent-checkpoints", "1", NULL, err,
                        sizeof err) == SL_OK);
    CHECK(sl_config_set(c, "execution.checkpointing.max-concurrent-checkpoints", "0", NULL, err,
                        sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "execution.checkpointing.max-concurrent-checkpoints: '0' is out of range "
                      "(1 to 2147483647)");

    char *a5[] = {"jm", "-Drestart-strategy.exponential-delay.initial-backoff=2 min",
                  "-Drestart-strategy.exponential-delay.max-backoff=1 min"};
    CHECK(from_args(c, 3, a5, NULL, err, sizeof err, out, sizeof out) == SL_ERR);
    CHECK_EQ_STR(err, "restart-strategy.exponential-delay.initial-backoff (120000 ms) must not be "
                      "larger than restart-strategy.exponential-delay.max-backoff (60000 ms)");
    sl_config_destroy(c);
}

/* DOUBLE keys: decimal numbers within their bounds. */
static void test_double_values(void)
{
    sl_config *c = sl_config_new();
    char err[256] = "";
    const char *m = "restart-strategy.exponential-delay.backoff-multiplier";
    const char *jf = "restart-strategy.exponential-delay.jitter-factor";
    CHECK(sl_config_set(c, m, "2", NULL, err, sizeof err) == SL_OK);
    CHECK(sl_config_double(c, m) == 2.0);
    CHECK(sl_config_set(c, m, " 1.25 ", NULL, err, sizeof err) == SL_OK);
    CHECK(sl_config_double(c, m) == 1.25);
    CHECK(sl_config_set(c, m, "0.5", NULL, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "restart-strategy.exponential-delay.backoff-multiplier: '0.5' is out of "
                      "range (1 to 1000000)");
    CHECK(sl_config_set(c, m, "fast", "conf.yaml:3", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "conf.yaml:3: restart-strategy.exponential-delay.backoff-multiplier: 'fast' "
                      "is not a number");
    CHECK(sl_config_set(c, m, "2x", NULL, err, sizeof err) == SL_ERR);
    CHECK(sl_config_set(c, m, "", NULL, err, sizeof err) == SL_ERR);
    CHECK(sl_config_set(c, m, "inf", NULL, err, sizeof err) == SL_ERR);
    CHECK(sl_config_set(c, m, "nan", NULL, err, sizeof err) == SL_ERR);
    CHECK(sl_config_double(c, m) == 1.25); /* refused values leave the last good one */
    CHECK(sl_config_set(c, jf, "0", NULL, err, sizeof err) == SL_OK);
    CHECK(sl_config_double(c, jf) == 0.0);
    CHECK(sl_config_set(c, jf, "1", NULL, err, sizeof err) == SL_OK);
    CHECK(sl_config_set(c, jf, "1.01", NULL, err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "restart-strategy.exponential-delay.jitter-factor: '1.01' is out of range "
                      "(0 to 1)");
    CHECK(sl_config_set(c, jf, "-0.1", NULL, err, sizeof err) == SL_ERR);
    sl_config_destroy(c);
}

static void test_help(void)
{
    sl_config *c = sl_config_new();
    char err[256] = "";
    static char out[65536];
    char *argv[] = {"/opt/bin/sluice-jobmanager", "-D", "rest.port=1", "--help"};
    CHECK(from_args(c, 4, argv, "conf/sluice.yaml", err, sizeof err, out, sizeof out) == SL_DONE);
    CHECK(starts_with(out, "Usage: sluice-jobmanager [--config FILE]"));
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 8081); /* nothing applied */
    for (int i = 0; i < sl_config_count(c); i++) {
        const char *k;
        sl_config_entry(c, i, &k, NULL);
        char line[160];
        snprintf(line, sizeof line, "\n  %s  [", k);
        if (!strstr(out, line)) fprintf(stderr, "help lacks %s\n", k);
        CHECK(strstr(out, line) != NULL);
    }
    CHECK(strstr(out, "  rest.port  [port, default '8081']\n      Port of the REST API") != NULL);
    CHECK(strstr(out, "  state.backend.type  [hashmap,rocksdb, default 'hashmap']\n") != NULL);
    CHECK(strstr(out, "  taskmanager.host  [string, default empty]\n") != NULL);
    sl_config_destroy(c);
}

/* The shipped conf/sluice.yaml must load and keep the documented defaults
 * for a local cluster. Found next to the binary's build tree or the cwd. */
static void test_shipped_file(void)
{
    char exe[PATH_MAX], path[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const char *found = NULL;
    if (access("conf/sluice.yaml", R_OK) == 0) {
        found = "conf/sluice.yaml";
    } else if (n > 0) {
        exe[n] = '\0';
        for (int up = 0; up < 3; up++) { /* build/tests/test_config -> repo root */
            char *slash = strrchr(exe, '/');
            if (slash) *slash = '\0';
        }
        snprintf(path, sizeof path, "%s/conf/sluice.yaml", exe);
        if (access(path, R_OK) == 0) found = path;
    }
    CHECK(found != NULL);
    sl_config *c = sl_config_new();
    char err[256] = "";
    int rc = sl_config_load_file(c, found, 1, err, sizeof err);
    if (rc != SL_OK) fprintf(stderr, "%s\n", err);
    CHECK(rc == SL_OK);
    CHECK_EQ_INT(sl_config_int(c, "rest.port"), 8081);
    CHECK_EQ_INT(sl_config_int(c, "jobmanager.rpc.port"), 6123);
    CHECK_EQ_STR(sl_config_str(c, "rest.bind-address"), "127.0.0.1");
    /* Flink's restart default: the file leaves the strategy unset */
    CHECK_EQ_STR(sl_config_str(c, "restart-strategy.type"), "");
    sl_config_destroy(c);
}

/* file:// URIs and plain paths name the same directory, for every
 * directory key; other file systems and hosts are refused by name. */
static void test_directory_uris(void)
{
    static const char *const keys[] = {"state.checkpoints.dir", "state.savepoints.dir",
                                       "taskmanager.tmp.dirs"};
    static const char *const forms[] = {"/data/x", "file:///data/x", "file:/data/x",
                                        "file://localhost/data/x"};
    char err[256];
    for (size_t k = 0; k < SL_ARRAY_LEN(keys); k++)
        for (size_t f = 0; f < SL_ARRAY_LEN(forms); f++) {
            sl_config *c = sl_config_new();
            CHECK(sl_config_set(c, keys[k], forms[f], NULL, err, sizeof err) == SL_OK);
            CHECK_EQ_STR(sl_config_str(c, keys[k]), "/data/x");
            sl_config_destroy(c);
        }
    sl_config *c = sl_config_new();
    CHECK(sl_config_set(c, "state.checkpoints.dir", "", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "state.checkpoints.dir"), "");
    /* s3:// for the snapshot directories (core/store.h), checked for its form */
    CHECK(sl_config_set(c, "state.checkpoints.dir", "s3://bucket/ck/", "f.yaml:3", err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "state.checkpoints.dir"), "s3://bucket/ck");
    CHECK(sl_config_set(c, "state.savepoints.dir", "s3://Bucket/sp", "f.yaml:4", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "f.yaml:4: state.savepoints.dir: 's3://Bucket/sp': bucket names have lower-case "
                      "letters, digits, '-' and '.' only");
    CHECK(sl_config_set(c, "state.savepoints.dir", "s3://bucket/a/../b", NULL, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "'.' and '..' path segments are not allowed") != NULL);
    CHECK(sl_config_set(c, "state.savepoints.dir", "s3://b/x", NULL, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "3 to 63 characters") != NULL);
    /* other directories stay local */
    CHECK(sl_config_set(c, "taskmanager.tmp.dirs", "s3://bucket/tmp", "f.yaml:5", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "f.yaml:5: taskmanager.tmp.dirs: 's3://bucket/tmp': the s3:// file system is "
                      "not supported; Sluice writes to local directories only (file:///path or /path)");
    CHECK(sl_config_set(c, "state.savepoints.dir", "file://nas/sp", NULL, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "names a host") != NULL);
    CHECK(sl_config_set(c, "state.savepoints.dir", "file://", NULL, err, sizeof err) == SL_ERR);
    sl_config_destroy(c);

    char *p = sl_config_local_path("file:///tmp/sp", err, sizeof err);
    CHECK_EQ_STR(p, "/tmp/sp");
    free(p);
    p = sl_config_local_path("relative/dir", err, sizeof err);
    CHECK_EQ_STR(p, "relative/dir");
    free(p);
    CHECK(sl_config_local_path("hdfs://nn/x", err, sizeof err) == NULL);
}

/* Flink 2.x names and their 1.x predecessors set the same key. */
static void test_flink_names_of_both_generations(void)
{
    static const char *const pairs[][3] = {
        {"execution.checkpointing.dir", "state.checkpoints.dir", "/ck"},
        {"execution.checkpointing.savepoint-dir", "state.savepoints.dir", "/sp"},
        {"execution.checkpointing.num-retained", "state.checkpoints.num-retained", "3"},
        {"state.backend", "state.backend.type", "rocksdb"},
        {"restart-strategy", "restart-strategy.type", "fixed-delay"},
        {"io.tmp.dirs", "taskmanager.tmp.dirs", "/scratch"},
        {"high-availability", "high-availability.type", "zookeeper"},
        {"high-availability.zookeeper.storageDir", "high-availability.storageDir", "/ha"},
    };
    char err[256];
    for (size_t i = 0; i < SL_ARRAY_LEN(pairs); i++) {
        sl_config *c = sl_config_new();
        CHECK(sl_config_set(c, pairs[i][0], pairs[i][2], NULL, err, sizeof err) == SL_OK);
        CHECK_EQ_STR(sl_config_str(c, pairs[i][1]), pairs[i][2]);
        CHECK(sl_config_ignored(c) == NULL);
        sl_config_destroy(c);
    }
    sl_config *c = sl_config_new();
    CHECK(sl_config_load_text(c, "execution:\n  checkpointing:\n    dir: file:///a/ck\n"
                                 "    savepoint-dir: file:/a/sp\n    interval: 5 s\n",
                              "mem", err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "state.checkpoints.dir"), "/a/ck");
    CHECK_EQ_STR(sl_config_str(c, "state.savepoints.dir"), "/a/sp");
    CHECK_EQ_INT(sl_config_int(c, "execution.checkpointing.interval"), 5000);
    sl_config_destroy(c);
    /* high availability: defaults as Flink's, a bad type named with its choices */
    c = sl_config_new();
    CHECK_EQ_STR(sl_config_str(c, "high-availability.type"), "none");
    CHECK_EQ_STR(sl_config_str(c, "high-availability.zookeeper.path.root"), "/flink");
    CHECK_EQ_STR(sl_config_str(c, "high-availability.cluster-id"), "/default");
    CHECK_EQ_INT(sl_config_int(c, "high-availability.zookeeper.client.session-timeout"), 60000);
    CHECK(sl_config_set(c, "high-availability.type", "kubernetes", NULL, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "none, zookeeper") != NULL);
    CHECK(sl_config_set(c, "high-availability.storageDir", "file:///shared/ha", NULL, err, sizeof err) == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "high-availability.storageDir"), "/shared/ha");
    sl_config_destroy(c);
}

/* Flink 2.3's own conf/config.yaml (as PyPI's apache-flink ships it, its
 * comments left out), nested, then the same keys flat: it loads; the keys
 * only the JVM or Flink's deployment use are collected for the warning,
 * each once; a misspelt key still fails with a hint. */
static void test_flink_config_yaml_loads(void)
{
    static const char nested[] =
        "env:\n"
        "  java:\n"
        "    opts:\n"
        "      all: --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED\n"
        "jobmanager:\n"
        "  bind-host: localhost\n"
        "  rpc:\n"
        "    address: localhost\n"
        "    port: 6123\n"
        "  memory:\n"
        "    process:\n"
        "      size: 1600m\n"
        "  execution:\n"
        "    failover-strategy: region\n"
        "taskmanager:\n"
        "  bind-host: localhost\n"
        "  host: localhost\n"
        "  numberOfTaskSlots: 1\n"
        "  memory:\n"
        "    process:\n"
        "      size: 1728m\n"
        "parallelism:\n"
        "  default: 1\n"
        "rest:\n"
        "  address: localhost\n"
        "  bind-address: localhost\n";
    static const char flat[] =
        "env.java.opts.all: -Xss2m\n"
        "jobmanager.memory.process.size: 1600m\n"
        "jobmanager.execution.failover-strategy: region\n"
        "taskmanager.memory.managed.fraction: 0.4\n"
        "metrics.reporter.prom.port: 9249\n"
        "metrics.reporter.jmx.factory.class: org.apache.flink.metrics.jmx.JMXReporterFactory\n"
        "taskmanager.numberOfTaskSlots: 2\n";
    char err[256] = "";
    sl_config *c = sl_config_new();
    int rc = sl_config_load_text(c, nested, "config.yaml", err, sizeof err);
    if (rc != SL_OK) fprintf(stderr, "error: %s\n", err);
    CHECK(rc == SL_OK);
    CHECK_EQ_STR(sl_config_str(c, "jobmanager.bind-host"), "localhost");
    CHECK_EQ_INT(sl_config_int(c, "jobmanager.rpc.port"), 6123);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.memory.process.size"), 1728LL * 1024 * 1024);
    CHECK_EQ_STR(sl_config_ignored(c),
                 "env.java.opts.all,jobmanager.memory.process.size,jobmanager.execution.failover-strategy");
    CHECK(sl_config_load_text(c, flat, "flat.yaml", err, sizeof err) == SL_OK);
    CHECK_EQ_INT(sl_config_int(c, "taskmanager.numberOfTaskSlots"), 2);
    CHECK_EQ_STR(sl_config_ignored(c),
                 "env.java.opts.all,jobmanager.memory.process.size,jobmanager.execution.failover-strategy,"
                 "taskmanager.memory.managed.fraction,metrics.reporter.jmx.factory.class");
    CHECK_EQ_STR(sl_config_str(c, "metrics.reporter.prom.port"), "9249"); /* Sluice's own reporter */

    /* misspellings fail, also inside an ignored family and beside one */
    CHECK(sl_config_load_text(c, "taskmanager:\n  numberOfTaskSlot: 2\n", "f.yaml", err, sizeof err) == SL_ERR);
    CHECK_EQ_STR(err, "f.yaml:2: unknown configuration key 'taskmanager.numberOfTaskSlot'; did you "
                      "mean 'taskmanager.numberOfTaskSlots'?");
    CHECK(sl_config_set(c, "taskmanager.memory.segmnt-size", "64kb", NULL, err, sizeof err) == SL_ERR);
    CHECK(strstr(err, "did you mean 'taskmanager.memory.segment-size'?") != NULL);
    CHECK(sl_config_set(c, "execution.checkpointing.dirr", "/x", NULL, err, sizeof err) == SL_ERR);
    CHECK(sl_config_set(c, "env.", "x", NULL, err, sizeof err) == SL_ERR); /* a family needs a member */
    sl_config_destroy(c);
}

SL_TEST_MAIN(SL_TEST(test_directory_uris), SL_TEST(test_flink_names_of_both_generations),
             SL_TEST(test_flink_config_yaml_loads), SL_TEST(test_defaults), SL_TEST(test_entries), SL_TEST(test_parse_duration),
             SL_TEST(test_parse_memory), SL_TEST(test_parse_int_bool), SL_TEST(test_set_values),
             SL_TEST(test_set_kv), SL_TEST(test_yaml_flat_and_nested), SL_TEST(test_yaml_errors),
             SL_TEST(test_load_file), SL_TEST(test_from_args_precedence),
             SL_TEST(test_from_args_default_path), SL_TEST(test_from_args_errors),
             SL_TEST(test_cross_checks), SL_TEST(test_double_values), SL_TEST(test_help),
             SL_TEST(test_shipped_file))
