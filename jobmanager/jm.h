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
    double in_rate, out_rate;   /* records/s, from the last two reports */
    double in_bytes_rate, out_bytes_rate;
    int has;
} jm_metrics;

typedef struct jm_task {
    jm_task_state state;
    char *tm_id;                /* where it runs */
    char *host;
    int64_t start_ms, end_ms;
    jm_metrics metrics;
} jm_task;

typedef struct jm_exception {
    char *name;
    char *stacktrace;
    char *task;
    char *location;
    int64_t timestamp;
} jm_exception;

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
    const char *web_root;
    const char *auth_token;     /* NULL or "" = no auth */
    int stopping;
} jm;

/* rpc.c (libevent thread) */
int jm_rpc_start(jm *j, char *err, size_t errlen);
void jm_rpc_stop(jm *j);
void jm_kick(jm *j);                      /* any thread */
void jm_send(jm_tm *tm, Sluice__Envelope *env); /* under lock */
void jm_apply_metrics(jm *j, const Sluice__SubtaskMetrics *m); /* under lock */

/* scheduler.c (under jm->lock) */
jm_job *jm_job_submit(jm *j, sl_jobgraph *g);         /* takes g */
void jm_schedule(jm *j);
void jm_job_cancel(jm *j, jm_job *job);
void jm_on_task_status(jm *j, const Sluice__TaskStatus *ts);
void jm_on_tm_lost(jm *j, jm_tm *tm, const char *why);
void jm_check_timeouts(jm *j);
void jm_job_set_state(jm_job *job, jm_job_state s);
jm_job *jm_job_find(jm *j, const char *id);
jm_tm *jm_tm_find(jm *j, const char *id);
int jm_slots_total(jm *j);
int jm_slots_free(jm *j);
void jm_job_add_exception(jm_job *job, const char *name, const char *trace, const char *task,
                          const char *location);
void jm_jobs_destroy(jm *j);

/* rest.c */
int jm_rest_start(jm *j, char *err, size_t errlen);
void jm_rest_stop(jm *j);

#endif
