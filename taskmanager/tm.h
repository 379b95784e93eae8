/*
 * Layer taskmanager/ (docs/ARCHITECTURE.md, "Layers"): a top layer, over
 * api/: the TaskManager daemon. Never calls the JobManager or the CLI; talks
 * to them over RPC.
 *
 * tm.h -- the TaskManager's state: deployments, tasks, peers and the
 * network thread. The exchange's own structures (gates, channels, writers,
 * readers) are in exchange.h.
 *
 * Threads and ownership:
 *  - the network thread (net.c transport, deploy.c deployments, the
 *    network-thread half of exchange.c) owns the JobManager connection,
 *    the data connections to other TaskManagers, the list of deployments,
 *    and every credit counter and receive buffer;
 *  - the deploy worker (deploy.c) plans job graphs and reads restore
 *    metadata, and hands the result back through the inbox;
 *  - the snapshot writer (snapshotter.c) writes what tasks snapshotted and
 *    hands each written snapshot back through the inbox;
 *  - one task thread per deployed subtask chain (task.c) owns its
 *    operators, its output buffers being filled and its time accounting.
 * They meet only at these points, each under a short lock:
 *  - the network thread's inbox (tm_net.inbox, an sl_queue of tm_op_kind
 *    messages, lib/queue.h): everything other threads hand the network
 *    thread;
 *  - the deploy worker's queue (tm_net.plans) and the snapshot writer's
 *    (tm_net.snaps), sl_queues too;
 *  - the exchange's own structures (exchange.h): an input gate (tm_gate),
 *    buffers that arrived for a task and its mail; a peer's send queues
 *    (tm_peer.mu), full buffers waiting for credit.
 * A task's figures are written by its thread with relaxed atomic stores and
 * read by the network thread for heartbeats.
 */
#ifndef SL_TM_H
#define SL_TM_H

#include <pthread.h>
#include <event2/event.h>
#include <event2/bufferevent.h>

#include "sl.h"
#include "queue.h"
#include "config.h"
#include "auth.h"
#include "tls.h"
#include "jobgraph.h"
#include "buffer.h"
#include "exchange.h"
#include "snapshot.h"
#include "snapshot_inc.h"
#include "chanstate.h"
#include "control.pb-c.h"
#include "snapshot.pb-c.h"


/* Checkpoint flags (a trigger's, a barrier's u8): UNALIGNED, the barrier
 * overtakes in-flight buffers; ALIGN_TIMEOUT, it starts aligned and a task
 * switches to unaligned once the trigger is the timeout old (the barrier
 * carries the timeout). */
enum { SL_CP_SAVEPOINT = 1, SL_CP_STOP = 2, SL_CP_DRAIN = 4, SL_CP_UNALIGNED = 8, SL_CP_ALIGN_TIMEOUT = 16 };

/* One operator's part of a task's snapshot, written off the task thread. */
typedef struct tm_snap_part {
    char *uid;
    char *file;                 /* name inside the snapshot directory */
    int keyed;
    sl_ksnap *ksnap;            /* keyed state view (released by the writer) */
    int max_parallelism, kg_first, kg_last;
    struct sl_snap_timer *timers;
    size_t ntimers;
    void *blob;                 /* operator state */
    size_t bloblen;
    struct sl_deferred *deferred; /* the operator's asynchronous part, run first */
    uint64_t size;              /* filled by the writer */
    /* an incremental RocksDB checkpoint: the local checkpoint directory
     * (removed by the writer), the instance, and what was uploaded */
    char *rdb_local;
    char rdb_instance[17];
    sl_inc_files inc;
    uint64_t checkpointed_size; /* bytes written anew (all of them when full) */
} tm_snap_part;

/* A task's snapshot for checkpoint cpid: written by the snapshot thread,
 * then acknowledged to the JobManager by the network thread. */
