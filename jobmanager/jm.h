/*
 * Layer jobmanager/ (docs/ARCHITECTURE.md, "Layers"): a top layer, over
 * api/: the JobManager daemon. Never calls the TaskManager or the CLI; talks
 * to them over RPC and REST.
 *
 * jm.h -- the JobManager's state and the interfaces of its parts.
 *
 * Threads (docs/ARCHITECTURE.md, "Processes"):
 *   - the loop thread (main.c runs libevent) owns every socket and all of
 *     the state below: TaskManager connections (rpc.c), the scheduler, the
 *     checkpoint coordinator, and REST requests, which it runs on behalf of
 *     the REST threads. Only it writes a socket (sender.c) or changes a job.
 *   - libmicrohttpd's threads (rest.c) parse a request, do its pure or file
 *     work without touching this state (job-graph parsing; savepoint reads
 *     and disposal through the I/O worker), then post it to the loop as a
 *     typed op (loop.c) and wait for the reply.
 *   - the I/O worker (io.c) writes _metadata (fsync), deletes checkpoints and
 *     reads savepoints; results for the loop come back as ops.
 *   - with high availability, the ZooKeeper client's two threads (ha.c):
 *     its watcher only posts JM_OP_HA ops; ha.c's own few fields shared with
 *     them and with REST are atomics and one leaf mutex.
 * There is no lock on this state at all: the only locks are the op queue's
 * and the I/O queue's, each a leaf taken for a few instructions and never
 * held across I/O, a callback or the other lock, so no lock order exists
 * that could deadlock.
 */
#ifndef SL_JM_H
#define SL_JM_H

#include <pthread.h>
#include <event2/event.h>
#include <event2/bufferevent.h>

#include "sl.h"
#include "queue.h"
#include "config.h"
#include "auth.h"
#include "tls.h"
#include "jobgraph.h"
#include "control.pb-c.h"
#include <jansson.h>

typedef enum {
    JOB_INITIALIZING = 0, JOB_CREATED, JOB_RUNNING, JOB_FAILING, JOB_FAILED, JOB_CANCELLING,
    JOB_CANCELED, JOB_FINISHED, JOB_RESTARTING, JOB_SUSPENDED, JOB_NSTATES
} jm_job_state;

const char *jm_job_state_name(jm_job_state s);
int jm_job_state_terminal(jm_job_state s);

/* Task states, in the order Flink lists them. */
typedef enum {
    T_CREATED = 0, T_SCHEDULED, T_DEPLOYING, T_RUNNING, T_FINISHED, T_CANCELING, T_CANCELED,
    T_FAILED, T_INITIALIZING, T_NSTATES
} jm_task_state;

const char *jm_task_state_name(jm_task_state s);

typedef struct jm_tm {
    char *id;
    char *host;
    int data_port;
    int slots;
    int cpu_cores;
    uint64_t physical_memory, free_memory, managed_memory;
    char *state_backend;        /* its state.backend.type, from its registration */
    int64_t last_heartbeat_ms;  /* monotonic */
    int64_t registered_ms;      /* wall clock */
    /* its process, from its last heartbeat (Status.* metrics) */
    uint64_t cpu_ns, rss_bytes, virtual_bytes;
    int threads;
    double cpu_load;            /* between its last two heartbeats, 0..1 */
    int64_t cpu_at_ms;          /* monotonic, when cpu_ns came; 0 none yet */
    struct jm_conn *conn;       /* live connection, or NULL */
    struct jm_job **slot_job;   /* per slot: the job holding it, or NULL */
    struct jm_tm *next;
} jm_tm;

typedef struct jm_metrics {
    Sluice__SubtaskMetrics m;   /* last report (strings not kept) */
    int64_t at_ms;              /* when it arrived (monotonic) */
    double in_rate, out_rate;   /* records/s over the last second or more */
    double in_bytes_rate, out_bytes_rate;
    uint64_t ref_in, ref_out, ref_bin, ref_bout; /* counters at ref_at_ms */
    int64_t ref_at_ms;
    int has;
    /* per chained operator, from the last report (m.operators is not kept) */
    struct jm_op_metrics {
        uint64_t records_in, records_out, late_dropped;
        int64_t in_wm, out_wm;
        uint64_t records_in_errors;
    } *ops;
    int nops;
    char *info;                 /* its operators' published info (JSON), or NULL */
    Sluice__LatencyHistogram *lat; /* latency histograms from the last report */
    int nlat;
} jm_metrics;

