/*
 * vstate.h -- typed state handles (value, list, map) over sl_kstate.
 *
 * The functions operators call are declared in operator.h (sl_value_get,
 * sl_list_add, sl_map_put, ...); this header is for the runtime, which
 * makes and frees the handles. A handle is one named state of the keyed
 * backend (sl_kstate_register), so it is snapshotted, restored and
 * re-split by key group like all keyed state, on either backend.
 *
 * Encoding of the backend entries, under the current key:
 *   value  namespace = ns;                 value = [ttl? i64 expiry][bytes]
 *   list   namespace = ns;                 value = ([u32 len][ttl? i64 expiry][bytes])*
 *   map    namespace = [u32 nslen][ns][k]; value = [ttl? i64 expiry][bytes]
 * Expiry is processing time (ms) of the last write + ttl (with
 * OnReadAndWrite: of the last access that returned it). An expired value is
 * removed when read; it is returned that once with ReturnExpiredIfNotCleanedUp
 * and never with NeverReturnExpired. With SL_TTL_CLEANUP_FULL_SNAPSHOT the
 * keyed backend is told the state's layout (sl_kstate_set_ttl) and leaves
 * expired entries out of its snapshots.
 */
#ifndef SL_VSTATE_H
#define SL_VSTATE_H

#include "operator.h"

/* err/errlen: where failures are described (the operator's err). */
sl_vstate *sl_vstate_new(sl_kstate *ks, const char *name, sl_state_kind kind, int64_t ttl_ms,
                         char *err, size_t errlen);
sl_vstate *sl_vstate_new_ttl(sl_kstate *ks, const char *name, sl_state_kind kind,
                             const sl_state_ttl *ttl, char *err, size_t errlen);
void sl_vstate_link(sl_vstate **list, sl_vstate *s);
void sl_vstate_free_all(sl_vstate *list);
/* The processing-time clock TTL reads (tests replace it). */
extern int64_t (*sl_vstate_clock)(void);

#endif
