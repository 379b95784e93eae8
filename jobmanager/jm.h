/*
 * jm.h -- the JobManager's state, shared by its three parts.
 *
 * Threads: the libevent thread (rpc.c: TaskManager connections, heartbeat
 * and scheduling timers) and libmicrohttpd's threads (rest.c) both read and
 * change this state, always under jm->lock, held briefly: REST handlers
 * build their JSON under it and never do I/O while holding it; the RPC side
 * queues outgoing frames into bufferevents, which libevent flushes later.
 * REST handlers that must make the RPC side act (a new job to schedule)
 * change the state and call jm_kick(), which wakes the libevent thread.
 */
#ifndef SL_JM_H
#define SL_JM_H

#include <pthread.h>
#include <event2/event.h>
#include <event2/bufferevent.h>

#include "sl.h"
#include "config.h"
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
    int64_t last_heartbeat_ms;  /* monotonic */
    int64_t registered_ms;      /* wall clock */
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
} jm_metrics;

typedef struct jm_task {
    jm_task_state state;
    char *tm_id;                /* where it runs */
    char *host;
    int64_t start_ms, end_ms;
    jm_metrics metrics;
    uint64_t last_alignment_ns;  /* of its last acknowledged checkpoint */
    uint64_t last_start_delay_ns;
} jm_task;

typedef struct jm_exception {
    char *name;
    char *stacktrace;
    char *task;
    char *location;
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
} jm_cp_handle;

typedef struct jm_checkpoint {
    uint64_t id;
    jm_cp_status status;
    jm_cp_type type;
    int64_t trigger_ms, latest_ack_ms, end_ms;  /* wall clock */
    int64_t trigger_mono_ms;
    int num_subtasks, num_acked;
    uint8_t *acked;             /* per task (chain offset + subtask) */
    char *dir;                  /* where its files go */
    uint64_t state_size;
    uint64_t max_alignment_ns, max_sync_ns, max_async_ns;
    char *failure;
    jm_cp_handle *handles;
    int nhandles;
    int discarded;              /* its files were removed (retention) */
    /* savepoints: the REST trigger that asked for it */
    char request_id[33];
    int stop, drain;
    struct jm_checkpoint *next; /* history, newest first */
} jm_checkpoint;

typedef struct jm_savepoint_op {
    char request_id[33];
    int done;                   /* 0 in progress, 1 completed, -1 failed */
    char *location;             /* "file:/..." when done */
    char *failure;
    struct jm_savepoint_op *next;
} jm_savepoint_op;

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
    int cp_total, cp_completed, cp_failed, cp_restored;
    int cp_failed_in_a_row;
    jm_checkpoint *latest_completed;  /* also a member of cps (or kept alone) */
    int64_t restored_id, restored_ms;
    int restored_is_savepoint;
    char *restored_path;
    char *restore_dir;          /* snapshot the next deployment restores from */
    jm_savepoint_op *sp_ops;
    /* restarts */
    int restarts;
    int64_t restart_at_mono_ms; /* RESTARTING: when to deploy again */
    struct jm_job *next;
} jm_job;

typedef struct jm_conn {
    struct bufferevent *bev;
    struct jm *jm;
    int hello_done;
    jm_tm *tm;                  /* after registration */
    char peer[64];              /* address for logs */
    struct jm_conn *next;
} jm_conn;

typedef struct jm {
    pthread_mutex_t lock;
    sl_config *conf;
    struct event_base *base;
    struct evconnlistener *listener;
    struct event *tick;         /* heartbeat checks, slot timeouts */
    struct event *kick;         /* wake-up from REST threads */
    struct MHD_Daemon *http;
    int rpc_port, rest_port;
    int64_t heartbeat_timeout_ms, heartbeat_interval_ms, slot_timeout_ms;
    int default_parallelism;
    jm_tm *tms;
    jm_conn *conns;
    jm_job *jobs;               /* newest first */
    uint32_t next_attempt;
    uint64_t session;           /* random per start: with job and attempt, names a deployment */
    const char *web_root;
    const char *auth_token;     /* NULL or "" = no auth */
    int stopping;
    struct event *cp_tick;      /* checkpoint triggers and timeouts */
    /* checkpoint configuration */
    int64_t cp_interval_ms, cp_timeout_ms, cp_min_pause_ms;
    int cp_tolerable, cp_exactly_once, cp_retained, cp_history;
    const char *cp_dir, *sp_dir;
    int restart_fixed;          /* restart-strategy fixed-delay */
    int restart_attempts;
    int64_t restart_delay_ms;
} jm;

/* rpc.c (libevent thread) */
int jm_rpc_start(jm *j, char *err, size_t errlen);
void jm_rpc_stop(jm *j);
void jm_kick(jm *j);                      /* any thread */
void jm_send(jm_tm *tm, Sluice__Envelope *env); /* under lock */
void jm_send_job(jm *j, jm_job *job, Sluice__Envelope *env); /* to every TaskManager of job */
void jm_apply_metrics(jm *j, const Sluice__SubtaskMetrics *m); /* under lock */

/* scheduler.c (under jm->lock) */
jm_job *jm_job_submit(jm *j, sl_jobgraph *g);         /* takes g */
void jm_schedule(jm *j);
void jm_job_cancel(jm *j, jm_job *job);
void jm_on_task_status(jm *j, const Sluice__TaskStatus *ts);
void jm_on_tm_lost(jm *j, jm_tm *tm, const char *why);
void jm_check_timeouts(jm *j);
void jm_job_set_state(jm_job *job, jm_job_state s);
/* A deployed job lost a task or TaskManager: restart it from its latest
 * checkpoint when the restart strategy allows, else fail it. */
void jm_job_fail_or_restart(jm *j, jm_job *job, const char *reason);
jm_job *jm_job_find(jm *j, const char *id);
jm_tm *jm_tm_find(jm *j, const char *id);
int jm_slots_total(jm *j);
int jm_slots_free(jm *j);
void jm_job_add_exception(jm_job *job, const char *name, const char *trace, const char *task,
                          const char *location);
void jm_jobs_destroy(jm *j);

/* checkpoint.c (under jm->lock) */
void jm_cp_configure(jm *j);
void jm_cp_tick(jm *j);
void jm_cp_on_ack(jm *j, const Sluice__AcknowledgeCheckpoint *a);
void jm_cp_job_ended(jm *j, jm_job *job);       /* abort what is pending */
void jm_cp_free(jm_job *job);
jm_checkpoint *jm_cp_trigger(jm *j, jm_job *job, jm_cp_type type, const char *dir, int stop,
                             int drain, char *err, size_t errlen);
char *jm_savepoint_dir(jm *j, jm_job *job, const char *target); /* caller frees */

/* restore.c: check a snapshot against a graph (adopting its
 * maxParallelism when the job sets none); on success *dir_out is the
 * snapshot directory (caller frees) and *report, if asked for, the mapping. */
int jm_restore_plan(sl_jobgraph *g, const char *path, int allow_non_restored, json_t **report,
                    char **dir_out, uint64_t *cpid, int *is_savepoint, char *err, size_t errlen);

/* rest.c */
int jm_rest_start(jm *j, char *err, size_t errlen);
void jm_rest_stop(jm *j);

#endif
