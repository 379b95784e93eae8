/*
 * rest_guard.c -- what keeps the REST API from being turned against its
 * host (docs/SECURITY.md). REST threads only; they read the configuration,
 * which nothing changes after start-up, and the file system.
 *
 * - Host: a request must name this JobManager as it is known -- an IP
 *   address, localhost, this machine's name, rest.address,
 *   rest.bind-address or a name in rest.allowed-hosts -- so a web page
 *   cannot reach it under a name of its own (DNS rebinding).
 * - Origin: a mutating request that a browser sends from another origin
 *   (Origin not this server's own, nor in web.access-control-allow-origin)
 *   is refused, and so is Origin "null".
 * - Content-Type: a mutating request must be application/json (multipart
 *   only for an upload): an HTML form or a "simple" cross-site fetch cannot
 *   send that without the browser asking first (CORS), and Sluice never
 *   answers yes.
 * - Token: with rest.auth-token set, a mutating request must carry it.
 *
 * "Mutating" means every method but GET and HEAD, and also a GET of
 * /jars/:id/plan: building a C job's plan runs the job's own code (in a
 * child process, jars.c), so it is guarded like a submission -- Origin,
 * a cross-site Sec-Fetch-Site (an <img> or a link from another site sends
 * no Origin) and the token.
 *
 * jm_rest_admit is the one gate: rest.c calls it for every request, /jars
 * included, on the first call of libmicrohttpd's access handler, when the
 * headers have arrived and no byte of the body has been read -- so an
 * upload it refuses is never written anywhere.
 * - Paths: a directory a request names (a savepoint's target, a snapshot to
 *   restore from, a savepoint to dispose of) must lie, once canonical (the
 *   real path of its longest existing prefix, no "." or ".." parts), under
 *   state.savepoints.dir, state.checkpoints.dir or one of rest.allowed-dirs.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <microhttpd.h>

#include "jm.h"
#include "store.h"

/* Is the n bytes at s an item of the comma-separated list (spaces around
 * items ignored, case-insensitive)? */
static int in_list(const char *list, const char *s, size_t n)
{
    if (!list) return 0;
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == ',') p++;
        const char *e = p;
        while (*e && *e != ',') e++;
        const char *t = e;
        while (t > p && t[-1] == ' ') t--;
        if ((size_t)(t - p) == n && n && !strncasecmp(p, s, n)) return 1;
        p = e;
    }
    return 0;
}

/* The host name of a Host header value ("name:port", "[v6]:port"). */
static void host_name(const char *host, char *out, size_t len)
{
    const char *end;
    if (host[0] == '[') {
        end = strchr(host, ']');
        host++;
        if (!end) end = host + strlen(host);
    } else {
        end = strrchr(host, ':');
        if (!end) end = host + strlen(host);
    }
    size_t n = (size_t)(end - host);
    if (n >= len) n = len - 1;
    memcpy(out, host, n);
    out[n] = '\0';
}

static int host_allowed(jm *j, const char *host)
{
    char name[256], self[256];
    host_name(host, name, sizeof name);
    size_t n = strlen(name);
    unsigned char addr[16];
    if (inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1) return 1;
    if (!strcasecmp(name, "localhost")) return 1;
    if (gethostname(self, sizeof self) == 0 && (self[sizeof self - 1] = '\0', !strcasecmp(name, self)))
        return 1;
    return in_list(sl_config_str(j->conf, "rest.address"), name, n) ||
           in_list(sl_config_str(j->conf, "rest.bind-address"), name, n) ||
           in_list(sl_config_str(j->conf, "rest.allowed-hosts"), name, n);
}

/* Does path (without /v1) name /jars/:id/plan, whose answer runs user code? */
static int loads_code(const char *path)
{
    if (strncmp(path, "/jars/", 6)) return 0;
    const char *id = path + 6, *slash = strchr(id, '/');
    return slash && slash > id && !strcmp(slash, "/plan");
}

