/*
 * test_decimal.c -- unit tests for exact DECIMAL (lib/decimal.c): about
 * 22,000 cases whose expected results Python's decimal module computes
 * (tests/tools/gen_decimal_vectors.py, run here through popen: seeded
 * random operands over precisions 1..38, text in several forms, doubles,
 * and quotients where the 38-digit rounding shows), then the result types
 * and printed values Flink 2.3 gave for the same expressions (docs/SQL.md,
 * "DECIMAL arithmetic"), written out by hand.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "sl_test.h"

static sl_dec_type ty(int p, int s)
{
    sl_dec_type t = {(uint8_t)p, (uint8_t)s};
    return t;
}

/* text of an exact value into (p, s); the vectors only hold valid ones */
static sl_dec val(const char *s, int p, int sc)
{
    sl_dec d = {0, 0};
    if (sl_dec_parse(s, strlen(s), ty(p, sc), &d) != SL_DEC_OK) {
        fprintf(stderr, "bad operand %s (%d, %d)\n", s, p, sc);
        exit(2);
    }
    return d;
}

/* the result as the vectors write it: the text, OVERFLOW, DIVZERO, SYNTAX */
static const char *outcome(int st, sl_dec v, int s, char *buf, size_t cap)
{
    switch (st) {
    case SL_DEC_OK: sl_dec_format(buf, cap, v, s); return buf;
    case SL_DEC_OVERFLOW: return "OVERFLOW";
    case SL_DEC_DIV_ZERO: return "DIVZERO";
    case SL_DEC_SYNTAX: return "SYNTAX";
    default: return "?";
    }
}

static int bad_line(int lineno, const char *line, const char *got)
{
    fprintf(stderr, "vector line %d: %s -> got %s\n", lineno, line, got);
    return 1;
}

