/* %e and %p in the report's file name. Runs in the preload's fatal-signal
 * path, so it formats numbers itself. */
#include "report_path.h"

#include <string.h>

/* Append s to out[*n], stopping at the end of the buffer. */
static void put(char *out, size_t len, size_t *n, const char *s)
{
	while (*s && *n + 1 < len)
		out[(*n)++] = *s++;
}

static void put_pid(char *out, size_t len, size_t *n, long pid)
{
	char tmp[24], *p = tmp + sizeof(tmp) - 1;
	unsigned long v = pid < 0 ? 0 : (unsigned long)pid;

	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(out, len, n, p);
}

size_t rtl_report_path(const char *tmpl, const char *prog, long pid,
                       long owner, char *out, size_t len)
{
	size_t n = 0;

	if (!len)
		return 0;
	for (const char *s = tmpl; *s && n + 1 < len; s++) {
		if (s[0] == '%' && s[1] == 'e') {
			put(out, len, &n, prog);
			s++;
		} else if (s[0] == '%' && s[1] == 'p') {
			put_pid(out, len, &n, pid);
			s++;
		} else {
			out[n++] = *s;
		}
	}
	if (owner && owner != pid && !strstr(tmpl, "%p")) {
		put(out, len, &n, ".");
		put_pid(out, len, &n, pid);
	}
	out[n] = '\0';
	return n;
}
