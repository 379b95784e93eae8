/*
 * format_avro.c -- the avro and avro-confluent record formats (see
 * format_avro.h for the schema mapping and the wire format).
 *
 * The schema is built as JSON text with jansson -- libavro 1.11's schema
 * constructors know no logical types, and the text is also what the
 * registry stores -- and then parsed by libavro, which ignores the
 * logicalType attributes: the table's types say how an int or a long is
 * meant. Records go through libavro's generic value: avro_value_read from a
 * memory reader, avro_value_write into the caller's buffer (sized first by
 * avro_value_sizeof). The generic value keeps its storage from record to
 * record (arrays are cleared, not freed); by libavro's own design its binary
 * reader allocates each string and bytes value it reads and its generic map
 * copies each key it stores: the allocations per record this format makes.
 *
 * Nested values (ARRAY, MAP, MULTISET, ROW) are written into the caller's
 * scratch buffer in the row's canonical form (row.h) by offsets, so the
 * buffer may grow while one is built; the columns' pointers into it are set
 * once the record is complete.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <avro.h>
#include <curl/curl.h>
#include <event2/http.h>
#include <jansson.h>

#include "format_avro.h"
#include "bytes.h"
#include "decimal.h"

#define AV_MAX_DEPTH 32
#define AV_MAX_IDS 16 /* writer schemas a source subtask keeps (by registry id) */
#define AV_HTTP_MAX ((size_t)16 << 20) /* the largest registry answer read */

struct sl_avro_fmt {
    char *json;           /* the derived schema, JSON text */
    avro_schema_t schema; /* libavro's parse of it */
    bool confluent;
    char *url;            /* registry base URL, no trailing '/' */
    char *subject;        /* the sink's subject (NULL: none known) */
    char *user_info;      /* basic-auth "user:password", or NULL */
    char *bearer;         /* bearer-auth token, or NULL */
    char *ca_file;        /* ssl.truststore.location (PEM), or NULL: the system's CAs */
    char *cert_file;      /* ssl.keystore.location (PEM: certificate and key), or NULL */
    char *key_password;   /* ssl.keystore.password, or NULL */
};

typedef struct av_writer_schema {
    int32_t id;
    avro_schema_t schema;
    avro_value_iface_t *resolver; /* NULL when the writer schema is the table's */
    avro_value_t rvalue;          /* the resolver's value, writing into a->value */
} av_writer_schema;

struct sl_avro {
    const kf_codec *c;
    const sl_avro_fmt *f;
    avro_value_iface_t *iface;
    avro_value_t value;     /* the record, in the table's schema */
    avro_reader_t reader;
    avro_writer_t writer;
    sl_buf tmp;             /* a NUL-terminated copy of a string or a MAP key */
    int32_t sink_id;        /* the id the sink's schema was registered under; -1 not yet */
    av_writer_schema ids[AV_MAX_IDS];
    int nids, next_evict;
};

/* ---- the schema ------------------------------------------------------------ */

static bool av_name_ok(const char *s)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return false;
    return true;
}

static json_t *av_logical(const char *base, const char *logical)
{
    return json_pack("{s:s, s:s}", "type", base, "logicalType", logical);
}

/* The Avro type of dt (a union with null when dt is nullable); NULL with
 * why when Avro cannot carry it. recname names a ROW's record. */
static json_t *av_type(const sl_dtype *dt, const char *recname, int depth, char *why,
                       size_t whylen)
{
    json_t *t = NULL;
    if (depth > AV_MAX_DEPTH) {
        sl_seterr(why, whylen, "nested deeper than %d", AV_MAX_DEPTH);
        return NULL;
    }
    switch (dt->kind) {
    case SL_T_BOOLEAN: t = json_string("boolean"); break;
    case SL_T_TINYINT: case SL_T_SMALLINT: case SL_T_INT: t = json_string("int"); break;
    case SL_T_BIGINT: t = json_string("long"); break;
    case SL_T_FLOAT: t = json_string("float"); break;
    case SL_T_DOUBLE: t = json_string("double"); break;
    case SL_T_STRING: t = json_string("string"); break;
    case SL_T_BYTES: t = json_string("bytes"); break;
    case SL_T_DECIMAL:
        t = json_pack("{s:s, s:s, s:i, s:i}", "type", "bytes", "logicalType", "decimal",
                      "precision", (int)dt->p, "scale", (int)dt->s);
        break;
    case SL_T_DATE: t = av_logical("int", "date"); break;
    case SL_T_TIME:
        t = dt->p <= 3 ? av_logical("int", "time-millis") : av_logical("long", "time-micros");
        break;
    case SL_T_TIMESTAMP:
        if (dt->p > 6) {
            sl_seterr(why, whylen, "%s: Avro timestamps stop at microseconds (TIMESTAMP(6))",
                      dt->text);
            return NULL;
        }
        t = dt->p <= 3 ? av_logical("long", "timestamp-millis")
                       : av_logical("long", "timestamp-micros");
        break;
    case SL_T_ARRAY: {
        json_t *e = av_type(dt->elem, recname, depth + 1, why, whylen);
        if (!e) return NULL;
        t = json_pack("{s:s, s:o}", "type", "array", "items", e);
        break;
    }
    case SL_T_MAP:
    case SL_T_MULTISET: {
        if (dt->elem->kind != SL_T_STRING) {
            sl_seterr(why, whylen, "%s: Avro map keys are strings (MAP<STRING, ...>, "
                      "MULTISET<STRING>)", dt->text);
            return NULL;
        }
        json_t *e = dt->kind == SL_T_MAP ? av_type(dt->val, recname, depth + 1, why, whylen)
                                         : json_string("int");
        if (!e) return NULL;
        t = json_pack("{s:s, s:o}", "type", "map", "values", e);
        break;
    }
    case SL_T_ROW: {
        json_t *fields = json_array();
        for (int i = 0; i < dt->nfields; i++) {
            if (!av_name_ok(dt->names[i])) {
                sl_seterr(why, whylen, "field '%s' of %s is not an Avro name ([A-Za-z_][A-Za-z0-9_]*)",
                          dt->names[i], dt->text);
                json_decref(fields);
                return NULL;
            }
            char sub[512];
            snprintf(sub, sizeof sub, "%s_%s", recname, dt->names[i]);
            json_t *ft = av_type(dt->ftypes[i], sub, depth + 1, why, whylen);
            if (!ft) {
                json_decref(fields);
                return NULL;
            }
            json_t *fo = json_pack("{s:s, s:o}", "name", dt->names[i], "type", ft);
            if (!dt->ftypes[i]->notnull) json_object_set_new(fo, "default", json_null());
            json_array_append_new(fields, fo);
        }
        t = json_pack("{s:s, s:s, s:o}", "type", "record", "name", recname, "fields", fields);
        break;
    }
    default:
        sl_seterr(why, whylen, "Avro cannot carry %s values", dt->text);
        return NULL;
    }
    if (dt->notnull) return t;
    return json_pack("[s, o]", "null", t);
}