typedef struct tm_snap_job {
    char job_id[33];
    uint32_t attempt;
    uint64_t cpid;
    int chain, subtask;
    char *dir;
    int nparts;
    tm_snap_part *parts;
    uint64_t alignment_ns, sync_ns, async_ns, start_delay_ns;
    /* unaligned checkpoints: the channel-state file the task wrote (the
     * writer thread finishes it: fsync, rename, S3 upload from cs_stage) */
    struct sl_cs_writer *cs;
    char *cs_file;              /* its name in dir, NULL = nothing persisted */
    char *cs_stage;             /* s3:// dir: the local file written, uploaded from here */
    uint64_t cs_size;           /* the file's bytes, once written */
    uint64_t persisted, processed; /* in-flight bytes persisted; processed meanwhile */
    int unaligned;
    char *head_uid;             /* the chain's head, whose task the file is */
    char error[1100];           /* non-empty: decline */
    sl_qmsg qm;                 /* TM_SNAP_WRITE on tm_net.snaps, then
                                   TM_OP_SNAPSHOT_WRITTEN on the inbox */
} tm_snap_job;

/* Task figures, written by the task thread (relaxed atomics). */
typedef struct tm_task_metrics {
    uint64_t records_in, records_out, bytes_in, bytes_out;
    uint64_t busy_ns, bp_ns, idle_ns;
    /* a wait in progress, so a long block shows up before it ends: odd
     * wait_seq = waiting since wait_since (kind 1 idle, 2 backpressured) */
    uint64_t wait_seq;
    int64_t wait_since;
    int wait_kind;
    uint64_t late_dropped;
    uint64_t state_entries, state_bytes; /* keyed state of the chain's operators */
    int64_t in_wm, out_wm;
    float in_usage, out_usage;
    int wm_idle;
    struct tm_op_figures *ops;  /* per operator of the chain (nops of them) */
    int nops;
} tm_task_metrics;

/* One chained operator's figures (Flink's operator scope), written by the
 * task thread like the task's. */
typedef struct tm_op_figures {
    uint64_t records_in, records_out, late_dropped, records_in_errors;
    int64_t in_wm, out_wm;
} tm_op_figures;

struct tm_task {
    tm_deploy *d;
    int chain;
    int subtask;
    pthread_t thread;
    int tid;                    /* its kernel thread id while it runs, else 0
                                   (atomic: set by the task, read by the network
                                   thread for stack samples) */
    int started;
    int joined;                 /* network thread: its thread ended and was joined */
    int final_seen;             /* network thread: its final state (with its last
                                   figures) went to the JobManager; the deployment
                                   is not freed before, or the report finds no task */
    tm_gate gate;
    int ngate_chan;             /* input channels */
    int *chan_input;            /* per gate channel: which input edge of the head */
    /* outputs: one writer per out edge of the chain's tail */
    int nwriters;
    struct tm_writer *writers;
    sl_pool *out_pool;
    tm_wset ws;                 /* the rest of the sending state (exchange.c) */
    tm_reader rd;               /* spanning records being reassembled */
    tm_task_metrics m;
    /* what the chain's operators publish (sl_op_set_info): per chain
     * position, "" = nothing; under gate.mu, read by the heartbeat */
    char (*info)[SL_OP_INFO_MAX];
    int ninfo;
    /* heartbeat bookkeeping (network thread) */
    Sluice__OperatorMetrics *hb_ops;   /* m.nops, reused by every heartbeat */
    Sluice__OperatorMetrics **hb_op_ptrs;
    uint64_t hb_busy_ns, hb_bp_ns, hb_idle_ns;
    int64_t hb_at_ns;
    double busy_per_s, bp_per_s, idle_per_s;
    struct tm_latency *lat;     /* latency histograms (latency.h) when the job's
                                   markers are on, else NULL; under gate.mu */
    struct tm_debloat *debloat; /* the gate's buffer debloater when on, else NULL */
};

struct tm_deploy {
    char job_id[33];
    uint64_t session;           /* the JobManager session that deployed it */
    uint32_t attempt;           /* unique within that session */
    sl_jobgraph *g;
    int nslots;
    char **slot_tm;             /* TaskManager id per slot */
    int64_t buffer_timeout_ms;
    uint32_t seg_size;
    int buffers_per_channel, floating_per_gate;
    int64_t latency_ms;         /* metrics.latency.interval (the job's, else ours), 0 = off */
    int debloat;                /* taskmanager.network.memory.buffer-debloat.enabled */
    int ntasks;
    tm_task *tasks;
    uint32_t nchan;             /* channel ids are 0..nchan-1 */
    tm_outchan **out_by_id;     /* sending ends that live here */
    tm_inchan **in_by_id;       /* receiving ends of remote channels that live here */
    sl_pool *recv_pool;         /* receive buffers for remote channels */
    int cancelled;              /* set by the network thread */
    int checkpointing;          /* checkpoints will be taken */
    int exactly_once;           /* aligned barriers */
    char *restore_dir;          /* restore from this snapshot, or NULL */
    char *restore_copy;         /* local copy of an s3:// restore_dir: removed by the last task
                                   to restore (tm_deploy_restored), else with the deployment */
    int restored;               /* tasks past their restore (atomic) */
    struct Sluice__SnapshotMetadata *restore;  /* its _metadata, unpacked */
    int running_tasks;          /* threads not yet exited (network thread) */
    /* collect sinks (collect.c): rows they may still send to the JobManager */
    pthread_mutex_t collect_mu;
    pthread_cond_t collect_cv;
    int collect_credit;
    int collect_efd;            /* eventfd: readable when credit came back */
    tm_net *net;
    tm_deploy *next;
};

