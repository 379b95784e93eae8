/*
 * expr.c -- Flink SQL scalar expressions: what the parts share (the
 * interval and timestamp readers, the tree's lifetime) and the semantics.
 *
 * The parts: the text goes through the SQL grammar (lang/grammar.y, in its
 * expression-only mode: sql_parse_expr), expr_check.c builds the typed tree
 * from that syntax tree, expr_eval.c evaluates it. Checking happens once per
 * job (control plane) and may allocate freely. Every node is typed the
 * moment it is built -- columns resolve to indices, operands are checked and
 * promoted (INT < BIGINT < DOUBLE), TIMESTAMP/STRING comparisons get an
 * implicit CAST -- so a tree that checks can only fail at run time for data
 * reasons (division by zero, a bad CAST, scratch exhausted). Tree height is
 * capped at SL_EXPR_MAX_DEPTH so a pathological text gets an error, not a
 * stack overflow, and evaluation recursion is bounded the same way.
 *
 * Beyond the list in expr.h: `||`, NULLIF, TRY_CAST (NULL instead of an
 * error), LTRIM/RTRIM, CEILING, CHARACTER_LENGTH, LIKE .. ESCAPE, IS
 * [NOT] UNKNOWN; the clock: CURRENT_TIMESTAMP[(p)], LOCALTIMESTAMP, NOW(),
 * CURRENT_ROW_TIMESTAMP() (the wall clock read at each evaluation, UTC,
 * TIMESTAMP(3)), UNIX_TIMESTAMP([s]), FROM_UNIXTIME(n), TIMESTAMPADD(unit,
 * n, ts), TIMESTAMPDIFF(unit, t1, t2); RAND([seed]) and RAND_INTEGER([seed,]
 * bound) on java.util.Random's generator, with their state kept per thread
 * (see "RAND" below).
 *
 * Intervals: a node of type BIGINT flagged `interval` holds milliseconds and
 * records its fields (INTERVAL '1:30' MINUTE TO SECOND), or months for the
 * year-month kind (INTERVAL '1-2' YEAR TO MONTH; fields IV_YM_*, which never
 * mix with day-time ones; not a result of their own). DATE, TIME and
 * TIMESTAMP(p) +/- INTERVAL follow Flink's generated code (expr_check.c's
 * make_temporal). Literals follow Flink: '1.5' SECOND,
 * the 'D HH:MM:SS.fff' forms, and a leading field of at most 2 digits unless
 * a precision is written (INTERVAL '100' SECOND(3)). TIMESTAMP +/- INTERVAL
 * is a TIMESTAMP; INTERVAL +/- INTERVAL, INTERVAL * INT and INTERVAL / INT
 * are intervals; an interval mixes with no other number and compares only
 * with intervals. CAST(n AS INTERVAL SECOND) counts the first field, CAST of
 * an interval to INT/BIGINT counts its last field, to STRING gives Flink's
 * "+0 00:00:05.000". A projected interval is a BIGINT of milliseconds (rows
 * have no interval type). TIMESTAMP <-> number CASTs are refused, as Flink
 * refuses them, with the function to use instead. Choices where SQL dialects
 * differ follow Flink: SUBSTRING counts a negative start from the end and
 * gives NULL for a negative length; TO_TIMESTAMP gives NULL for an
 * unparsable string; CAST(DOUBLE AS STRING) writes Java's form ("1.0E10");
 * DOUBLE -> integer CASTs saturate and BIGINT -> INT wraps, as Java does.
 * UPPER/LOWER change ASCII letters only. A bare NULL has type SL_T_NULL,
 * which every operator accepts and which evaluates to NULL.
 *
 * DATE_FORMAT (expr_datefmt.c) and the REGEXP functions (expr_regex.c)
 * compile a constant format or pattern once, while checking, into the
 * node's `aux`; REGEXP's patterns must be constants, since compiling one
 * allocates. Their semantics, and where POSIX ERE differs from Java's
 * regular expressions, are in docs/SQL.md.
 *
 * Errors found while checking say "line L, column C: ..." as the SQL
 * parser's do; errors at run time end "at position N", a 1-based byte offset
 * into the text.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expr_int.h"
#include "calendar.h"
#include "duration.h"
#include "temporal.h"

const int64_t sl_expr_iv_ms[IV_N] = {1, 1000, 60000, 3600000, 86400000};
const char *const sl_expr_iv_name[IV_N] = {"MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY"};
const char *const sl_expr_tu_name[TU_N] = {"SECOND", "MINUTE", "HOUR", "DAY",
                                           "WEEK",   "MONTH",  "QUARTER", "YEAR"};
const int64_t sl_expr_tu_ms[TU_N] = {1000, 60000, 3600000, 86400000, 604800000, 0, 0, 0};
const int sl_expr_tu_months[TU_N] = {0, 0, 0, 0, 0, 1, 3, 12};

/* Read exactly `w` digits. */
static bool read_digits(const char *s, size_t n, size_t *i, int w, int *out)
{
    int v = 0;
    for (int k = 0; k < w; k++) {
        if (*i >= n || !is_digit((unsigned char)s[*i])) return false;
        v = v * 10 + (s[(*i)++] - '0');
    }
    *out = v;
    return true;
}

