/*
 * fuzz_control.c -- libFuzzer target for control frames as the JobManager
 * reads them from a TaskManager connection: the length-prefixed protobuf
 * envelope (core/frame.c) and the handlers behind it (jobmanager/rpc.c:
 * HELLO, registration, heartbeats with metrics, task status, checkpoint
 * acknowledgements), against a JobManager with one job submitted and a
 * checkpoint in progress. The connection is an in-memory bufferevent pair,
 * not a socket; the JobManager's loop is never dispatched (timers do not
 * fire), everything else is the daemon's own code.
 *
 * Input: byte 0 picks the form. Raw (bit 0 clear): the rest is the byte
 * stream itself. Structured (bit 0 set): the harness first sends a valid
 * HELLO and, with bit 1, a valid registration; then the rest is a list of
 * [u8 message kind][u16 length][bytes of that message], each wrapped in an
 * envelope and framed, so mutations reach the fields of every message.
 * Bit 3 gives the JobManager a cluster secret (security.cluster.secret);
 * then the harness's HELLO carries a nonce and, with bit 4, the harness
 * answers the JobManager's challenge correctly (it knows the secret).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event2/bufferevent.h>
#include <event2/buffer.h>
#include <event2/thread.h>

#include "bytes.h"
#include "frame.h"
#include "jm.h"
#include "log.h"
#include "operator.h"

static const char graph[] =
    "{\"name\": \"fuzz\", \"parallelism\": 2, \"vertices\": ["
    "{\"id\": \"src\", \"uid\": \"src\", \"type\": \"datagen\","
    " \"schema\": [{\"name\": \"id\", \"type\": \"BIGINT\"}],"
    " \"config\": {\"number-of-rows\": \"100\", \"fields.id.kind\": \"sequence\","
    " \"fields.id.start\": \"1\", \"fields.id.end\": \"100\"}},"
    "{\"id\": \"cnt\", \"uid\": \"cnt\", \"type\": \"group_aggregate\","
    " \"config\": {\"group-by\": [\"id\"], \"aggregates\": [\"COUNT(*) AS c\"]}},"
    "{\"id\": \"out\", \"uid\": \"out\", \"type\": \"print\"}],"
    "\"edges\": [{\"from\": \"src\", \"to\": \"cnt\", \"strategy\": \"hash\", \"keys\": [\"id\"]},"
    " {\"from\": \"cnt\", \"to\": \"out\"}]}";

static char cpdir[64];

static void push(struct evbuffer *in, Sluice__Envelope *env) { sl_frame_push(in, env); }

static uint8_t tm_nonce[SL_AUTH_NONCE];

static void push_hello(struct evbuffer *in, int auth)
{
    Sluice__Hello h = SLUICE__HELLO__INIT;
    h.version = SL_PROTOCOL_VERSION;
    h.role = "taskmanager";
    h.peer_id = "fuzz-tm";
    if (auth) {
        memset(tm_nonce, 7, sizeof tm_nonce);
        h.nonce.data = tm_nonce;
        h.nonce.len = SL_AUTH_NONCE;
    }
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    push(in, &env);
}

/* The JobManager's answer to our Hello is in out: answer its challenge. */
static void push_proof(struct evbuffer *in, struct evbuffer *out, const sl_auth *a)
{
    Sluice__Envelope *env = NULL;
    char err[160];
    evbuffer_unfreeze(out, 1); /* a bufferevent's output gives bytes only to its socket */
    if (sl_frame_pull(out, &env, err, sizeof err) != SL_OK) return;
    if (env->msg_case == SLUICE__ENVELOPE__MSG_HELLO && env->hello->nonce.len == SL_AUTH_NONCE) {
        uint8_t proof[SL_AUTH_MAC];
        sl_auth_mac(a, "sluice-rpc-taskmanager", env->hello->nonce.data, tm_nonce, "fuzz-tm", proof);
        Sluice__Hello h = SLUICE__HELLO__INIT;
        h.version = SL_PROTOCOL_VERSION;
        h.proof.data = proof;
        h.proof.len = SL_AUTH_MAC;
        Sluice__Envelope e = SLUICE__ENVELOPE__INIT;
        e.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
        e.hello = &h;
        push(in, &e);
    }
    sluice__envelope__free_unpacked(env, NULL);
}

static void push_register(struct evbuffer *in)
{
    Sluice__RegisterTaskManager r = SLUICE__REGISTER_TASK_MANAGER__INIT;
    r.id = "fuzz-tm";
    r.host = "127.0.0.1";
    r.data_port = 1;
    r.slots = 4;
    r.state_backend = "hashmap";
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_REGISTER;
    env.register_ = &r;
    push(in, &env);
}