/* A collect sink's batch on its way to the JobManager (collect.c). */
typedef struct tm_collect_out {
    char job_id[33];
    uint64_t session;
    uint32_t attempt;
    char *rows;
    size_t len;
    int nrows;
    int end;
    uint64_t offset;            /* number of the first row in the results */
    sl_qmsg qm;                 /* TM_OP_COLLECT_OUT on the inbox */
} tm_collect_out;

/* A data connection to another TaskManager, shared by every channel. */
struct tm_peer {
    char *id;
    char *host;
    int port;
    struct bufferevent *bev;    /* NULL until connected */
    int hello_done;
    int auth_wait;              /* we connected: the acceptor's proof not yet in (auth.h) */
    uint8_t nonce[32];          /* our challenge on that connection */
    int initiator;              /* we connect (our id sorts lower) */
    pthread_mutex_t mu;         /* guards the out-channels' send queues */
    tm_outchan *chans;          /* sending ends towards this peer */
    struct event *wake;         /* a task queued data for this peer */
    tm_early_credit *early;     /* credits for deployments not here yet
                                   (exchange.c; network thread), up to TM_EARLY_MAX */
    int nearly;
    int64_t early_warned_ms;    /* last "too many early credits" warning (rate limit) */
    tm_net *net;
    tm_peer *next;
};

typedef struct tm_status {
    char job_id[33];
    uint64_t session;
    uint32_t attempt;
    int chain, subtask;
    Sluice__TaskState state;
    char *error;
    int end_of_input;           /* RUNNING, input ended: waits for a final checkpoint */
    sl_qmsg qm;                 /* TM_OP_TASK_STATE on the inbox */
} tm_status;

/* The network thread's inbox (tm_net.inbox): every other thread of the
 * TaskManager hands work to the network thread as one of these, in one
 * sl_queue whose eventfd the network thread watches; it runs them in the
 * order they came (net.c, on_inbox). Unbounded: each kind is bounded by
 * what produces it (said per kind). */
typedef enum {
    TM_OP_TASK_STATE = 1,       /* task thread -> network thread: a tm_status
                                   to report (a few per task) */
    TM_OP_TASK_EXITED,          /* task thread -> network thread: its thread
                                   ended, reap (a bare sl_qmsg, one per task) */
    TM_OP_RECV_BACK,            /* task thread -> network thread: a receive
                                   buffer it read (sl_netbuf.qm) becomes credit
                                   again (bounded by the receive pools) */
    TM_OP_SNAPSHOT_WRITTEN,     /* snapshot writer -> network thread: a
                                   tm_snap_job to acknowledge or decline (one
                                   per task and checkpoint) */
    TM_OP_PLANNED,              /* deploy worker -> network thread: a planned
                                   DeployJob (deploy.c's tm_plan, one per
                                   deployment) to build, or its error */
    TM_OP_COLLECT_OUT,          /* task thread (collect sink) -> network
                                   thread: a tm_collect_out batch to send as
                                   CollectRows (bounded by collect credit) */
    TM_OP_SAMPLED               /* flame sampler -> network thread: a
                                   tm_flame with its answer (bounded by the
                                   sampler's queue) */
} tm_op_kind;

/* The snapshot writer's queue (tm_net.snaps): one kind. */
enum {
    TM_SNAP_WRITE = 1           /* task thread -> snapshot writer: a tm_snap_job */
};

/* The deploy worker's queue (tm_net.plans): one kind. */
enum {
    TM_PLAN_DEPLOY = 1          /* network thread -> deploy worker: a tm_plan
                                   holding a DeployJob to plan */
};

