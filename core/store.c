/*
 * store.c -- S3 objects for the snapshot code (store.h), through libcurl.
 *
 * A URL "s3://bucket/a/b" is the bucket and the key "a/b"; a directory URL
 * is a key prefix, and an object "under" it has the prefix and a '/'.
 * Settings are process-wide (sl_store_configure at start-up): one endpoint,
 * region and pair of keys per daemon, as Flink's s3.* options are.
 *
 * Requests are S3's REST calls made with libcurl (Debian's libcurl4, 7.88),
 * which also signs them: CURLOPT_AWS_SIGV4 ("aws:amz:<region>:s3") computes
 * AWS's signature version 4 from the request as sent. The payload is
 * declared UNSIGNED-PAYLOAD (x-amz-content-sha256), as S3 allows over any
 * transport, so a body is streamed without being read twice. Because curl
 * 7.88 signs the query string as written, every query below is written in
 * canonical form: parameters sorted, values percent-encoded, "uploads=".
 *
 * Each thread keeps one curl handle (a pthread key frees it when the thread
 * ends), so successive requests of a thread reuse the connection. Every
 * call is synchronous; a request is tried up to three times when the
 * failure is transient (no connection, a broken or stalled one, HTTP 5xx,
 * 408, 429); the error names the request, the URL, the endpoint and curl's
 * or the server's reason (the <Code> and <Message> of its XML error body).
 *
 * A file of more than s3.multipart.part-size bytes is uploaded in parts
 * (CreateMultipartUpload, UploadPart for each part, CompleteMultipartUpload;
 * AbortMultipartUpload when a part or the completion fails, so no parts are
 * left on the server); smaller files and memory are one PUT. Downloads are
 * streamed into a file or a bounded buffer. ListObjectsV2 answers are parsed
 * here: only the few elements needed are read, and an answer without them
 * is refused as malformed.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sl.h"
#include "buf.h"
#include "config.h"
#include "log.h"
#include "store.h"

#define ATTEMPTS 3
#define MAX_PARTS 10000              /* S3's limit of parts per upload */
#define XML_MAX ((size_t)16 << 20)   /* a ListObjectsV2 page, a multipart answer */
#define ERRBODY 2048

static struct {
    int ready;              /* curl_global_init done */
    int https;
    char *host;             /* "host[:port]" of s3.endpoint or AWS's regional endpoint */
    char *shown;            /* how errors name the endpoint */
    int path_style;
    char *access_key, *secret_key;
    char *sigv4;            /* "aws:amz:<region>:s3" */
    char *ca_file;          /* s3.ssl.truststore, or NULL: the system's CAs */
    uint64_t part_size;
    long connect_ms, low_speed_s, low_speed_bytes;
} st;

static pthread_key_t handle_key;
static pthread_once_t handle_once = PTHREAD_ONCE_INIT;

static void handle_free(void *h)
{
    curl_easy_cleanup(h);
}

