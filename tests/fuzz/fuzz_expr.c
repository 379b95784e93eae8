/*
 * fuzz_expr.c -- libFuzzer target for calc expressions (lang/expr.c):
 * parse against a fixed schema (as a projection item or a bare
 * expression), then evaluate the tree on three rows -- ordinary values,
 * extremes, NULLs -- with a bounded scratch arena, and format the result.
 * Runtime errors (division by zero, overflow, a bad CAST) are expected;
 * a crash, a sanitizer report or an error without a message is a bug.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

#define NCOLS 6

static void fill(sl_value *v, int which)
{
    memset(v, 0, NCOLS * sizeof *v);
    if (which == 2) {
        for (int i = 0; i < NCOLS; i++) v[i].isnull = true;
        return;
    }
    static const char *strs[2] = {"hello, World", ""};
    v[0].v.i = which ? INT32_MIN : 7;
    v[1].v.i = which ? INT64_MIN : 1000000007;
    v[2].v.s.p = strs[which];
    v[2].v.s.len = (uint32_t)strlen(strs[which]);
    v[3].v.d = which ? -INFINITY : 2.5;
    v[4].v.i = which ? INT64_MAX : 1767225600000;
    v[5].v.i = which;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    sl_schema s;
    sl_schema_init(&s);
    sl_schema_add(&s, "a", SL_T_INT);
    sl_schema_add(&s, "b", SL_T_BIGINT);
    sl_schema_add(&s, "s", SL_T_STRING);
    sl_schema_add(&s, "d", SL_T_DOUBLE);
    sl_schema_add(&s, "ts", SL_T_TIMESTAMP);
    sl_schema_add(&s, "flag", SL_T_BOOLEAN);
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char err[512];
    err[0] = '\0';
    char *name = NULL;
    sl_expr *e = data[0] & 1 ? sl_expr_parse_item(text, &s, 3, &name, err, sizeof err)
                             : sl_expr_parse(text, &s, err, sizeof err);
    if (!e) {
        if (!err[0]) abort();
    } else {
        sl_arena arena;
        sl_arena_init(&arena, 1 << 16);
        for (int w = 0; w < 3; w++) {
            sl_value vals[NCOLS];
            fill(vals, w);
            sl_row row = {SL_KIND_INSERT, NCOLS, vals, SL_TS_NONE};
            sl_value out;
            err[0] = '\0';
            if (sl_expr_eval(e, &row, &arena, &out, err, sizeof err) == SL_OK) {
                char buf[128];
                sl_value_format(buf, sizeof buf, &out, sl_expr_type(e));
            } else if (!err[0]) {
                abort();
            }
            if (sl_expr_type(e) == SL_T_BOOLEAN || sl_expr_type(e) == SL_T_NULL) {
                bool pass;
                sl_expr_eval_bool(e, &row, &arena, &pass, err, sizeof err);
            }
            sl_arena_reset(&arena);
        }
        sl_arena_free(&arena);
        sl_expr_destroy(e);
    }
    free(name);
    free(text);
    sl_schema_free(&s);
    return 0;
}
