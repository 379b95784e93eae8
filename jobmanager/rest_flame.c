/*
 * rest_flame.c -- Flink's flame graphs of a vertex (loop thread):
 * GET /jobs/:id/vertices/:vid/flamegraph?type=full|on_cpu|off_cpu, of all
 * its subtasks or of one (&subtaskindex=i, as Flink 2.x).
 *
 * As Flink's statistics tracker: the first request for a vertex asks every
 * TaskManager that runs one of its subtasks for stack samples
 * (ProcessInfoRequest STACK_SAMPLES, taskmanager/flame.c) and answers
 * "waiting" (endTimestamp -3); the TaskManagers' answers are merged into
 * one jm_flame per vertex; later requests build Flink's tree of the type
 * asked for from it ({endTimestamp, data: {name: "root", value, children}},
 * outermost frames nearest the root). A graph older than
 * rest.flamegraph.refresh-interval is sampled anew (the old one is served
 * meanwhile); one nobody asked for within rest.flamegraph.cleanup-interval
 * is dropped. On CPU is the thread state R, off CPU any other (sleeping,
 * waiting for I/O), as Flink splits RUNNABLE from the waiting states.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>

#include "jm.h"
#include "log.h"
#include "rest_int.h"

#define TAG "jm:flame"

struct jm_flame {
    char job_id[33];
    int chain;
    int subtask;                /* the one subtask sampled (?subtaskindex=), or -1: all */
    uint32_t attempt;           /* the deployment sampled */
    uint64_t *ids;              /* the requests sent (ProcessInfoRequest ids) */
    int nids, pending;          /* sent, not yet answered */
    int64_t asked_mono_ms;      /* last GET of it */
    int64_t sampled_mono_ms;    /* when the current sampling began */
    int64_t end_ms;             /* wall ms the last complete sampling ended, 0 none */
    json_t *samples;            /* the last complete one: [{state, count, frames}] */
    json_t *next;               /* the one being gathered */
    char *error;                /* a TaskManager's refusal, logged once */
    struct jm_flame *next_flame;
};

static void flame_free(jm_flame *f)
{
    if (!f) return;
    free(f->ids);
    json_decref(f->samples);
    json_decref(f->next);
    free(f->error);
    free(f);
}

void jm_rest_flames_free_all(jm *j)
{
    while (j->flames) {
        jm_flame *f = j->flames;
        j->flames = f->next_flame;
        flame_free(f);
    }
}

/* Ask every TaskManager running a subtask of chain c for samples. */
static void flame_start(jm *j, jm_flame *f, const jm_job *job, int c)
{
    const sl_config *conf = j->conf;
    free(f->ids);
    f->ids = NULL;
    f->nids = f->pending = 0;
    json_decref(f->next);
    f->next = json_array();
    f->attempt = job->attempt;
    f->sampled_mono_ms = sl_mono_ms();
    const sl_chain *ch = &job->g->chains[c];
    f->ids = sl_calloc((size_t)ch->parallelism + 1, sizeof *f->ids);
    for (int i = 0; i < ch->parallelism; i++) {
        const jm_task *t = &job->tasks[c][i];
        if (t->state != T_RUNNING || !t->tm_id || (f->subtask >= 0 && i != f->subtask)) continue;
        int seen = 0; /* one request per TaskManager: it samples all its subtasks */
        for (int k = 0; k < i && f->subtask < 0; k++)
            seen |= job->tasks[c][k].state == T_RUNNING && job->tasks[c][k].tm_id &&
                    !strcmp(job->tasks[c][k].tm_id, t->tm_id);
        jm_tm *tm = seen ? NULL : jm_tm_find(j, t->tm_id);
        if (!tm) continue;
        Sluice__ProcessInfoRequest rq = SLUICE__PROCESS_INFO_REQUEST__INIT;
        rq.id = ++j->pinfo_ids;
        rq.kind = SLUICE__PROCESS_INFO_REQUEST__KIND__STACK_SAMPLES;
        rq.name = (char *)"";
        rq.job_id = (char *)job->id;
        rq.attempt = job->attempt;
        rq.chain = (uint32_t)c;
        rq.num_samples = (uint32_t)sl_config_int(conf, "rest.flamegraph.num-samples");
        rq.delay_ms = (uint32_t)sl_config_int(conf, "rest.flamegraph.delay-between-samples");
        rq.stack_depth = (uint32_t)sl_config_int(conf, "rest.flamegraph.stack-depth");
        rq.one_subtask = f->subtask >= 0;
        rq.subtask = f->subtask >= 0 ? (uint32_t)f->subtask : 0;
        Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
        env.msg_case = SLUICE__ENVELOPE__MSG_PROCESS_INFO_REQUEST;
        env.process_info_request = &rq;
        jm_send(tm, &env);
        f->ids[f->nids++] = rq.id;
        f->pending++;
    }
}

/* The sampling is complete: it becomes the graph served. */
static void flame_complete(jm_flame *f)
{
    json_decref(f->samples);
    f->samples = f->next;
    f->next = NULL;
    f->end_ms = sl_now_ms();
    f->pending = 0;
}

