/*
 * row_text.h -- the unit tests' text of emitted rows: each row as one line
 * "a|b|c\n" (sl_value_format per value) appended to a growing buffer.
 */
#ifndef SL_TEST_ROW_TEXT_H
#define SL_TEST_ROW_TEXT_H

#include <string.h>

#include "row.h"
#include "sl.h"

/* Append n bytes of p to *text (length *len, capacity *cap), kept
 * NUL-terminated. */
static inline void row_text_put(char **text, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (*len + n + 1 > *cap) {
        *cap = (*len + n + 1) * 2;
        *text = sl_realloc(*text, *cap);
    }
    memcpy(*text + *len, p, n);
    *len += n;
    (*text)[*len] = '\0';
}

/* Append row (of schema) as one line. */
static inline void row_text_row(char **text, size_t *len, size_t *cap, const sl_row *row,
                                const sl_schema *schema)
{
    char buf[4096];
    for (int i = 0; i < row->n; i++) {
        int n = sl_value_format(buf, sizeof buf, &row->vals[i], schema->fields[i].type);
        row_text_put(text, len, cap, buf, (size_t)SL_MIN(n, (int)sizeof buf - 1));
        row_text_put(text, len, cap, i + 1 < row->n ? "|" : "\n", 1);
    }
}

#endif
