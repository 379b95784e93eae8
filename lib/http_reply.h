/*
 * http_reply.h -- what Sluice's libmicrohttpd servers share: the handler
 * result type across libmicrohttpd versions, and a JSON reply (status and
 * body) that a handler fills and the server sends.
 *
 * Used by the JobManager's REST API (jobmanager/rest.c, jars.c), the SQL
 * gateway (cli/sql_gateway.c) and the Prometheus reporter (core/prom.c).
 */
#ifndef SL_HTTP_REPLY_H
#define SL_HTTP_REPLY_H

#include <microhttpd.h>
#include <jansson.h>
#include "sl.h"

#if MHD_VERSION < 0x00097002
typedef int MHD_RESULT;
#else
typedef enum MHD_Result MHD_RESULT;
#endif

typedef struct sl_reply {
    int status;
    json_t *json;     /* owned */
} sl_reply;

/* The reply is status with body j (taken). */
void sl_reply_json(sl_reply *r, int status, json_t *j);
/* The reply is status with {"errors": [message]}, Flink's error shape. */
void sl_reply_err(sl_reply *r, int status, const char *fmt, ...) SL_PRINTF(3, 4);
/* Queue r (its body taken) on conn as application/json. */
MHD_RESULT sl_reply_send(struct MHD_Connection *conn, sl_reply *r);

#endif
