/*
 * fuzz_wire.c -- libFuzzer target for what arrives on an accepted data
 * connection of a TaskManager (taskmanager/net.c): the HELLO (and, with a
 * cluster secret, the AUTH exchange), then DATA and CREDIT frames for
 * deployments that do not exist here -- credits go to the bounded
 * early-credit table, data is dropped. The connection is an in-memory
 * bufferevent pair: writing the input into one end runs the TaskManager's
 * read callbacks on the other, as a socket would. Byte 0 bit 0 gives the
 * TaskManager a cluster secret; the rest is the byte stream, fed in two
 * writes (split where byte 1 says) so frames also arrive in pieces.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <event2/bufferevent.h>
#include <event2/buffer.h>
#include <event2/thread.h>

#include "log.h"
#include "tm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) {
        evthread_use_pthreads();
        if (!getenv("SLUICE_FUZZ_LOG")) sl_log_level = SL_LOG_ERROR + 1;
        once = 1;
    }
    if (size < 2) return 0;
    char err[256];
    tm_net n;
    memset(&n, 0, sizeof n);
    n.conf = sl_config_new();
    if ((data[0] & 1) &&
        sl_config_set(n.conf, "security.cluster.secret", "fuzz secret", "fuzz", err, sizeof err) != SL_OK)
        abort();
    if (sl_auth_load(&n.auth, n.conf, err, sizeof err) != SL_OK) abort();
    n.base = event_base_new();
    n.id = "tm-b";
    struct bufferevent *pair[2];
    if (bufferevent_pair_new(n.base, 0, pair) != 0) abort();
    tm_net_data_accepted(&n, pair[0], "fuzz");
    const uint8_t *p = data + 2;
    size_t len = size - 2, cut = data[1] <= len ? data[1] : len;
    bufferevent_write(pair[1], p, cut);
    bufferevent_write(pair[1], p + cut, len - cut);
    /* the other end closes: the TaskManager sees end of file, as from a socket */
    bufferevent_flush(pair[1], EV_WRITE, BEV_FINISHED);
    bufferevent_free(pair[1]);
    event_base_loop(n.base, EVLOOP_NONBLOCK);
    tm_net_free_peers(&n);
    sl_auth_free(&n.auth);
    event_base_free(n.base);
    sl_config_destroy(n.conf);
    return 0;
}