static void handle_key_make(void)
{
    pthread_key_create(&handle_key, handle_free);
}

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
    const char *region = sl_config_str(c, "s3.region");
    if (!region || !*region) region = "us-east-1";
    for (const char *p = region; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
            return sl_seterr(err, errlen, "s3.region: '%s' is not a region name (lower-case "
                             "letters, digits and '-')", region);
    int https = 1;
    char *host;
    if (ep && *ep) {
        const char *h = ep;
        if (!strncmp(h, "http://", 7)) {
            https = 0;
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
        host = sl_strndup(h, n);
    } else {
        host = sl_sprintf("s3.%s.amazonaws.com", region);
    }
    if (!st.ready) {
        CURLcode cc = curl_global_init(CURL_GLOBAL_ALL);
        if (cc != CURLE_OK) {
            free(host);
            return sl_seterr(err, errlen, "cannot start the S3 client (libcurl): %s",
                             curl_easy_strerror(cc));
        }
        pthread_once(&handle_once, handle_key_make);
        st.ready = 1;
    }
    free(st.host);
    free(st.shown);
    free(st.access_key);
    free(st.secret_key);
    free(st.sigv4);
    st.https = https;
    st.host = host;
    st.shown = sl_strdup(host);
    st.path_style = sl_config_bool(c, "s3.path.style.access");
    const char *ca = sl_config_str(c, "s3.ssl.truststore");
    if (ca && *ca) {
        char *local = sl_config_local_path(ca, err, errlen);
        if (!local) return SL_ERR;
        if (access(local, R_OK) != 0) {
            sl_seterr(err, errlen, "s3.ssl.truststore: cannot read %s: %s", local, strerror(errno));
            free(local);
            return SL_ERR;
        }
        st.ca_file = local;
    }
    st.access_key = sl_strdup(sl_config_str(c, "s3.access-key"));
    st.secret_key = sl_strdup(sl_config_str(c, "s3.secret-key"));
    st.sigv4 = sl_sprintf("aws:amz:%s:s3", region);
    st.part_size = (uint64_t)SL_MAX(sl_config_int(c, "s3.multipart.part-size"), (int64_t)5 << 20);
    st.connect_ms = (long)sl_config_int(c, "s3.connection.timeout");
    st.low_speed_s = (long)SL_MAX(1, sl_config_int(c, "s3.low-speed.time") / 1000);
    st.low_speed_bytes = (long)sl_config_int(c, "s3.low-speed.limit");
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

/* Percent-encode s as SigV4's canonical form wants it: everything but
 * A-Z a-z 0-9 - _ . ~ (and '/' when keep_slash). */
static void encode(sl_buf *b, const char *s, int keep_slash)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char ch = *p;
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '_' || ch == '.' || ch == '~' || (keep_slash && ch == '/')) {
            sl_buf_putc(b, (char)ch);
        } else {
            char e[3] = {'%', hex[ch >> 4], hex[ch & 15]};
            sl_buf_put(b, e, 3);
        }
    }
}

/* The HTTP URL of key (may be "") in bucket, without a query. */
static void http_url(sl_buf *b, const s3url *u)
{
    sl_buf_fmt(b, "%s://", st.https ? "https" : "http");
    if (st.path_style) {
        sl_buf_fmt(b, "%s/%s", st.host, u->bucket);
        if (u->key[0]) sl_buf_putc(b, '/');
    } else {
        sl_buf_fmt(b, "%s.%s/", u->bucket, st.host);
    }
    encode(b, u->key, 1);
}

/* ---- requests ------------------------------------------------------------------ */

enum method { GET, HEAD, PUT, POST, DELETE };

/* One request: its body (a file range or memory), where a 2xx answer's
 * body goes (a file, or memory up to max), and what came back. */
typedef struct xfer {
    enum method method;
    int in_fd;              /* upload from this file ... */
    uint64_t in_off;        /* ... from this offset */
    const uint8_t *in_mem;  /* ... or from memory */
    uint64_t in_len;        /* bytes to send */
    uint64_t in_left;
    int out_fd;             /* download into this file, else into out when keep */
    int keep;
    sl_buf out;
    size_t out_max;
    /* results */
    long http;              /* status code, 0: no answer */
    CURLcode cc;
    int io_errno;           /* a local read or write failed */
    int too_big;            /* the answer was larger than out_max */
    uint64_t length;        /* Content-Length (HEAD) */
    char etag[128];         /* ETag header (UploadPart) */
    char ebody[ERRBODY];    /* an error answer's body */
    size_t elen;
    char cerr[CURL_ERROR_SIZE];
} xfer;

static void xfer_init(xfer *x, enum method m)
{
    memset(x, 0, sizeof *x);
    x->method = m;
    x->in_fd = x->out_fd = -1;
}

static size_t on_read(char *buf, size_t size, size_t n, void *cd)
{
    xfer *x = cd;
    size_t want = (size_t)SL_MIN((uint64_t)size * n, x->in_left);
    if (!want) return 0;
    if (x->in_mem) {
        memcpy(buf, x->in_mem + (x->in_len - x->in_left), want);
        x->in_left -= want;
        return want;
    }
    ssize_t got;
    do got = pread(x->in_fd, buf, want, (off_t)(x->in_off + (x->in_len - x->in_left)));
    while (got < 0 && errno == EINTR);
    if (got <= 0) {
        x->io_errno = got < 0 ? errno : EIO; /* EIO: the file shrank while being sent */
        return CURL_READFUNC_ABORT;
    }
    x->in_left -= (uint64_t)got;
    return (size_t)got;
}

