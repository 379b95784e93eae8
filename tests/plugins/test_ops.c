/*
 * test_ops.c -- an operator plugin built by the test suite as a shared
 * object (build/plugins/test_ops.so) and loaded by both daemons through
 * `sluice.operator-plugins`. It uses nothing but the public operator ABI
 * (core/operator.h), which is the point: it is what a user's plugin is.
 *
 *   test_split        one input with a BIGINT column (config "column"):
 *                     even values go to the main output, odd ones to the
 *                     declared side output "odd" (Flink's OutputTag).
 *   test_count        keyed by a column (config "key"): a value state per
 *                     key counts its rows; each row goes out with the count
 *                     so far appended (column "n").
 *   test_pipe_source  a source reading decimal numbers, one per line, from
 *                     a FIFO (config "path"); it waits on the descriptor
 *                     with sl_op_watch_fd, so checkpoint barriers pass while
 *                     it waits; the line "end" ends it. Its position (lines
 *                     read) is its operator state.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "operator.h"
#include "jobgraph.h"

/* ---- test_split ------------------------------------------------------------ */

typedef struct split_plan {
    int col;
} split_plan;

static void *split_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const char *name = sl_vconf_str(pc->v, "column", NULL);
    int col = name ? sl_schema_find(pc->in[0].schema, name) : -1;
    if (col < 0 || pc->in[0].schema->fields[col].type != SL_T_BIGINT) {
        sl_seterr(err, errlen, "vertex '%s': 'column' must name a BIGINT column", pc->v->id);
        return NULL;
    }
    sl_schema_copy(pc->out, pc->in[0].schema);
    if (sl_plan_output(pc, "odd", pc->in[0].schema, err, errlen) < 0) return NULL;
    split_plan *pl = sl_calloc(1, sizeof *pl);
    pl->col = col;
    return pl;
}

static int split_process(sl_op *op, int input, sl_row *row)
{
    const split_plan *pl = op->plan;
    SL_UNUSED(input);
    const sl_value *v = &row->vals[pl->col];
    if (!v->isnull && (v->v.i & 1)) {
        int rc = sl_op_emit_to(op, sl_op_output(op, "odd"), row);
        return rc == SL_DONE ? SL_OK : rc; /* no edge from "odd": dropped */
    }
    return sl_op_emit(op, row);
}

static const sl_op_option split_options[] = {
    {"column", SL_CT_STRING, NULL, NULL,
     "Column the operator reads."},
    SL_OP_OPTIONS_END,
};

static const sl_op_def test_split = {
    .abi = SL_OP_ABI_VERSION,
    .name = "test_split",
    .options = split_options,
    .plan = split_plan_new,
    .plan_free = free,
    .process = split_process,
};

/* ---- test_count ------------------------------------------------------------ */

typedef struct count_state {
    sl_vstate *count;
    sl_value *vals;
} count_state;

static void *count_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const char *name = sl_vconf_str(pc->v, "key", NULL);
    int col = name ? sl_schema_find(pc->in[0].schema, name) : -1;
    if (col < 0) {
        sl_seterr(err, errlen, "vertex '%s': 'key' must name a column", pc->v->id);
        return NULL;
    }
    if (sl_plan_key(pc, 0, &col, 1, err, errlen) != SL_OK) return NULL;
    sl_schema_copy(pc->out, pc->in[0].schema);
    sl_schema_add(pc->out, "n", SL_T_BIGINT);
    return sl_calloc(1, 1);
}

static int count_open(sl_op *op)
{
    count_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    st->vals = sl_calloc((size_t)op->out->n, sizeof *st->vals);
    st->count = sl_op_state(op, "count", SL_STATE_VALUE, 0);
    return st->count ? SL_OK : SL_ERR;
}

static int count_process(sl_op *op, int input, sl_row *row)
{
    count_state *st = op->priv;
    SL_UNUSED(input);
    const void *val;
    size_t len;
    int64_t n = 0;
    int rc = sl_value_get(st->count, NULL, 0, &val, &len);
    if (rc == SL_ERR) return SL_ERR;
    if (rc == SL_OK && len == sizeof n) memcpy(&n, val, sizeof n);
    n++;
    if (sl_value_put(st->count, NULL, 0, &n, sizeof n) != SL_OK) return SL_ERR;
    memcpy(st->vals, row->vals, (size_t)row->n * sizeof *st->vals);
    st->vals[row->n] = (sl_value){.v.i = n};
    sl_row out = {.kind = row->kind, .n = row->n + 1, .vals = st->vals, .ts = row->ts};
    return sl_op_emit(op, &out);
}

static void count_close(sl_op *op)
{
    count_state *st = op->priv;
    if (!st) return;
    free(st->vals);
    free(st);
    op->priv = NULL;
}

static const sl_op_option count_options[] = {
    {"key", SL_CT_JSON, NULL, NULL,
     "Key columns (a list or a comma-separated string)."},
    SL_OP_OPTIONS_END,
};

static const sl_op_def test_count = {
    .abi = SL_OP_ABI_VERSION,
    .name = "test_count",
    .flags = SL_OPF_KEYED,
    .options = count_options,
    .plan = count_plan_new,
    .plan_free = free,
    .open = count_open,
    .process = count_process,
    .close = count_close,
};

/* ---- test_pipe_source ------------------------------------------------------- */

typedef struct pipe_plan {
    char *path;
} pipe_plan;

