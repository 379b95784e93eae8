/*
 * listen.h -- a TCP listener on libevent, for the JobManager's RPC port and
 * each TaskManager's data port. Accept errors for want of descriptors
 * pause the listener instead of spinning, logged once per episode.
 */
#ifndef SL_LISTEN_H
#define SL_LISTEN_H

#include <event2/listener.h>
#include "sl.h"

/* Listen on bind:port (IPv4; "" = all interfaces; port 0 = any free port).
 * *bound_port gets the port actually bound. `what` names the port in
 * messages ("RPC port"). NULL with err on failure. */
struct evconnlistener *sl_listen(struct event_base *base, const char *bind, int port,
                                 const char *what, evconnlistener_cb cb, void *arg,
                                 int *bound_port, char *err, size_t errlen);
/* Free a listener made by sl_listen (NULL: no-op), on its loop thread. */
void sl_listen_free(struct evconnlistener *l);

/* Out of descriptors (or memory), accepting pauses this long between tries;
 * logged once per episode (listen.c). */
#define SL_LISTEN_RETRY_MS 100

#endif