typedef struct jm_task {
    jm_task_state state;
    char *tm_id;                /* where it runs */
    char *host;
    int64_t start_ms, end_ms;
    jm_metrics metrics;
    uint64_t last_alignment_ns;  /* of its last acknowledged checkpoint */
    uint64_t last_start_delay_ns;
    int end_of_input;           /* RUNNING, waiting for a final checkpoint */
} jm_task;

typedef struct jm_exception {
    char *name;
    char *stacktrace;
    char *task;                 /* "<vertex> (i/n)" of a failed task, or NULL */
    char *tm_id;                /* the TaskManager it happened on, or NULL */
    char *endpoint;             /* that TaskManager's host:data port, when known, or NULL */
    int64_t timestamp;
} jm_exception;

/* One checkpoint or savepoint of a job, from trigger to its end. */
typedef enum { CP_IN_PROGRESS = 0, CP_COMPLETED, CP_FAILED } jm_cp_status;
typedef enum { CP_CHECKPOINT = 0, CP_SAVEPOINT, CP_SYNC_SAVEPOINT } jm_cp_type;

typedef struct jm_cp_handle {
    int vertex;                 /* vertex index */
    int subtask;
    char *file;
    int kg_first, kg_last;
    uint64_t size;
    int keyed, has_opstate;
    char **shared;              /* incremental RocksDB state: files in <job>/shared/ */
    size_t nshared;
    char **priv;                /* ... and private files next to `file` */
    size_t npriv;
    uint64_t checkpointed_size;
} jm_cp_handle;

/* One subtask's acknowledgement of a checkpoint, for the per-subtask
 * statistics (GET .../checkpoints/details/:cpid/subtasks/:vid). */
typedef struct jm_cp_ack {
    int64_t ack_ms;             /* wall clock; 0 = not acknowledged */
    uint64_t alignment_ns, sync_ns, async_ns, start_delay_ns;
    uint64_t state_size;        /* bytes of the state files it wrote */
    uint64_t persisted, processed; /* in-flight bytes persisted, processed while aligning */
    int unaligned;              /* it took the checkpoint unaligned */
} jm_cp_ack;

/* A task's channel-state file of an unaligned checkpoint. */
typedef struct jm_cp_chan {
    char *head_uid;
    int subtask, parallelism;
    char *file;
    uint64_t size;
} jm_cp_chan;

typedef struct jm_checkpoint {
    uint64_t id;
    jm_cp_status status;
    jm_cp_type type;
    int64_t trigger_ms, latest_ack_ms, end_ms;  /* wall clock */
    int64_t trigger_mono_ms;
    int num_subtasks, num_acked;
    int *par;                   /* per chain: its parallelism when triggered (a
                                   rescale changes the job's; the arrays below
                                   are laid out by these) */
    uint8_t *acked;             /* per task (chain offset + subtask): 1 acknowledged
                                   (or finished) */
    uint8_t *finished;          /* per task: it had finished (counts as acknowledged;
                                   _metadata records it finished) */
    jm_cp_ack *acks;            /* per task: what its acknowledgement reported */
    int writing;                /* all acknowledged; _metadata is being written (io.c) */
    char *dir;                  /* where its files go */
    uint64_t state_size;        /* every file the checkpoint needs */
    uint64_t checkpointed_size; /* what it wrote anew (less when incremental) */
    int refs_counted;           /* its shared files are counted in job->shared_refs */
    uint64_t max_alignment_ns, max_sync_ns, max_async_ns;
    char *failure;
    jm_cp_handle *handles;
    int nhandles;
    jm_cp_chan *chans;          /* channel-state files (unaligned checkpoints) */
    int nchans;
    int unaligned;              /* some task took it unaligned */
    uint64_t persisted, processed; /* in-flight bytes over every task */
    int discarded;              /* its files were removed (retention) */
    /* savepoints: the REST trigger that asked for it */
    char request_id[33];
    int stop, drain;
    struct jm_checkpoint *next; /* history, newest first */
} jm_checkpoint;

typedef struct jm_savepoint_op {
    char request_id[33];
    int is_checkpoint;          /* POST /jobs/:id/checkpoints, not a savepoint */
    uint64_t cp_id;             /* the checkpoint or savepoint it triggered */
    int done;                   /* 0 in progress, 1 completed, -1 failed */
    char *location;             /* "file:/..." when done */
    char *failure;
    struct jm_savepoint_op *next;
} jm_savepoint_op;

/* One rescale of a job (scheduler.c): a PUT of its resource requirements
 * that changed a vertex's parallelism, done as a stop-with-savepoint and a
 * restore at the new parallelism under the same job id. */
