/*
 * make_seeds.c -- writes the committed seed inputs of the fuzz targets that
 * need well-formed binary to start from (control frames, data buffers,
 * rows, snapshot files), with the daemon's own encoders. `make fuzz-seeds`
 * builds and runs it; its output is committed under tests/fuzz/<name>/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "keygroup.h"
#include "row.h"
#include "snapshot.h"
#include "snapshot.pb-c.h"
#include "control.pb-c.h"
#include "buffer.h"

static void put(const char *target, const char *name, const void *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "tests/fuzz/%s/%s", target, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n)) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)len + 1);
    if (fread(p, 1, (size_t)len, f) != (size_t)len) exit(1);
    fclose(f);
    *n = (size_t)len;
    return p;
}

/* ---- rows: byte 0 = column count, byte 1 = the type selector (fuzz_rows.c) */
static void row_seeds(void)
{
    static const sl_type types[8] = {SL_T_BOOLEAN, SL_T_INT, SL_T_BIGINT, SL_T_DOUBLE,
                                     SL_T_STRING, SL_T_BYTES, SL_T_TIMESTAMP, SL_T_STRING};
    for (int seed = 0; seed < 6; seed++) {
        uint8_t out[512];
        int n = 3 + seed;
        out[0] = (uint8_t)n;
        out[1] = (uint8_t)(seed * 37);
        sl_schema s;
        sl_schema_init(&s);
        sl_value v[8];
        memset(v, 0, sizeof v);
        for (int i = 0; i < n; i++) {
            sl_type t = types[(out[1] >> (i % 3)) % 8 ^ (i & 7)];
            sl_schema_add(&s, i ? "x" : "k", t);
            v[i].isnull = (seed + i) % 4 == 3;
            if (t == SL_T_STRING || t == SL_T_BYTES) {
                v[i].v.s.p = "sluice";
                v[i].v.s.len = 6;
            } else if (t == SL_T_DOUBLE) {
                v[i].v.d = 0.5 * i;
            } else {
                v[i].v.i = t == SL_T_BOOLEAN ? 1 : 1000 * i + seed;
            }
        }
        sl_row r = {(sl_rowkind)(seed % 4), n, v, SL_TS_NONE};
        size_t len = sl_row_encode(&r, &s, out + 2, sizeof out - 2);
        char name[32];
        snprintf(name, sizeof name, "row-%d", seed);
        put("rows", name, out, len + 2);
        sl_schema_free(&s);
    }
}

/* ---- data: [u8 chan][u16 len][buffer] (fuzz_data.c) ----------------------- */
static size_t el(uint8_t *p, int tag, const void *body, uint32_t len)
{
    p[0] = (uint8_t)tag;
    sl_put_le32(p + 1, len);
    memcpy(p + SL_EL_HDR, body, len);
    return SL_EL_HDR + len;
}

static void data_seeds(void)
{
    sl_schema s;
    sl_schema_init(&s);
    sl_schema_add(&s, "id", SL_T_BIGINT);
    sl_schema_add(&s, "name", SL_T_STRING);
    sl_schema_add(&s, "ts", SL_T_TIMESTAMP);
    uint8_t buf[2048];
    size_t at = 3;
    for (int i = 0; i < 4; i++) {
        uint8_t rec[128];
        sl_value v[3];
        memset(v, 0, sizeof v);
        v[0].v.i = i;
        v[1].v.s.p = "user";
        v[1].v.s.len = 4;
        v[2].v.i = 1767225600000 + i;
        v[2].isnull = i == 2;
        sl_row r = {SL_KIND_INSERT, 3, v, SL_TS_NONE};
        sl_put_le64(rec, (uint64_t)(1767225600000 + i));
        size_t n = sl_row_encode(&r, &s, rec + 8, sizeof rec - 8);
        at += el(buf + at, SL_EL_RECORD, rec, (uint32_t)(n + 8));
    }
    uint8_t wm[8];
    sl_put_le64(wm, 1767225600000);
    at += el(buf + at, SL_EL_WATERMARK, wm, 8);
    uint8_t idle = 1;
    at += el(buf + at, SL_EL_IDLE, &idle, 1);
    uint8_t bar[19] = {0};
    sl_put_le64(bar, 7);
    at += el(buf + at, SL_EL_BARRIER, bar, sizeof bar);
    buf[0] = 0;
    sl_put_le16(buf + 1, (uint16_t)(at - 3));
    /* a spanning record over two buffers on channel 1, then its end */
    uint8_t first[9 + 4];
    sl_put_le32(first, 12);
    memset(first + 4, 'a', 8);
    size_t b2 = at;
    buf[at] = 1;
    at += 3;
    at += el(buf + at, 6, first, 12);
    sl_put_le16(buf + b2 + 1, (uint16_t)(at - b2 - 3));
    size_t b3 = at;
    buf[at] = 1;
    at += 3;
    at += el(buf + at, 7, "bbbb", 4);
    at += el(buf + at, SL_EL_END, "", 0);
    sl_put_le16(buf + b3 + 1, (uint16_t)(at - b3 - 3));
    put("data", "records-watermark-barrier-span", buf, at);
    sl_schema_free(&s);
}

