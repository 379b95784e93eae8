/*
 * collect.h -- the channel from a `collect` sink (operators/collect.c) to
 * the JobManager, which keeps the rows for the client that reads the job's
 * results (GET /jobs/:jobid/results, docs/REST.md).
 *
 * Flow control is by credit, in rows: a sink starts with SL_COLLECT_CREDIT
 * and gets back what the client takes, so the JobManager never holds more
 * than SL_COLLECT_CREDIT rows of a job and a slow client backpressures the
 * job instead of growing anyone's memory.
 */
#ifndef SL_COLLECT_H
#define SL_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#define SL_COLLECT_CREDIT 512                /* rows buffered per job */
#define SL_COLLECT_BATCH_ROWS 64             /* rows per message at most */
#define SL_COLLECT_BATCH_BYTES (256u << 10)  /* bytes per message, about */
#define SL_COLLECT_PENDING_BYTES (8u << 20)  /* rows a sink keeps without credit */

/* Send nrows rows (each a JSON array ending '\n', len bytes in all), the
 * first of them row number `offset` of the results, and, with `end`, the
 * end of the results. Blocks until the job holds credit for them
 * (sl_op_collect_credit_now() >= nrows: at once). The runtime passes the
 * call to its host (runtime/runtime.h, sl_rt_host), which for a TaskManager
 * is taskmanager/collect.c. Returns SL_OK, SL_DONE when the deployment is
 * being cancelled, or SL_ERR with err (not running in a TaskManager task). */
struct sl_op;
int sl_op_collect_send(struct sl_op *op, const char *rows, size_t len, int nrows, uint64_t offset,
                       int end, char *err, size_t errlen);

/* The rows the job may send now without waiting (0 outside a TaskManager
 * task), and a descriptor that becomes readable when credit comes back
 * (-1 when there is none: poll the credit instead). Reading the descriptor
 * (8 bytes, non-blocking) clears it. */
int sl_op_collect_credit_now(struct sl_op *op);
int sl_op_collect_credit_fd(struct sl_op *op);

#endif
