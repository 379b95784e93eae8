/*
 * store.c -- S3 objects for the snapshot code (store.h), through libs3.
 *
 * A URL "s3://bucket/a/b" is the bucket and the key "a/b"; a directory URL
 * is a key prefix, and an object "under" it has the prefix and a '/'.
 * Settings are process-wide (sl_store_configure at start-up): one endpoint
 * and one pair of keys per daemon, as Flink's s3.* options are.
 *
 * Each call is one synchronous libs3 request (NULL request context), with
 * up to three attempts when libs3 calls the failure retryable (a dropped
 * connection, a 5xx); the error names the request, the URL, libs3's
 * status and the server's message. Uploads stream from the file through
 * libs3's data callback and downloads stream into a temp file, so neither
 * holds a whole state file in memory.
 *
 * libs3 2.0 has no multipart upload: one PUT carries an object of up to
 * 5 GiB (S3's limit for a single PUT); a larger state file is refused by
 * the upload with that reason. Its requests are signed with AWS's
 * signature version 2, which S3-compatible servers (MinIO, Ceph's RADOS
 * gateway, moto) accept.
 */
#include <errno.h>
#include <fcntl.h>
#include <libs3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sl.h"
#include "config.h"
#include "store.h"

#define SINGLE_PUT_MAX ((uint64_t)5 << 30) /* S3's limit for one PUT */
#define ATTEMPTS 3

static struct {
    int ready;             /* S3_initialize succeeded */
    char *host;            /* "host[:port]" of s3.endpoint, NULL: libs3's default */
    S3Protocol protocol;
    S3UriStyle style;
    char *access_key, *secret_key;
} st;

int sl_store_is_s3(const char *path)
{
    return path && !strncmp(path, SL_STORE_S3_PREFIX, strlen(SL_STORE_S3_PREFIX));
}

char *sl_store_uri(const char *dir)
{
    return sl_sprintf("%s%s", sl_store_is_s3(dir) ? "" : "file:", dir);
}

int sl_store_configure(const sl_config *c, char *err, size_t errlen)
{
    const char *ep = sl_config_str(c, "s3.endpoint");
    st.protocol = S3ProtocolHTTPS;
    free(st.host);
    st.host = NULL;
    if (ep && *ep) {
        const char *h = ep;
        if (!strncmp(h, "http://", 7)) {
            st.protocol = S3ProtocolHTTP;
            h += 7;
        } else if (!strncmp(h, "https://", 8)) {
            h += 8;
        } else if (strstr(h, "://")) {
            return sl_seterr(err, errlen, "s3.endpoint: '%s' is neither http:// nor https://", ep);
        }
        size_t n = strcspn(h, "/");
        if (!n || h[n + (h[n] == '/')] != '\0')
            return sl_seterr(err, errlen, "s3.endpoint: '%s' must be a host[:port] (with "
                             "http:// or https://), without a path", ep);
        st.host = sl_strndup(h, n);
    }
    st.style = sl_config_bool(c, "s3.path.style.access") ? S3UriStylePath : S3UriStyleVirtualHost;
    free(st.access_key);
    free(st.secret_key);
    st.access_key = sl_strdup(sl_config_str(c, "s3.access-key"));
    st.secret_key = sl_strdup(sl_config_str(c, "s3.secret-key"));
    if (!st.ready) {
        S3Status s = S3_initialize("sluice", S3_INIT_ALL, st.host);
        if (s != S3StatusOK)
            return sl_seterr(err, errlen, "cannot start the S3 client (libs3): %s", S3_get_status_name(s));
        st.ready = 1;
    }
    return SL_OK;
}

/* ---- URLs ------------------------------------------------------------------- */

typedef struct s3url {
    char bucket[64];
    char key[1024];     /* without a leading '/'; may be "" (the bucket) */
} s3url;