/* One [kind][len][message] item wrapped in an envelope; 0 if it does not decode. */
static void push_item(struct evbuffer *in, int kind, const uint8_t *p, size_t n)
{
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    ProtobufCMessage *m = NULL;
    switch (kind % 5) {
    case 0:
        m = (ProtobufCMessage *)sluice__hello__unpack(NULL, n, p);
        env.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
        env.hello = (Sluice__Hello *)m;
        break;
    case 1:
        m = (ProtobufCMessage *)sluice__register_task_manager__unpack(NULL, n, p);
        env.msg_case = SLUICE__ENVELOPE__MSG_REGISTER;
        env.register_ = (Sluice__RegisterTaskManager *)m;
        break;
    case 2:
        m = (ProtobufCMessage *)sluice__heartbeat__unpack(NULL, n, p);
        env.msg_case = SLUICE__ENVELOPE__MSG_HEARTBEAT;
        env.heartbeat = (Sluice__Heartbeat *)m;
        break;
    case 3:
        m = (ProtobufCMessage *)sluice__task_status__unpack(NULL, n, p);
        env.msg_case = SLUICE__ENVELOPE__MSG_TASK_STATUS;
        env.task_status = (Sluice__TaskStatus *)m;
        break;
    default:
        m = (ProtobufCMessage *)sluice__acknowledge_checkpoint__unpack(NULL, n, p);
        env.msg_case = SLUICE__ENVELOPE__MSG_ACK;
        env.ack = (Sluice__AcknowledgeCheckpoint *)m;
        break;
    }
    if (!m) return;
    if (sluice__envelope__get_packed_size(&env) <= SL_FRAME_MAX) push(in, &env);
    protobuf_c_message_free_unpacked(m, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once) {
        evthread_use_pthreads();
        sl_ops_register_builtin();
        /* quiet (the handlers log what they refuse), unless SLUICE_FUZZ_LOG is set */
        if (!getenv("SLUICE_FUZZ_LOG")) sl_log_level = SL_LOG_ERROR + 1;
        snprintf(cpdir, sizeof cpdir, "/tmp/sluice-fuzz-control-%d", (int)getpid());
        once = 1;
    }
    if (size < 1) return 0;
    char err[1024];
    jm j;
    memset(&j, 0, sizeof j);
    j.conf = sl_config_new();
    if (sl_config_set(j.conf, "state.checkpoints.dir", cpdir, "fuzz", err, sizeof err) != SL_OK) abort();
    int auth = (data[0] & 8) != 0;
    if (auth && (sl_config_set(j.conf, "security.cluster.secret", "fuzz secret", "fuzz", err,
                               sizeof err) != SL_OK ||
                 sl_auth_load(&j.cluster_auth, j.conf, err, sizeof err) != SL_OK))
        abort();
    j.heartbeat_interval_ms = 1000;
    j.heartbeat_timeout_ms = 5000;
    j.slot_timeout_ms = 300000;
    j.default_parallelism = 1;
    j.jobstore_capacity = 10;
    j.jobstore_expiration_ms = 3600000;
    jm_cp_configure(&j);
    j.base = event_base_new();
    j.loop_thread = pthread_self();
    if (jm_ops_init(&j) != SL_OK || jm_io_start(&j, err, sizeof err) != SL_OK) abort();
    sl_jobgraph *g = sl_jobgraph_parse(graph, sizeof graph - 1, 1, 0, err, sizeof err);
    if (!g) abort();
    jm_job *job = jm_job_submit(&j, g);
    memcpy(job->id, "00000000000000000000000000000001", 33); /* a fixed id the fuzzer can find */

    jm_conn *c = sl_calloc(1, sizeof *c);
    struct bufferevent *pair[2];
    if (bufferevent_pair_new(j.base, 0, pair) != 0) abort();
    c->bev = pair[0];
    c->jm = &j;
    snprintf(c->peer, sizeof c->peer, "fuzz");
    c->next = j.conns;
    j.conns = c;
    struct evbuffer *in = bufferevent_get_input(c->bev);
    evbuffer_unfreeze(in, 0); /* a bufferevent's input takes bytes only from its socket */

    if (data[0] & 1) {
        push_hello(in, auth);
        jm_rpc_input(c);
        if (auth && (data[0] & 16) && j.conns) {
            struct evbuffer *reply = evbuffer_get_length(bufferevent_get_output(c->bev))
                                         ? bufferevent_get_output(c->bev)
                                         : bufferevent_get_input(pair[1]);
            push_proof(in, reply, &j.cluster_auth);
            jm_rpc_input(c);
        }
        if ((data[0] & 2) && j.conns) {
            push_register(in);
            jm_rpc_input(c);
        }
        /* deployed onto the fuzz TaskManager: a checkpoint to acknowledge */
        if ((data[0] & 4) && job->state == JOB_RUNNING)
            jm_cp_trigger(&j, job, CP_CHECKPOINT, NULL, 0, 0, err, sizeof err);
        size_t at = 1;
        while (size - at >= 3 && j.conns) {
            int kind = data[at];
            size_t n = sl_get_le16(data + at + 1);
            at += 3;
            if (n > size - at) n = size - at;
            push_item(in, kind, data + at, n);
            at += n;
            jm_rpc_input(c);
            evbuffer_drain(bufferevent_get_input(pair[1]), SIZE_MAX);
        }
    } else if (size > 1) {
        evbuffer_add(in, data + 1, size - 1);
        jm_rpc_input(c);
    }
    jm_ops_close(&j);
    jm_io_stop(&j);
    jm_rpc_stop(&j);
    bufferevent_free(pair[1]);
    jm_jobs_destroy(&j);
    jm_ops_destroy(&j);
    event_base_free(j.base);
    sl_config_destroy(j.conf);
    return 0;
}
