/* A program built the way Debian builds its packages (-O2
 * -D_FORTIFY_SOURCE=2): where the compiler knows a buffer's size, read,
 * fread, recv and getcwd become __read_chk, __fread_chk, __recv_chk and
 * __getcwd_chk. Under the preload the buffers are regions.
 * Usage: fortified FILE [CHUNK]; prints the bytes it read, a checksum of
 * everything it read, and the working directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

#define SIZE 8192

static unsigned long sum(const unsigned char *p, size_t n, unsigned long h)
{
	while (n--)
		h = h * 31 + *p++;
	return h;
}

int main(int argc, char **argv)
{
	unsigned char *buf = malloc(SIZE);
	char *cwd = malloc(SIZE);
	unsigned long h = 0, total = 0;
	size_t want = argc > 2 ? strtoul(argv[2], NULL, 10) : SIZE;
	int fd, sv[2];
	ssize_t n;
	FILE *f;

	/* No check of want here: that is the _chk forms' job (a size past
	 * SIZE aborts), and a check would let the compiler prove the calls
	 * safe and call the plain forms. */
	if (argc < 2 || !buf || !cwd)
		return 2;
	if ((fd = open(argv[1], O_RDONLY)) < 0)
		return 1;
	while ((n = read(fd, buf, want)) > 0) { /* __read_chk */
		h = sum(buf, (size_t)n, h);
		total += (unsigned long)n;
	}
	close(fd);
	if (!(f = fopen(argv[1], "rb")))
		return 1;
	while ((n = (ssize_t)fread(buf, 1, want, f)) > 0) /* __fread_chk */
		h = sum(buf, (size_t)n, h);
	fclose(f);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 ||
	    send(sv[0], "over a socket", 13, 0) != 13 ||
	    recv(sv[1], buf, want, 0) != 13) /* __recv_chk */
		return 1;
	h = sum(buf, 13, h);
	if (!getcwd(cwd, want)) /* __getcwd_chk */
		return 1;
	printf("%lu bytes, checksum %lx, cwd %s\n", total, h, cwd);
	free(buf);
	free(cwd);
	return 0;
}