static int parse(const char *url, s3url *u, char *err, size_t errlen)
{
    if (!sl_store_is_s3(url)) return sl_seterr(err, errlen, "'%s' is not an s3:// URL", url);
    const char *b = url + strlen(SL_STORE_S3_PREFIX);
    size_t bn = strcspn(b, "/");
    if (bn < 3 || bn > 63)
        return sl_seterr(err, errlen, "'%s': a bucket name has 3 to 63 characters", url);
    for (size_t i = 0; i < bn; i++) {
        char ch = b[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.'))
            return sl_seterr(err, errlen, "'%s': bucket names have lower-case letters, digits, "
                             "'-' and '.' only", url);
    }
    memcpy(u->bucket, b, bn);
    u->bucket[bn] = '\0';
    const char *k = b[bn] ? b + bn + 1 : b + bn;
    size_t kn = strlen(k);
    while (kn && k[kn - 1] == '/') kn--; /* "s3://b/dir/" is "s3://b/dir" */
    if (kn >= sizeof u->key) return sl_seterr(err, errlen, "'%s': the key is too long", url);
    memcpy(u->key, k, kn);
    u->key[kn] = '\0';
    /* segments: none empty, "." or ".." (a key is a name, not a path to resolve) */
    for (const char *s = u->key; *s;) {
        size_t n = strcspn(s, "/");
        if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return sl_seterr(err, errlen, "'%s': empty, '.' and '..' path segments are not allowed", url);
        s += n + (s[n] == '/');
    }
    return SL_OK;
}

int sl_store_check_url(const char *url, char *err, size_t errlen)
{
    s3url u;
    return parse(url, &u, err, errlen);
}

/* ---- requests ------------------------------------------------------------------ */

/* What a request's callbacks fill in. */
typedef struct req {
    S3Status status;
    char msg[300];          /* the server's error message, if any */
    uint64_t length;        /* Content-Length of the response (HEAD) */
    int fd;                 /* upload source / download target */
    uint64_t left;          /* bytes still to send */
    const uint8_t *mem;     /* upload from memory */
    uint8_t *buf;           /* download into memory */
    size_t len, cap, max;
    int io_errno;           /* a local read or write failed */
    /* listing */
    size_t prefix_len;
    int (*fn)(void *, const char *, uint64_t);
    void *ctx;
    int fn_rc;
    int truncated;
    char marker[1024];
} req;

static S3Status on_props(const S3ResponseProperties *p, void *cd)
{
    ((req *)cd)->length = p->contentLength;
    return S3StatusOK;
}

static void on_done(S3Status status, const S3ErrorDetails *e, void *cd)
{
    req *r = cd;
    r->status = status;
    r->msg[0] = '\0';
    if (e && e->message) snprintf(r->msg, sizeof r->msg, "%s", e->message);
}

static const S3ResponseHandler response = {on_props, on_done};

static void context(const s3url *u, S3BucketContext *bc)
{
    memset(bc, 0, sizeof *bc);
    bc->hostName = st.host;
    bc->bucketName = u->bucket;
    bc->protocol = st.protocol;
    bc->uriStyle = st.style;
    bc->accessKeyId = st.access_key;
    bc->secretAccessKey = st.secret_key;
}

static int fail(const req *r, const char *what, const char *url, char *err, size_t errlen)
{
    if (r->io_errno) return sl_seterr(err, errlen, "%s %s: %s", what, url, strerror(r->io_errno));
    const char *host = st.host ? st.host : "the default S3 endpoint";
    return sl_seterr(err, errlen, "%s %s at %s: %s%s%s", what, url, host, S3_get_status_name(r->status),
                     r->msg[0] ? ": " : "", r->msg);
}

static void backoff(int attempt)
{
    struct timespec ts = {0, (long)(100 * 1000 * 1000) << (2 * attempt)}; /* 100, 400 ms */
    nanosleep(&ts, NULL);
}

static int retry(const req *r, int attempt)
{
    if (r->status == S3StatusOK || r->io_errno || attempt + 1 >= ATTEMPTS) return 0;
    if (!S3_status_is_retryable(r->status)) return 0;
    backoff(attempt);
    return 1;
}

static int not_ready(char *err, size_t errlen)
{
    return sl_seterr(err, errlen, "the S3 client is not configured (sl_store_configure)");
}

/* upload */

static int put_data(int size, char *buf, void *cd)
{
    req *r = cd;
    size_t want = (size_t)SL_MIN((uint64_t)size, r->left);
    if (!want) return 0;
    if (r->mem) {
        memcpy(buf, r->mem, want);
        r->mem += want;
        r->left -= want;
        return (int)want;
    }
    ssize_t n;
    do n = read(r->fd, buf, want);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        r->io_errno = n < 0 ? errno : EIO; /* EIO: the file shrank while being sent */
        return -1;
    }
    r->left -= (uint64_t)n;
    return (int)n;
}