typedef enum { RS_IN_PROGRESS = 0, RS_COMPLETED, RS_FAILED, RS_IGNORED } jm_rescale_status;

#define JM_RESCALE_SPANS 4
typedef struct jm_rescale {
    char uuid[37];              /* rescaleUuid */
    char req_uuid[37];          /* resourceRequirementsUuid: the PUT that asked */
    int64_t attempt;            /* rescaleAttemptId: 1, 2, ... per job */
    jm_rescale_status status;
    const char *reason;         /* Flink's TerminatedReason name, once ended */
    char *failure;              /* why it failed, or NULL */
    int64_t start_ms, end_ms;   /* wall clock; end 0 while in progress */
    int nchains;
    int *lower, *upper;         /* per chain: the bounds asked for */
    int *pre, *post;            /* per chain: before, and after (0 until known) */
    int pre_slots, post_slots;
    struct {
        const char *state;      /* Flink's adaptive scheduler state names */
        int64_t enter_ms, leave_ms; /* leave 0 while in it */
        char *exception;
    } spans[JM_RESCALE_SPANS];
    int nspans;
    uint64_t sp_id;             /* its stop-with-savepoint */
    int sp_done;                /* the savepoint completed */
    char *sp_dir;
    struct jm_rescale *next;    /* history, newest first */
} jm_rescale;

typedef enum { JM_RESTART_NONE = 0, JM_RESTART_FIXED, JM_RESTART_EXPONENTIAL } jm_restart_type;

/* A job's checkpointing and restart settings: the cluster's configuration
 * with the job's own "config" over it (jm_job_settings). */
typedef struct jm_settings {
    int64_t cp_interval_ms, cp_timeout_ms, cp_min_pause_ms;
    int cp_tolerable, cp_exactly_once;
    int cp_unaligned;           /* execution.checkpointing.unaligned.enabled (exactly-once only) */
    int64_t cp_aligned_timeout_ms; /* execution.checkpointing.aligned-checkpoint-timeout */
    jm_restart_type restart_type;
    int restart_attempts;       /* fixed-delay attempts / attempts-before-reset-backoff */
    int64_t restart_delay_ms;   /* fixed-delay */
    int64_t exp_initial_ms, exp_max_ms, exp_reset_ms;
    double exp_multiplier, exp_jitter;
} jm_settings;

typedef struct jm_job {
    char id[33];
    sl_jobgraph *g;
    char *graph_json;           /* as sent to TaskManagers */
    jm_job_state state;
    int64_t timestamps[JOB_NSTATES]; /* wall ms when each state was entered, 0 = never */
    int64_t start_ms, end_ms;
    int64_t created_mono_ms;    /* for slot.request.timeout */
    char *state_reason;         /* why CREATED / why FAILED; NULL if none */
    uint32_t attempt;           /* current deployment */
    int nslots;                 /* slots needed (slot sharing) */
    jm_tm **slot_tm;            /* per slot index: its TaskManager (while deployed) */
    jm_task **tasks;            /* [chain][subtask] */
    jm_exception *exceptions;
    int nexceptions;
    /* checkpoints */
    uint64_t cp_counter;        /* last id used; ids never repeat, across restarts */
    jm_checkpoint *cps;         /* history, newest first (bounded) */
    jm_checkpoint *pending;     /* at most one in progress */
    int64_t next_cp_mono_ms;    /* earliest next trigger */
    int64_t cp_pause_mono_ms;   /* min-pause after the last one ended: no trigger before */
    int final_cp_wanted;        /* a task waits for a final checkpoint: trigger one
                                   after min-pause, not after the interval */
    int cp_total, cp_completed, cp_failed, cp_restored;
    int cp_failed_in_a_row;
    jm_checkpoint *latest_completed;  /* also a member of cps (or kept alone) */
    struct sl_shared_refs *shared_refs; /* retained checkpoints per shared file (checkpoint.c) */
    char *shared_dir;           /* <checkpoints>/<job>/shared once an incremental one was acked */
    int shared_untracked;       /* recovered (HA): retained checkpoints this JobManager did
                                   not see complete may need shared files: never sweep */
    int64_t restored_id, restored_ms;
    int restored_is_savepoint;
    char *restored_path;
    char *restore_dir;          /* snapshot the next deployment restores from */
    struct Sluice__UserLibrary **libs; /* C jobs run from POST /jars (jars.c): shipped
                                   with every deployment, owned */
    size_t nlibs;
    jm_savepoint_op *sp_ops;
    /* restarts (scheduler.c alone) */
    int restarts;               /* all restarts of the job (numRestarts) */
    int cycle_restarts;         /* exponential-delay: restarts since the backoff was reset */
    int64_t backoff_ms;         /* exponential-delay: the last backoff, 0 = none yet */
    int64_t last_failure_mono_ms;
    int64_t restart_at_mono_ms; /* RESTARTING: when to deploy again */
    char *state_backend;        /* state.backend.type of the TaskManagers of its last deployment */
    char *restore_point;        /* latest completed checkpoint's dir, as the coordinator reported */
    struct jm_results *results; /* a SELECT's rows waiting for the client (collect.c), or NULL */
    jm_settings set;            /* its checkpointing and restart strategy */
    uint64_t restore_point_id;
    int ha_removed;             /* ha.c: its pointer left ZooKeeper (it ended for good) */
    jm_rescale *rescales;       /* history, newest first (bounded: JM_RESCALE_HISTORY) */
    jm_rescale *rescaling;      /* the one in progress (also in rescales), or NULL */
    int64_t rescale_count;      /* rescaleAttemptIds given */
    int rescale_counts[4];      /* per jm_rescale_status, over the job's life */
    char *rescale_sp;           /* the last rescale's savepoint while it may still be restored
                                   from; jm_cp_drop_rescale_savepoint deletes it */
    uint64_t rescale_sp_id;
    struct jm_job *next;
} jm_job;

