/* The cost of rtl's system-call wrapper on a buffer outside any region:
 * read(2) of 64 bytes from /dev/zero into a stack buffer, N times, through
 *   wrapped  - the `read` the program binds to (librtl-interpose's
 *              wrapper: this program opts in to it; under
 *              LD_PRELOAD=librtlpreload.so, the preload's forwarder to it),
 *   libc     - libc's own read, from libc's handle (no wrapper),
 *   syscall  - syscall(SYS_read), no libc either.
 * The three alternate in rounds and each keeps its fastest round, so that
 * a busy machine slows them alike. Prints ns per call and wrapped/libc.
 * Usage: rtl-syscall-wrap [N [heap]]; with `heap` the buffer is a 64-byte
 * malloc'd block instead, which a policy can make rtl's memory (the
 * preload's seccomp mechanism then traps every one of these calls). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rtl/region.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

typedef ssize_t (*read_fn)(int, void *, size_t);

static ssize_t raw_read(int fd, void *buf, size_t n)
{
	return syscall(SYS_read, fd, buf, n);
}

static char *heap_buf; /* the heap block, or NULL for the stack */

/* One round of n calls: ns per call. */
static double round_of(read_fn f, int fd, long n)
{
	char stack_buf[64], *buf = heap_buf ? heap_buf : stack_buf;
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		if (f(fd, buf, sizeof(stack_buf)) != (ssize_t)sizeof(stack_buf))
			exit(1);
	return (now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 600000;
	int fd = open("/dev/zero", O_RDONLY);
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	read_fn libc_read = NULL;

	if (libc)
		*(void **)&libc_read = dlsym(libc, "read");
	read_fn fns[3] = { read, NULL, raw_read };
	double best[3] = { 1e30, 1e30, 1e30 };
	const int rounds = 30;

	if (argc > 2 && !(heap_buf = malloc(64)))
		return 1;
	if (fd < 0 || !libc_read || n < 30)
		return 1;
	fns[1] = libc_read;
	region_init(); /* the views exist: the range check is a real one */
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < 3; k++) {
			double t = round_of(fns[k], fd, n / rounds);
			if (t < best[k])
				best[k] = t;
		}
	printf("read 64 B into a %s buffer, ns per call (fastest of %d "
	       "rounds of %ld):\n",
	       heap_buf ? "malloc'd" : "stack", rounds, n / rounds);
	printf("  wrapped %.1f  libc %.1f  syscall %.1f  wrapped/libc %.3f\n",
	       best[0], best[1], best[2], best[0] / best[1]);
	return 0;
}