static int put(const char *url, int fd, const void *mem, uint64_t len, char *err, size_t errlen)
{
    if (!st.ready) return not_ready(err, errlen);
    s3url u;
    if (parse(url, &u, err, errlen) != SL_OK) return SL_ERR;
    if (len > SINGLE_PUT_MAX)
        return sl_seterr(err, errlen, "cannot upload %s: %llu bytes is more than one S3 PUT "
                         "takes (5 GiB), and libs3 2.0 has no multipart upload", url,
                         (unsigned long long)len);
    S3BucketContext bc;
    context(&u, &bc);
    S3PutObjectHandler h = {response, put_data};
    req r;
    for (int attempt = 0;; attempt++) {
        memset(&r, 0, sizeof r);
        r.fd = fd;
        r.mem = mem;
        r.left = len;
        if (fd >= 0 && lseek(fd, 0, SEEK_SET) != 0) return sl_seterr(err, errlen, "rewinding for %s: %s",
                                                                    url, strerror(errno));
        S3_put_object(&bc, u.key, len, NULL, NULL, &h, &r);
        if (!retry(&r, attempt)) break;
    }
    return r.status == S3StatusOK && !r.io_errno ? SL_OK : fail(&r, "uploading", url, err, errlen);
}

int sl_store_put_file(const char *local, const char *url, uint64_t *size, char *err, size_t errlen)
{
    int fd = open(local, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sl_seterr(err, errlen, "cannot open %s: %s", local, strerror(errno));
    struct stat sb;
    int rc = fstat(fd, &sb) == 0 ? SL_OK : sl_seterr(err, errlen, "%s: %s", local, strerror(errno));
    if (rc == SL_OK) rc = put(url, fd, NULL, (uint64_t)sb.st_size, err, errlen);
    if (rc == SL_OK && size) *size = (uint64_t)sb.st_size;
    close(fd);
    return rc;
}

int sl_store_put_mem(const char *url, const void *data, size_t len, char *err, size_t errlen)
{
    static const uint8_t none[1];
    return put(url, -1, data ? data : none, len, err, errlen);
}

/* download */

static S3Status get_data(int size, const char *buf, void *cd)
{
    req *r = cd;
    if (r->fd >= 0) {
        for (int off = 0; off < size;) {
            ssize_t n = write(r->fd, buf + off, (size_t)(size - off));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                r->io_errno = errno;
                return S3StatusAbortedByCallback;
            }
            off += (int)n;
        }
        return S3StatusOK;
    }
    if (r->len + (size_t)size > r->max) {
        r->io_errno = EFBIG;
        return S3StatusAbortedByCallback;
    }
    if (r->len + (size_t)size > r->cap) {
        r->cap = SL_MIN(r->max, (r->len + (size_t)size) * 2);
        r->buf = sl_realloc(r->buf, r->cap ? r->cap : 1);
    }
    memcpy(r->buf + r->len, buf, (size_t)size);
    r->len += (size_t)size;
    return S3StatusOK;
}

static int is_absent(S3Status s)
{
    return s == S3StatusErrorNoSuchKey || s == S3StatusHttpErrorNotFound;
}

static void get(const s3url *u, req *r, int fd, size_t max)
{
    S3BucketContext bc;
    context(u, &bc);
    S3GetObjectHandler h = {response, get_data};
    for (int attempt = 0;; attempt++) {
        free(r->buf);
        memset(r, 0, sizeof *r);
        r->fd = fd;
        r->max = max;
        if (fd >= 0 && (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0)) {
            r->io_errno = errno;
            return;
        }
        S3_get_object(&bc, u->key, NULL, 0, 0, NULL, &h, r);
        if (!retry(r, attempt)) break;
    }
}