/* Host, Origin and Content-Type: 0, or 403 / 415 with the reason in err. */
static int guard(jm *j, const char *method, const char *path, int mutating, struct MHD_Connection *conn,
                 char *err, size_t errlen)
{
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
    const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
    const char *content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    const char *site = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (host && *host && !host_allowed(j, host)) {
        sl_seterr(err, errlen,
                  "Host '%s' is not a name of this JobManager (an IP address, localhost, "
                  "rest.address or one of rest.allowed-hosts)", host);
        return 403;
    }
    if (!mutating) return 0;
    if (origin) {
        const char *o = strstr(origin, "://");
        const char *allow = sl_config_str(j->conf, "web.access-control-allow-origin");
        int same = o && host && !strcasecmp(o + 3, host);
        if (!same && !(allow && !strcmp(allow, "*")) && !in_list(allow, origin, strlen(origin))) {
            sl_seterr(err, errlen,
                      "a %s from the web page at '%s' is refused: that origin is not this "
                      "JobManager's own nor in web.access-control-allow-origin", method, origin);
            return 403;
        }
    } else if (site && (!strcasecmp(site, "cross-site") || !strcasecmp(site, "same-site"))) {
        /* a browser's request without Origin: a link, an image, a script */
        sl_seterr(err, errlen, "a %s from another site's web page (Sec-Fetch-Site: %s) is refused", method,
                  site);
        return 403;
    }
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) return 0; /* no body to judge */
    char media[128] = "";
    if (content_type) {
        size_t n = strcspn(content_type, ";");
        while (n && (content_type[n - 1] == ' ' || content_type[n - 1] == '\t')) n--;
        if (n >= sizeof media) n = sizeof media - 1;
        memcpy(media, content_type, n);
        media[n] = '\0';
    }
    if (!strcasecmp(media, "application/json")) return 0;
    if (!strcasecmp(media, "multipart/form-data") && !strcmp(path, "/jars/upload")) return 0;
    sl_seterr(err, errlen, "a %s must send Content-Type: application/json%s (got %s%s%s)", method,
              !strcmp(path, "/jars/upload") ? " or multipart/form-data" : "", content_type ? "'" : "none",
              content_type ? content_type : "", content_type ? "'" : "");
    return 415;
}

int jm_rest_admit(jm *j, struct MHD_Connection *conn, const char *method, const char *path, char *err,
                  size_t errlen)
{
    int mutating = (strcmp(method, "GET") && strcmp(method, "HEAD")) || loads_code(path);
    int status = guard(j, method, path, mutating, conn, err, errlen);
    if (status) return status;
    if (mutating && !jm_rest_authorized(j, conn)) {
        sl_seterr(err, errlen, "this JobManager requires 'Authorization: Bearer <rest.auth-token>'%s",
                  loads_code(path) ? " (a plan runs the job's code)" : "");
        return 401;
    }
    return 0;
}

/* The canonical form of an absolute path: the real path of its longest
 * existing prefix, then the rest. NULL (err set) for a relative path, or
 * one with "." or ".." parts. */
static char *canonical(const char *path, char *err, size_t errlen)
{
    if (path[0] != '/') {
        sl_seterr(err, errlen, "'%s' is not an absolute path", path);
        return NULL;
    }
    for (const char *p = path; *p;) {
        while (*p == '/') p++;
        size_t n = strcspn(p, "/");
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
            sl_seterr(err, errlen, "'%s' has a '.' or '..' part", path);
            return NULL;
        }
        p += n;
    }
    char *head = sl_strdup(path);
    for (;;) {
        char real[PATH_MAX];
        if (realpath(head, real)) {
            const char *rest = path + strlen(head); /* head is a prefix of path */
            while (*rest == '/') rest++;
            size_t rl = strlen(real);
            char *out = *rest ? sl_sprintf("%s%s%s", real, real[rl - 1] == '/' ? "" : "/", rest)
                              : sl_strdup(real);
            /* no trailing slash, so "root/" and "root" compare equal */
            size_t ol = strlen(out);
            while (ol > 1 && out[ol - 1] == '/') out[--ol] = '\0';
            free(head);
            return out;
        }
        if (errno != ENOENT && errno != ENOTDIR) {
            sl_seterr(err, errlen, "'%s': %s", head, strerror(errno));
            free(head);
            return NULL;
        }
        /* drop the last part and try again ("/" always exists) */
        char *slash = strrchr(head, '/');
        if (slash == head) head[1] = '\0';
        else *slash = '\0';
    }
}

