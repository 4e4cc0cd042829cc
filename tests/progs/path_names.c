/* Path names and results in malloc'd memory handed to the kernel, as git
 * and tar hand theirs: open, stat, access, readlink, getcwd, rename. Each
 * line says what the call gave. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_str(const char *s)
{
	char *p = malloc(strlen(s) + 1);
	strcpy(p, s);
	return p;
}

int main(void)
{
	char *name = dup_str("path_names.tmp"), *other = dup_str("path_names.2");
	char *link = dup_str("path_names.lnk"), *buf = malloc(256);
	struct stat *st = malloc(sizeof(*st));
	ssize_t n;
	int fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644), r;

	printf("open: %s\n", fd >= 0 ? "ok" : strerror(errno));
	printf("write: %zd\n", write(fd, name, strlen(name)));
	close(fd);
	memset(st, 0, sizeof(*st));
	r = stat(name, st);
	printf("stat: %s, size %lld\n", r == 0 ? "ok" : strerror(errno),
	       (long long)st->st_size);
	printf("access: %s\n", access(name, R_OK) == 0 ? "ok" : strerror(errno));
	printf("symlink: %s\n", symlink(name, link) == 0 ? "ok" : strerror(errno));
	memset(buf, 0, 256);
	n = readlink(link, buf, 255);
	printf("readlink: %zd %s\n", n, buf);
	printf("rename: %s\n", rename(name, other) == 0 ? "ok" : strerror(errno));
	printf("getcwd: %s\n", getcwd(buf, 256) ? "ok" : strerror(errno));
	unlink(other);
	unlink(link);
	return 0;
}