static size_t on_write(char *buf, size_t size, size_t n, void *cd)
{
    xfer *x = cd;
    size_t len = size * n;
    if (x->http < 200 || x->http >= 300) { /* an error's body: keep its start */
        size_t k = SL_MIN(len, sizeof x->ebody - 1 - x->elen);
        memcpy(x->ebody + x->elen, buf, k);
        x->elen += k;
        x->ebody[x->elen] = '\0';
        return len;
    }
    if (x->out_fd >= 0) {
        for (size_t off = 0; off < len;) {
            ssize_t w = write(x->out_fd, buf + off, len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) {
                x->io_errno = errno;
                return 0;
            }
            off += (size_t)w;
        }
        return len;
    }
    if (!x->keep) return len; /* a body nobody asked for (a PUT's, a DELETE's) */
    if (x->out.len + len > x->out_max) {
        x->too_big = 1;
        return 0;
    }
    sl_buf_put(&x->out, buf, len);
    return len;
}

static size_t on_header(char *buf, size_t size, size_t n, void *cd)
{
    xfer *x = cd;
    size_t len = size * n;
    if (len > 9 && !strncmp(buf, "HTTP/", 5)) { /* a status line: 100 Continue, then the answer */
        const char *sp = memchr(buf, ' ', len);
        x->http = sp ? strtol(sp + 1, NULL, 10) : 0;
        x->elen = 0;
        x->ebody[0] = '\0';
    } else if (len > 5 && !strncasecmp(buf, "etag:", 5)) {
        size_t i = 5, j = len;
        while (i < j && (buf[i] == ' ' || buf[i] == '\t')) i++;
        while (j > i && (buf[j - 1] == '\r' || buf[j - 1] == '\n' || buf[j - 1] == ' ')) j--;
        size_t k = SL_MIN(j - i, sizeof x->etag - 1);
        memcpy(x->etag, buf + i, k);
        x->etag[k] = '\0';
    }
    return len;
}

static CURL *handle(void)
{
    CURL *h = pthread_getspecific(handle_key);
    if (h) {
        curl_easy_reset(h); /* keeps the connections */
        return h;
    }
    h = curl_easy_init();
    if (h) pthread_setspecific(handle_key, h);
    return h;
}

/* One attempt of the request to url (an http(s) URL with its query). */
static void perform(const char *url, xfer *x)
{
    CURL *h = handle();
    x->http = 0;
    x->cc = CURLE_OK;
    x->io_errno = x->too_big = 0;
    x->elen = 0;
    x->ebody[0] = x->cerr[0] = x->etag[0] = '\0';
    sl_buf_reset(&x->out);
    x->in_left = x->in_len;
    if (!h) {
        x->cc = CURLE_OUT_OF_MEMORY;
        return;
    }
    struct curl_slist *hd = NULL;
    /* only headers that are sent: curl 7.88 signs every header it is given,
     * even "Expect:" (which only removes one), and no server could verify that */
    hd = curl_slist_append(hd, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->cerr);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, st.connect_ms);
    if (st.ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, st.ca_file);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, st.low_speed_bytes);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, st.low_speed_s);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
    if (st.access_key && *st.access_key) {
        curl_easy_setopt(h, CURLOPT_AWS_SIGV4, st.sigv4);
        curl_easy_setopt(h, CURLOPT_USERNAME, st.access_key);
        curl_easy_setopt(h, CURLOPT_PASSWORD, st.secret_key ? st.secret_key : "");
    }
    switch (x->method) {
    case GET:
        break;
    case HEAD:
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
        break;
    case PUT:
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(h, CURLOPT_READDATA, x);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->in_len);
        break;
    case POST:
        hd = curl_slist_append(hd, "Content-Type: application/xml");
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(h, CURLOPT_READDATA, x);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->in_len);
        break;
    case DELETE:
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
        break;
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    x->cc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    x->http = code;
    if (x->method == HEAD && x->cc == CURLE_OK) {
        curl_off_t cl = -1;
        curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
        x->length = cl > 0 ? (uint64_t)cl : 0;
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hd);
}

static int ok(const xfer *x)
{
    return x->cc == CURLE_OK && !x->io_errno && x->http >= 200 && x->http < 300;
}