int sl_store_get_file(const char *url, const char *local, char *err, size_t errlen)
{
    if (!st.ready) return not_ready(err, errlen);
    s3url u;
    if (parse(url, &u, err, errlen) != SL_OK) return SL_ERR;
    char *tmp = sl_sprintf("%s.tmp", local);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = SL_OK;
    if (fd < 0) {
        rc = sl_seterr(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    } else {
        req r = {0};
        get(&u, &r, fd, 0);
        if (r.status != S3StatusOK || r.io_errno) rc = fail(&r, "downloading", url, err, errlen);
        if (close(fd) != 0 && rc == SL_OK) rc = sl_seterr(err, errlen, "closing %s: %s", tmp, strerror(errno));
        if (rc == SL_OK && rename(tmp, local) != 0)
            rc = sl_seterr(err, errlen, "renaming %s: %s", tmp, strerror(errno));
        if (rc != SL_OK) unlink(tmp);
    }
    free(tmp);
    return rc;
}

int sl_store_get_mem(const char *url, size_t max, void **data, size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    if (!st.ready) return not_ready(err, errlen);
    s3url u;
    if (parse(url, &u, err, errlen) != SL_OK) return SL_ERR;
    req r = {0};
    get(&u, &r, -1, max);
    if (r.status == S3StatusOK && !r.io_errno) {
        *data = r.buf ? r.buf : sl_malloc(1);
        *len = r.len;
        return SL_OK;
    }
    free(r.buf);
    if (r.io_errno == EFBIG)
        return sl_seterr(err, errlen, "%s is larger than %zu bytes", url, max);
    int rc = fail(&r, "reading", url, err, errlen);
    return is_absent(r.status) ? SL_DONE : rc;
}

int sl_store_size(const char *url, uint64_t *size, char *err, size_t errlen)
{
    if (!st.ready) return not_ready(err, errlen);
    s3url u;
    if (parse(url, &u, err, errlen) != SL_OK) return SL_ERR;
    S3BucketContext bc;
    context(&u, &bc);
    req r;
    for (int attempt = 0;; attempt++) {
        memset(&r, 0, sizeof r);
        S3_head_object(&bc, u.key, NULL, &response, &r);
        if (!retry(&r, attempt)) break;
    }
    if (r.status == S3StatusOK) {
        if (size) *size = r.length;
        return SL_OK;
    }
    int rc = fail(&r, "looking up", url, err, errlen);
    return is_absent(r.status) ? SL_DONE : rc;
}

int sl_store_delete(const char *url, char *err, size_t errlen)
{
    if (!st.ready) return not_ready(err, errlen);
    s3url u;
    if (parse(url, &u, err, errlen) != SL_OK) return SL_ERR;
    S3BucketContext bc;
    context(&u, &bc);
    req r;
    for (int attempt = 0;; attempt++) {
        memset(&r, 0, sizeof r);
        S3_delete_object(&bc, u.key, NULL, &response, &r);
        if (!retry(&r, attempt)) break;
    }
    return r.status == S3StatusOK || is_absent(r.status) ? SL_OK : fail(&r, "deleting", url, err, errlen);
}

/* listing */

static S3Status on_list(int truncated, const char *next, int n, const S3ListBucketContent *c,
                        int nprefixes, const char **prefixes, void *cd)
{
    req *r = cd;
    r->truncated = truncated;
    for (int i = 0; i < n; i++) {
        if (strlen(c[i].key) < r->prefix_len) continue;
        if (r->fn(r->ctx, c[i].key + r->prefix_len, c[i].size) != SL_OK) {
            r->fn_rc = SL_ERR;
            return S3StatusAbortedByCallback;
        }
    }
    /* without a delimiter S3 sends no NextMarker: go on after the last key */
    const char *m = next && *next ? next : n ? c[n - 1].key : "";
    snprintf(r->marker, sizeof r->marker, "%s", m);
    return S3StatusOK;
}

int sl_store_list(const char *url, int (*fn)(void *ctx, const char *name, uint64_t size), void *ctx,
                  char *err, size_t errlen)
{
    if (!st.ready) return not_ready(err, errlen);
    s3url u;
    if (parse(url, &u, err, errlen) != SL_OK) return SL_ERR;
    char prefix[sizeof u.key + 1];
    snprintf(prefix, sizeof prefix, "%s%s", u.key, u.key[0] ? "/" : "");
    S3BucketContext bc;
    context(&u, &bc);
    S3ListBucketHandler h = {response, on_list};
    char marker[1024] = "";
    for (;;) {
        req r;
        for (int attempt = 0;; attempt++) {
            memset(&r, 0, sizeof r);
            r.prefix_len = strlen(prefix);
            r.fn = fn;
            r.ctx = ctx;
            S3_list_bucket(&bc, prefix, marker[0] ? marker : NULL, NULL, 1000, NULL, &h, &r);
            if (r.fn_rc != SL_OK || !retry(&r, attempt)) break;
        }
        if (r.fn_rc != SL_OK) return SL_ERR;
        if (r.status != S3StatusOK) return fail(&r, "listing", url, err, errlen);
        if (!r.truncated || !r.marker[0] || !strcmp(r.marker, marker)) return SL_OK;
        snprintf(marker, sizeof marker, "%s", r.marker);
    }
}