typedef struct pipe_state {
    int fd;
    char buf[4096];
    size_t have;
    int64_t lines;              /* read so far: the operator state */
    int64_t skip;               /* restored: lines to skip */
    int ended;
} pipe_state;

static void pipe_plan_free(void *p)
{
    pipe_plan *pl = p;
    if (!pl) return;
    free(pl->path);
    free(pl);
}

static void *pipe_plan_new(sl_plan_ctx *pc, char *err, size_t errlen)
{
    const sl_schema *s = &pc->v->declared;
    if (s->n != 1 || s->fields[0].type != SL_T_BIGINT) {
        sl_seterr(err, errlen, "vertex '%s': schema must be one BIGINT column", pc->v->id);
        return NULL;
    }
    const char *path = sl_vconf_str(pc->v, "path", NULL);
    if (!path || !*path) {
        sl_seterr(err, errlen, "vertex '%s': 'path' (a FIFO) is required", pc->v->id);
        return NULL;
    }
    sl_schema_copy(pc->out, s);
    pipe_plan *pl = sl_calloc(1, sizeof *pl);
    pl->path = sl_strdup(path);
    return pl;
}

static int pipe_open(sl_op *op)
{
    const pipe_plan *pl = op->plan;
    pipe_state *st = sl_calloc(1, sizeof *st);
    op->priv = st;
    /* O_RDWR: the FIFO never reports end-of-file between writers */
    st->fd = open(pl->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (st->fd < 0) return sl_op_fail(op, "cannot open %s: %s", pl->path, strerror(errno));
    return sl_op_watch_fd(op, st->fd, POLLIN);
}

static int pipe_run(sl_op *op)
{
    pipe_state *st = op->priv;
    if (st->ended) return SL_DONE;
    ssize_t n = read(st->fd, st->buf + st->have, sizeof st->buf - st->have);
    if (n < 0 && errno != EAGAIN && errno != EINTR)
        return sl_op_fail(op, "reading the FIFO: %s", strerror(errno));
    if (n > 0) st->have += (size_t)n;
    char *nl;
    while ((nl = memchr(st->buf, '\n', st->have))) {
        *nl = 0;
        if (!strcmp(st->buf, "end")) {
            st->ended = 1;
            return SL_DONE;
        }
        sl_value v = {.v.i = strtoll(st->buf, NULL, 10)};
        size_t used = (size_t)(nl - st->buf) + 1;
        memmove(st->buf, nl + 1, st->have - used);
        st->have -= used;
        st->lines++;
        if (st->skip > 0) {
            st->skip--;
            continue;
        }
        sl_row row = {.kind = SL_KIND_INSERT, .n = 1, .vals = &v, .ts = SL_TS_NONE};
        int rc = sl_op_emit(op, &row);
        if (rc != SL_OK) return rc;
    }
    if (st->have == sizeof st->buf) return sl_op_fail(op, "a line of more than 4096 bytes");
    if (n > 0) return SL_OK;
    op->wake_at_ms = INT64_MAX; /* nothing to do until the descriptor or mail says so */
    return SL_AGAIN;
}

static int pipe_snapshot(sl_op *op, int64_t cpid, void **blob, size_t *len)
{
    pipe_state *st = op->priv;
    SL_UNUSED(cpid);
    *blob = sl_malloc(sizeof st->lines);
    memcpy(*blob, &st->lines, sizeof st->lines);
    *len = sizeof st->lines;
    return SL_OK;
}

static int pipe_restore(sl_op *op, const void *const *blobs, const size_t *lens, int nblobs)
{
    pipe_state *st = op->priv;
    for (int i = 0; i < nblobs; i++)
        if (lens[i] == sizeof st->skip) {
            int64_t x;
            memcpy(&x, blobs[i], sizeof x);
            st->skip += x;
        }
    return SL_OK;
}

static void pipe_close(sl_op *op)
{
    pipe_state *st = op->priv;
    if (!st) return;
    if (st->fd >= 0) {
        sl_op_unwatch_fd(op, st->fd);
        close(st->fd);
    }
    free(st);
    op->priv = NULL;
}

static const sl_op_option pipe_options[] = {
    {"path", SL_CT_STRING, NULL, NULL,
     "File or directory."},
    SL_OP_OPTIONS_END,
};

static const sl_op_def test_pipe_source = {
    .abi = SL_OP_ABI_VERSION,
    .name = "test_pipe_source",
    .flags = SL_OPF_SOURCE,
    .options = pipe_options,
    .plan = pipe_plan_new,
    .plan_free = pipe_plan_free,
    .open = pipe_open,
    .run = pipe_run,
    .close = pipe_close,
    .snapshot_state = pipe_snapshot,
    .restore_state = pipe_restore,
};

/* ---- the plugin's entry point -------------------------------------------------- */

int sl_plugin_init(unsigned abi, char *err, size_t errlen);
int sl_plugin_init(unsigned abi, char *err, size_t errlen)
{
    if (abi != SL_OP_ABI_VERSION)
        return sl_seterr(err, errlen, "built for operator ABI %u, loaded by %u", SL_OP_ABI_VERSION, abi);
    const sl_op_def *defs[] = {&test_split, &test_count, &test_pipe_source};
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (sl_op_register(defs[i], err, errlen) != SL_OK) return SL_ERR;
    return SL_OK;
}
