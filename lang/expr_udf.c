/*
 * expr_udf.c -- calling a user-defined scalar function from an expression
 * (an N_UDF node, built by expr_check.c against a function set, see
 * core/udf_sig.h).
 *
 * The function pointer was resolved when the operator opened on the
 * TaskManager; a call costs the arguments' conversion to the declared
 * types (integers widened in place), one indirect call and nothing else:
 * the context lives on the stack and the function's strings come from the
 * record's scratch arena. A "strict" function is not called when an
 * argument is NULL: the result is NULL, as a built-in function's is.
 * A Python function's handle goes to the process's Python host instead
 * (core/udf_sig.h: registered by the TaskManager, which embeds CPython).
 */
#include <stdio.h>
#include <string.h>

#include "expr_int.h"
#include "udf_guard.h"
#include "udf_sig.h"

static void *udf_alloc(sl_udf_ctx *ctx, size_t n)
{
    return sl_arena_alloc((sl_arena *)ctx->host, n);
}

static int no_emit(sl_udf_ctx *ctx, const sl_value *row)
{
    (void)row;
    snprintf(ctx->err, sizeof ctx->err, "a scalar function cannot emit rows");
    return 1;
}

int sl_expr_udf_call(const node *n, sl_value *args, sl_arena *scratch, sl_value *out, char *err,
                     size_t errlen)
{
    sl_udf_sig *u = n->aux;
    sl_udf_scalar_fn fn = (sl_udf_scalar_fn)atomic_load_explicit(&u->fn, memory_order_acquire);
    if (!fn)
        return sl_seterr(err, errlen, "function '%s' is not loaded here (user functions run on "
                         "TaskManagers only)", u->name);
    for (int i = 0; i < n->nkids; i++) {
        if (args[i].isnull) {
            if (u->strict) {
                memset(out, 0, sizeof *out);
                out->isnull = true;
                return SL_OK;
            }
            continue;
        }
        if (u->args[i] == SL_T_DOUBLE && is_int_type(n->kids[i]->type))
            args[i].v.d = (double)args[i].v.i;
    }
    memset(out, 0, sizeof *out);
    if (u->python) { /* the TaskManager's embedded interpreter (taskmanager/pyhost.c) */
        char e2[512];
        if (sl_udf_host_get()->call(fn, u, args, n->nkids, scratch, out, e2, sizeof e2) != SL_OK)
            return sl_seterr(err, errlen, "function '%s' failed: %s", u->name, e2);
        return SL_OK;
    }
    sl_udf_ctx ctx = {.abi = SL_UDF_ABI_VERSION, .alloc = udf_alloc, .emit = no_emit, .host = scratch};
    volatile int rc = 0;
    int crashed;
    SL_UDF_CALL(crashed, rc = fn(&ctx, args, n->nkids, out));
    if (crashed) return sl_seterr(err, errlen, "function '%s' %s", u->name, sl_udf_crash_text());
    if (rc != 0) {
        ctx.err[sizeof ctx.err - 1] = 0;
        return sl_seterr(err, errlen, "function '%s' failed: %s", u->name,
                         ctx.err[0] ? ctx.err : "(no message)");
    }
    if (!out->isnull && (u->result == SL_T_STRING || u->result == SL_T_BYTES) && !out->v.s.p &&
        out->v.s.len)
        return sl_seterr(err, errlen, "function '%s' returned a string of %u bytes without its "
                         "bytes", u->name, out->v.s.len);
    char e2[200];
    if (u->result == SL_T_DECIMAL && sl_udf_check_dec(u->resdt, out, e2, sizeof e2) != SL_OK)
        return sl_seterr(err, errlen, "function '%s' %s", u->name, e2);
    return SL_OK;
}
