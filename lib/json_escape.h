/*
 * json_escape.h -- the one JSON string escaper (RFC 8259, section 7).
 *
 * Escapes exactly what the RFC requires: the quotation mark, the reverse
 * solidus and the control characters U+0000..U+001F -- \b \f \n \r \t in
 * their short forms, the others as \u00xx (lowercase hex). Every other
 * byte is copied as it is, so valid UTF-8 comes out byte for byte (and
 * invalid UTF-8 is passed through, not repaired).
 */
#ifndef SL_JSON_ESCAPE_H
#define SL_JSON_ESCAPE_H

#include "buf.h"

/* s[0..n) escaped (without the surrounding quotes) appended to b. */
void sl_json_escape(sl_buf *b, const char *s, size_t n);

#endif
