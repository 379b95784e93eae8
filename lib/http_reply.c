/*
 * http_reply.c -- JSON replies of Sluice's HTTP servers (http_reply.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "http_reply.h"

void sl_reply_json(sl_reply *r, int status, json_t *j)
{
    r->status = status;
    r->json = j;
}

void sl_reply_err(sl_reply *r, int status, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sl_reply_json(r, status, json_pack("{s:[s]}", "errors", msg));
}

MHD_RESULT sl_reply_send(struct MHD_Connection *conn, sl_reply *r)
{
    char *text = json_dumps(r->json, JSON_COMPACT);
    json_decref(r->json);
    r->json = NULL;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, "Content-Type", "application/json");
    MHD_RESULT ret = MHD_queue_response(conn, (unsigned)r->status, resp);
    MHD_destroy_response(resp);
    return ret;
}
