/* %e and %p in the report's file name. Runs in the preload's fatal-signal
 * path, so it formats numbers itself. */
#include "policy/report_path.h"

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

/* Insert ".PID" before the extension of out's last path component
 * ("c.json" -> "c.4242.json"), or at the end if it has none (a leading dot
 * is no extension: ".rtl" -> ".rtl.4242"). out holds n bytes; returns the
 * new length, the tail cut if the buffer is short. */
static size_t put_pid_before_ext(char *out, size_t len, size_t n, long pid)
{
	char num[32];
	size_t k = 0, at = n, base = 0;

	num[k++] = '.';
	put_pid(num, sizeof(num), &k, pid);
	for (size_t i = 0; i < n; i++)
		if (out[i] == '/')
			base = i + 1;
	for (size_t i = n; i-- > base + 1;) /* base + 0 would be a leading dot */
		if (out[i] == '.') {
			at = i;
			break;
		}
	if (at + k >= len)
		return n; /* no room for the pid: the name as it is */
	if (n + k >= len)
		n = len - 1 - k; /* the extension's end is cut */
	memmove(out + at + k, out + at, n - at);
	memcpy(out + at, num, k);
	return n + k;
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
	if (owner && owner != pid && !strstr(tmpl, "%p"))
		n = put_pid_before_ext(out, len, n, pid);
	out[n] = '\0';
	return n;
}