#define JM_RESCALE_HISTORY 32

typedef struct jm_conn {
    struct bufferevent *bev;
    struct jm *jm;
    int hello_done;
    int auth_wait;              /* our challenge sent, its answer not yet (auth.h) */
    int closing;                /* refused: closed once its output is sent */
    uint8_t nonce[32], peer_nonce[32];
    char *peer_id;              /* the id its Hello claims */
    jm_tm *tm;                  /* after registration */
    int proven;                 /* registered once: full-size frames, no handshake deadline */
    int64_t opened_ms;          /* accepted at (sl_mono_ms); the handshake deadline runs from it */
    char peer[64];              /* address for logs */
    struct jm_conn *next;
} jm_conn;

typedef struct jm_op jm_op;
typedef struct jm_io_job jm_io_job;

/* A TaskManager's process info (logs, stdout, threads) asked for by a REST
 * thread (rest.c): the loop sends the ProcessInfoRequest and keeps this; the
 * TaskManager's reply fills it (loop); the REST thread polls until it is done
 * and then owns it. */
typedef struct jm_pinfo {
    uint64_t id;
    char *tm_id;
    int64_t asked_mono_ms;
    int done;
    char *json;                 /* the answer's JSON, or NULL */
    uint8_t *data;              /* a file's (last) bytes, len of them */
    size_t len;
    char *error;                /* why there is none, or NULL */
    struct jm_pinfo *next;
} jm_pinfo;

/* A vertex's flame graph: its stack samples, gathered from the
 * TaskManagers (rest_flame.c, loop thread). */
typedef struct jm_flame jm_flame;

