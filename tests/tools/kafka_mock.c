/*
 * kafka_mock.c -- librdkafka's mock cluster (rdkafka_mock.h) as a process,
 * for the integration tests' error injection: the daemons connect to its
 * brokers over loopback TCP like to any Kafka, and the test drives the
 * failures through stdin.
 *
 *   kafka_mock [BROKERS]        prints the bootstrap servers, then reads
 *                               one command per line, answering "ok" or
 *                               "error: ..." on stdout:
 *     topic NAME PARTITIONS     create a topic
 *     down ID | up ID           take broker ID down / bring it back
 *     rtt ID MS                 delay broker ID's responses
 *     errors APIKEY CODE COUNT  the next COUNT requests of APIKEY answer CODE
 *     clear APIKEY              drop the errors still pushed for APIKEY
 *   EOF ends it.
 *
 * The mock keeps no transaction markers: EndTxn checks the producer id and
 * epoch and answers, but writes no COMMIT/ABORT control records, so what
 * it stores shows every record produced, committed or not (docs/KAFKA.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

int main(int argc, char **argv)
{
    int nbrokers = argc > 1 ? atoi(argv[1]) : 3;
    if (nbrokers < 1 || nbrokers > 16) {
        fprintf(stderr, "kafka_mock: brokers must be 1..16\n");
        return 2;
    }
    char err[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    if (!rk) {
        fprintf(stderr, "kafka_mock: %s\n", err);
        return 1;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, nbrokers);
    if (!mc) {
        fprintf(stderr, "kafka_mock: cannot create the mock cluster\n");
        return 1;
    }
    printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
    fflush(stdout);
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        char name[256];
        int a, b, c;
        rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR_NO_ERROR;
        if (sscanf(line, "topic %255s %d", name, &a) == 2) {
            e = rd_kafka_mock_topic_create(mc, name, a, 1);
        } else if (sscanf(line, "down %d", &a) == 1) {
            e = rd_kafka_mock_broker_set_down(mc, a);
        } else if (sscanf(line, "up %d", &a) == 1) {
            e = rd_kafka_mock_broker_set_up(mc, a);
        } else if (sscanf(line, "rtt %d %d", &a, &b) == 2) {
            e = rd_kafka_mock_broker_set_rtt(mc, a, b);
        } else if (sscanf(line, "errors %d %d %d", &a, &b, &c) == 3 && c > 0 && c <= 1000) {
            rd_kafka_resp_err_t *errs = calloc((size_t)c, sizeof *errs);
            for (int i = 0; i < c; i++) errs[i] = (rd_kafka_resp_err_t)b;
            rd_kafka_mock_push_request_errors_array(mc, (int16_t)a, (size_t)c, errs);
            free(errs);
        } else if (sscanf(line, "clear %d", &a) == 1) {
            rd_kafka_mock_clear_request_errors(mc, (int16_t)a);
        } else {
            printf("error: unknown command: %s", line);
            fflush(stdout);
            continue;
        }
        if (e) printf("error: %s\n", rd_kafka_err2str(e));
        else printf("ok\n");
        fflush(stdout);
    }
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return 0;
}
