/*
 * ha.h -- JobManager high availability through ZooKeeper (docs/HA.md).
 *
 * One module owns the ZooKeeper session. Its watcher runs on the client's
 * threads and only posts JM_OP_HA ops; everything else here runs on the
 * loop thread, which calls the client's synchronous API (loopback round
 * trips, at election, submission and checkpoint time). With
 * high-availability.type none every function is a no-op that allows all.
 */
#ifndef SL_JM_HA_H
#define SL_JM_HA_H

#include "jm.h"

typedef enum {
    JM_HA_OFF = 0,      /* high availability is not configured */
    JM_HA_CONNECTING,   /* no ZooKeeper session yet (or a new one after expiry) */
    JM_HA_STANDBY,      /* in the election, not leading */
    JM_HA_LEADER,       /* leading: schedules, checkpoints, persists */
    JM_HA_SUSPENDED     /* leading, but the ZooKeeper connection is suspended: jobs keep
                           running, nothing is scheduled, triggered or persisted */
} jm_ha_role;

const char *jm_ha_role_name(jm_ha_role r);

/* Loop, after RPC and REST listen (the leader publishes their addresses). */
int jm_ha_start(jm *j, char *err, size_t errlen);
void jm_ha_stop(jm *j);
void jm_ha_on_loop(jm *j, const jm_op *op);     /* JM_OP_HA */
void jm_ha_tick(jm *j);                         /* loop, every cp tick */

/* Any thread: may this JobManager act as the leader right now (deploy,
 * trigger, write checkpoint metadata, talk to TaskManagers)? Always with HA
 * off; else only while leading with a session the server confirmed within
 * the last part of the session timeout (a paused leader wakes up fenced). */
int jm_ha_may_act(const jm *j);

/* Loop: persist a submitted job (its graph and submission settings in
 * storageDir, a pointer znode). SL_ERR with the reason when that failed. */
int jm_ha_job_submitted(jm *j, const jm_job *job, char *err, size_t errlen);
/* Loop: persist a rescaled job again (its graph at the new parallelism, to
 * restore from the rescale's savepoint). SL_ERR with the reason. */
int jm_ha_job_rescaled(jm *j, const jm_job *job, char *err, size_t errlen);
/* Loop: the next checkpoint id of job (the counter lives in ZooKeeper). */
int jm_ha_next_checkpoint_id(jm *j, jm_job *job, uint64_t *id, char *err, size_t errlen);
/* Loop: checkpoint cp_id of job, whose _metadata is in dir, is durable:
 * add its pointer (and drop older ones). Fenced on our leadership. */
int jm_ha_checkpoint_completed(jm *j, const jm_job *job, uint64_t cp_id, const char *dir,
                               char *err, size_t errlen);

/* Any thread: {"enabled","role","leader-rest-url","zookeeper"} for /config. */
json_t *jm_ha_json(const jm *j);
/* Any thread (REST): a standby answers 503 with where the leader is. Returns
 * 1 and fills *status and *json (owned by the caller) when it refuses. */
int jm_ha_rest_refuse(const jm *j, int *status, json_t **json);

#endif