static int absent(const xfer *x)
{
    return x->cc == CURLE_OK && x->http == 404;
}

static int transient(const xfer *x)
{
    if (x->io_errno || x->too_big) return 0;
    switch (x->cc) {
    case CURLE_OK:
        return x->http >= 500 || x->http == 408 || x->http == 429;
    case CURLE_COULDNT_RESOLVE_HOST: case CURLE_COULDNT_CONNECT: case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR: case CURLE_RECV_ERROR: case CURLE_GOT_NOTHING: case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
        return 1;
    default:
        return 0;
    }
}

static void backoff(int attempt)
{
    sl_sleep_ms((int64_t)100 << (2 * attempt)); /* 100, 400 ms */
}

/* The request with its retries. */
static void request(const char *url, xfer *x)
{
    for (int attempt = 0;; attempt++) {
        if (x->out_fd >= 0 && (ftruncate(x->out_fd, 0) != 0 || lseek(x->out_fd, 0, SEEK_SET) != 0)) {
            x->io_errno = errno;
            return;
        }
        perform(url, x);
        if (ok(x) || attempt + 1 >= ATTEMPTS || !transient(x)) return;
        backoff(attempt);
    }
}

/* The text of element <name> in xml (the first one at or after from):
 * [*b, *e); 0 when there is none. */
static int element(const char *xml, const char *end, const char *name, const char **b,
                   const char **e)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s>", name);
    snprintf(close, sizeof close, "</%s>", name);
    const char *s = memmem(xml, (size_t)(end - xml), open, strlen(open));
    if (!s) return 0;
    s += strlen(open);
    const char *t = memmem(s, (size_t)(end - s), close, strlen(close));
    if (!t) return 0;
    *b = s;
    *e = t;
    return 1;
}

/* XML character data [b, e) unescaped into out (the five entities and
 * numeric references to ASCII); -1 when malformed. */
static int unescape(const char *b, const char *e, char *out, size_t cap)
{
    size_t n = 0;
    while (b < e) {
        char ch = *b++;
        if (ch == '<') return -1;
        if (ch == '&') {
            const char *semi = memchr(b, ';', (size_t)(e - b));
            if (!semi) return -1;
            size_t k = (size_t)(semi - b);
            if (k == 3 && !strncmp(b, "amp", 3)) ch = '&';
            else if (k == 2 && !strncmp(b, "lt", 2)) ch = '<';
            else if (k == 2 && !strncmp(b, "gt", 2)) ch = '>';
            else if (k == 4 && !strncmp(b, "quot", 4)) ch = '"';
            else if (k == 4 && !strncmp(b, "apos", 4)) ch = '\'';
            else if (k >= 2 && b[0] == '#') {
                char *stop;
                long v = b[1] == 'x' ? strtol(b + 2, &stop, 16) : strtol(b + 1, &stop, 10);
                if (stop != semi || v <= 0 || v > 127) return -1;
                ch = (char)v;
            } else {
                return -1;
            }
            b = semi + 1;
        }
        if (n + 1 >= cap) return -1;
        out[n++] = ch;
    }
    out[n] = '\0';
    return 0;
}

static int fail(const xfer *x, const char *what, const char *url, char *err, size_t errlen)
{
    if (x->io_errno) return sl_seterr(err, errlen, "%s %s: %s", what, url, strerror(x->io_errno));
    if (x->cc != CURLE_OK)
        return sl_seterr(err, errlen, "%s %s at %s: %s", what, url, st.shown,
                         x->cerr[0] ? x->cerr : curl_easy_strerror(x->cc));
    char code[128] = "", msg[400] = "";
    const char *b, *e, *end = x->ebody + x->elen;
    if (element(x->ebody, end, "Code", &b, &e)) unescape(b, e, code, sizeof code);
    if (element(x->ebody, end, "Message", &b, &e)) unescape(b, e, msg, sizeof msg);
    return sl_seterr(err, errlen, "%s %s at %s: HTTP %ld%s%s%s%s", what, url, st.shown, x->http,
                     code[0] ? " " : "", code, msg[0] ? ": " : "", msg);
}

static int not_ready(char *err, size_t errlen)
{
    return sl_seterr(err, errlen, "the S3 client is not configured (sl_store_configure)");
}

/* ---- upload ----------------------------------------------------------------------- */

