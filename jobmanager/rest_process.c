/*
 * rest_process.c -- what Flink's REST API shows of the daemons' processes:
 * GET /jobmanager/{logs,logs/:name,log,stdout,thread-dump,environment}, read
 * on the REST thread from the JobManager's own /proc/self (lib/proc_info.c)
 * without the loop; and the same of a TaskManager's process
 * (/taskmanagers/:id/{logs,logs/:name,log,stdout,thread-dump}), which the
 * loop asks of the TaskManager (ProcessInfoRequest) while the REST thread
 * that wants it polls the loop for the answer (jm_pinfo).
 */
#include <string.h>
#include <time.h>
#include <microhttpd.h>
#include <jansson.h>

#include "jm.h"
#include "log.h"
#include "proc_info.h"
#include "rest_int.h"

/* ---- a TaskManager's process (REST thread and loop) ----------------------- */

static void pinfo_free(jm_pinfo *p)
{
    if (!p) return;
    free(p->tm_id);
    free(p->json);
    free(p->data);
    free(p->error);
    free(p);
}

static jm_pinfo *pinfo_take(jm *j, uint64_t id)
{
    for (jm_pinfo **pp = &j->pinfos; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id) {
            jm_pinfo *p = *pp;
            *pp = p->next;
            return p;
        }
    return NULL;
}

/* Loop: stage 1 sends the request, 2 hands over a finished answer, 3 drops it. */
void jm_rest_pinfo_route(route_ctx *rc, reply *r)
{
    jm *j = rc->j;
    if (rc->pinfo_stage == 1) {
        jm_tm *tm = jm_tm_find(j, rc->seg[1]);
        if (!tm) return reply_err(r, 404, "TaskManager %s not found", rc->seg[1]);
        /* answers nobody came back for (their REST thread gave up) */
        for (jm_pinfo **pp = &j->pinfos; *pp;) {
            jm_pinfo *p = *pp;
            if (sl_mono_ms() - p->asked_mono_ms > 60000) {
                *pp = p->next;
                pinfo_free(p);
            } else {
                pp = &p->next;
            }
        }
        jm_pinfo *p = sl_calloc(1, sizeof *p);
        p->id = ++j->pinfo_ids;
        p->tm_id = sl_strdup(tm->id);
        p->asked_mono_ms = sl_mono_ms();
        p->next = j->pinfos;
        j->pinfos = p;
        Sluice__ProcessInfoRequest rq = SLUICE__PROCESS_INFO_REQUEST__INIT;
        rq.id = p->id;
        rq.kind = (Sluice__ProcessInfoRequest__Kind)rc->pinfo_kind;
        rq.name = rc->nseg == 4 ? rc->seg[3] : (char *)"";
        Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
        env.msg_case = SLUICE__ENVELOPE__MSG_PROCESS_INFO_REQUEST;
        env.process_info_request = &rq;
        jm_send(tm, &env);
        rc->pinfo_id = p->id;
    } else if (rc->pinfo_stage == 2) {
        jm_pinfo *p = NULL;
        for (jm_pinfo *x = j->pinfos; x && !p; x = x->next)
            if (x->id == rc->pinfo_id) p = x;
        if (p && !p->done && !jm_tm_find(j, p->tm_id)) {
            p->error = sl_sprintf("TaskManager %s is gone", p->tm_id);
            p->done = 1;
        }
        if (p && p->done) rc->pinfo_done = pinfo_take(j, rc->pinfo_id);
    } else {
        pinfo_free(pinfo_take(j, rc->pinfo_id));
    }
}

void jm_rest_on_process_info(jm *j, const jm_tm *tm, const Sluice__ProcessInfoReply *m)
{
    for (jm_pinfo *p = j->pinfos; p; p = p->next) {
        if (p->id != m->id || p->done || strcmp(p->tm_id, tm->id)) continue;
        if (m->error && *m->error) p->error = sl_strdup(m->error);
        else if (m->json && *m->json) p->json = sl_strdup(m->json);
        else {
            p->data = sl_malloc(m->data.len ? m->data.len : 1);
            if (m->data.len) memcpy(p->data, m->data.data, m->data.len);
            p->len = m->data.len;
        }
        p->done = 1;
        return;
    }
    jm_rest_on_flame_reply(j, tm, m); /* stack samples for a flame graph, or a late answer */
}

/* Which TaskManager process path this is (a ProcessInfoRequest kind), or -1. */
int jm_rest_tm_process_kind(const route_ctx *rc)
{
    if (strcmp(rc->method, "GET") || rc->nseg < 3 || rc->nseg > 4 ||
        strcmp(rc->seg[0], "taskmanagers"))
        return -1;
    const char *what = rc->seg[2];
    if (rc->nseg == 4) return !strcmp(what, "logs") ? SLUICE__PROCESS_INFO_REQUEST__KIND__NAMED_FILE : -1;
    if (!strcmp(what, "logs")) return SLUICE__PROCESS_INFO_REQUEST__KIND__LOG_LIST;
    if (!strcmp(what, "thread-dump")) return SLUICE__PROCESS_INFO_REQUEST__KIND__THREAD_DUMP;
    if (!strcmp(what, "log")) return SLUICE__PROCESS_INFO_REQUEST__KIND__LOG_FILE;
    if (!strcmp(what, "stdout")) return SLUICE__PROCESS_INFO_REQUEST__KIND__STDOUT_FILE;
    return -1;
}

