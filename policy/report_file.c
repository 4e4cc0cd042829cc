/* Report files that cannot be turned against their writer (report_file.h).
 * A report is written by whoever runs the program, root included, into
 * folders others may write to: a name planted there (a symlink to a file
 * of root's, a file of someone else's) must never be followed, truncated
 * or replaced, and a file that could not be finished (a full disk) must
 * never be left under the final name. */
#include "policy/report_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* Append s to out at *n; -1 if it does not fit (with the NUL). */
static int put(char *out, size_t len, size_t *n, const char *s, size_t slen)
{
	if (slen >= len - *n)
		return -1;
	memcpy(out + *n, s, slen);
	*n += slen;
	out[*n] = '\0';
	return 0;
}

static int put_num(char *out, size_t len, size_t *n, unsigned long v)
{
	char tmp[24], *p = tmp + sizeof(tmp);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return put(out, len, n, p, (size_t)(tmp + sizeof(tmp) - p));
}

int rtl_file_name(const char *path, unsigned k, char *out, size_t len)
{
	size_t n = 0;

	if (!len || put(out, len, &n, path, strlen(path)) < 0)
		return -1;
	if (k && (put(out, len, &n, ".", 1) < 0 || put_num(out, len, &n, k) < 0))
		return -1;
	return 0;
}

/* The next temporary name beside path: .BASE.PID.N.tmp in its folder. */
static int temp_name(const char *path, char *tmp, size_t len)
{
	static unsigned serial; /* names differ within one process */
	const char *slash = strrchr(path, '/');
	size_t dir = slash ? (size_t)(slash - path) + 1 : 0, n = 0;
	const char *base = path + dir;

	if (put(tmp, len, &n, path, dir) < 0 || put(tmp, len, &n, ".", 1) < 0 ||
	    put(tmp, len, &n, base, strlen(base)) < 0 || put(tmp, len, &n, ".", 1) < 0 ||
	    put_num(tmp, len, &n, (unsigned long)getpid()) < 0 ||
	    put(tmp, len, &n, ".", 1) < 0 ||
	    put_num(tmp, len, &n, __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED)) < 0 ||
	    put(tmp, len, &n, ".tmp", 4) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int rtl_file_temp(const char *path, char *tmp, size_t len)
{
	for (int tries = 0; tries < 100; tries++) {
		int fd;

		if (temp_name(path, tmp, len) < 0)
			return -1;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int rtl_file_unnamed(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	size_t n = 0;

	if (put(dir, sizeof(dir), &n, slash ? path : ".", slash ? (size_t)(slash - path) + 1 : 1) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
}

int rtl_file_name_fd(int fd, const char *path, char *tmp, size_t len)
{
	char self[64];
	size_t n = 0;

	if (put(self, sizeof(self), &n, "/proc/self/fd/", 14) < 0 ||
	    put_num(self, sizeof(self), &n, (unsigned long)fd) < 0)
		return -1;
	for (int tries = 0; tries < 100; tries++) {
		if (temp_name(path, tmp, len) < 0)
			return -1;
		/* Through /proc: linkat(fd, "", ..., AT_EMPTY_PATH) needs a
		 * capability a user lacks. */
		if (linkat(AT_FDCWD, self, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/* Make tmp's file appear as name, unless name exists (as anything: a
 * symlink counts). 0, or -1 with errno (EEXIST if taken). */
static int take(const char *tmp, const char *name)
{
	if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* A file system without RENAME_NOREPLACE: link() never replaces
	 * either. */
	if (link(tmp, name) < 0)
		return -1;
	unlink(tmp);
	return 0;
}

int rtl_file_publish(const char *tmp, const char *path, char *got, size_t len)
{
	for (unsigned k = 0; k < RTL_FILE_TRIES; k++) {
		if (rtl_file_name(path, k, got, len) < 0) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (take(tmp, got) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}