/* ---- control: structured form [7][kind][u16 len][message]... (fuzz_control.c) */
static size_t item(uint8_t *p, int kind, const ProtobufCMessage *m)
{
    size_t n = protobuf_c_message_pack(m, p + 3);
    p[0] = (uint8_t)kind;
    sl_put_le16(p + 1, (uint16_t)n);
    return n + 3;
}

static void control_seeds(void)
{
    static const char *job = "00000000000000000000000000000001";
    uint8_t buf[4096];
    size_t at = 0;
    buf[at++] = 7;
    Sluice__SubtaskMetrics m = SLUICE__SUBTASK_METRICS__INIT;
    m.job_id = (char *)job;
    m.attempt = 1;
    m.records_in = 10;
    Sluice__SubtaskMetrics *ms[1] = {&m};
    Sluice__Heartbeat hb = SLUICE__HEARTBEAT__INIT;
    hb.tm_id = "fuzz-tm";
    hb.n_metrics = 1;
    hb.metrics = ms;
    at += item(buf + at, 2, &hb.base);
    for (int chain = 0; chain < 2; chain++)
        for (int st = 0; st < 2; st++) {
            Sluice__TaskStatus ts = SLUICE__TASK_STATUS__INIT;
            ts.job_id = (char *)job;
            ts.attempt = 1;
            ts.chain = (uint32_t)chain;
            ts.subtask = (uint32_t)st;
            ts.state = SLUICE__TASK_STATE__TASK_RUNNING;
            ts.tm_id = "fuzz-tm";
            at += item(buf + at, 3, &ts.base);
        }
    Sluice__OperatorSubtaskHandle h = SLUICE__OPERATOR_SUBTASK_HANDLE__INIT;
    h.uid = "cnt";
    h.file = "cnt-0.state";
    h.kg_last = 63;
    h.keyed = 1;
    Sluice__OperatorSubtaskHandle *hs[1] = {&h};
    Sluice__AcknowledgeCheckpoint ack = SLUICE__ACKNOWLEDGE_CHECKPOINT__INIT;
    ack.job_id = (char *)job;
    ack.attempt = 1;
    ack.checkpoint_id = 1;
    ack.n_handles = 1;
    ack.handles = hs;
    at += item(buf + at, 4, &ack.base);
    Sluice__TaskStatus fail = SLUICE__TASK_STATUS__INIT;
    fail.job_id = (char *)job;
    fail.attempt = 1;
    fail.state = SLUICE__TASK_STATE__TASK_FAILED;
    fail.error = "java.lang.RuntimeException: fuzz";
    at += item(buf + at, 3, &fail.base);
    put("control", "register-run-ack-fail", buf, at);

    /* the raw form: byte 0 even, then HELLO and REGISTER frames */
    at = 0;
    buf[at++] = 0;
    Sluice__Hello hello = SLUICE__HELLO__INIT;
    hello.version = 1;
    hello.role = "taskmanager";
    Sluice__Envelope env = SLUICE__ENVELOPE__INIT;
    env.msg_case = SLUICE__ENVELOPE__MSG_HELLO;
    env.hello = &hello;
    size_t n = sluice__envelope__pack(&env, buf + at + 4);
    sl_put_be32(buf + at, (uint32_t)n);
    at += 4 + n;
    Sluice__RegisterTaskManager r = SLUICE__REGISTER_TASK_MANAGER__INIT;
    r.id = "tm-1";
    r.host = "127.0.0.1";
    r.data_port = 6121;
    r.slots = 2;
    Sluice__Envelope env2 = SLUICE__ENVELOPE__INIT;
    env2.msg_case = SLUICE__ENVELOPE__MSG_REGISTER;
    env2.register_ = &r;
    n = sluice__envelope__pack(&env2, buf + at + 4);
    sl_put_be32(buf + at, (uint32_t)n);
    at += 4 + n;
    put("control", "raw-hello-register", buf, at);
}

