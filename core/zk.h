/*
 * zk.h -- what every daemon needs of ZooKeeper for high availability
 * (docs/HA.md): the cluster's node paths, the leader znode's contents, and
 * a leader retriever (TaskManagers, the CLI) that watches that znode.
 *
 * The ZooKeeper C client ("mt" flavour) runs two threads of its own; every
 * callback here runs on them, so a retriever only copies the leader under
 * its own lock and tells its owner through a callback that must do no more
 * than wake the owner's thread (TaskManagers: event_active).
 */
#ifndef SL_ZK_H
#define SL_ZK_H

#ifndef THREADED
#define THREADED /* the multi-threaded client's synchronous API */
#endif
#include <zookeeper/zookeeper.h>

#include "config.h"

/* high-availability.type is zookeeper. */
int sl_ha_enabled(const sl_config *c);

/* path.root joined with cluster-id, then `sub` ("" for the base): "/flink/default/leader".
 * Caller frees. */
char *sl_zk_path(const sl_config *c, const char *sub);

/* Route the client's own log to stderr at WARN (once per process). */
void sl_zk_quiet_log(void);

/* What the leading JobManager publishes in <base>/leader. */
typedef struct {
    char rpc_host[256];
    int rpc_port;
    char rest_url[300];
    uint64_t session;   /* the leader session: tags its RPCs (fencing token) */
} sl_zk_leader;

char *sl_zk_leader_json(const sl_zk_leader *l);            /* caller frees */
int sl_zk_leader_parse(const char *data, int len, sl_zk_leader *out);

/* ---- leader retriever ---------------------------------------------------- */

typedef struct sl_zk_retriever sl_zk_retriever;

/* Connect and watch <base>/leader; `changed(arg)` runs on a ZooKeeper
 * thread whenever the leader (or the connection) may have changed. */
sl_zk_retriever *sl_zk_retriever_start(const sl_config *c, void (*changed)(void *), void *arg,
                                       char *err, size_t errlen);
/* The current leader: SL_OK and *out, or SL_AGAIN while none is known. */
int sl_zk_retriever_get(sl_zk_retriever *r, sl_zk_leader *out);
/* Milliseconds (monotonic) since the session was last connected; 0 while connected. */
int64_t sl_zk_retriever_disconnected_ms(sl_zk_retriever *r);
void sl_zk_retriever_stop(sl_zk_retriever *r);

/* One-shot (the CLI): connect within the connection timeout, read the leader. */
int sl_zk_leader_once(const sl_config *c, sl_zk_leader *out, char *err, size_t errlen);

#endif