static int av_fmt_derive(kf_codec *c, const char *vid, char *err, size_t errlen)
{
    char why[300];
    json_t *fields = json_array();
    for (int i = 0; i < c->n; i++) {
        if (!av_name_ok(c->name[i])) {
            json_decref(fields);
            return sl_seterr(err, errlen, "vertex '%s': column '%s' is not an Avro name "
                             "([A-Za-z_][A-Za-z0-9_]*)", vid, c->name[i]);
        }
        char sub[512];
        snprintf(sub, sizeof sub, "record_%s", c->name[i]);
        json_t *ft = av_type(c->dt[i], sub, 0, why, sizeof why);
        if (!ft) {
            json_decref(fields);
            return sl_seterr(err, errlen, "vertex '%s': column '%s': %s", vid, c->name[i], why);
        }
        json_t *fo = json_pack("{s:s, s:o}", "name", c->name[i], "type", ft);
        if (!c->dt[i]->notnull) json_object_set_new(fo, "default", json_null());
        json_array_append_new(fields, fo);
    }
    json_t *rec = json_pack("{s:s, s:s, s:s, s:o}", "type", "record", "name", "record",
                            "namespace", "org.apache.flink.avro.generated", "fields", fields);
    sl_avro_fmt *f = sl_calloc(1, sizeof *f);
    f->json = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(rec);
    if (!f->json || avro_schema_from_json_length(f->json, strlen(f->json), &f->schema)) {
        sl_seterr(err, errlen, "vertex '%s': libavro refused the derived schema: %s", vid,
                  avro_strerror());
        sl_avro_fmt_free(f);
        return SL_ERR;
    }
    c->avro = f;
    return SL_OK;
}

void sl_avro_fmt_free(sl_avro_fmt *f)
{
    if (!f) return;
    if (f->schema) avro_schema_decref(f->schema);
    free(f->json);
    free(f->url);
    free(f->subject);
    free(f->user_info);
    free(f->bearer);
    free(f->ca_file);
    free(f->cert_file);
    free(f->key_password);
    free(f);
}

const char *sl_avro_fmt_schema(const sl_avro_fmt *f) { return f->json; }

/* Option avro-confluent.<name> for the key or the value format: the
 * prefixed key ("value.avro-confluent.url"), and for the value also the
 * unprefixed one. */
static const char *av_opt(const sl_vertex *v, bool key, const char *name)
{
    char k[128], bare[128];
    snprintf(k, sizeof k, "%savro-confluent.%s", key ? "key." : "value.", name);
    snprintf(bare, sizeof bare, "avro-confluent.%s", name);
    return sl_vconf_str(v, k, key ? NULL : sl_vconf_str(v, bare, NULL));
}

/* The registry's authentication and TLS options, as Flink's avro-confluent
 * format names them; the files are PEM (Flink's are Java key stores). */
static int av_registry_auth(sl_avro_fmt *f, const sl_vertex *v, bool key, bool https, char *err,
                            size_t errlen)
{
    const char *pre = key ? "key." : "value.";
    const char *src = av_opt(v, key, "basic-auth.credentials-source");
    const char *ui = av_opt(v, key, "basic-auth.user-info");
    if (src && *src && strcasecmp(src, "USER_INFO") && strcasecmp(src, "URL"))
        return sl_seterr(err, errlen, "vertex '%s': option '%savro-confluent.basic-auth."
                         "credentials-source': '%s' is not supported (USER_INFO: the user and "
                         "password in basic-auth.user-info; URL: in the registry URL)", v->id,
                         pre, src);
    if (ui && *ui) {
        if (!strchr(ui, ':'))
            return sl_seterr(err, errlen, "vertex '%s': option '%savro-confluent.basic-auth."
                             "user-info' must be 'user:password'", v->id, pre);
        if (src && !strcasecmp(src, "URL"))
            return sl_seterr(err, errlen, "vertex '%s': basic-auth.user-info is given but "
                             "basic-auth.credentials-source is URL", v->id);
        f->user_info = sl_strdup(ui);
    } else if (src && !strcasecmp(src, "USER_INFO")) {
        return sl_seterr(err, errlen, "vertex '%s': basic-auth.credentials-source USER_INFO needs "
                         "'%savro-confluent.basic-auth.user-info' ('user:password')", v->id, pre);
    }
    const char *bsrc = av_opt(v, key, "bearer-auth.credentials-source");
    const char *tok = av_opt(v, key, "bearer-auth.token");
    if (bsrc && *bsrc && strcasecmp(bsrc, "STATIC_TOKEN"))
        return sl_seterr(err, errlen, "vertex '%s': option '%savro-confluent.bearer-auth."
                         "credentials-source': '%s' is not supported (STATIC_TOKEN: the token in "
                         "bearer-auth.token)", v->id, pre, bsrc);
    if (tok && *tok) {
        if (f->user_info)
            return sl_seterr(err, errlen, "vertex '%s': the registry takes basic or bearer "
                             "authentication, not both", v->id);
        f->bearer = sl_strdup(tok);
    }
    const char *ts = av_opt(v, key, "ssl.truststore.location");
    const char *ks = av_opt(v, key, "ssl.keystore.location");
    const char *kp = av_opt(v, key, "ssl.keystore.password");
    if (((ts && *ts) || (ks && *ks)) && !https)
        return sl_seterr(err, errlen, "vertex '%s': the registry's ssl.* options need an https:// "
                         "avro-confluent.url", v->id);
    if (ts && *ts) f->ca_file = sl_strdup(ts);
    if (ks && *ks) f->cert_file = sl_strdup(ks);
    if (kp && *kp) f->key_password = sl_strdup(kp);
    return SL_OK;
}

