/* udf_bad_sig.c -- a declaration with a type SQL does not have (tests). */
#include "udf.h"

SL_UDF_SCALAR(weird, "DECIMAL(40, 2)", "BIGINT", SL_UDF_DEFAULT)
int weird(sl_udf_ctx *ctx, const sl_value *args, int nargs, sl_value *out)
{
    (void)ctx, (void)args, (void)nargs, (void)out;
    return 0;
}
