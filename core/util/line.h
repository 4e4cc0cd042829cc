/* A line of text for stderr built without stdio, for code that runs in a
 * signal handler or inside malloc (the trap diagnostics, the preload's
 * trap log): a buffer on the caller's stack, flushed with write(2) when it
 * fills and at the end. No malloc, no locks, no locale. */
#ifndef RTL_LINE_H
#define RTL_LINE_H

#include <stdint.h>
#include <unistd.h>

#include "core/util/fmt.h"

struct rtl_line {
	char buf[512]; /* small enough for an alternate signal stack */
	unsigned n;
};

/* Write what the line holds to stderr and empty it. A failed write drops
 * the text: there is nowhere left to say so. */
static inline void rtl_line_flush(struct rtl_line *l)
{
	unsigned done = 0;

	while (done < l->n) {
		ssize_t w = write(STDERR_FILENO, l->buf + done, l->n - done);
		if (w <= 0)
			break;
		done += (unsigned)w;
	}
	l->n = 0;
}

static inline void rtl_line_str(struct rtl_line *l, const char *s)
{
	while (*s) {
		if (l->n == sizeof(l->buf))
			rtl_line_flush(l);
		l->buf[l->n++] = *s++;
	}
}

static inline void rtl_line_dec(struct rtl_line *l, uint64_t v)
{
	char tmp[RTL_FMT_MAX];

	rtl_line_str(l, rtl_fmt_dec(v, tmp));
}

static inline void rtl_line_hex(struct rtl_line *l, uint64_t v)
{
	char tmp[RTL_FMT_MAX];

	rtl_line_str(l, rtl_fmt_hex(v, tmp));
}

#endif