/* REST thread: ask the TaskManager through the loop and poll (every 20 ms,
 * up to 10 s) for its answer: JSON into *r, or a file's bytes into
 * *data and *len (caller frees). The TaskManager reads its own /proc/self. */
void jm_rest_tm_process(jm *j, route_ctx *rc, reply *r, uint8_t **data, size_t *len)
{
    jm_op op;
    memset(&op, 0, sizeof op);
    op.qm.type = JM_OP_REST;
    op.u.rest.ctx = rc;
    rc->pinfo_stage = 1;
    if (jm_op_call(j, &op) != SL_OK) return reply_err(r, 503, "the JobManager is shutting down");
    if (r->status) return; /* no such TaskManager */
    for (int waited = 0; waited < 10000; waited += 20) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
        rc->pinfo_stage = 2;
        memset(&op, 0, sizeof op);
        op.qm.type = JM_OP_REST;
        op.u.rest.ctx = rc;
        if (jm_op_call(j, &op) != SL_OK) return reply_err(r, 503, "the JobManager is shutting down");
        jm_pinfo *p = rc->pinfo_done;
        if (!p) continue;
        json_error_t je;
        json_t *js = p->json ? json_loads(p->json, 0, &je) : NULL;
        if (p->error) reply_err(r, 404, "%s", p->error);
        else if (p->json && !js) reply_err(r, 502, "TaskManager %s answered with bad JSON: %s", p->tm_id, je.text);
        else if (js) reply_json(r, 200, js);
        else {
            *data = p->data;
            *len = p->len;
            p->data = NULL;
        }
        pinfo_free(p);
        return;
    }
    rc->pinfo_stage = 3;
    memset(&op, 0, sizeof op);
    op.qm.type = JM_OP_REST;
    op.u.rest.ctx = rc;
    jm_op_call(j, &op);
    reply_err(r, 504, "TaskManager %s did not answer within 10 s", rc->seg[1]);
}

/* ---- the JobManager's process (REST thread) ---------------------------- */

/* GET /jobmanager/{logs,logs/:name,log,stdout,thread-dump,environment}: the
 * process's own files and /proc entries (lib/proc_info.c), no JobManager
 * state, so answered here without the loop. Returns 1 when the path is one
 * of these: *r is the JSON answer, or *fd (with *size) a file to send. */
int jm_rest_process_routes(const route_ctx *rc, reply *r, int *fd, uint64_t *size)
{
    if (strcmp(rc->method, "GET") || rc->nseg < 2 || rc->nseg > 3 ||
        strcmp(rc->seg[0], "jobmanager"))
        return 0;
    const char *what = rc->seg[1];
    char err[300];
    if (rc->nseg == 2 && !strcmp(what, "logs")) {
        reply_json(r, 200, sl_proc_log_list());
    } else if (rc->nseg == 2 && !strcmp(what, "thread-dump")) {
        int depth = (int)sl_config_int(rc->j->conf, "cluster.thread-dump.stacktrace-max-depth");
        reply_json(r, 200, sl_proc_thread_dump(depth));
    } else if (rc->nseg == 2 && !strcmp(what, "environment")) {
        reply_json(r, 200, sl_proc_environment("Sluice JobManager " SL_VERSION));
    } else if ((rc->nseg == 2 && (!strcmp(what, "log") || !strcmp(what, "stdout"))) ||
               (rc->nseg == 3 && !strcmp(what, "logs"))) {
        int which = rc->nseg == 3 ? 0 : !strcmp(what, "log") ? SL_PROC_LOG : SL_PROC_STDOUT;
        *fd = sl_proc_log_open(which, rc->nseg == 3 ? rc->seg[2] : NULL, size, err, sizeof err);
        if (*fd < 0) reply_err(r, 404, "%s", err);
    } else {
        return 0;
    }
    return 1;
}

MHD_RESULT jm_rest_send_file(struct MHD_Connection *conn, int fd, uint64_t size)
{
    struct MHD_Response *resp = MHD_create_response_from_fd(size, fd);
    MHD_add_response_header(resp, "Content-Type", "text/plain; charset=utf-8");
    MHD_add_response_header(resp, "Cache-Control", "no-cache");
    MHD_RESULT ret = MHD_queue_response(conn, 200, resp);
    MHD_destroy_response(resp);
    return ret;
}

void jm_rest_pinfo_free_all(jm *j)
{
    while (j->pinfos) {
        jm_pinfo *p = j->pinfos;
        j->pinfos = p->next;
        pinfo_free(p);
    }
}