/* One vector line; 0 when the code agrees. */
static int check_line(int lineno, char *line)
{
    char copy[512];
    snprintf(copy, sizeof copy, "%s", line);
    char *tok[12];
    int n = 0;
    for (char *sv, *t = strtok_r(line, " \n", &sv); t && n < 12; t = strtok_r(NULL, " \n", &sv))
        tok[n++] = t;
    if (n == 0) return 0;
    const char *op = tok[0];
    char buf[64], num[64];
    sl_dec r = {0, 0};
    int st;
    if (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mul") || !strcmp(op, "div") ||
        !strcmp(op, "mod")) {
        int p1 = atoi(tok[1]), s1 = atoi(tok[2]), p2 = atoi(tok[4]), s2 = atoi(tok[5]);
        sl_dec a = val(tok[3], p1, s1), b = val(tok[6], p2, s2);
        sl_dec_type ta = ty(p1, s1), tb = ty(p2, s2), t;
        if (op[0] == 'a') t = sl_dec_type_add(ta, tb), st = sl_dec_add(a, s1, b, s2, t, &r);
        else if (op[0] == 's') t = sl_dec_type_add(ta, tb), st = sl_dec_sub(a, s1, b, s2, t, &r);
        else if (op[0] == 'd') t = sl_dec_type_div(ta, tb), st = sl_dec_div(a, s1, b, s2, t, &r);
        else if (op[1] == 'u') t = sl_dec_type_mul(ta, tb), st = sl_dec_mul(a, s1, b, s2, t, &r);
        else t = sl_dec_type_mod(ta, tb), st = sl_dec_mod(a, s1, b, s2, t, &r);
        if (t.p != atoi(tok[7]) || t.s != atoi(tok[8])) {
            snprintf(buf, sizeof buf, "type (%d, %d)", t.p, t.s);
            return bad_line(lineno, copy, buf);
        }
        const char *got = outcome(st, r, t.s, buf, sizeof buf);
        return strcmp(got, tok[9]) ? bad_line(lineno, copy, got) : 0;
    }
    if (!strcmp(op, "cmp")) {
        int s1 = atoi(tok[2]), s2 = atoi(tok[5]);
        int c = sl_dec_cmp(val(tok[3], atoi(tok[1]), s1), s1, val(tok[6], atoi(tok[4]), s2), s2);
        c = (c > 0) - (c < 0);
        snprintf(buf, sizeof buf, "%d", c);
        return c != atoi(tok[7]) ? bad_line(lineno, copy, buf) : 0;
    }
    if (!strcmp(op, "parse")) {
        snprintf(num, sizeof num, "%s", tok[3]);
        for (char *q = num; *q; q++)
            if (*q == '_') *q = ' ';
        sl_dec_type t = ty(atoi(tok[1]), atoi(tok[2]));
        st = sl_dec_parse(num, strlen(num), t, &r);
        const char *got = outcome(st, r, t.s, buf, sizeof buf);
        return strcmp(got, tok[4]) ? bad_line(lineno, copy, got) : 0;
    }
    int p1 = atoi(tok[1]), s1 = atoi(tok[2]);
    if (!strcmp(op, "fromdouble")) {
        double x = strtod(tok[1], NULL);
        sl_dec_type t = ty(atoi(tok[2]), atoi(tok[3]));
        st = sl_dec_from_double(x, t, &r);
        const char *got = outcome(st, r, t.s, buf, sizeof buf);
        return strcmp(got, tok[4]) ? bad_line(lineno, copy, got) : 0;
    }
    sl_dec a = val(tok[3], p1, s1);
    if (!strcmp(op, "rescale") || !strcmp(op, "floor") || !strcmp(op, "ceil")) {
        sl_dec_type t = ty(atoi(tok[4]), atoi(tok[5]));
        if (op[0] == 'r') {
            st = sl_dec_rescale(a, s1, t, &r);
        } else {
            sl_dec_type want = sl_dec_type_floor(ty(p1, s1));
            if (want.p != t.p || want.s != t.s) return bad_line(lineno, copy, "floor type");
            st = op[0] == 'f' ? sl_dec_floor(a, s1, t, &r) : sl_dec_ceil(a, s1, t, &r);
        }
        const char *got = outcome(st, r, t.s, buf, sizeof buf);
        return strcmp(got, tok[6]) ? bad_line(lineno, copy, got) : 0;
    }
    if (!strcmp(op, "round") || !strcmp(op, "trunc")) {
        int nd = atoi(tok[4]);
        sl_dec_type t = sl_dec_type_round(ty(p1, s1), nd);
        if (t.p != atoi(tok[5]) || t.s != atoi(tok[6])) return bad_line(lineno, copy, "round type");
        st = op[0] == 'r' ? sl_dec_round(a, s1, nd, t, &r) : sl_dec_truncate(a, s1, nd, t, &r);
        const char *got = outcome(st, r, t.s, buf, sizeof buf);
        return strcmp(got, tok[7]) ? bad_line(lineno, copy, got) : 0;
    }
    if (!strcmp(op, "toint")) {
        int64_t i;
        st = sl_dec_to_i64(a, s1, &i);
        if (st == SL_DEC_OK) snprintf(buf, sizeof buf, "%" PRId64, i);
        else snprintf(buf, sizeof buf, "OVERFLOW:%" PRId64, i);
        return strcmp(buf, tok[4]) ? bad_line(lineno, copy, buf) : 0;
    }
    if (!strcmp(op, "todouble")) {
        double d = sl_dec_to_double(a, ty(p1, s1));
        snprintf(buf, sizeof buf, "%.17g", d);
        return d != strtod(tok[4], NULL) ? bad_line(lineno, copy, buf) : 0;
    }
    return bad_line(lineno, copy, "unknown op");
}

/* Every line the generator prints agrees with the code. */
static void test_vectors(void)
{
    FILE *f = popen("python3 tests/tools/gen_decimal_vectors.py", "r");
    CHECK(f != NULL);
    char line[512];
    int lines = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        bad += check_line(lines, line);
        if (bad > 20) break;
    }
    int rc = pclose(f);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(rc, 0);
    CHECK(lines > 20000);
}

/* Result types and printed values Flink 2.3 gave (batch mode, CAST to
 * STRING and the collected value alike). */
