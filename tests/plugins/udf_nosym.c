/* udf_nosym.c -- a function declared but not exported (static), beside one
 * that is (tests). */
#include "udf.h"

SL_UDF_SCALAR(hidden, "BIGINT", "BIGINT", SL_UDF_DEFAULT)
static int hidden(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)ctx, (void)nargs;
    out->v.i = args[0].v.i;
    return 0;
}

SL_UDF_SCALAR(shown, "BIGINT", "BIGINT", SL_UDF_DEFAULT)
int shown(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    return hidden(ctx, args, nargs, out);
}