typedef struct jm {
    sl_config *conf;            /* read-only after start-up: any thread may read it */
    struct event_base *base;
    pthread_t loop_thread;      /* the thread that runs base */
    struct evconnlistener *listener;
    struct event *tick;         /* heartbeat checks, slot timeouts */
    uint64_t self_cpu_ns;       /* this process's CPU time at self_cpu_at_ms */
    int64_t self_cpu_at_ms;     /* monotonic; 0: not read yet (GET /jobmanager/metrics) */
    double self_cpu_load;       /* between the last two readings, 0..1 */
    struct MHD_Daemon *http;
    int rpc_port, rest_port;
    int64_t heartbeat_timeout_ms, heartbeat_interval_ms, slot_timeout_ms;
    int default_parallelism;
    int64_t auto_watermark_interval_ms;
    jm_tm *tms;
    jm_conn *conns;
    jm_job *jobs;               /* newest first */
    uint32_t next_attempt;
    uint64_t session;           /* random per start: with job and attempt, names a deployment */
    const char *web_root;
    const char *auth_token;     /* NULL or "" = no auth */
    sl_auth cluster_auth;       /* security.cluster.secret: TaskManagers prove it */
    SSL_CTX *tls;               /* security.ssl.internal.*: mutual TLS, or NULL */
    int stopping;
    struct event *cp_tick;      /* checkpoint triggers and timeouts, restarts, job store */
    /* checkpoint configuration (checkpointing and restarts are per job: jm_job.set) */
    int cp_retained, cp_history;
    int cp_delete_on_cancel;    /* externalized-checkpoint-retention is not RETAIN_ON_CANCELLATION */
    int rescale_sp_retain;      /* state.savepoints.rescale.retain: keep rescales' savepoints */
    const char *cp_dir, *sp_dir;
    /* job store */
    int64_t jobstore_capacity, jobstore_expiration_ms;
    jm_savepoint_op *disposals; /* POST /savepoint-disposal results, newest first (rest.c, bounded) */
    jm_pinfo *pinfos;           /* TaskManager process info asked for, not yet taken (rest.c) */
    uint64_t pinfo_ids;         /* the last ProcessInfoRequest id */
    jm_flame *flames;           /* vertices' flame graphs (rest_flame.c) */
    /* op queue to the loop (loop.c): any thread posts, the loop runs;
     * closed once the loop has stopped, so ops are refused */
    struct sl_queue *ops;
    struct event *op_event;     /* watches the queue's eventfd, runs the queue */
    /* I/O worker (io.c) */
    pthread_t io_thread;
    int io_started;
    struct sl_queue *io;        /* jm_io_job's, in order; closed at jm_io_stop */
    /* Prometheus reporter (prom.c), or NULL */
    struct sl_prom *prom;
    struct event *prom_tick;    /* renders the loop's figures for it */
    /* high availability (ha.c), or NULL when high-availability.type is none */
    struct jm_ha *ha;
    struct jm_jars *jars;       /* uploaded C jobs (jars.c) */
} jm;

/* ---- loop.c: typed ops from other threads to the loop ------------------ */

typedef enum {
    JM_OP_REST,                 /* REST thread -> loop: run a request, reply (waited for) */
    JM_OP_JAR_RUN,              /* REST thread -> loop: submit a job built from a jar (waited for) */
    JM_OP_CP_WRITTEN,           /* I/O worker -> loop: a checkpoint's _metadata was written */
    JM_OP_HA                    /* ZooKeeper's thread -> loop: a session or watch event (ha.c) */
} jm_op_kind;

struct jm_op {
    sl_qmsg qm;                 /* type: a jm_op_kind; the queue's link and answer */
    union {
        struct { void *ctx; } rest;             /* rest.c's / jars.c's request, borrowed */
        struct {
            char job_id[33];
            uint32_t attempt;
            uint64_t cp_id;
            int rc;                             /* SL_OK or SL_ERR */
            char err[400];
        } written;
        struct {
            int type, state;                    /* the ZooKeeper watcher's arguments */
            int gen;                            /* of the session handle */
            char path[512];
        } ha;
    } u;
};

int jm_ops_init(jm *j);                   /* before the loop and the other threads start */
/* Any thread: queue `op` (heap, taken) for the loop; refused (freed) once closed. */
void jm_op_post(jm *j, jm_op *op);
/* Any thread but the loop: queue `op` (caller owns it) and wait until the loop
 * has run it. Returns SL_OK, or SL_ERR when the loop has stopped. */
int jm_op_call(jm *j, jm_op *op);
void jm_ops_close(jm *j);                 /* after the loop ended: refuse and answer the rest */
void jm_ops_destroy(jm *j);
int jm_on_loop(const jm *j);              /* is the caller the loop thread? */

/* ---- jars.c: the jar API with C jobs (POST /jars/upload, /jars/:id/run) -- */

struct MHD_Connection;
int jm_jars_start(jm *j, char *err, size_t errlen);     /* main thread, before REST */
void jm_jars_stop(jm *j);                               /* after REST stopped */
int jm_jars_path(const char *url);                      /* /jars or /v1/jars...: jars.c answers */
/* libmicrohttpd's access handler for those paths (REST threads), called
 * only for a request jm_rest_admit has let in; returns an MHD_Result.
 * *state is jars.c's (NULL on the first call), freed by jm_jars_completed. */
int jm_jars_request(jm *j, struct MHD_Connection *conn, const char *url, const char *method,
                    const char *upload_data, size_t *upload_size, void **state);
void jm_jars_completed(void *state);                   /* NULL: nothing */
void jm_jars_on_loop(jm *j, void *ctx);                 /* JM_OP_JAR_RUN */
/* The child process that runs a C job's entry point (main.c's
 * --build-c-job): prints the job graph, or the error and exits 1. */
int jm_jars_child(int argc, char **argv);
int jm_rest_authorized(jm *j, struct MHD_Connection *conn);

/* ---- io.c: the file worker -------------------------------------------- */