struct tm_net {
    sl_config *conf;
    struct event_base *base;
    char *id;                   /* resource id */
    char *host;                 /* address others reach us at */
    int data_port;
    int slots;
    /* JobManager connection */
    struct bufferevent *jm;
    int jm_hello, jm_registered;
    uint8_t jm_nonce[32];       /* our challenge on the JobManager connection */
    sl_auth auth;               /* security.cluster.secret (auth.h); none: key NULL */
    SSL_CTX *tls;               /* security.ssl.internal.* (tls.h), or NULL */
    uint64_t jm_session;        /* the JobManager's session (RegisterAck) */
    struct event *reconnect, *heartbeat;
    int64_t hb_interval_ms;
    int64_t hb_timeout_ms;      /* heartbeat.timeout: a JobManager silent this long is lost */
    int64_t jm_heard_ms;        /* monotonic: its last RegisterAck or HeartbeatAck */
    int64_t reconnect_ms;       /* current reconnect delay (backs off) */
    /* high availability: the leader comes from ZooKeeper (core/zk.h) */
    struct sl_zk_retriever *leader_rt;  /* NULL: the fixed jobmanager.rpc.address */
    struct event *leader_ev;    /* the retriever saw a change */
    int has_leader;
    char leader_host[256];
    int leader_port;
    uint64_t leader_session;    /* the fencing token the leader published */
    /* data plane */
    struct evconnlistener *listener;
    tm_peer *peers;
    struct pending_conn *pending;   /* accepted, before their hello; newest first (net.c) */
    int npending;
    tm_deploy *deploys;
    struct tm_planning *planning;   /* deployments being planned (deploy.c) */
    struct { uint64_t session; uint32_t attempt; } ended[64]; /* recently freed deployments,
                                       whose late credits are dropped (ring) */
    int ended_next;
    int reap_pending;               /* a deployment's threads ended, its last
                                       buffers still wait for credit */
    /* the inbox: tm_op_kind messages from the other threads */
    struct sl_queue *inbox;
    struct event *inbox_ev;         /* watches the inbox's eventfd */
    int stopping;
    struct sl_prom *prom;           /* Prometheus reporter (reporter.c), or NULL */
    /* the snapshot writer thread, fed TM_SNAP_WRITE by task threads */
    pthread_t snap_thread;
    struct sl_queue *snaps;
    int snap_started;
    /* the deploy worker thread: plans job graphs off the network thread,
     * fed TM_PLAN_DEPLOY by it */
    pthread_t plan_thread;
    struct sl_queue *plans;
    int plan_started;
    /* the flame sampler thread (flame.c): samples task threads' stacks, and
     * takes thread dumps, off the network and task threads, fed tm_flame
     * requests */
    pthread_t flame_thread;
    struct sl_queue *flames;
    int flame_started;
    int flame_stop;             /* atomic: stopping, cut a sampling short */
};

/* A request for stack samples (ProcessInfoRequest STACK_SAMPLES) or a
 * thread dump (THREAD_DUMP): network thread -> flame sampler, then back as
 * TM_OP_SAMPLED with json or error. */
typedef struct tm_flame {
    sl_qmsg qm;
    uint64_t id;                /* the request's, for the reply */
    int dump;                   /* a thread dump of every thread (the rest unused) */
    int *tids;                  /* the chain's running task threads */
    int ntids;
    int num, delay_ms, depth;
    char *json;                 /* the answer (stack_sample.h, proc_info.h), or NULL */
    char *error;                /* why there is none, or NULL */
} tm_flame;

/* flame.c (network thread) */
int tm_flame_start(tm_net *n, char *err, size_t errlen);
void tm_flame_stop(tm_net *n);
/* Queue a STACK_SAMPLES request; SL_ERR with err when it cannot be (no such
 * deployment, too many waiting): then answer at once. */
int tm_flame_request(tm_net *n, const Sluice__ProcessInfoRequest *rq, char *err, size_t errlen);
/* Queue a THREAD_DUMP request, likewise: a dump signals every thread,
 * which the network thread must not wait for. */
int tm_flame_dump(tm_net *n, uint64_t id, char *err, size_t errlen);
/* TM_OP_SAMPLED from the inbox: send the reply, free f. */
void tm_flame_done(tm_net *n, tm_flame *f);