static void test_flink_types(void)
{
    sl_dec_type t = sl_dec_type_div(ty(10, 2), ty(5, 1));
    CHECK(t.p == 17 && t.s == 8);
    sl_dec r;
    char buf[64];
    CHECK_EQ_INT(sl_dec_div(val("1", 10, 2), 2, val("3", 5, 1), 1, t, &r), SL_DEC_OK);
    sl_dec_format(buf, sizeof buf, r, t.s);
    CHECK_EQ_STR(buf, "0.33333333");
    t = sl_dec_type_mul(ty(38, 10), ty(38, 10)); /* 3.375000 */
    CHECK(t.p == 38 && t.s == 6);
    t = sl_dec_type_add(ty(38, 20), ty(38, 30)); /* 3.7500000000000000000 */
    CHECK(t.p == 38 && t.s == 19);
    t = sl_dec_type_div(ty(20, 2), ty(30, 5)); /* 0.666666666666667 */
    CHECK(t.p == 38 && t.s == 15);
    CHECK_EQ_INT(sl_dec_div(val("1.5", 20, 2), 2, val("2.25", 30, 5), 5, t, &r), SL_DEC_OK);
    sl_dec_format(buf, sizeof buf, r, t.s);
    CHECK_EQ_STR(buf, "0.666666666666667");
    t = sl_dec_type_mod(ty(38, 0), ty(5, 2)); /* 17 % 2.5 = 2.00 */
    CHECK(t.p == 5 && t.s == 2);
    t = sl_dec_type_mod(ty(10, 1), ty(3, 0)); /* -17.5 % 4 = -1.5 */
    CHECK_EQ_INT(sl_dec_mod(val("-17.5", 10, 1), 1, val("4", 3, 0), 0, t, &r), SL_DEC_OK);
    sl_dec_format(buf, sizeof buf, r, t.s);
    CHECK_EQ_STR(buf, "-1.5");
    sl_dec_format(buf, sizeof buf, sl_dec_from_i128(0), 2);
    CHECK_EQ_STR(buf, "0.00");
    sl_dec_format(buf, sizeof buf, sl_dec_from_i128(-50), 2);
    CHECK_EQ_STR(buf, "-0.50");
    sl_dec_format(buf, sizeof buf, sl_dec_from_i128(0), 0);
    CHECK_EQ_STR(buf, "0");
}

/* Bounds: the widest values, text longer than any precision, the cut at
 * a small buffer, statuses for bad input. */