/* Does canonical path p lie at or under canonical root r? */
static int under(const char *p, const char *r)
{
    size_t n = strlen(r);
    if (n == 1 && r[0] == '/') return 1;
    return !strncmp(p, r, n) && (p[n] == '\0' || p[n] == '/');
}

/* jm_rest_allowed_dir of an s3:// URL: well formed (no "." or ".."
 * segment, so the prefix test below is the whole test) and under one of
 * the roots that are s3:// URLs too. */
static char *allowed_s3(jm *j, const char *value, const char *what, char *err, size_t errlen)
{
    char why[512];
    if (sl_store_check_url(value, why, sizeof why) != SL_OK) {
        sl_seterr(err, errlen, "%s %s", what, why);
        return NULL;
    }
    size_t n = strlen(value);
    while (n && value[n - 1] == '/') n--;
    char *p = sl_strndup(value, n);
    char *extra = sl_strdup(sl_config_str(j->conf, "rest.allowed-dirs"));
    const char *roots[66];
    int nroots = 0;
    if (j->sp_dir && sl_store_is_s3(j->sp_dir)) roots[nroots++] = j->sp_dir;
    if (j->cp_dir && sl_store_is_s3(j->cp_dir)) roots[nroots++] = j->cp_dir;
    char *save = NULL;
    for (char *t = strtok_r(extra, ", ", &save); t && nroots < (int)SL_ARRAY_LEN(roots);
         t = strtok_r(NULL, ", ", &save))
        if (sl_store_is_s3(t)) roots[nroots++] = t;
    int ok = 0;
    for (int i = 0; i < nroots && !ok; i++) {
        size_t rn = strlen(roots[i]);
        while (rn && roots[i][rn - 1] == '/') rn--;
        ok = !strncmp(p, roots[i], rn) && (p[rn] == '\0' || p[rn] == '/');
    }
    free(extra);
    if (ok) return p;
    sl_seterr(err, errlen,
              "%s '%s' is not under an s3:// directory this JobManager may use (state.savepoints.dir, "
              "state.checkpoints.dir, rest.allowed-dirs)", what, value);
    free(p);
    return NULL;
}

char *jm_rest_allowed_dir(jm *j, const char *value, const char *what, char *err, size_t errlen)
{
    char why[512];
    if (sl_store_is_s3(value)) return allowed_s3(j, value, what, err, errlen);
    char *local = sl_config_local_path(value, why, sizeof why);
    if (!local) {
        sl_seterr(err, errlen, "%s %s", what, why);
        return NULL;
    }
    char *p = canonical(local, why, sizeof why);
    free(local);
    if (!p) {
        sl_seterr(err, errlen, "%s: %s (give an absolute path or a file:///path URI)", what, why);
        return NULL;
    }
    /* the roots, canonical the same way */
    const char *roots[64];
    int nroots = 0;
    char *extra = sl_strdup(sl_config_str(j->conf, "rest.allowed-dirs"));
    if (j->sp_dir && *j->sp_dir) roots[nroots++] = j->sp_dir;
    if (j->cp_dir && *j->cp_dir) roots[nroots++] = j->cp_dir;
    char *save = NULL;
    for (char *t = strtok_r(extra, ",", &save); t && nroots < (int)SL_ARRAY_LEN(roots);
         t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        size_t n = strlen(t);
        while (n && t[n - 1] == ' ') t[--n] = '\0';
        if (*t) roots[nroots++] = t;
    }
    char names[1024] = "";
    size_t used = 0;
    int ok = 0;
    for (int i = 0; i < nroots && !ok; i++) {
        char *lr = sl_config_local_path(roots[i], why, sizeof why);
        char *r = lr ? canonical(lr, why, sizeof why) : NULL;
        free(lr);
        if (r && under(p, r)) ok = 1;
        if (used < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     r ? r : roots[i]);
        free(r);
    }
    free(extra);
    if (ok) return p;
    sl_seterr(err, errlen,
              "%s '%s' is not under a directory this JobManager may use: %s (state.savepoints.dir, "
              "state.checkpoints.dir, rest.allowed-dirs)", what, value, nroots ? names : "none configured");
    free(p);
    return NULL;
}
