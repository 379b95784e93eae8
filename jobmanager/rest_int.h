/*
 * rest_int.h -- what the REST API's files share (rest.c and rest_process.c):
 * a request's state on its REST thread, its trip to the loop (route_ctx),
 * and the process endpoints rest.c hands to rest_process.c.
 */
#ifndef JM_REST_INT_H
#define JM_REST_INT_H

#include <stdint.h>
#include <microhttpd.h>
#include "http_reply.h"
#include "jm.h"

typedef struct req {
    char *body;
    size_t len;
    int too_big;
    int refused;                /* jm_rest_admit's status (403, 415, 401), 0 admitted */
    char why[700];              /* its reason */
    int jars;                   /* a /jars path: jars.c answers */
    void *jar;                  /* jars.c's state of the request */
} req;

/* a handler's answer (lib/http_reply.h) */
typedef sl_reply reply;
#define reply_json sl_reply_json
#define reply_err sl_reply_err

#define MAX_ARGS 16

/* One API request on its way from a REST thread to the loop and back. */
typedef struct route_ctx {
    jm *j;
    const char *method;
    char *seg[12];
    int nseg;
    req *rq;
    char *arg_key[MAX_ARGS], *arg_val[MAX_ARGS]; /* query arguments, copied (owned) */
    int nargs;
    /* POST /jobs: prepared on the REST thread; the loop takes g (sets NULL) */
    sl_jobgraph *g;
    char *restore_dir;          /* snapshot to restore from, or NULL */
    uint64_t restore_cpid;
    int restore_is_savepoint;
    struct Sluice__UserLibrary **libs; /* user functions' objects the job ships (taken by the loop) */
    size_t nlibs;
    /* POST /savepoint-disposal: done on the REST thread, recorded by the loop */
    int disposal_rc;            /* SL_OK or SL_ERR */
    int disposal_not_found;     /* no savepoint there (404) */
    char disposal_err[1400];
    /* POST /jobs/:id/savepoints and /stop: the target directory, checked
     * and made canonical on the REST thread; NULL when none was given */
    char *target_dir;
    /* GET /taskmanagers/:id/{logs,log,stdout,logs/:name,thread-dump}: asked of
     * the TaskManager (stage 1), polled for (2) or given up (3); see tm_process */
    int pinfo_stage;
    int pinfo_kind;             /* Sluice__ProcessInfoRequest__Kind */
    uint64_t pinfo_id;
    jm_pinfo *pinfo_done;       /* stage 2: the answer, taken from the loop's list */
    reply *r;                   /* the answer, written by the loop */
} route_ctx;

/* rest.c's metric helpers, for rest_vertex.c (loop thread) */
extern const char *jm_rest_metric_names[];   /* a subtask's metrics, NULL-terminated */
#define JM_REST_N_OP_METRICS 6
extern const char *jm_rest_op_metric_names[JM_REST_N_OP_METRICS + 1]; /* an operator's */
/* A named metric of one subtask (SL_ERR if unknown); of subtask i of chain c,
 * an operator's ("<operator name>.<metric>") too. */
int jm_rest_task_metric(const jm_task *t, const char *name, double *out);
int jm_rest_subtask_metric(const jm_job *job, int c, int i, const char *name, double *out);
json_t *jm_rest_metric_value(double v, const char *name); /* Flink's string value */
json_t *jm_rest_io_metrics(const jm_task *ts, int n);     /* Flink's IOMetricsInfo over n tasks */
jm_task_state jm_rest_tasks_state(const jm_task *ts, int n); /* their state together */
const char *jm_rest_qarg(route_ctx *rc, const char *key);  /* a query argument or NULL */

/* rest_rescale.c: GET/PUT /jobs/:id/resource-requirements and GET
 * /jobs/:id/rescales/...; 1 when the path was one of those (answered in r) */
int jm_rest_rescale_routes(route_ctx *rc, jm_job *job, reply *r);

/* rest_vertex.c: GET /jobs/:id/vertices/:vid/... of chain c (loop thread) */
void jm_rest_vertex_routes(route_ctx *rc, jm_job *job, int c, reply *r);
/* GET /sluice/jobs/:id/vertices/:vid/subtasks: every metric as a number */
json_t *jm_rest_sluice_subtasks(const jm_job *job, int c);

/* rest_flame.c (loop thread): GET /jobs/:id/vertices/:vid/flamegraph of
 * chain c; a TaskManager's answer to its STACK_SAMPLES request (1 when m
 * was one, else 0); dropping them all once the loop has stopped. */
void jm_rest_flamegraph(route_ctx *rc, jm_job *job, int c, reply *r);
int jm_rest_on_flame_reply(jm *j, const jm_tm *tm, const Sluice__ProcessInfoReply *m);
void jm_rest_flames_free_all(jm *j);

/* REST thread: GET /jobmanager/{logs,...,environment}; 1 when the path is one
 * of those (*r the JSON answer, or *fd and *size a file to send), else 0. */
int jm_rest_process_routes(const route_ctx *rc, reply *r, int *fd, uint64_t *size);
/* Queue the file fd (size bytes, taken) as text/plain. */
MHD_RESULT jm_rest_send_file(struct MHD_Connection *conn, int fd, uint64_t size);
/* The ProcessInfoRequest kind of a GET /taskmanagers/:id/... process path, or -1. */
int jm_rest_tm_process_kind(const route_ctx *rc);
/* REST thread: ask the TaskManager and wait (at most 10 s): JSON into *r, or
 * a file's bytes into *data and *len (caller frees). */
void jm_rest_tm_process(jm *j, route_ctx *rc, reply *r, uint8_t **data, size_t *len);
/* Loop: a stage of jm_rest_tm_process (rc->pinfo_stage). */
void jm_rest_pinfo_route(route_ctx *rc, reply *r);
/* After the loop and the REST threads have stopped: drop unanswered requests. */
void jm_rest_pinfo_free_all(jm *j);

#endif
