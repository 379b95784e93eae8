/*
 * ship.c -- the shared objects of a SQL job's user-defined functions go
 * with the job: each "functions" entry of a vertex that names a local
 * object (an absolute path, as the session's CREATE FUNCTION resolved it)
 * is uploaded once to the JobManager (POST /jars/upload, the jar API's
 * multipart form) and named "jar:<id>". The JobManager keeps the bytes
 * with the job and ships them at every deployment; it never loads them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "cli.h"
#include "sl.h"

#define SHIP_MAX (256u << 20) /* an object larger than this is refused here */

static char *read_all(const char *path, size_t *n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sl_seterr(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            if (cap > SHIP_MAX) {
                fclose(f);
                free(buf);
                sl_seterr(err, errlen, "%s is larger than %u bytes", path, SHIP_MAX);
                return NULL;
            }
            buf = sl_realloc(buf, cap);
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        len += r;
        if (r == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        sl_seterr(err, errlen, "cannot read %s", path);
        return NULL;
    }
    *n = len;
    return buf;
}

/* Upload path; its id (caller frees) or NULL with err. */
static char *upload(sl_cli_http *h, const char *path, char *err, size_t errlen)
{
    size_t n = 0;
    char *data = read_all(path, &n, err, errlen);
    if (!data) return NULL;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *bd = "sluice-udf-5a7e1c0b9d2f4e83";
    char *head = sl_sprintf("--%s\r\nContent-Disposition: form-data; name=\"jarfile\"; "
                            "filename=\"%s\"\r\nContent-Type: application/octet-stream\r\n\r\n",
                            bd, base);
    char *tail = sl_sprintf("\r\n--%s--\r\n", bd);
    size_t hl = strlen(head), tl = strlen(tail);
    char *body = sl_malloc(hl + n + tl);
    memcpy(body, head, hl);
    memcpy(body + hl, data, n);
    memcpy(body + hl + n, tail, tl);
    free(data);
    char *ctype = sl_sprintf("multipart/form-data; boundary=%s", bd);
    sl_cli_response resp;
    char *id = NULL;
    if (sl_cli_http_request_raw(h, "POST", "/jars/upload", ctype, body, hl + n + tl, &resp, err,
                                errlen) == SL_OK) {
        json_t *j = json_loadb(resp.body ? resp.body : "", resp.len, 0, NULL);
        const char *fn = json_string_value(json_object_get(j, "filename"));
        if (resp.status == 200 && fn) {
            const char *slash = strrchr(fn, '/');
            id = sl_strdup(slash ? slash + 1 : fn);
        } else {
            char *text = sl_cli_error_text(resp.status, resp.body, resp.len);
            sl_seterr(err, errlen, "cannot upload %s: %s", path, text);
            free(text);
        }
        json_decref(j);
        sl_cli_response_clear(&resp);
    }
    free(ctype);
    free(body);
    free(head);
    free(tail);
    return id;
}

int sl_cli_ship_functions(sl_cli_http *h, char **job, char *err, size_t errlen)
{
    if (!*job || !strstr(*job, "\"functions\"")) return SL_OK;
    json_t *doc = json_loads(*job, JSON_PRESERVE_ORDER, NULL);
    if (!doc) return SL_OK; /* not ours to judge: the JobManager answers */
    json_t *done = json_object(); /* path -> "jar:<id>" */
    int rc = SL_OK;
    json_t *v;
    size_t k;
    json_array_foreach(json_object_get(doc, "vertices"), k, v) {
        json_t *f;
        size_t q;
        json_array_foreach(json_object_get(json_object_get(v, "config"), "functions"), q, f) {
            const char *lib = json_string_value(json_object_get(f, "library"));
            if (rc != SL_OK || !lib || lib[0] != '/') continue;
            const char *ref = json_string_value(json_object_get(done, lib));
            if (!ref) {
                if (!h) {
                    rc = sl_seterr(err, errlen, "no JobManager to upload %s to", lib);
                    continue;
                }
                char *id = upload(h, lib, err, errlen);
                if (!id) {
                    rc = SL_ERR;
                    continue;
                }
                char *r = sl_sprintf("jar:%s", id);
                json_object_set_new(done, lib, json_string(r));
                free(r);
                free(id);
                ref = json_string_value(json_object_get(done, lib));
            }
            json_object_set_new(f, "library", json_string(ref));
        }
    }
    if (rc == SL_OK) {
        free(*job);
        *job = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    }
    json_decref(done);
    json_decref(doc);
    return rc;
}
