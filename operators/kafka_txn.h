/*
 * kafka_txn.h -- finishing a Kafka transaction of a producer that is gone.
 *
 * librdkafka can only end a transaction of its own live producer; a sink
 * restored from a checkpoint whose transaction was pre-committed but whose
 * commit was lost must commit it from a new process, knowing only its
 * transactional.id, producer id and epoch (Flink does the same through
 * reflection on the Java producer). kf_txn_end speaks the two requests that
 * takes to the brokers directly: FindCoordinator (v1, key type transaction)
 * to a bootstrap broker, then EndTxn (v1) to the coordinator, over blocking
 * sockets with a deadline. Task thread, at restore only.
 */
#ifndef SL_KAFKA_TXN_H
#define SL_KAFKA_TXN_H

#include <stdint.h>
#include <stddef.h>

/* End transaction txn_id of (producer_id, epoch): commit (1) or abort (0).
 * bootstrap is "host:port[,host:port...]" (plaintext). A transaction that
 * was already ended the same way counts as done. SL_OK, or SL_ERR with the
 * broker's error (name and code) in why. */
int kf_txn_end(const char *bootstrap, const char *txn_id, int64_t producer_id, int16_t epoch,
               int commit, int timeout_ms, char *why, size_t whylen);

/* Abort the open transaction of transactional.id txn_id, whatever producer
 * left it (a dead job's sink): a producer of that id is initialised, which
 * fences every earlier producer of the id and aborts its transaction, then
 * closed. bootstrap as above; props are extra librdkafka properties
 * "name=value" (nprops of them, e.g. security settings). SL_OK, or SL_ERR
 * with librdkafka's error in why. Blocks up to timeout_ms; for the CLI. */
int kf_txn_fence(const char *bootstrap, const char *txn_id, const char *const *props, int nprops,
                 int timeout_ms, char *why, size_t whylen);

#endif