/* Parse 'YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]]' (blanks around are allowed; digits
 * beyond milliseconds are dropped) into ms since the epoch, UTC. */
bool sl_expr_ts_parse(const char *s, size_t n, int64_t *out)
{
    while (n > 0 && (s[0] == ' ' || s[0] == '\t')) s++, n--;
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    size_t i = 0;
    int y, mo, d, h = 0, mi = 0, sec = 0, frac = 0;
    if (!read_digits(s, n, &i, 4, &y) || i >= n || s[i++] != '-') return false;
    if (!read_digits(s, n, &i, 2, &mo) || i >= n || s[i++] != '-') return false;
    if (!read_digits(s, n, &i, 2, &d)) return false;
    if (i < n) {
        if (s[i] != ' ' && s[i] != 'T') return false;
        i++;
        if (!read_digits(s, n, &i, 2, &h) || i >= n || s[i++] != ':') return false;
        if (!read_digits(s, n, &i, 2, &mi)) return false;
        if (i < n && s[i] == ':') {
            i++;
            if (!read_digits(s, n, &i, 2, &sec)) return false;
            if (i < n && s[i] == '.') {
                i++;
                int nd = 0;
                while (i < n && is_digit((unsigned char)s[i])) {
                    if (nd < 3) frac = frac * 10 + (s[i] - '0');
                    nd++, i++;
                }
                if (nd == 0) return false;
                for (; nd < 3; nd++) frac *= 10;
            }
        }
    }
    if (i != n) return false;
    if (mo < 1 || mo > 12 || d < 1 || d > sl_days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59)
        return false;
    *out = sl_days_from_civil(y, mo, d) * 86400000 + (int64_t)h * 3600000 + (int64_t)mi * 60000 +
           (int64_t)sec * 1000 + frac;
    return true;
}


/* ---- intervals ----------------------------------------------------------- */

/* Parse an optionally signed decimal integer s[0..n) into *out (no overflow). */
bool sl_expr_parse_i64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    if (i >= n) return false;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (!is_digit((unsigned char)s[i])) return false;
        unsigned dgt = (unsigned)(s[i] - '0');
        if (v > (lim - dgt) / 10) return false;
        v = v * 10 + dgt;
    }
    *out = neg ? wrap64(0 - v) : (int64_t)v;
    return true;
}

void sl_expr_free_nodes(node *all)
{
    while (all) {
        node *next = all->next_all;
        free(all->kids);
        free(all->owned);
        if (all->aux && (all->op == N_REGEXP || all->op == N_REGEXP_EXTRACT ||
                         all->op == N_REGEXP_REPLACE || all->op == N_SIMILAR))
            regfree(&((sl_rx *)all->aux)->re);
        if (all->op != N_UDF) free(all->aux); /* a user function's signature is borrowed */
        free(all);
        all = next;
    }
}