static void test_edges(void)
{
    char buf[64];
    sl_dec r;
    const char *max38 = "99999999999999999999999999999999999999";
    CHECK_EQ_INT(sl_dec_parse(max38, strlen(max38), ty(38, 0), &r), SL_DEC_OK);
    CHECK_EQ_INT(sl_dec_format(buf, sizeof buf, r, 0), 38);
    CHECK_EQ_STR(buf, max38);
    CHECK_EQ_INT(sl_dec_format(buf, sizeof buf, sl_dec_neg(r), 38), SL_DEC_TEXT_MAX);
    CHECK_EQ_STR(buf, "-0.99999999999999999999999999999999999999");
    CHECK_EQ_INT(sl_dec_format(buf, 4, r, 0), 38); /* cut, NUL kept */
    CHECK_EQ_STR(buf, "999");
    sl_dec one;
    CHECK_EQ_INT(sl_dec_from_i64(1, ty(38, 0), &one), SL_DEC_OK);
    CHECK_EQ_INT(sl_dec_add(r, 0, one, 0, ty(38, 0), &r), SL_DEC_OVERFLOW);
    const char *longtext = "1234567890123456789012345678901234567890123456789012345678901234567890"
                           "1234567890123456789012345678901234567890123456789012345678901234567890";
    CHECK_EQ_INT(sl_dec_parse(longtext, strlen(longtext), ty(38, 0), &r), SL_DEC_OVERFLOW);
    CHECK_EQ_INT(sl_dec_parse("1e99999999999", 13, ty(38, 0), &r), SL_DEC_OVERFLOW);
    CHECK_EQ_INT(sl_dec_parse("1e-99999999999", 14, ty(38, 2), &r), SL_DEC_OK);
    CHECK(sl_dec_sign(r) == 0);
    CHECK_EQ_INT(sl_dec_parse("", 0, ty(38, 2), &r), SL_DEC_SYNTAX);
    CHECK_EQ_INT(sl_dec_from_double(0.0 / 0.0, ty(10, 2), &r), SL_DEC_NOT_FINITE);
    CHECK_EQ_INT(sl_dec_from_i64(INT64_MIN, ty(19, 0), &r), SL_DEC_OK);
    int64_t i;
    CHECK_EQ_INT(sl_dec_to_i64(r, 0, &i), SL_DEC_OK);
    CHECK(i == INT64_MIN);
    CHECK_EQ_INT(sl_dec_from_i64(INT64_MIN, ty(18, 0), &r), SL_DEC_OVERFLOW);
    CHECK_EQ_INT(sl_dec_div(one, 0, sl_dec_from_i128(0), 0, ty(38, 6), &r), SL_DEC_DIV_ZERO);
    CHECK_EQ_INT(sl_dec_mod(one, 0, sl_dec_from_i128(0), 0, ty(38, 6), &r), SL_DEC_DIV_ZERO);
    sl_dec_type t = sl_dec_type_avg(ty(10, 2));
    CHECK(t.p == 38 && t.s == 6);
    /* Flink: AVG(1.10, 2.25, 3.00) = 2.116667, SUM = 6.35 */
    sl_dec sum, cnt;
    CHECK_EQ_INT(sl_dec_add(val("1.10", 10, 2), 2, val("2.25", 10, 2), 2, sl_dec_type_sum(ty(10, 2)), &sum), SL_DEC_OK);
    CHECK_EQ_INT(sl_dec_add(sum, 2, val("3.00", 10, 2), 2, sl_dec_type_sum(ty(10, 2)), &sum), SL_DEC_OK);
    sl_dec_format(buf, sizeof buf, sum, 2);
    CHECK_EQ_STR(buf, "6.35");
    CHECK_EQ_INT(sl_dec_from_i64(3, sl_dec_type_of_int(8), &cnt), SL_DEC_OK);
    CHECK_EQ_INT(sl_dec_div(sum, 2, cnt, 0, t, &r), SL_DEC_OK);
    sl_dec_format(buf, sizeof buf, r, t.s);
    CHECK_EQ_STR(buf, "2.116667");
    t = sl_dec_type_sum(ty(10, 2));
    CHECK(t.p == 38 && t.s == 2);
    t = sl_dec_type_of_int(8);
    CHECK(t.p == 19 && t.s == 0);
}

/* Random text of number-like bytes: every answer is a status, and a value
 * read prints as text that reads back to the same value. */
static void test_random_text(void)
{
    static const char alphabet[] = "0123456789000.eE+- \t";
    unsigned seed = 12345;
    for (int round = 0; round < 200000; round++) {
        char text[64];
        seed = seed * 1103515245u + 12345u;
        int len = (int)(seed >> 16) % 60;
        for (int i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            text[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        text[len] = '\0';
        seed = seed * 1103515245u + 12345u;
        int p = 1 + (int)((seed >> 16) % 38);
        int sc = (int)((seed >> 8) % (unsigned)(p + 1));
        sl_dec v, back;
        int st = sl_dec_parse(text, (size_t)len, ty(p, sc), &v);
        CHECK(st == SL_DEC_OK || st == SL_DEC_OVERFLOW || st == SL_DEC_SYNTAX);
        if (st != SL_DEC_OK) continue;
        CHECK(sl_dec_fits(v, p));
        char buf[64];
        int n = sl_dec_format(buf, sizeof buf, v, sc);
        CHECK(n <= SL_DEC_TEXT_MAX);
        CHECK_EQ_INT(sl_dec_parse(buf, (size_t)n, ty(p, sc), &back), SL_DEC_OK);
        CHECK(back.lo == v.lo && back.hi == v.hi);
    }
}

int main(int argc, char **argv)
{
    static const sl_test_case tests[] = {
        SL_TEST(test_vectors),
        SL_TEST(test_flink_types),
        SL_TEST(test_edges),
        SL_TEST(test_random_text),
    };
    return sl_test_run(tests, SL_ARRAY_LEN(tests), argc, argv);
}