/* ---- snapshot: [u16 metadata length][_metadata file][state file] ---------- */
static void snapshot_seeds(void)
{
    char dir[] = "/tmp/sluice-seeds-XXXXXX";
    if (!mkdtemp(dir)) exit(1);
    char path[600], err[600];
    snprintf(path, sizeof path, "%s/op-0.state", dir);
    sl_kstate *s = sl_kstate_open(SL_BACKEND_HASHMAP, dir, 128, 0, 63, err, sizeof err);
    if (!s) { fprintf(stderr, "%s\n", err); exit(1); }
    sl_kstate_register(s, "count");
    const char *keys[] = {"alice", "bob", "carol"};
    for (int i = 0; i < 3; i++) {
        int kg = sl_kg_of_key(keys[i], strlen(keys[i]), 128);
        if (kg > 63) continue;
        sl_kstate_set_key(s, keys[i], strlen(keys[i]), kg);
        uint8_t v[8];
        sl_put_le64(v, (uint64_t)(i + 1));
        if (sl_kstate_put(s, 0, "", 0, v, 8, err, sizeof err) != SL_OK) exit(1);
    }
    sl_ksnap *snap = sl_kstate_snapshot(s, err, sizeof err);
    sl_snapw *w = sl_snapw_open(path, 128, 0, 63, err, sizeof err);
    sl_snap_timer t = {0, 1767225600000, 5, "alice", 5, "", 0};
    uint64_t size = 0;
    if (!w || sl_snapw_identity(w, "00000000000000000000000000000001", "op", 0, err, sizeof err) ||
        sl_snapw_keyed(w, snap, err, sizeof err) || sl_snapw_timers(w, &t, 1, err, sizeof err) ||
        sl_snapw_opstate(w, "blob", 4, err, sizeof err) || sl_snapw_finish(w, &size, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    sl_ksnap_release(snap);
    sl_kstate_close(s);
    Sluice__SubtaskState ss = SLUICE__SUBTASK_STATE__INIT;
    ss.file = "op-0.state";
    ss.kg_last = 63;
    ss.size = size;
    ss.has_opstate = 1;
    Sluice__SubtaskState ss2 = SLUICE__SUBTASK_STATE__INIT;
    ss2.subtask = 1;
    ss2.finished = 1;
    Sluice__SubtaskState *sss[2] = {&ss, &ss2};
    Sluice__OperatorState os = SLUICE__OPERATOR_STATE__INIT;
    os.uid = "op";
    os.type = "group_aggregate";
    os.parallelism = 2;
    os.keyed = 1;
    os.n_subtasks = 2;
    os.subtasks = sss;
    Sluice__OperatorState *oss[1] = {&os};
    Sluice__SnapshotMetadata md = SLUICE__SNAPSHOT_METADATA__INIT;
    md.format_version = 1;
    md.job_id = "00000000000000000000000000000001";
    md.checkpoint_id = 3;
    md.max_parallelism = 128;
    md.n_operators = 1;
    md.operators = oss;
    size_t plen = sluice__snapshot_metadata__get_packed_size(&md);
    uint8_t *packed = malloc(plen);
    sluice__snapshot_metadata__pack(&md, packed);
    if (sl_snapshot_write_metadata(dir, packed, plen, err, sizeof err) != SL_OK) exit(1);
    free(packed);
    size_t mlen, slen;
    char mpath[600];
    snprintf(mpath, sizeof mpath, "%s/_metadata", dir);
    uint8_t *meta = slurp(mpath, &mlen), *state = slurp(path, &slen);
    uint8_t *out = malloc(2 + mlen + slen);
    sl_put_le16(out, (uint16_t)mlen);
    memcpy(out + 2, meta, mlen);
    memcpy(out + 2 + mlen, state, slen);
    put("snapshot", "metadata-and-state", out, 2 + mlen + slen);
    free(out);
    free(meta);
    free(state);
    sl_snapshot_remove(dir, err, sizeof err);
}

int main(void)
{
    row_seeds();
    data_seeds();
    control_seeds();
    snapshot_seeds();
    return 0;
}