static int av_fmt_registry(kf_codec *c, const sl_vertex *v, bool key, const char *topic,
                           char *err, size_t errlen)
{
    sl_avro_fmt *f = c->avro;
    const char *pre = key ? "key." : "value.";
    char k1[64];
    snprintf(k1, sizeof k1, "%savro-confluent.url", pre);
    const char *url = av_opt(v, key, "url");
    if (!url || !*url)
        return sl_seterr(err, errlen, "vertex '%s': the avro-confluent %s format needs '%s' (the "
                         "schema registry, http://host:port or https://host:port)", v->id,
                         key ? "key" : "value", key ? k1 : "avro-confluent.url");
    bool https = !strncmp(url, "https://", 8);
    if (strncmp(url, "http://", 7) != 0 && !https)
        return sl_seterr(err, errlen, "vertex '%s': option '%s': '%s' is not an http:// or "
                         "https:// URL", v->id, k1, url);
    struct evhttp_uri *u = evhttp_uri_parse(url);
    bool ok = u && evhttp_uri_get_host(u);
    if (u) evhttp_uri_free(u);
    if (!ok)
        return sl_seterr(err, errlen, "vertex '%s': option '%s': '%s' is not a URL", v->id, k1,
                         url);
    f->confluent = true;
    f->url = sl_strdup(url);
    size_t ul = strlen(f->url);
    while (ul > 8 && f->url[ul - 1] == '/') f->url[--ul] = '\0';
    if (av_registry_auth(f, v, key, https, err, errlen) != SL_OK) return SL_ERR;
    const char *subj = av_opt(v, key, "subject");
    if (subj && *subj) {
        f->subject = sl_strdup(subj);
    } else if (topic) {
        char s[512];
        snprintf(s, sizeof s, "%s-%s", topic, key ? "key" : "value");
        f->subject = sl_strdup(s);
    }
    return SL_OK;
}

int sl_avro_fmt_plan(kf_codec *c, const sl_vertex *v, bool key, const char *topic, char *err,
                     size_t errlen)
{
    const char *nn = sl_vconf_str(v, "not-null-fields", "");
    while (*nn) {
        const char *e = strchr(nn, ';');
        size_t len = e ? (size_t)(e - nn) : strlen(nn);
        for (int i = 0; i < c->n; i++)
            if (strlen(c->name[i]) == len && !strncasecmp(c->name[i], nn, len))
                c->dt[i] = sl_dtype_nullable(c->dt[i], true);
        nn += len + (e != NULL);
    }
    if (av_fmt_derive(c, v->id, err, errlen)) return SL_ERR;
    if (c->fmt == KF_AVRO_CONFLUENT) return av_fmt_registry(c, v, key, topic, err, errlen);
    return SL_OK;
}

/* ---- the registry ---------------------------------------------------------- */

static size_t av_http_body(char *p, size_t size, size_t n, void *arg)
{
    sl_buf *b = arg;
    if (b->len + size * n > AV_HTTP_MAX) return 0; /* an answer no registry gives: abandoned */
    sl_buf_put(b, p, size * n);
    return size * n;
}

/* One request to the registry (path after the base URL) through libcurl,
 * with the format's authentication and TLS settings; the answer's JSON
 * parsed into *out (caller decrefs). SL_ERR with why naming the URL. */
static int av_http(const sl_avro_fmt *f, bool post, const char *path, const char *body,
                   json_t **out, char *why, size_t whylen)
{
    *out = NULL;
    char full[2048], cerr[CURL_ERROR_SIZE] = "";
    snprintf(full, sizeof full, "%s%s", f->url, path);
    CURL *h = curl_easy_init();
    if (!h) return sl_seterr(why, whylen, "schema registry %s: cannot make a request", full);
    sl_buf resp = {0};
    struct curl_slist *hd = curl_slist_append(NULL, "Accept: application/vnd.schemaregistry.v1+json");
    curl_easy_setopt(h, CURLOPT_URL, full);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, av_http_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
    if (f->user_info) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
        curl_easy_setopt(h, CURLOPT_USERPWD, f->user_info);
    } else if (f->bearer) {
        curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
        curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, f->bearer);
    }
    if (f->ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, f->ca_file);
    if (f->cert_file) {
        curl_easy_setopt(h, CURLOPT_SSLCERT, f->cert_file);
        curl_easy_setopt(h, CURLOPT_SSLKEY, f->cert_file);
        if (f->key_password) curl_easy_setopt(h, CURLOPT_KEYPASSWD, f->key_password);
    }
    if (post) {
        hd = curl_slist_append(hd, "Content-Type: application/vnd.schemaregistry.v1+json");
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    CURLcode cc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    sl_buf_putc(&resp, '\0');
    resp.len--;
    int rc = SL_OK;
    if (cc != CURLE_OK) {
        rc = sl_seterr(why, whylen, "schema registry %s %s: %s", post ? "POST" : "GET", full,
                       cerr[0] ? cerr : curl_easy_strerror(cc));
    } else if (status != 200) {
        rc = sl_seterr(why, whylen, "schema registry %s %s: HTTP %ld: %.200s", post ? "POST" : "GET",
                       full, status, resp.p);
    } else {
        json_error_t je;
        *out = json_loadb(resp.p, resp.len, 0, &je);
        if (!*out) rc = sl_seterr(why, whylen, "schema registry %s: the answer is not JSON: %s", full,
                                  je.text);
    }
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    sl_buf_free(&resp);
    return rc;
}

/* Percent-encode a path segment (a subject). */
static void av_path_seg(char *dst, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s && o + 4 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~') dst[o++] = (char)ch;
        else o += (size_t)snprintf(dst + o, cap - o, "%%%02X", ch);
    }
    dst[o] = '\0';
}