/* task.c */
int tm_task_start(tm_task *t, char *err, size_t errlen);

/* snapshotter.c */
int tm_snapshotter_start(tm_net *n, char *err, size_t errlen);
void tm_snapshotter_stop(tm_net *n);
void tm_snapshotter_submit(tm_net *n, tm_snap_job *job); /* task thread; takes job */
void tm_snap_job_free(tm_snap_job *job);

/* deploy.c (network thread unless said otherwise) */
int tm_deploy_start(tm_net *n, char *err, size_t errlen);  /* the deploy worker */
void tm_deploy_stop(tm_net *n);
void tm_deploy_request(tm_net *n, Sluice__Envelope *env); /* a DeployJob; takes env */
void tm_deploy_planned(tm_net *n, sl_qmsg *m);            /* TM_OP_PLANNED, from the inbox */
tm_deploy *tm_deploy_find(tm_net *n, uint64_t session, uint32_t attempt);
int tm_deploy_ended(const tm_net *n, uint64_t session, uint32_t attempt); /* freed lately */
tm_task *tm_deploy_task(tm_deploy *d, int chain, int subtask);
void tm_deploy_cancel(tm_net *n, tm_deploy *d);
void tm_deploy_cancel_attempt(tm_net *n, uint64_t session, const char *job_id, uint32_t attempt);
void tm_deploy_cancel_all(tm_net *n);
/* A task thread is past its restore (done or failed); the last of the
 * deployment's tasks removes the local copy of an s3:// snapshot. */
void tm_deploy_restored(tm_deploy *d);
void tm_deploy_free(tm_net *n, tm_deploy *d);
void tm_deploy_reap(tm_net *n);
void tm_deploy_fail_peer(tm_net *n, tm_peer *p, const char *why);

/* net.c (callable from task threads) */
/* A task's input ended and it waits for a final checkpoint (task thread). */
void tm_net_report_end_of_input(tm_net *n, tm_deploy *d, int chain, int subtask);
void tm_net_report(tm_net *n, tm_deploy *d, int chain, int subtask, Sluice__TaskState s,
                   const char *error);
void tm_net_task_exited(tm_net *n);
void tm_net_peer_wake(tm_peer *p);            /* a buffer was queued for p */

/* net.c (network thread) */
int tm_net_start(tm_net *n, char *err, size_t errlen);
void tm_net_stop(tm_net *n);
/* A data connection accepted (bev; addr for logs): it must open with a
 * HELLO, and prove the cluster secret when there is one. The listener's
 * callback, and the data-connection fuzz target's way in without a socket. */
void tm_net_data_accepted(tm_net *n, struct bufferevent *bev, const char *addr);
/* Close and free every peer and pending connection (tm_net_stop; the fuzz target). */
void tm_net_free_peers(tm_net *n);
tm_peer *tm_net_peer(tm_net *n, const char *id, const char *host, int port);
void tm_net_connect_peers(tm_net *n, tm_deploy *d);
void tm_net_send_credit(tm_peer *p, uint64_t session, uint32_t attempt, uint32_t chan, int credits,
                        uint32_t buf_size); /* buf_size: the gate's debloated size, 0 = full */
void tm_net_report_direct(tm_net *n, const char *job_id, uint32_t attempt, int chain, int subtask,
                          Sluice__TaskState s, const char *error);
void tm_net_flush_peers(tm_net *n);

/* collect.c: the collect channel of a task's collect sink (the host calls
 * of runtime/runtime.h, ctx the tm_task; task thread), credit from the
 * JobManager (network thread), freeing a batch. */
int tm_collect_send(void *ctx, const char *rows, size_t len, int nrows, uint64_t offset, int end,
                    char *err, size_t errlen);
int tm_collect_credit_now(void *ctx);
int tm_collect_credit_fd(void *ctx);
void tm_collect_credit(tm_deploy *d, int rows);
void tm_collect_out_free(tm_collect_out *o);    /* one batch; NULL: no-op */

/* reporter.c (network thread): hand this heartbeat's figures, with Flink's
 * names and labels, to the Prometheus reporter. */
void tm_prom_publish(tm_net *n, const Sluice__Heartbeat *hb);

/* Register the embedded-Python host of LANGUAGE PYTHON functions (pyhost.c);
 * the interpreter itself starts with the first such function. */
void tm_python_register(void);

#endif