static void abort_upload(const char *base, const char *id)
{
    sl_buf u = SL_BUF_INIT;
    sl_buf_fmt(&u, "%s?uploadId=", base);
    encode(&u, id, 0);
    xfer x;
    xfer_init(&x, DELETE);
    request(u.p, &x);
    if (!ok(&x) && !absent(&x)) {
        char e[300];
        fail(&x, "aborting the multipart upload of", base, e, sizeof e);
        sl_warn("s3", "%s (its parts stay on the server until a lifecycle rule removes them)", e);
    }
    sl_buf_free(&x.out);
    sl_buf_free(&u);
}

/* The file fd (len bytes) as object base in parts of st.part_size. */
static int put_multipart(const char *url, const char *base, int fd, uint64_t len, char *err,
                         size_t errlen)
{
    uint64_t part = st.part_size;
    uint64_t nparts = (len + part - 1) / part;
    if (nparts > MAX_PARTS)
        return sl_seterr(err, errlen, "cannot upload %s: %llu bytes in parts of %llu bytes (s3.multipart"
                         ".part-size) are more than S3's %d parts", url, (unsigned long long)len,
                         (unsigned long long)part, MAX_PARTS);
    sl_buf u = SL_BUF_INIT, body = SL_BUF_INIT;
    char id[1024] = "";
    xfer x;
    xfer_init(&x, POST);
    x.keep = 1;
    x.out_max = XML_MAX;
    sl_buf_fmt(&u, "%s?uploads=", base);
    request(u.p, &x);
    int rc = SL_OK;
    const char *b, *e;
    if (!ok(&x)) {
        rc = fail(&x, "starting the multipart upload of", url, err, errlen);
    } else if (!x.out.p || !element(x.out.p, x.out.p + x.out.len, "UploadId", &b, &e) ||
               unescape(b, e, id, sizeof id) != 0 || !id[0]) {
        rc = sl_seterr(err, errlen, "starting the multipart upload of %s at %s: the answer has no "
                       "UploadId", url, st.shown);
    }
    sl_buf_free(&x.out);
    if (rc != SL_OK) goto out;
    sl_buf_str(&body, "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
    for (uint64_t i = 0; i < nparts && rc == SL_OK; i++) {
        sl_buf_reset(&u);
        sl_buf_fmt(&u, "%s?partNumber=%llu&uploadId=", base, (unsigned long long)(i + 1));
        encode(&u, id, 0);
        xfer_init(&x, PUT);
        x.in_fd = fd;
        x.in_off = i * part;
        x.in_len = SL_MIN(part, len - i * part);
        request(u.p, &x);
        if (!ok(&x)) {
            char what[64];
            snprintf(what, sizeof what, "uploading part %llu of", (unsigned long long)(i + 1));
            rc = fail(&x, what, url, err, errlen);
        } else if (!x.etag[0] || strpbrk(x.etag, "<>&")) {
            rc = sl_seterr(err, errlen, "uploading part %llu of %s at %s: the answer has no usable "
                           "ETag", (unsigned long long)(i + 1), url, st.shown);
        } else {
            sl_buf_fmt(&body, "<Part><PartNumber>%llu</PartNumber><ETag>%s</ETag></Part>",
                       (unsigned long long)(i + 1), x.etag);
        }
        sl_buf_free(&x.out);
    }
    if (rc == SL_OK) {
        sl_buf_str(&body, "</CompleteMultipartUpload>");
        sl_buf_reset(&u);
        sl_buf_fmt(&u, "%s?uploadId=", base);
        encode(&u, id, 0);
        xfer_init(&x, POST);
        x.in_mem = (const uint8_t *)body.p;
        x.in_len = body.len;
        x.keep = 1;
        x.out_max = XML_MAX;
        request(u.p, &x);
        /* a completion can fail after a 200: the answer is then an <Error>
         * rather than the new object's ETag */
        if (!ok(&x)) {
            rc = fail(&x, "completing the multipart upload of", url, err, errlen);
        } else if (!x.out.p || memmem(x.out.p, x.out.len, "<Error>", 7) ||
                   !memmem(x.out.p, x.out.len, "<ETag>", 6)) {
            x.elen = SL_MIN(x.out.len, sizeof x.ebody - 1);
            if (x.out.p) memcpy(x.ebody, x.out.p, x.elen);
            x.ebody[x.elen] = '\0';
            rc = fail(&x, "completing the multipart upload of", url, err, errlen);
        }
        sl_buf_free(&x.out);
    }
    if (rc != SL_OK) abort_upload(base, id);
out:
    sl_buf_free(&u);
    sl_buf_free(&body);
    return rc;
}

static int put(const char *url, int fd, const void *mem, uint64_t len, char *err, size_t errlen)
{
    if (!st.ready) return not_ready(err, errlen);
    s3url u;
    if (parse(url, &u, err, errlen) != SL_OK) return SL_ERR;
    sl_buf base = SL_BUF_INIT;
    http_url(&base, &u);
    int rc;
    if (fd >= 0 && len > st.part_size) {
        rc = put_multipart(url, base.p, fd, len, err, errlen);
    } else {
        xfer x;
        xfer_init(&x, PUT);
        x.in_fd = fd;
        x.in_mem = mem;
        x.in_len = len;
        request(base.p, &x);
        rc = ok(&x) ? SL_OK : fail(&x, "uploading", url, err, errlen);
        sl_buf_free(&x.out);
    }
    sl_buf_free(&base);
    return rc;
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

/* ---- download, size, delete ------------------------------------------------------- */

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
        sl_buf b = SL_BUF_INIT;
        http_url(&b, &u);
        xfer x;
        xfer_init(&x, GET);
        x.out_fd = fd;
        request(b.p, &x);
        if (!ok(&x)) rc = fail(&x, "downloading", url, err, errlen);
        sl_buf_free(&x.out);
        sl_buf_free(&b);
        if (close(fd) != 0 && rc == SL_OK) rc = sl_seterr(err, errlen, "closing %s: %s", tmp, strerror(errno));
        if (rc == SL_OK && rename(tmp, local) != 0)
            rc = sl_seterr(err, errlen, "renaming %s: %s", tmp, strerror(errno));
        if (rc != SL_OK) unlink(tmp);
    }
    free(tmp);
    return rc;
}