typedef enum {
    JM_IO_WRITE_METADATA,       /* loop: write <dir>/_metadata; answer with JM_OP_CP_WRITTEN */
    JM_IO_REMOVE,               /* loop: delete a snapshot directory (checkpoint, failed one) */
    JM_IO_UNLINK,               /* loop: delete a shared file no retained checkpoint needs */
    JM_IO_SWEEP,                /* loop: at a job's end, delete shared files not in data */
    JM_IO_RESTORE_PLAN,         /* REST thread (waits): check a savepoint against a graph */
    JM_IO_DISPOSE               /* REST thread (waits): delete a savepoint */
} jm_io_kind;

struct jm_io_job {
    sl_qmsg qm;                 /* type: a jm_io_kind; the queue's link and answer */
    char *dir;                  /* owned */
    uint8_t *data;              /* WRITE_METADATA: packed bytes, owned */
    size_t len;
    char job_id[33];
    uint32_t attempt;
    uint64_t cp_id;
    /* RESTORE_PLAN: arguments and results (borrowed from the waiting thread) */
    sl_jobgraph *g;
    const char *path;
    int allow_non_restored;
    json_t **report;
    char **dir_out;
    uint64_t *cpid_out;
    int *is_savepoint_out;
    int rc;
    int not_found;              /* JM_IO_DISPOSE: no savepoint there at all */
    char err[1024];
};

int jm_io_start(jm *j, char *err, size_t errlen);
void jm_io_submit(jm *j, jm_io_job *job);   /* loop: fire and forget (job taken) */
int jm_io_call(jm *j, jm_io_job *job);      /* other threads: run and wait; returns job->rc */
void jm_io_remove(jm *j, const char *dir);  /* loop: queue a JM_IO_REMOVE */
void jm_io_unlink(jm *j, const char *path); /* loop: queue a JM_IO_UNLINK */
/* loop: queue a JM_IO_SWEEP of shared_dir keeping the n sorted names */
void jm_io_sweep(jm *j, const char *shared_dir, const char *const *keep, size_t n);
void jm_io_stop(jm *j);                     /* finish queued work, join */

/* ---- sender.c: every outbound message (loop only) ---------------------- */

void jm_send(jm_tm *tm, Sluice__Envelope *env);
void jm_send_conn(jm_conn *c, Sluice__Envelope *env);
void jm_send_job(jm *j, jm_job *job, Sluice__Envelope *env); /* to every TaskManager of job */
void jm_send_cancel(jm *j, jm_job *job);
void jm_send_trigger(jm *j, jm_job *job, const jm_checkpoint *cp);
void jm_send_notify(jm *j, jm_job *job, uint64_t cp_id, int completed);

/* ---- rpc.c (loop) ------------------------------------------------------- */
int jm_rpc_start(jm *j, char *err, size_t errlen);
void jm_rpc_stop(jm *j);
void jm_rpc_close_all(jm *j, const char *why);  /* drop every TaskManager connection */
/* Handle every whole frame in c's input (c may be closed and freed by it);
 * the connection's read callback, and the control-frame fuzz target's way
 * in without a socket. */
void jm_rpc_input(jm_conn *c);
void jm_apply_metrics(jm *j, const Sluice__SubtaskMetrics *m);

/* ---- scheduler.c (loop): the job lifecycle and the restart policy ------- */
jm_job *jm_job_submit(jm *j, sl_jobgraph *g);         /* takes g */
/* A submission over REST (POST /jobs, POST /jars/:id/run): the job, its
 * snapshot to restore from (restore_dir NULL: none; taken), the C job
 * object its deployments ship (lib NULL: none; taken), persisted for high
 * availability before it is scheduled. NULL with err (the job refused and
 * gone) when it cannot be persisted or this JobManager may not act. */
void jm_user_library_free(struct Sluice__UserLibrary *lib); /* its id, bytes and itself */
/* Read a C job object file into lib (initialised here) under id (jars.c). */
int jm_jars_read_object(const char *path, struct Sluice__UserLibrary *lib, const char *id,
                        char *err, size_t errlen);
jm_job *jm_job_admit(jm *j, sl_jobgraph *g, char *restore_dir, uint64_t restore_cpid,
                     int restore_is_savepoint, struct Sluice__UserLibrary *lib, char *err,
                     size_t errlen);
/* The same with any number of shipped objects (libs: heap array, taken). */
jm_job *jm_job_admit_libs(jm *j, sl_jobgraph *g, char *restore_dir, uint64_t restore_cpid,
                          int restore_is_savepoint, struct Sluice__UserLibrary **libs,
                          size_t nlibs, char *err, size_t errlen);
