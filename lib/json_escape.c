/*
 * json_escape.c -- the JSON string escaper (json_escape.h). Runs of bytes
 * that need no escape are copied with one append each, so a string without
 * escapes costs one scan and one copy.
 */
#include "json_escape.h"

void sl_json_escape(sl_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (SL_LIKELY(c >= 0x20 && c != '"' && c != '\\')) continue;
        sl_buf_put(b, s + run, i - run);
        run = i + 1;
        char esc[6] = {'\\', 0};
        size_t en = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            en = 6;
        }
        sl_buf_put(b, esc, en);
    }
    sl_buf_put(b, s + run, n - run);
}