/* The sink's schema id: registered under the subject on first use. */
static int av_sink_id(sl_avro *a, char *why, size_t whylen)
{
    if (a->sink_id >= 0) return SL_OK;
    if (!a->f->subject)
        return sl_seterr(why, whylen, "avro-confluent needs 'avro-confluent.subject' (no topic "
                         "to name it after)");
    char seg[1024], path[1200];
    av_path_seg(seg, sizeof seg, a->f->subject);
    snprintf(path, sizeof path, "/subjects/%s/versions", seg);
    json_t *req = json_pack("{s:s}", "schema", a->f->json);
    char *body = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    json_t *ans;
    int rc = av_http(a->f, true, path, body, &ans, why, whylen);
    free(body);
    if (rc) return SL_ERR;
    json_t *id = json_object_get(ans, "id");
    if (!json_is_integer(id) || json_integer_value(id) < 0 || json_integer_value(id) > INT32_MAX)
        rc = sl_seterr(why, whylen, "schema registry: registering subject '%s' answered no "
                       "schema id", a->f->subject);
    else a->sink_id = (int32_t)json_integer_value(id);
    json_decref(ans);
    return rc;
}

/* The writer schema of registry id `id` (fetched on first use). */
static int av_writer(sl_avro *a, int32_t id, av_writer_schema **out, char *why, size_t whylen)
{
    for (int i = 0; i < a->nids; i++)
        if (a->ids[i].id == id) {
            *out = &a->ids[i];
            return SL_OK;
        }
    char path[64];
    snprintf(path, sizeof path, "/schemas/ids/%d", (int)id);
    json_t *ans;
    if (av_http(a->f, false, path, NULL, &ans, why, whylen)) return SL_ERR;
    json_t *js = json_object_get(ans, "schema");
    avro_schema_t ws = NULL;
    int rc = SL_OK;
    json_t *wj = json_is_string(js) ? json_loadb(json_string_value(js), json_string_length(js),
                                                 0, NULL) : NULL;
    char *text = NULL;
    if (json_is_object(wj) && json_is_string(json_object_get(wj, "name"))) {
        /* libavro resolves a record only into one of the same name; the
         * table's record is Flink's `record`, whatever the writer named its
         * own (nested records' names must still match) */
        json_object_set_new(wj, "name", json_string("record"));
        json_object_set_new(wj, "namespace", json_string("org.apache.flink.avro.generated"));
        text = json_dumps(wj, JSON_COMPACT);
    }
    if (!json_is_string(js))
        rc = sl_seterr(why, whylen, "schema registry: schema id %d: the answer has no 'schema'",
                       (int)id);
    else if (text ? avro_schema_from_json_length(text, strlen(text), &ws)
                  : avro_schema_from_json_length(json_string_value(js), json_string_length(js), &ws))
        rc = sl_seterr(why, whylen, "schema registry: schema id %d is not an Avro schema: %s",
                       (int)id, avro_strerror());
    free(text);
    json_decref(wj);
    json_decref(ans);
    if (rc) return SL_ERR;
    avro_value_iface_t *res = NULL;
    if (!avro_schema_equal(ws, a->f->schema)) {
        res = avro_resolved_writer_new(ws, a->f->schema);
        if (!res) {
            sl_seterr(why, whylen, "schema id %d cannot be read as the table's schema: %s",
                      (int)id, avro_strerror());
            avro_schema_decref(ws);
            return SL_ERR;
        }
    }
    int slot = a->nids < AV_MAX_IDS ? a->nids++ : a->next_evict++ % AV_MAX_IDS;
    av_writer_schema *w = &a->ids[slot];
    if (w->schema) { /* evict the oldest */
        if (w->resolver) {
            avro_value_decref(&w->rvalue);
            avro_value_iface_decref(w->resolver);
        }
        avro_schema_decref(w->schema);
    }
    memset(w, 0, sizeof *w);
    w->id = id;
    w->schema = ws;
    w->resolver = res;
    if (res) {
        avro_resolved_writer_new_value(res, &w->rvalue);
        avro_resolved_writer_set_dest(&w->rvalue, &a->value);
    }
    *out = w;
    return SL_OK;
}

/* ---- per subtask ----------------------------------------------------------- */

sl_avro *sl_avro_new(const kf_codec *c)
{
    sl_avro *a = sl_calloc(1, sizeof *a);
    a->c = c;
    a->f = c->avro;
    a->iface = avro_generic_class_from_schema(a->f->schema);
    SL_ASSERT(a->iface != NULL); /* the schema parsed at planning */
    avro_generic_value_new(a->iface, &a->value);
    a->reader = avro_reader_memory("", 0);
    a->writer = avro_writer_memory("", 0);
    a->sink_id = -1;
    return a;
}

void sl_avro_destroy(sl_avro *a)
{
    if (!a) return;
    for (int i = 0; i < a->nids; i++) {
        if (a->ids[i].resolver) {
            avro_value_decref(&a->ids[i].rvalue);
            avro_value_iface_decref(a->ids[i].resolver);
        }
        avro_schema_decref(a->ids[i].schema);
    }
    avro_value_decref(&a->value);
    avro_value_iface_decref(a->iface);
    avro_reader_free(a->reader);
    avro_writer_free(a->writer);
    sl_buf_free(&a->tmp);
    free(a);
}

/* ---- decoding -------------------------------------------------------------- */

/* A varint (zig-zag) at *p below e; false when it runs past e or past 10 bytes. */
static bool av_varint(const uint8_t **p, const uint8_t *e, int64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= e) return false;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return true;
        }
    }
    return false;
}

/* Walk a record of schema s over p[0..e) without building it: every length
 * inside the bytes, every union branch and enum symbol in range. libavro's
 * reader allocates a string's length before it checks it against the bytes
 * (a damaged length is a huge allocation), so its input is checked here
 * first. SL_ERR with why. */
