/*
 * test_prom.c -- the Prometheus reporter's text and server (core/prom.c).
 *
 * The expected texts are written out by hand from Prometheus's text
 * exposition format (version 0.0.4) and Flink's naming: "flink_" + scope +
 * name, characters outside [A-Za-z0-9_:] as '_', label values with \\, "
 * and newline escaped, HELP and TYPE once per name.
 */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "prom.h"
#include "sl_test.h"

static void test_text_names_labels_and_values(void)
{
    sl_prom_text t = {0};
    const char *const a[] = {"job_name", "say \"hi\"\\now\nthen", "subtask_index", "0", NULL};
    const char *const b[] = {"subtask_index", "1", NULL};
    sl_prom_sample(&t, "taskmanager_job_task_numRecordsIn", 42, a);
    sl_prom_sample(&t, "taskmanager_job_task_numRecordsIn", 7, b);
    sl_prom_sample(&t, "taskmanager_job_task_buffers.inPoolUsage", 0.25, NULL);
    sl_prom_sample(&t, "taskmanager_job_task_currentInputWatermark", (double)INT64_MIN, b);
    char *s = sl_prom_text_take(&t);
    CHECK_EQ_STR(s,
                 "# HELP flink_taskmanager_job_task_numRecordsIn numRecordsIn\n"
                 "# TYPE flink_taskmanager_job_task_numRecordsIn gauge\n"
                 "flink_taskmanager_job_task_numRecordsIn{job_name=\"say \\\"hi\\\"\\\\now\\nthen\",subtask_index=\"0\"} 42\n"
                 "flink_taskmanager_job_task_numRecordsIn{subtask_index=\"1\"} 7\n"
                 "# HELP flink_taskmanager_job_task_buffers_inPoolUsage buffers.inPoolUsage\n"
                 "# TYPE flink_taskmanager_job_task_buffers_inPoolUsage gauge\n"
                 "flink_taskmanager_job_task_buffers_inPoolUsage 0.25\n"
                 "# HELP flink_taskmanager_job_task_currentInputWatermark currentInputWatermark\n"
                 "# TYPE flink_taskmanager_job_task_currentInputWatermark gauge\n"
                 "flink_taskmanager_job_task_currentInputWatermark{subtask_index=\"1\"} -9223372036854775808\n");
    free(s);
    CHECK(t.s == NULL && t.len == 0);
    s = sl_prom_text_take(&t); /* nothing: an empty text, not NULL */
    CHECK_EQ_STR(s, "");
    free(s);
}

/* GET /metrics over a socket: the latest published text. */
static void test_server_serves_the_latest_text(void)
{
    char err[256];
    sl_config *c = sl_config_new();
    CHECK(sl_prom_enabled(c) == 0);
    CHECK(sl_config_set(c, "metrics.reporter.prom.factory.class",
                        "org.apache.flink.metrics.prometheus.PrometheusReporterFactory", NULL, err,
                        sizeof err) == SL_OK);
    CHECK(sl_config_set(c, "metrics.reporter.prom.port", "0", NULL, err, sizeof err) == SL_OK);
    CHECK(sl_prom_enabled(c));
    sl_prom *p = sl_prom_start(c, err, sizeof err);
    CHECK(p != NULL);
    sl_prom_publish(p, sl_strdup("old 1\n"));
    sl_prom_publish(p, sl_strdup("flink_x 2\n"));
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)sl_prom_port(p))};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&sin, sizeof sin) == 0);
    const char rq[] = "GET /metrics HTTP/1.0\r\n\r\n";
    CHECK(write(fd, rq, sizeof rq - 1) == (ssize_t)(sizeof rq - 1));
    char buf[2048];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof buf - 1 && (got = read(fd, buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)got;
    buf[n] = '\0';
    close(fd);
    CHECK(strncmp(buf, "HTTP/1.0 200", 12) == 0 || strncmp(buf, "HTTP/1.1 200", 12) == 0);
    CHECK(strstr(buf, "text/plain; version=0.0.4") != NULL);
    CHECK(strstr(buf, "\r\n\r\nflink_x 2\n") != NULL);
    sl_prom_stop(p);
    sl_prom_stop(NULL);

    CHECK(sl_config_set(c, "metrics.reporter.prom.port", "9260-9250", NULL, err, sizeof err) == SL_OK);
    CHECK(sl_prom_start(c, err, sizeof err) == NULL);
    CHECK(strstr(err, "is not a port or a range") != NULL);
    sl_config_destroy(c);
}

SL_TEST_MAIN(SL_TEST(test_text_names_labels_and_values), SL_TEST(test_server_serves_the_latest_text))
