/* Escaping for the JSON report and the terminal (text.h). A crafted report
 * must not drive the terminal that prints it (escape sequences, carriage
 * returns), and an argument that is not UTF-8 must not vanish from the
 * report: jansson refuses such strings. */
#include "tools/util/text.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), 0 if there is none. */
size_t rtl_utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0; /* also stops at the terminating NUL */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

json_t *rtl_json_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len = strlen((const char *)p), n = 0;
	char *out = malloc(4 * len + 1);
	json_t *j;

	if (!out)
		return NULL;
	while (*p) {
		size_t k = rtl_utf8_len(p);

		if (k) {
			memcpy(out + n, p, k);
			n += k;
			p += k;
		} else {
			n += (size_t)sprintf(out + n, "\\x%02x", *p++);
		}
	}
	out[n] = '\0';
	j = json_stringn(out, n);
	free(out);
	return j;
}

const char *rtl_shown(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = 0;

	if (!len)
		return buf;
	while (*p) {
		char esc[8];
		size_t k = rtl_utf8_len(p);

		if (*p < 0x20 || *p == 0x7f || !k) {
			k = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", *p++);
		} else if (p[0] == 0xc2 && p[1] <= 0x9f) {
			/* a C1 control (CSI is one) */
			k = (size_t)snprintf(esc, sizeof(esc), "\\u00%02x", p[1]);
			p += 2;
		} else {
			memcpy(esc, p, k);
			p += k;
		}
		if (n + k >= len)
			break;
		memcpy(buf + n, esc, k);
		n += k;
	}
	buf[n] = '\0';
	return buf;
}
