/*
 * userfn.h -- what the operators hosting user code (process.c, async.c)
 * share: reading "library" / "function" / "schema" at plan time, and
 * loading the function table on the TaskManager with its ABI check.
 */
#ifndef SL_USERFN_H
#define SL_USERFN_H

#include "operator.h"

/* "jar:<id>" with an id of [A-Za-z0-9._-] (1-200, no leading dot): a C
 * job uploaded to the JobManager, shipped to the TaskManagers with the
 * deployment (which point it at their copy before planning). */
int sl_ds_jar_ref_ok(const char *lib);
/* Check the vertex's "library" (an absolute path), "function" (a `kind`
 * table in it) and "schema" (parsed into pc->out). SL_ERR with err. */
int sl_ds_plan_user(sl_plan_ctx *pc, const char *kind, char *err, size_t errlen);
/* dlopen library (*dl, the caller dlcloses) and find the table `function`,
 * whose first field is its SL_DS_ABI_VERSION; NULL with op->err (both
 * versions named when they differ). */
const void *sl_ds_load_user(sl_op *op, const char *library, const char *function, void **dl);

#endif