/* An interval's node holds a BIGINT (months or milliseconds); its result is
 * the interval type finish() gave it (expr_check.c). */
sl_type sl_expr_type(const sl_expr *e)
{
    return e->root->interval && e->root->dt ? e->root->dt->kind : e->root->type;
}

const sl_dtype *sl_expr_dtype(const sl_expr *e)
{
    if (e->root->dt) return e->root->dt;
    return sl_dtype_basic(e->root->type);
}

void sl_expr_destroy(sl_expr *e)
{
    if (!e) return;
    sl_expr_free_nodes(e->all);
    free(e->zone);
    free(e);
}

/* ---- the session time zone ----------------------------------------------- */

int sl_expr_set_zone(sl_expr *e, const char *zone, char *err, size_t errlen)
{
    free(e->zone);
    e->zone = NULL;
    if (!zone || !strcmp(zone, "UTC") || !strcmp(zone, "Z")) return SL_OK; /* the fast path */
    sl_tz *tz = sl_tz_open(zone, SL_TZ_JAVA_TIME, err, errlen);
    if (!tz) return SL_ERR;
    sl_tz_destroy(tz);
    e->zone = sl_strdup(zone);
    return SL_OK;
}

const char *sl_expr_zone(const sl_expr *e) { return e->zone; }

/* This thread's open zones, one per rule set: evaluation allocates nothing
 * once they are open (a thread evaluates trees of one session zone; a
 * different name reopens). */
static _Thread_local sl_tz *tl_tz[2];
static _Thread_local char tl_tz_name[2][64];

static pthread_key_t tl_tz_key; /* its destructor closes a thread's zones as it ends */
static pthread_once_t tl_tz_once = PTHREAD_ONCE_INIT;

static void zones_close(void *unused)
{
    (void)unused;
    for (int r = 0; r < 2; r++) {
        sl_tz_destroy(tl_tz[r]);
        tl_tz[r] = NULL;
    }
}

static void zones_key(void) { pthread_key_create(&tl_tz_key, zones_close); }

static sl_tz *zone_open(const char *zone, sl_tz_rules rules)
{
    int r = rules == SL_TZ_JAVA_UTIL;
    if (tl_tz[r] && !strcmp(tl_tz_name[r], zone)) return tl_tz[r];
    if (!tl_tz[0] && !tl_tz[1]) { /* this thread's first zone: closed when it ends */
        pthread_once(&tl_tz_once, zones_key);
        pthread_setspecific(tl_tz_key, tl_tz);
    }
    sl_tz_destroy(tl_tz[r]);
    /* the name was checked under java.time's rules by sl_expr_set_zone; java.util
     * reads every such name alike (an offset "+08:00" only as GMT+08:00) */
    char util[72];
    if (r && (zone[0] == '+' || zone[0] == '-')) snprintf(util, sizeof util, "GMT%s", zone);
    tl_tz[r] = sl_tz_open(r && (zone[0] == '+' || zone[0] == '-') ? util : zone, rules, NULL, 0);
    snprintf(tl_tz_name[r], sizeof tl_tz_name[r], "%s", tl_tz[r] ? zone : "");
    return tl_tz[r];
}

int64_t sl_expr_zone_local(const char *zone, int64_t ms)
{
    sl_tz *tz = zone ? zone_open(zone, SL_TZ_JAVA_TIME) : NULL;
    return tz ? sl_tz_to_local(tz, ms) : ms;
}

int64_t sl_expr_zone_utc(const char *zone, int64_t ms)
{
    sl_tz *tz = zone ? zone_open(zone, SL_TZ_JAVA_TIME) : NULL;
    return tz ? sl_tz_to_utc(tz, ms) : ms;
}

int64_t sl_expr_zone_utc_sdf(const char *zone, int64_t ms)
{
    sl_tz *tz = zone ? zone_open(zone, SL_TZ_JAVA_UTIL) : NULL;
    return tz ? sl_tz_to_utc(tz, ms) : ms;
}
