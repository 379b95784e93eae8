/*
 * fuzz_rows.c -- libFuzzer target for the binary row and key forms
 * (core/row.c). The first byte picks a schema (up to 8 columns, each
 * type from 3 bits of the next bytes, from the original seven types or,
 * when bit 0 of data[0] / 9 is set, from eight of the newer ones: DECIMAL,
 * DATE, TIME(9), TIMESTAMP(6) and nested ARRAY/MAP/MULTISET/ROW); the rest
 * is decoded as a row, as
 * key bytes of its first columns, and every decoded value is formatted.
 * A row that decodes must encode back to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "row.h"

static const sl_type types[8] = {SL_T_BOOLEAN, SL_T_INT, SL_T_BIGINT, SL_T_DOUBLE,
                                 SL_T_STRING, SL_T_BYTES, SL_T_TIMESTAMP, SL_T_STRING};

static const char *const newer[8] = {
    "DECIMAL(10, 2)", "DECIMAL(38, 4)", "DATE", "TIME(9)", "TIMESTAMP(6)",
    "ARRAY<INT>", "MAP<STRING, ARRAY<BIGINT>>", "ROW<a TINYINT, b MULTISET<FLOAT>, c ROW<d SMALLINT>>",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    int n = data[0] % 9;
    bool wide = (data[0] / 9) & 1;
    sl_schema s;
    sl_schema_init(&s);
    for (int i = 0; i < n; i++) {
        char name[8];
        name[0] = 'c';
        name[1] = (char)('0' + i);
        name[2] = '\0';
        int k = (data[1] >> (i % 3)) % 8 ^ (i & 7);
        const sl_dtype *dt = NULL;
        if (wide && sl_dtype_parse(newer[k], &dt, NULL, 0) == SL_OK) sl_schema_add_dt(&s, name, dt);
        else sl_schema_add(&s, name, types[k]);
    }
    const uint8_t *p = data + 2;
    size_t len = size - 2;
    sl_value vals[8];
    sl_row row;
    row.vals = vals;
    char err[200];
    if (sl_row_decode(p, len, &s, &row, err, sizeof err) == SL_OK) {
        char text[256];
        for (int i = 0; i < row.n; i++)
            sl_value_format_dt(text, sizeof text, &row.vals[i], s.fields[i].dt);
        size_t need = sl_row_size(&row, &s);
        uint8_t *back = malloc(need ? need : 1);
        size_t got = sl_row_encode(&row, &s, back, need);
        if (got != need || got > len || memcmp(back, p, got)) abort();
        free(back);
    } else if (!err[0]) {
        abort(); /* a refusal says why */
    }
    int keys[8];
    for (int i = 0; i < n; i++) keys[i] = n - 1 - i;
    int nkeys = n ? 1 + data[1] % n : 0;
    sl_value kv[8];
    sl_row_key_decode(p, len, &s, keys, nkeys, kv);
    sl_schema_free(&s);
    return 0;
}
