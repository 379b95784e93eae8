/*
 * text.c -- the edit distance and the timestamp formatter (see text.h).
 *
 * The distance keeps one row of the dynamic-programming table (the row of
 * a's prefix so far against every prefix of b) and the diagonal cell it is
 * about to overwrite, so its memory is one fixed array on the stack.
 *
 * Every timestamp form starts from the same civil split (calendar.h) and the
 * same year text (sl_civil_format_year); the styles differ only in the
 * separator and in how much of the seconds and the fraction they show.
 */
#include "text.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "calendar.h"

int sl_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SL_EDIT_MAX_LEN || lb > SL_EDIT_MAX_LEN) return SL_EDIT_FAR;
    int row[SL_EDIT_MAX_LEN + 1];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0]; /* the cell [i-1][j-1] */
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j]; /* [i-1][j] */
            int best = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

int sl_ts_text(char *dst, size_t cap, int64_t ms, sl_ts_style style)
{
    sl_civil c = sl_civil_from_ms(ms);
    char y[24], buf[64];
    sl_civil_format_year(y, sizeof y, c.year);
    int n;
    if (style == SL_TS_JAVA) {
        n = snprintf(buf, sizeof buf, "%s-%02d-%02dT%02d:%02d", y, c.month, c.day, c.hour,
                     c.minute);
        if (c.second || c.milli) n += snprintf(buf + n, sizeof buf - (size_t)n, ":%02d", c.second);
        if (c.milli) n += snprintf(buf + n, sizeof buf - (size_t)n, ".%03d", c.milli);
    } else {
        n = snprintf(buf, sizeof buf, "%s-%02d-%02d%c%02d:%02d:%02d.%03d", y, c.month, c.day,
                     style == SL_TS_ISO ? 'T' : ' ', c.hour, c.minute, c.second, c.milli);
        if (style == SL_TS_SQL) { /* the '.' stops the trim before the seconds */
            while (buf[n - 1] == '0') n--;
            if (buf[n - 1] == '.') n--;
            buf[n] = '\0';
        }
    }
    if (cap > 0) {
        size_t k = (size_t)n < cap ? (size_t)n : cap - 1;
        memcpy(dst, buf, k);
        dst[k] = '\0';
    }
    return n;
}
