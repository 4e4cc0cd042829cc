/* A target with known access counts, for the policy tests: NA objects of
 * 100 bytes from alloc_a (calloc) and NB of 200 bytes from alloc_b, then a
 * fixed sequence of accesses, each through the pointer as malloc returned it
 * (reloaded from a volatile table every time). Not linked with rtl.
 *
 *   access NA NB rw       read a[i][0], write a[i][8], read a[i][16],
 *                         write a[i][24] (each a pass over all a[i]), then
 *                         read b[i][0]
 *   access NA NB syscall  read(2) 4 bytes from a pipe into each a[i] + 32,
 *                         write(2) each b[i] to the pipe and read it back
 *   access NA NB epoch    write a[i][8]; wait until the page of a[0] reads
 *                         as read-only again in /proc/self/maps (an alias
 *                         re-protected by an epoch); write a[i][24]
 *   access NA NB mprotect K   K mprotect calls on a page of its own
 *   access NA NB crash    write a[i][8], then raise SIGTERM
 *   access NA NB overflow an 8-byte store at a[0] + 124, past its end
 *
 * Prints one line with a checksum of what it read. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static char *volatile *a, *volatile *b;
static long na, nb;

__attribute__((noinline)) char *alloc_a(void)
{
	char *p = calloc(1, 100);
	if (!p)
		exit(2);
	return p; /* not a tail call: the site is alloc_a */
}

__attribute__((noinline)) char *alloc_b(void)
{
	char *p = malloc(200);
	if (p)
		memset(p, 'b', 200);
	return p;
}

static long pass_read(char *volatile *t, long n, int at)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += *(volatile char *)(t[i] + at);
	return s;
}

static void pass_write(char *volatile *t, long n, int at, char v)
{
	for (long i = 0; i < n; i++)
		*(volatile char *)(t[i] + at) = v;
}

/* Whether the mapping holding p is read-only now (no w in its flags). */
static int read_only(const void *p)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char perms[8];
	int ro = 0;

	if (!f)
		return 0;
	while (fscanf(f, "%lx-%lx %7s%*[^\n]", &lo, &hi, perms) == 3)
		if ((unsigned long)p >= lo && (unsigned long)p < hi)
			ro = perms[1] != 'w';
	fclose(f);
	return ro;
}

static long syscalls(void)
{
	int fd[2];
	long s = 0;
	char buf[200];

	if (pipe(fd) < 0)
		exit(3);
	for (long i = 0; i < na; i++) {
		if (write(fd[1], "abcd", 4) != 4 || read(fd[0], a[i] + 32, 4) != 4)
			exit(4);
		s += a[i][33];
	}
	for (long i = 0; i < nb; i++) {
		if (write(fd[1], b[i], 200) != 200 || read(fd[0], buf, 200) != 200)
			exit(5);
		s += buf[199];
	}
	return s;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[3] : "rw";
	long sum = 0;

	na = argc > 1 ? atol(argv[1]) : 10;
	nb = argc > 2 ? atol(argv[2]) : 10;
	a = calloc((size_t)na + 1, sizeof(*a));
	b = calloc((size_t)nb + 1, sizeof(*b));
	if (!a || !b)
		return 2;
	for (long i = 0; i < na; i++)
		if (!(a[i] = alloc_a()))
			return 2;
	for (long i = 0; i < nb; i++)
		if (!(b[i] = alloc_b()))
			return 2;

	if (!strcmp(mode, "rw")) {
		sum += pass_read(a, na, 0);
		pass_write(a, na, 8, 1);
		sum += pass_read(a, na, 16);
		pass_write(a, na, 24, 2);
		sum += pass_read(b, nb, 0);
	} else if (!strcmp(mode, "syscall")) {
		sum += syscalls();
	} else if (!strcmp(mode, "epoch")) {
		struct timespec ms = { 0, 1000000 };
		pass_write(a, na, 8, 1);
		for (int i = 0; i < 10000 && !read_only(a[0]); i++)
			nanosleep(&ms, NULL);
		pass_write(a, na, 24, 2);
		sum += pass_read(a, na, 24);
	} else if (!strcmp(mode, "mprotect")) {
		long k = argc > 4 ? atol(argv[4]) : 1;
		char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		for (long i = 0; i < k; i++)
			mprotect(page, 4096, i % 2 ? PROT_READ | PROT_WRITE : PROT_READ);
	} else if (!strcmp(mode, "overflow")) {
		/* An 8-byte store at offset 124 of a 100-byte block: past
		 * the 128 bytes rtl answers for (a silent overrun without
		 * rtl; under a read-only rule, a trap rtl refuses). */
		memcpy((char *)a[0] + 124, "overflow", 8);
		sum += a[0][124];
	} else if (!strcmp(mode, "crash")) {
		pass_write(a, na, 8, 1);
		fflush(stdout);
		raise(SIGTERM);
	} else {
		return 2;
	}
	printf("%s: %ld a, %ld b, sum %ld\n", mode, na, nb, sum);
	for (long i = 0; i < na; i++)
		free(a[i]);
	for (long i = 0; i < nb; i++)
		free(b[i]);
	return 0;
}
