/*
 * dtype.c -- type descriptors: the intern table, the canonical text and the
 * parser of Flink's type syntax.
 *
 * Interning is by canonical text: the text names every property of a type
 * (its kind, variant, length/precision/scale, element and field types and
 * names, NOT NULL), so two descriptors with equal text are the same type.
 * A candidate is described on the stack, its text built, and the text
 * looked up under one mutex; a new type is copied into the heap once and
 * never freed. The table starts small and doubles as types arrive (the
 * descriptors never move, only the arrays of pointers and slots do), up to
 * SL_DTYPE_MAX types: planning a job that would need more fails with a
 * message instead of growing memory without bound.
 *
 * The parser is a recursive descent over the text with the nesting depth
 * bounded (SL_DTYPE_MAX_DEPTH), so hostile text cannot exhaust the stack.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dtype.h"
#include "buf.h"
#include "sl.h"

/* ---- the intern table --------------------------------------------------- */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static sl_dtype **g_types; /* g_cap entries, g_ntypes used */
static int g_ntypes, g_cap;
static int *g_slot;  /* g_nslots (a power of two, >= 2 x g_cap): index + 1 into g_types; 0 = empty */
static int g_nslots;

static uint32_t hash_text(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

/* Under g_mu: the slot of text (found or the empty one where it goes). */
static int find_slot(const char *text, uint32_t h)
{
    if (!g_nslots) return -1;
    int i = (int)(h & (uint32_t)(g_nslots - 1));
    while (g_slot[i] && strcmp(g_types[g_slot[i] - 1]->text, text) != 0)
        i = (i + 1) & (g_nslots - 1);
    return i;
}

/* Under g_mu: room for one more type (doubling both arrays and rehashing
 * the slots); false at SL_DTYPE_MAX. */
static bool make_room(void)
{
    if (g_ntypes < g_cap) return true;
    if (g_cap >= SL_DTYPE_MAX) return false;
    int cap = g_cap ? g_cap * 2 : 256;
    if (cap > SL_DTYPE_MAX) cap = SL_DTYPE_MAX;
    int nslots = 1;
    while (nslots < 2 * cap) nslots *= 2;
    g_types = sl_realloc(g_types, (size_t)cap * sizeof *g_types);
    int *slots = sl_calloc((size_t)nslots, sizeof *slots);
    for (int k = 0; k < g_ntypes; k++) {
        int i = (int)(hash_text(g_types[k]->text) & (uint32_t)(nslots - 1));
        while (slots[i]) i = (i + 1) & (nslots - 1);
        slots[i] = k + 1;
    }
    free(g_slot);
    g_slot = slots;
    g_nslots = nslots;
    g_cap = cap;
    return true;
}

static void put_name(sl_buf *b, const char *name)
{
    sl_buf_putc(b, '`');
    for (const char *c = name; *c; c++) {
        if (*c == '`') sl_buf_putc(b, '`');
        sl_buf_putc(b, *c);
    }
    sl_buf_putc(b, '`');
}

/* The canonical text of a candidate (its parts are interned already). */
static void make_text(sl_buf *b, const sl_dtype *d)
{
    char t[96];
    switch (d->kind) {
    case SL_T_NULL: sl_buf_str(b, "NULL"); break;
    case SL_T_BOOLEAN: sl_buf_str(b, "BOOLEAN"); break;
    case SL_T_TINYINT: sl_buf_str(b, "TINYINT"); break;
    case SL_T_SMALLINT: sl_buf_str(b, "SMALLINT"); break;
    case SL_T_INT: sl_buf_str(b, "INT"); break;
    case SL_T_BIGINT: sl_buf_str(b, "BIGINT"); break;
    case SL_T_FLOAT: sl_buf_str(b, "FLOAT"); break;
    case SL_T_DOUBLE: sl_buf_str(b, "DOUBLE"); break;
    case SL_T_DATE: sl_buf_str(b, "DATE"); break;
    case SL_T_DECIMAL:
        snprintf(t, sizeof t, "DECIMAL(%d, %d)", (int)d->p, (int)d->s);
        sl_buf_str(b, t);
        break;
    case SL_T_STRING:
    case SL_T_BYTES: {
        bool chr = d->kind == SL_T_STRING;
        bool fixed = d->variant == (chr ? SL_DV_CHAR : SL_DV_BINARY);
        if (!fixed && d->p == SL_DTYPE_MAX_LEN) sl_buf_str(b, chr ? "STRING" : "BYTES");
        else {
            snprintf(t, sizeof t, "%s(%d)",
                     chr ? (fixed ? "CHAR" : "VARCHAR") : (fixed ? "BINARY" : "VARBINARY"),
                     (int)d->p);
            sl_buf_str(b, t);
        }
        break;
    }
    case SL_T_TIME:
        snprintf(t, sizeof t, "TIME(%d)", (int)d->p);
        sl_buf_str(b, t);
        break;
    case SL_T_TIMESTAMP:
        snprintf(t, sizeof t, "%s(%d)", d->variant == SL_DV_LTZ ? "TIMESTAMP_LTZ" : "TIMESTAMP",
                 (int)d->p);
        sl_buf_str(b, t);
        break;
    case SL_T_INTERVAL_YM:
    case SL_T_INTERVAL_DT:
        switch (d->variant) {
        case SL_DV_YEAR: snprintf(t, sizeof t, "INTERVAL YEAR(%d)", (int)d->p); break;
        case SL_DV_YEAR_TO_MONTH: snprintf(t, sizeof t, "INTERVAL YEAR(%d) TO MONTH", (int)d->p); break;
        case SL_DV_MONTH: snprintf(t, sizeof t, "INTERVAL MONTH"); break;
        case SL_DV_DAY: snprintf(t, sizeof t, "INTERVAL DAY(%d)", (int)d->p); break;
        case SL_DV_DAY_TO_HOUR: snprintf(t, sizeof t, "INTERVAL DAY(%d) TO HOUR", (int)d->p); break;
        case SL_DV_DAY_TO_MINUTE: snprintf(t, sizeof t, "INTERVAL DAY(%d) TO MINUTE", (int)d->p); break;
        case SL_DV_DAY_TO_SECOND:
            snprintf(t, sizeof t, "INTERVAL DAY(%d) TO SECOND(%d)", (int)d->p, (int)d->s);
            break;
        case SL_DV_HOUR: snprintf(t, sizeof t, "INTERVAL HOUR"); break;
        case SL_DV_HOUR_TO_MINUTE: snprintf(t, sizeof t, "INTERVAL HOUR TO MINUTE"); break;
        case SL_DV_HOUR_TO_SECOND: snprintf(t, sizeof t, "INTERVAL HOUR TO SECOND(%d)", (int)d->s); break;
        case SL_DV_MINUTE: snprintf(t, sizeof t, "INTERVAL MINUTE"); break;
        case SL_DV_MINUTE_TO_SECOND: snprintf(t, sizeof t, "INTERVAL MINUTE TO SECOND(%d)", (int)d->s); break;
        default: snprintf(t, sizeof t, "INTERVAL SECOND(%d)", (int)d->s); break;
        }
        sl_buf_str(b, t);
        break;
    case SL_T_ARRAY:
    case SL_T_MULTISET:
        sl_buf_str(b, d->kind == SL_T_ARRAY ? "ARRAY<" : "MULTISET<");
        sl_buf_str(b, d->elem->text);
        sl_buf_putc(b, '>');
        break;
    case SL_T_MAP:
        sl_buf_str(b, "MAP<");
        sl_buf_str(b, d->elem->text);
        sl_buf_str(b, ", ");
        sl_buf_str(b, d->val->text);
        sl_buf_putc(b, '>');
        break;
    case SL_T_ROW:
        sl_buf_str(b, "ROW<");
        for (int i = 0; i < d->nfields; i++) {
            if (i) sl_buf_str(b, ", ");
            put_name(b, d->names[i]);
            sl_buf_putc(b, ' ');
            sl_buf_str(b, d->ftypes[i]->text);
        }
        sl_buf_putc(b, '>');
        break;
    }
    if (d->notnull) sl_buf_str(b, " NOT NULL");
}

/* The storage-type candidate of d (see sl_dtype.phys) into *c; ft: room
 * for the ROW field types. */
static void phys_cand(const sl_dtype *d, sl_dtype *c, const sl_dtype **ft)
{
    *c = *d;
    c->notnull = false;
    switch (d->kind) {
    case SL_T_STRING: c->variant = SL_DV_VARCHAR; c->p = SL_DTYPE_MAX_LEN; break;
    case SL_T_BYTES: c->variant = SL_DV_VARBINARY; c->p = SL_DTYPE_MAX_LEN; break;
    case SL_T_TIMESTAMP: c->variant = SL_DV_NONE; c->p = d->p > 3 ? 9 : 3; break;
    case SL_T_TIME: c->p = d->p > 3 ? 9 : 3; break;
    case SL_T_INTERVAL_YM: c->variant = SL_DV_YEAR_TO_MONTH; c->p = 2; c->s = 0; break;
    case SL_T_INTERVAL_DT: c->variant = SL_DV_DAY_TO_SECOND; c->p = 2; c->s = 3; break;
    case SL_T_ARRAY:
    case SL_T_MULTISET: c->elem = d->elem->phys; break;
    case SL_T_MAP: c->elem = d->elem->phys; c->val = d->val->phys; break;
    case SL_T_ROW:
        for (int i = 0; i < d->nfields; i++) ft[i] = d->ftypes[i]->phys;
        c->ftypes = ft;
        break;
    default: break;
    }
}

static const sl_dtype *intern(const sl_dtype *cand, char *err, size_t errlen)
{
    sl_buf b = SL_BUF_INIT;
    make_text(&b, cand);
    uint32_t h = hash_text(b.p);
    pthread_mutex_lock(&g_mu);
    int slot = find_slot(b.p, h);
    const sl_dtype *found = slot >= 0 && g_slot[slot] ? g_types[g_slot[slot] - 1] : NULL;
    pthread_mutex_unlock(&g_mu);
    if (found) {
        sl_buf_free(&b);
        return found;
    }
    /* the storage type first (it may be this very type) */
    const sl_dtype *phys = NULL;
    bool self_phys;
    {
        sl_dtype c;
        const sl_dtype *ft[SL_MAX_FIELDS_DT];
        phys_cand(cand, &c, ft);
        sl_buf pb = SL_BUF_INIT;
        make_text(&pb, &c);
        self_phys = strcmp(pb.p, b.p) == 0;
        sl_buf_free(&pb);
        if (!self_phys && !(phys = intern(&c, err, errlen))) {
            sl_buf_free(&b);
            return NULL;
        }
    }
    pthread_mutex_lock(&g_mu);
    slot = find_slot(b.p, h); /* another thread may have added it meanwhile */
    if (slot >= 0 && g_slot[slot]) {
        found = g_types[g_slot[slot] - 1];
        pthread_mutex_unlock(&g_mu);
        sl_buf_free(&b);
        return found;
    }
    if (!make_room()) {
        pthread_mutex_unlock(&g_mu);
        sl_seterr(err, errlen, "too many distinct data types (the limit is %d): %s",
                  SL_DTYPE_MAX, b.p);
        sl_buf_free(&b);
        return NULL;
    }
    sl_dtype *d = sl_calloc(1, sizeof *d);
    *d = *cand;
    d->text = b.p; /* the buffer's bytes become the text */
    if (cand->kind == SL_T_ROW) {
        char **names = sl_calloc((size_t)cand->nfields + 1, sizeof *names);
        const sl_dtype **ft = sl_calloc((size_t)cand->nfields + 1, sizeof *ft);
        for (int i = 0; i < cand->nfields; i++) {
            names[i] = sl_strdup(cand->names[i]);
            ft[i] = cand->ftypes[i];
        }
        d->names = (const char *const *)names;
        d->ftypes = ft;
    } else {
        d->names = NULL;
        d->ftypes = NULL;
    }
    d->phys = self_phys ? d : phys;
    slot = find_slot(b.p, h); /* make_room may have rehashed */
    g_types[g_ntypes++] = d;
    g_slot[slot] = g_ntypes;
    pthread_mutex_unlock(&g_mu);
    return d;
}

int sl_dtype_count(void)
{
    pthread_mutex_lock(&g_mu);
    int n = g_ntypes;
    pthread_mutex_unlock(&g_mu);
    return n;
}

/* ---- constructors ------------------------------------------------------- */

static const sl_dtype *g_basic[SL_T_COUNT];
static pthread_once_t g_basic_once = PTHREAD_ONCE_INIT;

static void init_basic(void)
{
    for (int k = 0; k < SL_T_COUNT; k++) {
        sl_dtype c = {.kind = (sl_type)k};
        switch ((sl_type)k) {
        case SL_T_STRING: c.variant = SL_DV_VARCHAR; c.p = SL_DTYPE_MAX_LEN; break;
        case SL_T_BYTES: c.variant = SL_DV_VARBINARY; c.p = SL_DTYPE_MAX_LEN; break;
        case SL_T_TIMESTAMP: c.p = 3; break;
        case SL_T_DECIMAL: c.p = 10; c.s = 0; break;
        case SL_T_INTERVAL_YM: c.variant = SL_DV_YEAR_TO_MONTH; c.p = 2; break;
        case SL_T_INTERVAL_DT: c.variant = SL_DV_DAY_TO_SECOND; c.p = 2; c.s = 3; break;
        case SL_T_ARRAY:
        case SL_T_MAP:
        case SL_T_MULTISET:
        case SL_T_ROW: continue;
        default: break;
        }
        g_basic[k] = intern(&c, NULL, 0);
        SL_ASSERT(g_basic[k]);
    }
}

const sl_dtype *sl_dtype_basic(sl_type t)
{
    pthread_once(&g_basic_once, init_basic);
    if ((int)t < 0 || (int)t >= SL_T_COUNT) return NULL;
    return g_basic[t];
}

const sl_dtype *sl_dtype_decimal(int p, int s, char *err, size_t errlen)
{
    if (p < 1 || p > SL_DECIMAL_MAX_PRECISION) {
        sl_seterr(err, errlen, "DECIMAL precision must be between 1 and %d, got %d",
                  SL_DECIMAL_MAX_PRECISION, p);
        return NULL;
    }
    if (s < 0 || s > p) {
        sl_seterr(err, errlen, "DECIMAL scale must be between 0 and the precision %d, got %d", p, s);
        return NULL;
    }
    sl_dtype c = {.kind = SL_T_DECIMAL, .p = p, .s = s};
    return intern(&c, err, errlen);
}

const sl_dtype *sl_dtype_array(const sl_dtype *elem, char *err, size_t errlen)
{
    sl_dtype c = {.kind = SL_T_ARRAY, .elem = elem};
    return intern(&c, err, errlen);
}

const sl_dtype *sl_dtype_map(const sl_dtype *key, const sl_dtype *val, char *err, size_t errlen)
{
    sl_dtype c = {.kind = SL_T_MAP, .elem = key, .val = val};
    return intern(&c, err, errlen);
}

const sl_dtype *sl_dtype_row(int n, const char *const *names, const sl_dtype *const *types,
                             char *err, size_t errlen)
{
    if (n < 0 || n > SL_MAX_FIELDS_DT) {
        sl_seterr(err, errlen, "a ROW has at most %d fields", SL_MAX_FIELDS_DT);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcasecmp(names[i], names[j]) == 0) {
                sl_seterr(err, errlen, "ROW field '%s' appears twice", names[i]);
                return NULL;
            }
    sl_dtype c = {.kind = SL_T_ROW, .nfields = n, .names = names, .ftypes = types};
    return intern(&c, err, errlen);
}

const sl_dtype *sl_dtype_nullable(const sl_dtype *dt, bool notnull)
{
    if (dt->notnull == notnull) return dt;
    sl_dtype c = *dt;
    c.notnull = notnull;
    const sl_dtype *r = intern(&c, NULL, 0);
    return r ? r : dt; /* only a full table fails; the nullable form then stands */
}

const sl_dtype *sl_dtype_text(bool chr, bool fixed, int64_t len, bool notnull, char *err,
                              size_t errlen)
{
    if (len < 0) len = 0;
    if (len >= SL_DTYPE_MAX_LEN) {
        len = SL_DTYPE_MAX_LEN;
        fixed = false; /* Calcite caps the length; the result is a STRING (BYTES) */
    }
    sl_dtype c = {.kind = chr ? SL_T_STRING : SL_T_BYTES,
                  .variant = chr ? (fixed ? SL_DV_CHAR : SL_DV_VARCHAR)
                                 : (fixed ? SL_DV_BINARY : SL_DV_VARBINARY),
                  .p = (int32_t)len, .notnull = notnull};
    return intern(&c, err, errlen);
}

int sl_dtype_check_declared(const sl_dtype *d, char *err, size_t errlen)
{
    if (!d) return SL_OK;
    switch (d->kind) {
    case SL_T_STRING:
    case SL_T_BYTES:
        if (d->p < 1) /* Flink's words for CHAR(0) in a table's schema */
            return sl_seterr(err, errlen, "Zero-length %s strings have no serializable string "
                             "representation.", d->kind == SL_T_STRING ? "character" : "binary");
        return SL_OK;
    case SL_T_ARRAY:
    case SL_T_MULTISET: return sl_dtype_check_declared(d->elem, err, errlen);
    case SL_T_MAP:
        if (sl_dtype_check_declared(d->elem, err, errlen) != SL_OK) return SL_ERR;
        return sl_dtype_check_declared(d->val, err, errlen);
    case SL_T_ROW:
        for (int i = 0; i < d->nfields; i++)
            if (sl_dtype_check_declared(d->ftypes[i], err, errlen) != SL_OK) return SL_ERR;
        return SL_OK;
    default: return SL_OK;
    }
}

/* ---- the parser --------------------------------------------------------- */

typedef struct {
    const char *s;
    size_t pos;
    char *err;
    size_t errlen;
    bool failed;
} tparse;

static int fail(tparse *t, const char *fmt, const char *what)
{
    if (!t->failed)
        sl_seterr(t->err, t->errlen, "data type '%.80s%s': at position %zu: %s%s", t->s,
                  strlen(t->s) > 80 ? "..." : "", t->pos + 1, fmt, what ? what : "");
    t->failed = true;
    return SL_ERR;
}

static void skip_ws(tparse *t)
{
    while (t->s[t->pos] == ' ' || t->s[t->pos] == '\t' || t->s[t->pos] == '\n' ||
           t->s[t->pos] == '\r')
        t->pos++;
}

static bool is_idc(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (unsigned char)c >= 0x80;
}

/* The word at the position (its length, 0 if none), not consumed. */
static size_t peek_word(tparse *t)
{
    skip_ws(t);
    size_t n = 0;
    while (is_idc(t->s[t->pos + n])) n++;
    return n;
}

static bool accept_word(tparse *t, const char *w)
{
    size_t n = peek_word(t);
    if (n && strlen(w) == n && strncasecmp(t->s + t->pos, w, n) == 0) {
        t->pos += n;
        return true;
    }
    return false;
}

static bool accept_ch(tparse *t, char c)
{
    skip_ws(t);
    if (t->s[t->pos] == c) {
        t->pos++;
        return true;
    }
    return false;
}

static int expect_ch(tparse *t, char c)
{
    if (accept_ch(t, c)) return SL_OK;
    char w[4] = {'\'', c, '\'', 0};
    return fail(t, "expected ", w);
}

static int parse_uint(tparse *t, long *out)
{
    skip_ws(t);
    long x = 0;
    size_t start = t->pos;
    while (t->s[t->pos] >= '0' && t->s[t->pos] <= '9') {
        x = x * 10 + (t->s[t->pos] - '0');
        if (x > 2147483647L) return fail(t, "number too large", NULL);
        t->pos++;
    }
    if (t->pos == start) return fail(t, "expected a number", NULL);
    *out = x;
    return SL_OK;
}

/* "(n)" if present: *val keeps its default otherwise. */
static int opt_len(tparse *t, long *val, long lo, long hi, const char *what)
{
    if (!accept_ch(t, '(')) return SL_OK;
    skip_ws(t);
    size_t at = t->pos;
    if (parse_uint(t, val)) return SL_ERR;
    if (*val < lo || *val > hi) {
        t->pos = at;
        char m[96];
        snprintf(m, sizeof m, "%s must be between %ld and %ld", what, lo, hi);
        return fail(t, m, NULL);
    }
    return expect_ch(t, ')');
}

static const sl_dtype *parse_type(tparse *t, int depth);

/* An identifier: a word or `quoted` (`` is a backquote). Caller frees. */
static char *parse_ident(tparse *t)
{
    skip_ws(t);
    if (t->s[t->pos] == '`') {
        sl_buf b = SL_BUF_INIT;
        t->pos++;
        for (;;) {
            char c = t->s[t->pos];
            if (!c) {
                sl_buf_free(&b);
                fail(t, "unterminated `identifier`", NULL);
                return NULL;
            }
            t->pos++;
            if (c == '`') {
                if (t->s[t->pos] != '`') break;
                t->pos++;
            }
            sl_buf_putc(&b, c);
        }
        if (!b.p || !b.len) {
            sl_buf_free(&b);
            fail(t, "empty field name", NULL);
            return NULL;
        }
        return b.p;
    }
    size_t n = peek_word(t);
    if (!n) {
        fail(t, "expected a field name", NULL);
        return NULL;
    }
    char *r = sl_strndup(t->s + t->pos, n);
    t->pos += n;
    return r;
}

/* ROW fields up to `close`: name type [COMMENT '...'], ... */
static const sl_dtype *parse_row_fields(tparse *t, char close, int depth)
{
    char *names[SL_MAX_FIELDS_DT] = {0};
    const sl_dtype *types[SL_MAX_FIELDS_DT] = {0};
    int n = 0;
    const sl_dtype *r = NULL;
    if (!accept_ch(t, close)) {
        for (;;) {
            if (n >= SL_MAX_FIELDS_DT) {
                fail(t, "too many ROW fields", NULL);
                goto out;
            }
            skip_ws(t);
            size_t at = t->pos;
            char *nm = parse_ident(t);
            if (!nm) goto out;
            for (int i = 0; i < n; i++)
                if (strcasecmp(names[i], nm) == 0) {
                    t->pos = at;
                    fail(t, "duplicate ROW field ", nm);
                    free(nm);
                    goto out;
                }
            names[n] = nm;
            if (!(types[n] = parse_type(t, depth + 1))) {
                free(nm);
                goto out;
            }
            n++;
            if (accept_word(t, "COMMENT")) {
                skip_ws(t);
                if (t->s[t->pos] != '\'') {
                    fail(t, "expected a 'comment' string", NULL);
                    goto out;
                }
                t->pos++;
                for (;;) {
                    if (!t->s[t->pos]) {
                        fail(t, "unterminated comment string", NULL);
                        goto out;
                    }
                    if (t->s[t->pos] == '\'' && t->s[t->pos + 1] == '\'') t->pos += 2;
                    else if (t->s[t->pos++] == '\'') break;
                }
            }
            if (accept_ch(t, ',')) continue;
            if (expect_ch(t, close)) goto out;
            break;
        }
    }
    r = sl_dtype_row(n, (const char *const *)names, types, t->err, t->errlen);
    if (!r) t->failed = true;
out:
    for (int i = 0; i < n; i++) free(names[i]);
    return r;
}

static const sl_dtype *parse_interval(tparse *t)
{
    sl_dtype c = {0};
    long p = -1, fp = 6, fp2 = 6;
    static const char *const units[] = {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"};
    int u = -1;
    for (int i = 0; i < 6 && u < 0; i++)
        if (accept_word(t, units[i])) u = i;
    if (u < 0) return fail(t, "expected YEAR, MONTH, DAY, HOUR, MINUTE or SECOND", NULL), NULL;
    if (u == 0 || u == 2) {
        p = 2;
        if (opt_len(t, &p, 1, u == 0 ? 4 : 6, "the interval precision")) return NULL;
    } else if (u == 5) {
        if (opt_len(t, &fp, 0, 9, "the fractional precision")) return NULL;
    }
    int to = -1;
    if (accept_word(t, "TO")) {
        for (int i = u + 1; i < 6 && to < 0; i++)
            if (accept_word(t, units[i])) to = i;
        if (to < 0 || (u <= 1) != (to <= 1)) return fail(t, "invalid interval qualifier", NULL), NULL;
        if (to == 5 && opt_len(t, &fp2, 0, 9, "the fractional precision")) return NULL;
        fp = fp2;
    }
    if (u <= 1) {
        c.kind = SL_T_INTERVAL_YM;
        c.variant = u == 1 ? SL_DV_MONTH : to == 1 ? SL_DV_YEAR_TO_MONTH : SL_DV_YEAR;
        c.p = u == 1 ? 2 : (int32_t)p;
    } else {
        c.kind = SL_T_INTERVAL_DT;
        static const uint8_t v[6][6] = {
            [2] = {[2] = SL_DV_DAY, [3] = SL_DV_DAY_TO_HOUR, [4] = SL_DV_DAY_TO_MINUTE,
                   [5] = SL_DV_DAY_TO_SECOND},
            [3] = {[3] = SL_DV_HOUR, [4] = SL_DV_HOUR_TO_MINUTE, [5] = SL_DV_HOUR_TO_SECOND},
            [4] = {[4] = SL_DV_MINUTE, [5] = SL_DV_MINUTE_TO_SECOND},
            [5] = {[5] = SL_DV_SECOND},
        };
        c.variant = v[u][to < 0 ? u : to];
        c.p = u == 2 ? (int32_t)p : 2;
        c.s = (to < 0 ? u : to) == 5 ? (int32_t)fp : 6;
        if ((to < 0 ? u : to) != 5) c.s = 0;
    }
    const sl_dtype *r = intern(&c, t->err, t->errlen);
    if (!r) t->failed = true;
    return r;
}

/* A type without its trailing NOT NULL and ARRAY/MULTISET suffixes. */
static const sl_dtype *parse_base(tparse *t, int depth)
{
    if (depth > SL_DTYPE_MAX_DEPTH) return fail(t, "the type is nested too deeply", NULL), NULL;
    size_t n = peek_word(t);
    if (!n) return fail(t, "expected a data type", NULL), NULL;
    size_t at = t->pos;
    char w[32];
    snprintf(w, sizeof w, "%.*s", (int)(n < 31 ? n : 31), t->s + t->pos);
    t->pos += n;
    sl_dtype c = {0};
    long len;
#define IS(x) (strcasecmp(w, x) == 0)
    if (IS("BOOLEAN")) return sl_dtype_basic(SL_T_BOOLEAN);
    if (IS("TINYINT")) return sl_dtype_basic(SL_T_TINYINT);
    if (IS("SMALLINT")) return sl_dtype_basic(SL_T_SMALLINT);
    if (IS("INT") || IS("INTEGER")) return sl_dtype_basic(SL_T_INT);
    if (IS("BIGINT")) return sl_dtype_basic(SL_T_BIGINT);
    if (IS("FLOAT") || IS("REAL")) return sl_dtype_basic(SL_T_FLOAT);
    if (IS("DOUBLE")) {
        accept_word(t, "PRECISION");
        return sl_dtype_basic(SL_T_DOUBLE);
    }
    if (IS("DATE")) return sl_dtype_basic(SL_T_DATE);
    if (IS("STRING")) return sl_dtype_basic(SL_T_STRING);
    if (IS("BYTES")) return sl_dtype_basic(SL_T_BYTES);
    if (IS("DECIMAL") || IS("DEC") || IS("NUMERIC")) {
        long p = 10, s = 0;
        if (accept_ch(t, '(')) {
            skip_ws(t);
            size_t pat = t->pos;
            if (parse_uint(t, &p)) return NULL;
            if (p < 1 || p > SL_DECIMAL_MAX_PRECISION) {
                t->pos = pat;
                return fail(t, "DECIMAL precision must be between 1 and 38", NULL), NULL;
            }
            if (accept_ch(t, ',')) {
                skip_ws(t);
                size_t sat = t->pos;
                if (parse_uint(t, &s)) return NULL;
                if (s > p) {
                    t->pos = sat;
                    return fail(t, "DECIMAL scale must be between 0 and the precision", NULL), NULL;
                }
            }
            if (expect_ch(t, ')')) return NULL;
        }
        c.kind = SL_T_DECIMAL;
        c.p = (int32_t)p;
        c.s = (int32_t)s;
    } else if (IS("CHAR") || IS("CHARACTER") || IS("VARCHAR") || IS("BINARY") || IS("VARBINARY")) {
        bool chr = IS("CHAR") || IS("CHARACTER") || IS("VARCHAR");
        bool var = IS("VARCHAR") || IS("VARBINARY");
        if (chr && !var && accept_word(t, "VARYING")) var = true;
        len = 1;
        /* 0: the empty literal's CHAR(0) (and what a plan's text says of it); a
         * declared type is checked by sl_dtype_check_declared */
        if (opt_len(t, &len, 0, SL_DTYPE_MAX_LEN, "the length")) return NULL;
        c.kind = chr ? SL_T_STRING : SL_T_BYTES;
        c.variant = chr ? (var ? SL_DV_VARCHAR : SL_DV_CHAR) : (var ? SL_DV_VARBINARY : SL_DV_BINARY);
        c.p = (int32_t)len;
    } else if (IS("TIME")) {
        len = 0;
        if (opt_len(t, &len, 0, 9, "the precision of TIME")) return NULL;
        if (accept_word(t, "WITHOUT")) {
            if (!accept_word(t, "TIME") || !accept_word(t, "ZONE"))
                return fail(t, "expected WITHOUT TIME ZONE", NULL), NULL;
        }
        c.kind = SL_T_TIME;
        c.p = (int32_t)len;
    } else if (IS("TIMESTAMP") || IS("TIMESTAMP_LTZ")) {
        len = 3; /* Sluice's default precision (docs/SQL.md) */
        if (opt_len(t, &len, 0, 9, "the precision of TIMESTAMP")) return NULL;
        c.kind = SL_T_TIMESTAMP;
        c.p = (int32_t)len;
        if (IS("TIMESTAMP_LTZ")) c.variant = SL_DV_LTZ;
        else if (accept_word(t, "WITHOUT")) {
            if (!accept_word(t, "TIME") || !accept_word(t, "ZONE"))
                return fail(t, "expected WITHOUT TIME ZONE", NULL), NULL;
        } else if (accept_word(t, "WITH")) {
            if (!accept_word(t, "LOCAL"))
                return fail(t, "TIMESTAMP WITH TIME ZONE is not supported; use WITH LOCAL TIME ZONE",
                            NULL), NULL;
            if (!accept_word(t, "TIME") || !accept_word(t, "ZONE"))
                return fail(t, "expected WITH LOCAL TIME ZONE", NULL), NULL;
            c.variant = SL_DV_LTZ;
        }
    } else if (IS("INTERVAL")) {
        return parse_interval(t);
    } else if (IS("ARRAY") || IS("MULTISET")) {
        if (expect_ch(t, '<')) return NULL;
        const sl_dtype *e = parse_type(t, depth + 1);
        if (!e || expect_ch(t, '>')) return NULL;
        c.kind = IS("ARRAY") ? SL_T_ARRAY : SL_T_MULTISET;
        c.elem = e;
    } else if (IS("MAP")) {
        if (expect_ch(t, '<')) return NULL;
        const sl_dtype *k = parse_type(t, depth + 1);
        if (!k || expect_ch(t, ',')) return NULL;
        const sl_dtype *v = parse_type(t, depth + 1);
        if (!v || expect_ch(t, '>')) return NULL;
        c.kind = SL_T_MAP;
        c.elem = k;
        c.val = v;
    } else if (IS("ROW")) {
        if (accept_ch(t, '<')) return parse_row_fields(t, '>', depth);
        if (accept_ch(t, '(')) return parse_row_fields(t, ')', depth);
        return fail(t, "expected '<' or '(' after ROW", NULL), NULL;
    } else {
        t->pos = at;
        return fail(t, "unknown data type ", w), NULL;
    }
#undef IS
    const sl_dtype *r = intern(&c, t->err, t->errlen);
    if (!r) t->failed = true;
    return r;
}

static const sl_dtype *parse_nullity(tparse *t, const sl_dtype *d)
{
    size_t at = t->pos;
    if (accept_word(t, "NOT")) {
        if (!accept_word(t, "NULL")) return fail(t, "expected NULL after NOT", NULL), NULL;
        return sl_dtype_nullable(d, true);
    }
    if (accept_word(t, "NULL")) return sl_dtype_nullable(d, false);
    t->pos = at;
    return d;
}

static const sl_dtype *parse_type(tparse *t, int depth)
{
    const sl_dtype *d = parse_base(t, depth);
    if (!d || !(d = parse_nullity(t, d))) return NULL;
    for (;;) {
        sl_type k;
        if (accept_word(t, "ARRAY")) k = SL_T_ARRAY;
        else if (accept_word(t, "MULTISET")) k = SL_T_MULTISET;
        else break;
        if (++depth > SL_DTYPE_MAX_DEPTH) return fail(t, "the type is nested too deeply", NULL), NULL;
        sl_dtype c = {.kind = k, .elem = d};
        if (!(d = intern(&c, t->err, t->errlen))) {
            t->failed = true;
            return NULL;
        }
        if (!(d = parse_nullity(t, d))) return NULL;
    }
    return d;
}

int sl_dtype_parse(const char *text, const sl_dtype **out, char *err, size_t errlen)
{
    tparse t = {.s = text ? text : "", .err = err, .errlen = errlen};
    const sl_dtype *d = parse_type(&t, 0);
    if (!d) {
        if (!t.failed) fail(&t, "invalid data type", NULL);
        return SL_ERR;
    }
    skip_ws(&t);
    if (t.s[t.pos]) return fail(&t, "unexpected text after the type", NULL);
    *out = d;
    return SL_OK;
}
