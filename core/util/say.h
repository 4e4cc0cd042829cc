/* A diagnostic on stderr from code that may run in a signal handler, or
 * inside malloc, where stdio cannot: one write(2). If it fails there is
 * nowhere left to say so, and the result is dropped on purpose (glibc
 * marks write warn_unused_result under _FORTIFY_SOURCE, as packages build). */
#ifndef RTL_SAY_H
#define RTL_SAY_H

#include <stddef.h>
#include <unistd.h>

static inline void rtl_say(const char *s, size_t n)
{
	ssize_t r = write(2, s, n);

	(void)r;
}

#endif
