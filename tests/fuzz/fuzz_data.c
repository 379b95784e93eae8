/*
 * fuzz_data.c -- libFuzzer target for data frames as a receiving task reads
 * them (taskmanager/exchange.c tm_exchange_read, then the record's row
 * decode as task.c does it). The input is a sequence of buffers, each a
 * u8 input channel and a u16 length, then that many bytes; the reader
 * (two channels) reassembles spanning records across them. An element the
 * reader hands out must lie inside its buffer or its reassembly buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "row.h"
#include "tm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sl_schema s;
    sl_schema_init(&s);
    sl_schema_add(&s, "id", SL_T_BIGINT);
    sl_schema_add(&s, "name", SL_T_STRING);
    sl_schema_add(&s, "ts", SL_T_TIMESTAMP);
    tm_reader rd;
    tm_reader_init(&rd, 2);
    size_t at = 0;
    int dead = 0;
    while (!dead && size - at >= 3) {
        int chan = data[at] % 3; /* 2: a channel the reader does not have */
        size_t n = sl_get_le16(data + at + 1);
        at += 3;
        if (n > size - at) n = size - at;
        sl_netbuf b;
        memset(&b, 0, sizeof b);
        b.data = malloc(n ? n : 1); /* its own allocation: ASan sees any overrun */
        memcpy(b.data, data + at, n);
        b.len = b.cap = (uint32_t)n;
        b.chan = chan;
        at += n;
        size_t pos = 0;
        for (;;) {
            tm_element el;
            char err[200];
            int x = tm_exchange_read(&rd, &b, &pos, &el, err, sizeof err);
            if (x == SL_DONE) break;
            if (x == SL_AGAIN) continue;
            if (x != SL_OK) {
                if (!err[0]) abort();
                dead = 1; /* the task fails on a damaged buffer */
                break;
            }
            if (el.tag == SL_EL_RECORD && el.len >= 8) {
                sl_value vals[3];
                sl_row row;
                row.vals = vals;
                if (sl_row_decode(el.p + 8, el.len - 8, &s, &row, err, sizeof err) == SL_OK) {
                    char text[64];
                    sl_value_format(text, sizeof text, &vals[1], SL_T_STRING);
                }
            }
        }
        free(b.data);
    }
    tm_reader_free(&rd);
    sl_schema_free(&s);
    return 0;
}