/* The objects of user-defined functions a graph names ("functions" of its
 * vertices, "library": "jar:<id>" of an upload), read for shipping:
 * *libs (caller frees) and *n. SL_ERR with err naming an unknown upload. */
int jm_jars_collect_functions(jm *j, const sl_jobgraph *g, struct Sluice__UserLibrary ***libs,
                              size_t *n, char *err, size_t errlen);
/* A job a new leader recovers (ha.c): the same as a submission, under its old id. */
jm_job *jm_job_recover(jm *j, sl_jobgraph *g, const char *id);
/* Leadership lost (ha.c): forget every job without telling any TaskManager. */
void jm_jobs_suspend_all(jm *j);
void jm_schedule(jm *j);
void jm_job_cancel(jm *j, jm_job *job);
void jm_on_task_status(jm *j, const Sluice__TaskStatus *ts);
/* Whether task (chain, subtask) of the job's current attempt was deployed to
 * tm (1 too for an unknown job, attempt or task: the handlers ignore those).
 * A TaskManager's report about a task placed elsewhere is not believed. */
int jm_task_runs_on(jm *j, const char *job_id, uint32_t attempt, uint32_t chain, uint32_t subtask,
                    const jm_tm *tm);
void jm_on_tm_lost(jm *j, jm_tm *tm, const char *why);
void jm_check_timeouts(jm *j);
/* Every cp tick: restarts that are due, and job store eviction. */
void jm_sched_tick(jm *j);
/* Reports from the checkpoint coordinator. */
void jm_sched_on_cp_failed(jm *j, jm_job *job, const char *reason); /* past tolerance */
void jm_sched_on_cp_completed(jm *j, jm_job *job, const jm_checkpoint *cp);
/* PUT /jobs/:id/resource-requirements: per chain the parallelism bounds
 * (lower[c] <= upper[c], checked by the caller). Validates the job at the
 * new parallelism, then stops it with a savepoint and restores it at the
 * upper bounds (as far as slots allow, never below the lower ones). Returns
 * 0 (*out the rescale, IGNORED when nothing changes) or the HTTP status
 * (400, 409) with err. */
/* checkpoint.c: savepoint cp_id failed (a rescale's ends with it) */
void jm_sched_on_sp_failed(jm *j, jm_job *job, uint64_t cp_id, const char *why);
int jm_job_rescale(jm *j, jm_job *job, const int *lower, const int *upper, jm_rescale **out,
                   char *err, size_t errlen);
void jm_job_set_state(jm_job *job, jm_job_state s);
jm_job *jm_job_find(jm *j, const char *id);
jm_tm *jm_tm_find(jm *j, const char *id);
int jm_slots_total(jm *j);
int jm_slots_free(jm *j);
/* Add to the job's exception history (the first 64 are kept): `task` the failed
 * task or NULL, `tm_id` the TaskManager it happened on or NULL, `tm` that
 * TaskManager when still registered (for its endpoint) or NULL. Copies all. */
void jm_job_add_exception(jm_job *job, const char *name, const char *trace, const char *task,
                          const char *tm_id, const jm_tm *tm);
/* job->set: the cluster's settings with the job's "config" over them. */
void jm_job_settings(jm *j, jm_job *job);
/* Checks of a parsed graph against its effective settings that no vertex
 * can make alone: each vertex's check_job hook (core/operator.h) with the
 * job's effective settings (e.g. an exactly-once Kafka sink's transaction
 * timeout against the checkpoint interval). Thread-safe (reads the immutable cluster
 * configuration). SL_ERR with err: the submission is refused (400). */
int jm_job_graph_check(const jm *j, const sl_jobgraph *g, char *err, size_t errlen);
/* exponential-delay: the delay before job's next restart at `now` (ms,
 * monotonic), updating its backoff and counting the restart in
 * job->cycle_restarts; -1 when attempts-before-reset-backoff restarts have
 * been made since the backoff was last reset. */
int64_t jm_restart_backoff(jm *j, jm_job *job, int64_t now);
void jm_jobs_destroy(jm *j);

/* ---- checkpoint.c (loop): the coordinator -------------------------------- */
void jm_cp_configure(jm *j);
void jm_cp_tick(jm *j);
void jm_cp_on_ack(jm *j, const Sluice__AcknowledgeCheckpoint *a);