static int av_check(avro_schema_t s, const uint8_t **p, const uint8_t *e, int depth, char *why,
                    size_t whylen)
{
    int64_t n;
    if (depth > AV_MAX_DEPTH * 2) return sl_seterr(why, whylen, "nested deeper than %d",
                                                   AV_MAX_DEPTH * 2);
    switch (avro_typeof(s)) {
    case AVRO_NULL: return SL_OK;
    case AVRO_BOOLEAN:
        if (*p >= e) goto past;
        if (**p > 1) return sl_seterr(why, whylen, "a boolean byte %u", **p);
        (*p)++;
        return SL_OK;
    case AVRO_INT32: case AVRO_INT64:
        return av_varint(p, e, &n) ? SL_OK : sl_seterr(why, whylen, "a varint past the end");
    case AVRO_FLOAT: n = 4; goto fixed_n;
    case AVRO_DOUBLE: n = 8; goto fixed_n;
    case AVRO_FIXED: n = avro_schema_fixed_size(s); goto fixed_n;
    case AVRO_STRING: case AVRO_BYTES:
        if (!av_varint(p, e, &n)) goto past;
        if (n < 0) return sl_seterr(why, whylen, "a negative length %lld", (long long)n);
        goto fixed_n;
    case AVRO_ENUM:
        if (!av_varint(p, e, &n)) goto past;
        if (n < 0 || n >= avro_schema_enum_number_of_symbols(s))
            return sl_seterr(why, whylen, "enum symbol %lld out of range", (long long)n);
        return SL_OK;
    case AVRO_RECORD:
        for (size_t i = 0; i < avro_schema_record_size(s); i++)
            if (av_check(avro_schema_record_field_get_by_index(s, (int)i), p, e, depth + 1, why,
                         whylen))
                return SL_ERR;
        return SL_OK;
    case AVRO_UNION:
        if (!av_varint(p, e, &n)) goto past;
        if (n < 0 || (size_t)n >= avro_schema_union_size(s))
            return sl_seterr(why, whylen, "union branch %lld out of range", (long long)n);
        return av_check(avro_schema_union_branch(s, (int)n), p, e, depth + 1, why, whylen);
    case AVRO_ARRAY: case AVRO_MAP: {
        avro_schema_t item = avro_typeof(s) == AVRO_ARRAY ? avro_schema_array_items(s)
                                                          : avro_schema_map_values(s);
        for (;;) {
            int64_t count, size;
            if (!av_varint(p, e, &count)) goto past;
            if (count == 0) return SL_OK;
            if (count < 0) {
                if (count == INT64_MIN || !av_varint(p, e, &size) || size < 0) goto past;
                count = -count;
            }
            if (count > e - *p) /* every item takes a byte at least (a null none: bounded too) */
                if (avro_typeof(item) != AVRO_NULL || count > (int64_t)1 << 24) goto past;
            for (int64_t k = 0; k < count; k++) {
                if (avro_typeof(s) == AVRO_MAP) {
                    int64_t kl;
                    if (!av_varint(p, e, &kl) || kl < 0 || kl > e - *p) goto past;
                    *p += kl;
                }
                if (av_check(item, p, e, depth + 1, why, whylen)) return SL_ERR;
            }
        }
    }
    case AVRO_LINK:
        return av_check(avro_schema_link_target(s), p, e, depth + 1, why, whylen);
    }
    return sl_seterr(why, whylen, "an Avro type this reader does not know");
fixed_n:
    if (n > e - *p) goto past;
    *p += n;
    return SL_OK;
past:
    return sl_seterr(why, whylen, "a length or varint past the end of the record");
}

/* The non-null branch of a nullable type's union; *isnull when it is null. */
static int av_unwrap(const sl_dtype *dt, avro_value_t *v, avro_value_t *out, bool *isnull,
                     char *why, size_t whylen)
{
    *isnull = false;
    if (dt->notnull) {
        *out = *v;
        return SL_OK;
    }
    int d = -1;
    if (avro_value_get_discriminant(v, &d)) return sl_seterr(why, whylen, "not a union");
    if (d < 0) {
        /* libavro's schema resolution leaves a union whose array or map
         * came with no element without a branch: that is an empty one */
        if (dt->kind == SL_T_ARRAY || dt->kind == SL_T_MAP || dt->kind == SL_T_MULTISET)
            return avro_value_set_branch(v, 1, out) ? sl_seterr(why, whylen, "%s",
                                                                avro_strerror())
                                                    : SL_OK;
        return sl_seterr(why, whylen, "a union without a branch");
    }
    if (avro_value_get_current_branch(v, out))
        return sl_seterr(why, whylen, "a union without a branch");
    *isnull = d == 0;
    return SL_OK;
}

static int av_datum(const sl_dtype *dt, avro_value_t *v, sl_buf *str, int depth, char *why,
                    size_t whylen);

/* A scalar (every kind but the nested ones) into *out; strings borrowed
 * from libavro's value. */
