/*
 * test_kafka_txn.c -- kf_txn_end, the EndTxn client the exactly-once Kafka
 * sink uses to commit a transaction whose producer is gone.
 *
 * Without a broker: bad addresses and a port nobody listens on give clear
 * errors within the deadline. With one, test_txn_end_live is driven by
 * tests/integration/test_kafka.py (a transaction left open by a killed
 * producer, then committed from here): SLUICE_TEST_TXN_END holds
 * "bootstrap txn-id producer-id epoch commit(0|1)" and SLUICE_TEST_TXN_EXPECT
 * "ok" or a substring of the expected error. Without them it checks nothing.
 */
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sl_test.h"
#include "kafka_txn.h"

static void test_txn_end_errors(void)
{
    char why[300];
    CHECK_EQ_INT(kf_txn_end("no-port", "t", 1, 0, 1, 1000, why, sizeof why), SL_ERR);
    CHECK_EQ_STR(why, "bootstrap server 'no-port' is not host:port");
    /* a port nobody listens on: bind one, close it */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    CHECK(bind(s, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(getsockname(s, (struct sockaddr *)&a, &al) == 0);
    close(s);
    char bs[64];
    snprintf(bs, sizeof bs, "127.0.0.1:%d", ntohs(a.sin_port));
    CHECK_EQ_INT(kf_txn_end(bs, "t", 1, 0, 1, 1000, why, sizeof why), SL_ERR);
    char exp[100];
    snprintf(exp, sizeof exp, "cannot connect to 127.0.0.1:%d", ntohs(a.sin_port));
    CHECK_EQ_STR(why, exp);
}

static void test_txn_end_live(void)
{
    const char *spec = getenv("SLUICE_TEST_TXN_END"), *expect = getenv("SLUICE_TEST_TXN_EXPECT");
    if (!spec || !expect) return;
    char bs[256], id[256];
    long long pid;
    int epoch, commit;
    CHECK(sscanf(spec, "%255s %255s %lld %d %d", bs, id, &pid, &epoch, &commit) == 5);
    char why[300] = "";
    int rc = kf_txn_end(bs, id, pid, (int16_t)epoch, commit, 10000, why, sizeof why);
    printf("kf_txn_end: %s\n", rc == SL_OK ? "ok" : why);
    if (!strcmp(expect, "ok")) CHECK_EQ_INT(rc, SL_OK);
    else CHECK(rc == SL_ERR && strstr(why, expect) != NULL);
}

SL_TEST_MAIN(SL_TEST(test_txn_end_errors), SL_TEST(test_txn_end_live))