/* collect.c: the rows of a job's collect sinks, for GET /jobs/:jobid/results */
typedef struct jm_results jm_results;
void jm_collect_on_rows(jm *j, const Sluice__CollectRows *m);
/* The rows from `token` (at most max), acknowledging those before it; NULL
 * with *status (400, 410) and err when the token does not fit. */
json_t *jm_results_fetch(jm *j, jm_job *job, uint64_t token, int max, int *status, char *err,
                         size_t errlen);
void jm_results_free(jm_job *job);
/* Rows a new deployment's collect sinks may send at first (DeployJob). */
uint32_t jm_results_room(jm_job *job);
void jm_cp_on_task_finished(jm *j, jm_job *job, uint32_t chain, uint32_t subtask);
void jm_cp_on_end_of_input(jm *j, jm_job *job);
void jm_cp_on_written(jm *j, const jm_op *op);  /* JM_OP_CP_WRITTEN */
void jm_cp_job_ended(jm *j, jm_job *job);       /* abort what is pending */
/* the job reached CANCELED: unless retained on cancellation, its
 * checkpoints and shared files go */
void jm_cp_job_canceled(jm *j, jm_job *job);
/* The last rescale's savepoint can no longer be restored from (a checkpoint
 * at the new parallelism or a later rescale's savepoint replaced it, or the
 * job finished or was cancelled): its files go, unless
 * state.savepoints.rescale.retain. */
void jm_cp_drop_rescale_savepoint(jm *j, jm_job *job);
void jm_cp_free(jm_job *job);
jm_checkpoint *jm_cp_trigger(jm *j, jm_job *job, jm_cp_type type, const char *dir, int stop,
                             int drain, char *err, size_t errlen);
char *jm_savepoint_dir(jm *j, jm_job *job, const char *target); /* caller frees */

/* restore.c (any thread; reads files: the I/O worker runs it): check a
 * snapshot against a graph (adopting its maxParallelism when the job sets
 * none); on success *dir_out is the snapshot directory (caller frees) and
 * *report, if asked for, the mapping. */
int jm_restore_plan(sl_jobgraph *g, const char *path, int allow_non_restored, json_t **report,
                    char **dir_out, uint64_t *cpid, int *is_savepoint, char *err, size_t errlen);

/* ---- jthrowable.c (any thread) ------------------------------------------ */
/* Base64 of a Java-serialized org.apache.flink.util.SerializedThrowable
 * with that class name, message and stringified trace: the
 * "serialized-throwable" of a failure-cause. Caller frees. */
char *jm_throwable_b64(const char *cls, const char *msg, const char *trace);

/* ---- reporter.c (loop): Flink's Prometheus reporter, when configured -------- */
int jm_prom_start(jm *j, char *err, size_t errlen);
void jm_prom_stop(jm *j);

/* ---- rest.c ------------------------------------------------------------- */
int jm_rest_start(jm *j, char *err, size_t errlen);
void jm_rest_stop(jm *j);
void jm_rest_on_loop(jm *j, void *ctx);   /* loop: run a posted request */
/* loop: a TaskManager answered a ProcessInfoRequest */
void jm_rest_on_process_info(jm *j, const jm_tm *tm, const Sluice__ProcessInfoReply *m);
/* rest_guard.c (REST threads): the gate of every request, /jars included,
 * judged on its headers alone (libmicrohttpd's first call) -- Host, Origin,
 * Sec-Fetch-Site, Content-Type and, for a mutating or code-loading one,
 * rest.auth-token. path is the URL without its "/v1". Returns 0 to admit,
 * else the HTTP status (403, 415, 401) with the reason in err. */
int jm_rest_admit(jm *j, struct MHD_Connection *conn, const char *method, const char *path, char *err,
                  size_t errlen);
/* The canonical local path of a directory a request names (a plain path or
 * a file: URI) if it lies under state.savepoints.dir, state.checkpoints.dir
 * or rest.allowed-dirs; else NULL, err naming the roots. `what` starts the
 * message ("savepoint target"). Caller frees. */
char *jm_rest_allowed_dir(jm *j, const char *value, const char *what, char *err, size_t errlen);
/* rest_checkpoints.c (loop): the checkpoint statistics of a job, and the
 * details of one of its checkpoints. Caller owns the JSON. */
json_t *jm_rest_checkpoints_json(const jm_job *job);
json_t *jm_rest_checkpoint_details(const jm_job *job, const jm_checkpoint *cp);
json_t *jm_rest_checkpoint_subtasks(const jm_job *job, const jm_checkpoint *cp, int chain);
json_t *jm_rest_checkpoints_sluice(const jm_job *job);

#endif