static int av_scalar(const sl_dtype *dt, avro_value_t *v, sl_value *out, char *why, size_t whylen)
{
    int32_t i32;
    int64_t i64;
    const void *bp;
    size_t bn;
    out->isnull = false;
    switch (dt->kind) {
    case SL_T_BOOLEAN: {
        int b;
        if (avro_value_get_boolean(v, &b)) goto bad;
        out->v.i = b != 0;
        return SL_OK;
    }
    case SL_T_TINYINT: case SL_T_SMALLINT: case SL_T_INT: case SL_T_DATE:
        if (avro_value_get_int(v, &i32)) goto bad;
        if ((dt->kind == SL_T_TINYINT && (i32 < -128 || i32 > 127)) ||
            (dt->kind == SL_T_SMALLINT && (i32 < -32768 || i32 > 32767)))
            return sl_seterr(why, whylen, "%d is out of the range of %s", (int)i32, dt->text);
        out->v.i = i32;
        return SL_OK;
    case SL_T_BIGINT:
        if (avro_value_get_long(v, &i64)) goto bad;
        out->v.i = i64;
        return SL_OK;
    case SL_T_FLOAT: {
        float x;
        if (avro_value_get_float(v, &x)) goto bad;
        out->v.d = x;
        return SL_OK;
    }
    case SL_T_DOUBLE:
        if (avro_value_get_double(v, &out->v.d)) goto bad;
        return SL_OK;
    case SL_T_STRING: {
        const char *s;
        if (avro_value_get_string(v, &s, &bn)) goto bad;
        out->v.s.p = s;
        out->v.s.len = (uint32_t)(bn ? bn - 1 : 0); /* libavro counts the NUL */
        return SL_OK;
    }
    case SL_T_BYTES:
        if (avro_value_get_bytes(v, &bp, &bn)) goto bad;
        out->v.s.p = bp;
        out->v.s.len = (uint32_t)bn;
        return SL_OK;
    case SL_T_DECIMAL: {
        if (avro_value_get_bytes(v, &bp, &bn)) goto bad;
        const uint8_t *b = bp;
        if (bn > 16) return sl_seterr(why, whylen, "a decimal of %zu bytes for %s", bn, dt->text);
        __int128 x = bn && (b[0] & 0x80) ? -1 : 0;
        for (size_t k = 0; k < bn; k++) x = (__int128)(((unsigned __int128)x << 8) | b[k]);
        sl_dec d = sl_dec_from_i128(x);
        if (!sl_dec_fits(d, dt->p))
            return sl_seterr(why, whylen, "a decimal with more than %d digits for %s", (int)dt->p,
                             dt->text);
        out->v.dec.lo = d.lo;
        out->v.dec.hi = d.hi;
        return SL_OK;
    }
    case SL_T_TIME:
        if (dt->p <= 3) {
            if (avro_value_get_int(v, &i32)) goto bad;
            i64 = (int64_t)i32 * 1000;
        } else if (avro_value_get_long(v, &i64)) {
            goto bad;
        }
        if (i64 < 0 || i64 >= 86400000000LL)
            return sl_seterr(why, whylen, "%s %lld is not a time of day", dt->text,
                             (long long)i64);
        /* fall through: as microseconds */
        out->v.ts.ms = i64 / 1000;
        out->v.ts.nano = (int32_t)(i64 % 1000) * 1000;
        if (dt->p <= 3) out->v.ts.nano = 0;
        return SL_OK;
    case SL_T_TIMESTAMP:
        if (avro_value_get_long(v, &i64)) goto bad;
        if (dt->p <= 3) {
            out->v.i = i64;
        } else {
            int64_t ms = i64 / 1000, us = i64 % 1000;
            if (us < 0) us += 1000, ms--;
            out->v.ts.ms = ms;
            out->v.ts.nano = (int32_t)us * 1000;
        }
        return SL_OK;
    default:
        return sl_seterr(why, whylen, "cannot read %s", dt->text);
    }
bad:
    return sl_seterr(why, whylen, "%s: %s", dt->text, avro_strerror());
}

static int av_put(sl_buf *str, const void *p, size_t n)
{
    sl_buf_put(str, p, n);
    return SL_OK;
}

/* The bitmap + values of n elements of type et (read by get(i)) appended
 * to str. */
static int av_seq(const sl_dtype *et, avro_value_t *container, size_t n, int which, sl_buf *str,
                  int depth, char *why, size_t whylen)
{
    size_t bm = str->len, nb = (n + 7) / 8;
    for (size_t k = 0; k < nb; k++) sl_buf_putc(str, 0);
    for (size_t i = 0; i < n; i++) {
        avro_value_t e, inner;
        const char *key = NULL;
        if (avro_value_get_by_index(container, i, &e, &key))
            return sl_seterr(why, whylen, "%s", avro_strerror());
        if (which == 0) { /* a MAP key: the string */
            uint8_t l4[4];
            size_t kl = strlen(key);
            sl_put_le32(l4, (uint32_t)kl);
            av_put(str, l4, 4);
            av_put(str, key, kl);
            continue;
        }
        bool isnull;
        if (av_unwrap(et, &e, &inner, &isnull, why, whylen)) return SL_ERR;
        if (isnull) {
            str->p[bm + i / 8] = (char)((uint8_t)str->p[bm + i / 8] | (1u << (i % 8)));
            continue;
        }
        if (av_datum(et, &inner, str, depth + 1, why, whylen)) {
            char tmp[300];
            snprintf(tmp, sizeof tmp, "element %zu: %s", i + 1, why);
            return sl_seterr(why, whylen, "%s", tmp);
        }
    }
    return SL_OK;
}

/* The canonical body (no length) of a nested value appended to str. */
static int av_nested(const sl_dtype *dt, avro_value_t *v, sl_buf *str, int depth, char *why,
                     size_t whylen)
{
    if (depth > AV_MAX_DEPTH) return sl_seterr(why, whylen, "nested deeper than %d", AV_MAX_DEPTH);
    size_t n = 0;
    if (dt->kind == SL_T_ROW) {
        size_t bm = str->len, nb = ((size_t)dt->nfields + 7) / 8;
        for (size_t k = 0; k < nb; k++) sl_buf_putc(str, 0);
        for (int i = 0; i < dt->nfields; i++) {
            avro_value_t e, inner;
            bool isnull;
            if (avro_value_get_by_index(v, (size_t)i, &e, NULL))
                return sl_seterr(why, whylen, "field '%s': not readable", dt->names[i]);
            if (av_unwrap(dt->ftypes[i], &e, &inner, &isnull, why, whylen)) {
                char tmp[300];
                snprintf(tmp, sizeof tmp, "field '%s': %s", dt->names[i], why);
                return sl_seterr(why, whylen, "%s", tmp);
            }
            if (isnull) {
                str->p[bm + i / 8] = (char)((uint8_t)str->p[bm + i / 8] | (1u << (i % 8)));
                continue;
            }
            if (av_datum(dt->ftypes[i], &inner, str, depth + 1, why, whylen)) {
                char tmp[300];
                snprintf(tmp, sizeof tmp, "field '%s': %s", dt->names[i], why);
                return sl_seterr(why, whylen, "%s", tmp);
            }
        }
        return SL_OK;
    }
    if (avro_value_get_size(v, &n)) return sl_seterr(why, whylen, "%s", avro_strerror());
    if (n > UINT32_MAX) return sl_seterr(why, whylen, "%zu elements", n);
    uint8_t n4[4];
    sl_put_le32(n4, (uint32_t)n);
    av_put(str, n4, 4);
    if (dt->kind == SL_T_ARRAY) return av_seq(dt->elem, v, n, -1, str, depth, why, whylen);
    if (av_seq(dt->elem, v, n, 0, str, depth, why, whylen)) return SL_ERR;
    const sl_dtype *vt = dt->kind == SL_T_MAP ? dt->val : sl_dtype_basic(SL_T_INT);
    if (dt->kind == SL_T_MULTISET) vt = sl_dtype_nullable(vt, true);
    return av_seq(vt, v, n, 1, str, depth, why, whylen);
}