int jm_rest_on_flame_reply(jm *j, const jm_tm *tm, const Sluice__ProcessInfoReply *m)
{
    for (jm_flame *f = j->flames; f; f = f->next_flame) {
        int mine = 0;
        for (int i = 0; i < f->nids && !mine; i++) mine = f->ids[i] == m->id;
        if (!mine) continue;
        for (int i = 0; i < f->nids; i++)
            if (f->ids[i] == m->id) f->ids[i] = 0; /* answered */
        json_error_t je;
        json_t *res = m->json && *m->json ? json_loads(m->json, 0, &je) : NULL;
        json_t *samples = json_object_get(res, "samples");
        if (json_is_array(samples) && f->next) json_array_extend(f->next, samples);
        else if (m->error && *m->error && !f->error) {
            f->error = sl_strdup(m->error); /* once per graph: it would come again each refresh */
            sl_warn(TAG, "no stack samples of job %s chain %d from TaskManager %s: %s", f->job_id,
                    f->chain, tm->id, m->error);
        }
        json_decref(res);
        if (f->pending > 0 && --f->pending == 0) flame_complete(f);
        return 1;
    }
    return 0;
}

/* The child of node named name, added when missing. */
static json_t *child_named(json_t *node, const char *name)
{
    json_t *kids = json_object_get(node, "children"), *k;
    size_t i;
    json_array_foreach(kids, i, k)
        if (!strcmp(json_string_value(json_object_get(k, "name")), name)) return k;
    k = json_pack("{s:s,s:i,s:[]}", "name", name, "value", 0, "children");
    json_array_append_new(kids, k);
    return k;
}

static void add_value(json_t *node, json_int_t v)
{
    json_object_set_new(node, "value", json_integer(json_integer_value(json_object_get(node, "value")) + v));
}

/* Flink's tree of samples of type (0 full, 1 on CPU, 2 off CPU). */
static json_t *flame_tree(const json_t *samples, int type)
{
    json_t *root = json_pack("{s:s,s:i,s:[]}", "name", "root", "value", 0, "children");
    size_t i;
    json_t *s;
    json_array_foreach(samples, i, s) {
        int on = !strcmp(json_string_value(json_object_get(s, "state")) ?: "", "R");
        if ((type == 1 && !on) || (type == 2 && on)) continue;
        json_int_t n = json_integer_value(json_object_get(s, "count"));
        add_value(root, n);
        json_t *node = root, *fr;
        size_t k;
        json_array_foreach(json_object_get(s, "frames"), k, fr) {
            node = child_named(node, json_string_value(fr) ?: "?");
            add_value(node, n);
        }
    }
    return root;
}

void jm_rest_flamegraph(route_ctx *rc, jm_job *job, int c, reply *r)
{
    jm *j = rc->j;
    if (!sl_config_bool(j->conf, "rest.flamegraph.enabled"))
        return reply_json(r, 200, json_pack("{s:i}", "endTimestamp", -2)); /* Flink's "disabled" */
    const char *ty = jm_rest_qarg(rc, "type");
    /* Flink reads the type case-insensitively */
    int type = !ty || !strcasecmp(ty, "full") ? 0 : !strcasecmp(ty, "on_cpu") ? 1
               : !strcasecmp(ty, "off_cpu")   ? 2 : -1;
    if (type < 0)
        return reply_err(r, 400, "bad flame graph type '%s': full, on_cpu or off_cpu", ty);
    const int par = job->g->chains[c].parallelism;
    const char *si = jm_rest_qarg(rc, "subtaskindex");
    int subtask = -1;
    if (si) {
        char *end = NULL;
        long v = strtol(si, &end, 10);
        if (!*si || *end || v < 0 || v >= par)
            return reply_err(r, 400, "bad subtaskindex '%s': the vertex has subtasks 0 to %d", si, par - 1);
        subtask = (int)v;
    }
    int64_t now = sl_mono_ms();
    int64_t cleanup = sl_config_int(j->conf, "rest.flamegraph.cleanup-interval");
    int64_t refresh = sl_config_int(j->conf, "rest.flamegraph.refresh-interval");
    jm_flame *f = NULL;
    for (jm_flame **pp = &j->flames; *pp;) {
        jm_flame *x = *pp;
        if (now - x->asked_mono_ms > cleanup) { /* nobody looked at it lately */
            *pp = x->next_flame;
            flame_free(x);
            continue;
        }
        if (!strcmp(x->job_id, job->id) && x->chain == c && x->subtask == subtask) f = x;
        pp = &x->next_flame;
    }
    int running = 0;
    for (int i = 0; i < par; i++)
        running |= job->tasks[c][i].state == T_RUNNING && (subtask < 0 || i == subtask);
    if (!f) {
        if (!running) /* Flink's "terminated": nothing to sample */
            return reply_json(r, 200, json_pack("{s:i}", "endTimestamp", -1));
        f = sl_calloc(1, sizeof *f);
        snprintf(f->job_id, sizeof f->job_id, "%s", job->id);
        f->chain = c;
        f->subtask = subtask;
        f->next_flame = j->flames;
        j->flames = f;
    }
    f->asked_mono_ms = now;
    /* a TaskManager gone or silent: what came in is the sampling */
    int64_t budget = sl_config_int(j->conf, "rest.flamegraph.num-samples") *
                     (sl_config_int(j->conf, "rest.flamegraph.delay-between-samples") + 5) + 10000;
    if (f->pending && now - f->sampled_mono_ms > budget) flame_complete(f);
    int stale = !f->end_ms || now - f->sampled_mono_ms > refresh || f->attempt != job->attempt;
    if (!f->pending && running && stale) {
        flame_start(j, f, job, c);
        if (!f->pending && !f->end_ms) flame_complete(f); /* no TaskManager to ask */
    }
    if (!f->end_ms) return reply_json(r, 200, json_pack("{s:i}", "endTimestamp", -3)); /* waiting */
    reply_json(r, 200, json_pack("{s:I,s:o}", "endTimestamp", (json_int_t)f->end_ms, "data",
                                 flame_tree(f->samples, type)));
}
