/* Strings that come from a traced run (its argv, file and symbol names) or
 * from a report file, made safe for where rtlctl puts them: valid UTF-8 for
 * the JSON report, no control characters for a terminal. */
#ifndef RTL_TEXT_H
#define RTL_TEXT_H

#include <jansson.h>
#include <stddef.h>

/* A JSON string of s: each byte that is not part of well-formed UTF-8
 * becomes the four characters \xNN, so nothing is dropped. */
json_t *rtl_json_text(const char *s);

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF), 0 if none. */
size_t rtl_utf8_len(const unsigned char *s);

/* s as a terminal may show it, in buf (len bytes, always terminated, cut if
 * too long): control characters (C0, DEL, C1) become \xNN or \u00NN.
 * Returns buf. */
const char *rtl_shown(const char *s, char *buf, size_t len);

#endif