/* One request of method m to the object at url, into x; a GET keeps the
 * answer's body in x->out, up to max bytes. SL_ERR (err set) only when the store
 * is not set up or url is no s3:// object URL; otherwise x says how it went. */
static int object_request(const char *url, enum method m, size_t max, xfer *x, char *err,
                          size_t errlen)
{
    if (!st.ready) return not_ready(err, errlen);
    s3url u;
    if (parse(url, &u, err, errlen) != SL_OK) return SL_ERR;
    sl_buf b = SL_BUF_INIT;
    http_url(&b, &u);
    xfer_init(x, m);
    if (m == GET) {
        x->keep = 1;
        x->out_max = max;
    }
    request(b.p, x);
    sl_buf_free(&b);
    return SL_OK;
}

int sl_store_get_mem(const char *url, size_t max, void **data, size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    xfer x;
    if (object_request(url, GET, max, &x, err, errlen) != SL_OK) return SL_ERR;
    if (ok(&x)) {
        *len = x.out.len;
        *data = x.out.p ? sl_buf_take(&x.out) : sl_malloc(1);
        return SL_OK;
    }
    sl_buf_free(&x.out);
    if (x.too_big) return sl_seterr(err, errlen, "%s is larger than %zu bytes", url, max);
    int rc = fail(&x, "reading", url, err, errlen);
    return absent(&x) ? SL_DONE : rc;
}

int sl_store_size(const char *url, uint64_t *size, char *err, size_t errlen)
{
    xfer x;
    if (object_request(url, HEAD, 0, &x, err, errlen) != SL_OK) return SL_ERR;
    sl_buf_free(&x.out);
    if (ok(&x)) {
        if (size) *size = x.length;
        return SL_OK;
    }
    int rc = fail(&x, "looking up", url, err, errlen);
    return absent(&x) ? SL_DONE : rc;
}

int sl_store_delete(const char *url, char *err, size_t errlen)
{
    xfer x;
    if (object_request(url, DELETE, 0, &x, err, errlen) != SL_OK) return SL_ERR;
    sl_buf_free(&x.out);
    return ok(&x) || absent(&x) ? SL_OK : fail(&x, "deleting", url, err, errlen);
}