/* A non-null value's field encoding (row.h) appended to str. */
static int av_datum(const sl_dtype *dt, avro_value_t *v, sl_buf *str, int depth, char *why,
                    size_t whylen)
{
    if (sl_type_is_nested(dt->kind)) {
        size_t at = str->len;
        uint8_t l4[4] = {0};
        av_put(str, l4, 4);
        if (av_nested(dt, v, str, depth, why, whylen)) return SL_ERR;
        size_t bl = str->len - at - 4;
        if (bl > UINT32_MAX) return sl_seterr(why, whylen, "a value of %zu bytes", bl);
        sl_put_le32(str->p + at, (uint32_t)bl);
        return SL_OK;
    }
    sl_value x = {0};
    if (av_scalar(dt, v, &x, why, whylen)) return SL_ERR;
    if (dt->kind == SL_T_STRING || dt->kind == SL_T_BYTES) {
        uint8_t l4[4];
        sl_put_le32(l4, x.v.s.len);
        av_put(str, l4, 4);
        return av_put(str, x.v.s.p, x.v.s.len);
    }
    uint8_t fb[16];
    size_t w = sl_datum_put(fb, &x, dt);
    return av_put(str, fb, w);
}

int sl_avro_decode(sl_avro *a, const char *p, size_t n, sl_value *vals, sl_buf *str, char *why,
                   size_t whylen)
{
    const kf_codec *c = a->c;
    for (int i = 0; i < c->n; i++) vals[c->slot[i]].isnull = true;
    if (!p) return SL_OK; /* no record: every column NULL */
    avro_value_t *into = &a->value;
    avro_schema_t writer = NULL;
    if (a->f->confluent) {
        if (n < 5 || p[0] != 0)
            return sl_seterr(why, whylen, "not the Confluent wire format (a zero byte and a "
                             "4-byte schema id first)");
        av_writer_schema *w;
        if (av_writer(a, (int32_t)sl_get_be32(p + 1), &w, why, whylen)) return SL_ERR;
        if (w->resolver) into = &w->rvalue;
        writer = w->schema;
        p += 5;
        n -= 5;
    }
    const uint8_t *q = (const uint8_t *)p;
    if (av_check(writer ? writer : a->f->schema, &q, q + n, 0, why, whylen)) return SL_ERR;
    if (q != (const uint8_t *)p + n)
        return sl_seterr(why, whylen, "%zu bytes after the Avro record",
                         (size_t)((const uint8_t *)p + n - q));
    avro_value_reset(&a->value);
    avro_reader_memory_set_source(a->reader, p, (int64_t)n);
    if (avro_value_read(a->reader, into))
        return sl_seterr(why, whylen, "not an Avro record of the table's schema: %s",
                         avro_strerror());
    str->len = 0;
    size_t off[SL_MAX_FIELDS];
    for (int i = 0; i < c->n; i++) {
        const sl_dtype *dt = c->dt[i];
        sl_value *v = &vals[c->slot[i]];
        avro_value_t f, inner;
        bool isnull;
        off[i] = SIZE_MAX;
        if (avro_value_get_by_index(&a->value, (size_t)i, &f, NULL))
            return sl_seterr(why, whylen, "field '%s': not readable", c->name[i]);
        if (av_unwrap(dt, &f, &inner, &isnull, why, whylen)) {
            char tmp[300];
            snprintf(tmp, sizeof tmp, "field '%s': %s", c->name[i], why);
            return sl_seterr(why, whylen, "%s", tmp);
        }
        if (isnull) continue;
        int rc;
        if (sl_type_is_nested(dt->kind)) {
            off[i] = str->len;
            rc = av_nested(dt, &inner, str, 1, why, whylen);
            if (!rc && str->len - off[i] > UINT32_MAX)
                rc = sl_seterr(why, whylen, "a value too large");
            if (!rc) v->v.s.len = (uint32_t)(str->len - off[i]);
            v->isnull = false;
        } else {
            rc = av_scalar(dt, &inner, v, why, whylen);
        }
        if (rc) {
            char tmp[300];
            snprintf(tmp, sizeof tmp, "field '%s': %s", c->name[i], why);
            return sl_seterr(why, whylen, "%s", tmp);
        }
    }
    for (int i = 0; i < c->n; i++) /* the buffer is complete: point into it */
        if (off[i] != SIZE_MAX) vals[c->slot[i]].v.s.p = str->p + off[i];
    return SL_OK;
}

/* ---- encoding -------------------------------------------------------------- */

static int av_set(sl_avro *a, const sl_dtype *dt, avro_value_t *v, const sl_value *x, int depth,
                  char *why, size_t whylen);

/* Set a field / element of type dt (a union when nullable) from x. */
static int av_set_nullable(sl_avro *a, const sl_dtype *dt, avro_value_t *v, const sl_value *x,
                           int depth, char *why, size_t whylen)
{
    if (dt->notnull) {
        if (x->isnull) return sl_seterr(why, whylen, "NULL for %s", dt->text);
        return av_set(a, dt, v, x, depth, why, whylen);
    }
    avro_value_t b;
    if (avro_value_set_branch(v, x->isnull ? 0 : 1, &b))
        return sl_seterr(why, whylen, "%s", avro_strerror());
    if (x->isnull) return avro_value_set_null(&b) ? sl_seterr(why, whylen, "%s", avro_strerror())
                                                  : SL_OK;
    return av_set(a, dt, &b, x, depth, why, whylen);
}

