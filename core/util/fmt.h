/* Numbers as text without stdio, for code that runs in a signal handler (the
 * trap diagnostics, the preload's trap log): no locale, no malloc, no locks.
 * Each formatter writes into the caller's buffer and returns where the text
 * starts in it. */
#ifndef RTL_FMT_H
#define RTL_FMT_H

#include <stdint.h>

#define RTL_FMT_MAX 24 /* "0x" + 16 hex digits, or 20 decimal digits, + NUL */

static inline char *rtl_fmt_dec(uint64_t v, char buf[RTL_FMT_MAX])
{
	char *p = buf + RTL_FMT_MAX - 1;

	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

/* "0x" and lower-case digits, no leading zeros. */
static inline char *rtl_fmt_hex(uint64_t v, char buf[RTL_FMT_MAX])
{
	char *p = buf + RTL_FMT_MAX - 1;

	*p = '\0';
	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	return p;
}

#endif
