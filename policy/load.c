/* Policy files: read a whole regular file and parse it (parse.c). The
 * preload calls this in every process's constructor: it never waits (a
 * FIFO is refused, not read) and says what is wrong with the file as one
 * "FILE:0: ..." error. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"

/* One error about the file as a whole; -1. */
static int file_error(struct rtl_policy_errors *errs, const char *path,
                      const char *what, int err)
{
	errs->count = 1;
	errs->len = (size_t)snprintf(errs->text, sizeof(errs->text), "%s%s%s%s\n",
	                             path, what, err ? ": " : "",
	                             err ? strerror(err) : "");
	return -1;
}

/* The whole of a regular file, NUL-terminated (free it), or NULL with
 * errno (EFBIG past 16 MiB). */
static char *read_all(int fd, size_t *len_out)
{
	size_t len = 0, cap = 1 << 16;
	char *text = malloc(cap + 1);

	while (text) {
		ssize_t n = read(fd, text + len, cap - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(text);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap) {
			char *bigger = cap < (1 << 24) ? realloc(text, 2 * cap + 1) : NULL;
			if (!bigger) {
				free(text);
				errno = cap < (1 << 24) ? ENOMEM : EFBIG;
				return NULL;
			}
			text = bigger;
			cap *= 2;
		}
	}
	if (text) {
		text[len] = '\0';
		*len_out = len;
	}
	return text;
}

int rtl_policy_load(const char *path, struct rtl_policy *p,
                    struct rtl_policy_errors *errs)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (the preload
	 * reads the policy in every process's constructor). */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc;
	struct stat st;
	size_t len = 0;
	char *text;

	errs->len = errs->count = 0;
	if (fd < 0)
		return file_error(errs, path, ":0: cannot open", errno);
	if (fstat(fd, &st) < 0) {
		rc = errno;
		close(fd);
		return file_error(errs, path, ":0: cannot stat", rc);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return file_error(errs, path, ": not a regular file", 0);
	}
	text = read_all(fd, &len);
	rc = errno;
	close(fd);
	if (!text && rc == EFBIG)
		return file_error(errs, path, ":0: file too large for a policy", 0);
	if (!text)
		return file_error(errs, path, ":0: cannot read", rc);
	if (strlen(text) != len) {
		free(text);
		return file_error(errs, path, ":0: not a text file (NUL byte)", 0);
	}
	rc = rtl_policy_parse(text, path, p, errs);
	free(text);
	return rc;
}