/* A NUL-terminated copy of s[0..n) in a->tmp. */
static const char *av_cstr(sl_avro *a, const char *s, size_t n)
{
    a->tmp.len = 0;
    sl_buf_put(&a->tmp, s, n); /* sl_buf keeps a NUL after its bytes */
    return a->tmp.p;
}

static int av_set(sl_avro *a, const sl_dtype *dt, avro_value_t *v, const sl_value *x, int depth,
                  char *why, size_t whylen)
{
    int e = 0;
    switch (dt->kind) {
    case SL_T_BOOLEAN: e = avro_value_set_boolean(v, x->v.i != 0); break;
    case SL_T_TINYINT: case SL_T_SMALLINT: case SL_T_INT: case SL_T_DATE:
        e = avro_value_set_int(v, (int32_t)x->v.i);
        break;
    case SL_T_BIGINT: e = avro_value_set_long(v, x->v.i); break;
    case SL_T_FLOAT: e = avro_value_set_float(v, (float)x->v.d); break;
    case SL_T_DOUBLE: e = avro_value_set_double(v, x->v.d); break;
    case SL_T_STRING:
        /* libavro's length counts the NUL it copies along */
        e = avro_value_set_string_len(v, av_cstr(a, x->v.s.p, x->v.s.len), (size_t)x->v.s.len + 1);
        break;
    case SL_T_BYTES:
        e = avro_value_set_bytes(v, (void *)(x->v.s.len ? x->v.s.p : ""), x->v.s.len);
        break;
    case SL_T_DECIMAL: {
        /* the shortest big-endian two's complement, as Java's BigInteger.toByteArray */
        __int128 u = sl_dec_i128((sl_dec){x->v.dec.lo, x->v.dec.hi});
        uint8_t b[16];
        for (int k = 15; k >= 0; k--) b[k] = (uint8_t)((unsigned __int128)u >> (8 * (15 - k)));
        int s = 0;
        while (s < 15 && ((b[s] == 0 && !(b[s + 1] & 0x80)) || (b[s] == 0xff && (b[s + 1] & 0x80))))
            s++;
        e = avro_value_set_bytes(v, b + s, (size_t)(16 - s));
        break;
    }
    case SL_T_TIME:
        if (dt->p <= 3) e = avro_value_set_int(v, (int32_t)x->v.ts.ms);
        else e = avro_value_set_long(v, x->v.ts.ms * 1000 + x->v.ts.nano / 1000);
        break;
    case SL_T_TIMESTAMP:
        if (dt->p <= 3) e = avro_value_set_long(v, x->v.i);
        else e = avro_value_set_long(v, x->v.ts.ms * 1000 + x->v.ts.nano / 1000);
        break;
    case SL_T_ARRAY:
    case SL_T_MAP:
    case SL_T_MULTISET:
    case SL_T_ROW: {
        if (depth > AV_MAX_DEPTH) return sl_seterr(why, whylen, "nested deeper than %d",
                                                   AV_MAX_DEPTH);
        sl_nested_reader r;
        sl_nested_open(&r, dt, x);
        sl_value el, mv;
        avro_value_reset(v);
        for (uint32_t i = 0; sl_nested_next(&r, &el, &mv); i++) {
            avro_value_t sub;
            const sl_dtype *et;
            if (dt->kind == SL_T_ROW) {
                et = dt->ftypes[i];
                e = avro_value_get_by_index(v, i, &sub, NULL);
                if (!e && av_set_nullable(a, et, &sub, &el, depth + 1, why, whylen)) return SL_ERR;
            } else if (dt->kind == SL_T_ARRAY) {
                et = dt->elem;
                e = avro_value_append(v, &sub, NULL);
                if (!e && av_set_nullable(a, et, &sub, &el, depth + 1, why, whylen)) return SL_ERR;
            } else {
                if (el.isnull) return sl_seterr(why, whylen, "a NULL key in %s (Avro map keys "
                                                "are strings)", dt->text);
                et = dt->kind == SL_T_MAP ? dt->val : sl_dtype_nullable(sl_dtype_basic(SL_T_INT),
                                                                        true);
                e = avro_value_add(v, av_cstr(a, el.v.s.p, el.v.s.len), &sub, NULL, NULL);
                if (!e && av_set_nullable(a, et, &sub, &mv, depth + 1, why, whylen)) return SL_ERR;
            }
            if (e) break;
        }
        break;
    }
    default:
        return sl_seterr(why, whylen, "cannot write %s", dt->text);
    }
    return e ? sl_seterr(why, whylen, "%s: %s", dt->text, avro_strerror()) : SL_OK;
}

int sl_avro_encode(sl_avro *a, const sl_row *row, sl_buf *out, char *why, size_t whylen)
{
    const kf_codec *c = a->c;
    avro_value_reset(&a->value);
    for (int i = 0; i < c->n; i++) {
        avro_value_t f;
        static const sl_value null_value = {.isnull = true};
        const sl_value *x = c->slot[i] < row->n ? &row->vals[c->slot[i]] : &null_value;
        if (avro_value_get_by_index(&a->value, (size_t)i, &f, NULL) ||
            av_set_nullable(a, c->dt[i], &f, x, 1, why, whylen)) {
            char tmp[300];
            snprintf(tmp, sizeof tmp, "column '%s': %s", c->name[i], why);
            return sl_seterr(why, whylen, "%s", tmp);
        }
    }
    size_t size;
    if (avro_value_sizeof(&a->value, &size)) return sl_seterr(why, whylen, "%s", avro_strerror());
    if (a->f->confluent) {
        if (av_sink_id(a, why, whylen)) return SL_ERR;
        uint8_t h[5] = {0};
        sl_put_be32(h + 1, (uint32_t)a->sink_id);
        sl_buf_put(out, h, 5);
    }
    sl_buf_reserve(out, size + 1);
    avro_writer_memory_set_dest(a->writer, out->p + out->len, (int64_t)size);
    if (avro_value_write(a->writer, &a->value))
        return sl_seterr(why, whylen, "%s", avro_strerror());
    out->len += size;
    return SL_OK;
}