/* ---- listing ------------------------------------------------------------------------ */

static int malformed(const char *url, const char *why, char *err, size_t errlen)
{
    return sl_seterr(err, errlen, "listing %s at %s: malformed ListObjectsV2 answer (%s)", url,
                     st.shown, why);
}

int sl_store_list(const char *url, int (*fn)(void *ctx, const char *name, uint64_t size), void *ctx,
                  char *err, size_t errlen)
{
    if (!st.ready) return not_ready(err, errlen);
    s3url u;
    if (parse(url, &u, err, errlen) != SL_OK) return SL_ERR;
    char prefix[sizeof u.key + 1];
    snprintf(prefix, sizeof prefix, "%s%s", u.key, u.key[0] ? "/" : "");
    size_t plen = strlen(prefix);
    s3url bucket = u;
    bucket.key[0] = '\0';
    sl_buf base = SL_BUF_INIT, q = SL_BUF_INIT;
    http_url(&base, &bucket);
    char *token = NULL, key[sizeof u.key + 1024], num[32];
    int rc = SL_OK;
    for (;;) {
        /* the parameters in canonical order (SigV4 signs the query as written) */
        sl_buf_reset(&q);
        sl_buf_fmt(&q, "%s?", base.p);
        if (token) {
            sl_buf_str(&q, "continuation-token=");
            encode(&q, token, 0);
            sl_buf_putc(&q, '&');
        }
        sl_buf_str(&q, "list-type=2&prefix=");
        encode(&q, prefix, 0);
        xfer x;
        xfer_init(&x, GET);
        x.keep = 1;
        x.out_max = XML_MAX;
        request(q.p, &x);
        if (!ok(&x)) {
            rc = fail(&x, "listing", url, err, errlen);
            sl_buf_free(&x.out);
            break;
        }
        const char *p = x.out.p ? x.out.p : "", *end = p + x.out.len, *b, *e;
        if (!memmem(p, (size_t)(end - p), "<ListBucketResult", 17)) {
            rc = malformed(url, "no ListBucketResult", err, errlen);
        } else if (!element(p, end, "IsTruncated", &b, &e) ||
                   ((e - b != 4 || strncmp(b, "true", 4)) && (e - b != 5 || strncmp(b, "false", 5)))) {
            rc = malformed(url, "no IsTruncated true or false", err, errlen);
        }
        int truncated = rc == SL_OK && *b == 't';
        /* each <Contents>: its <Key> and <Size> */
        const char *c = p, *cb, *ce;
        while (rc == SL_OK && element(c, end, "Contents", &cb, &ce)) {
            c = ce + strlen("</Contents>");
            char *stop;
            if (!element(cb, ce, "Key", &b, &e) || unescape(b, e, key, sizeof key) != 0)
                rc = malformed(url, "a Contents without a readable Key", err, errlen);
            else if (!element(cb, ce, "Size", &b, &e) || e - b < 1 || e - b >= (long)sizeof num)
                rc = malformed(url, "a Contents without a Size", err, errlen);
            if (rc != SL_OK) break;
            memcpy(num, b, (size_t)(e - b));
            num[e - b] = '\0';
            errno = 0;
            unsigned long long size = strtoull(num, &stop, 10);
            if (*stop || errno || num[0] == '-') {
                rc = malformed(url, "a Size that is not a number", err, errlen);
                break;
            }
            if (strncmp(key, prefix, plen) != 0) continue;
            if (fn(ctx, key + plen, (uint64_t)size) != SL_OK) rc = SL_ERR;
        }
        char next[2048] = "";
        if (rc == SL_OK && truncated &&
            (!element(p, end, "NextContinuationToken", &b, &e) ||
             unescape(b, e, next, sizeof next) != 0 || !next[0]))
            rc = malformed(url, "truncated without a NextContinuationToken", err, errlen);
        sl_buf_free(&x.out);
        if (rc != SL_OK || !truncated) break;
        if (token && !strcmp(token, next)) {
            rc = malformed(url, "the same continuation token twice", err, errlen);
            break;
        }
        free(token);
        token = sl_strdup(next);
    }
    free(token);
    sl_buf_free(&q);
    sl_buf_free(&base);
    return rc;
}
