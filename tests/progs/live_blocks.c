/* Many live blocks, written in a chosen order, then forked: what the
 * mapping budget and a forked child are tested on (tests/bats/slots.bats).
 *
 *   live_blocks N SIZE ORDER FORKS
 *     N blocks of SIZE bytes live at once; the first byte of each written
 *     in ORDER: "made" (each as it is made), "random" (all made, then a
 *     pseudo-random half written: pages of one copy alternate between
 *     read-only and read-write, the most mappings), or "interleaved" (each
 *     made, then an earlier one chosen at random written); then FORKS
 *     children, each of which checks every block, writes all of them and
 *     exits 0 if it read what the parent wrote; the parent checks that the
 *     children's writes did not reach it.
 *
 * Prints the mappings the process held when its blocks were written
 * ("maps M") and the children's verdict; exits 1 on any mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long count_maps(void)
{
	char buf[65536];
	long n = 0;
	size_t k;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while ((k = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < k; i++)
			n += buf[i] == '\n';
	fclose(f);
	return n;
}

static unsigned long rng = 88172645463325252ul;

static unsigned long next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* What block i holds after the parent's writes. */
static char expect(long i, const char *written)
{
	return written[i] ? (char)(1 + i % 100) : 0;
}

int main(int argc, char **argv)
{
	long n, forks, bad_child = 0, bad = 0;
	size_t size;
	const char *order;
	char **b, *written;

	if (argc != 5) {
		fprintf(stderr, "usage: live_blocks N SIZE made|random|interleaved FORKS\n");
		return 2;
	}
	n = atol(argv[1]);
	size = (size_t)atol(argv[2]);
	order = argv[3];
	forks = atol(argv[4]);
	b = calloc((size_t)n, sizeof(*b));
	written = calloc((size_t)n, 1);
	if (!b || !written || n <= 0 || size == 0)
		return 2;
	for (long i = 0; i < n; i++) {
		if (!(b[i] = calloc(1, size)))
			return 2;
		if (!strcmp(order, "made")) {
			b[i][0] = (char)(1 + i % 100);
			written[i] = 1;
		} else if (!strcmp(order, "interleaved")) {
			long j = (long)(next() % (unsigned long)(i + 1));
			b[j][0] = (char)(1 + j % 100);
			written[j] = 1;
		}
	}
	if (!strcmp(order, "random"))
		for (long k = 0; k < n / 2; k++) {
			long j = (long)(next() % (unsigned long)n);
			b[j][0] = (char)(1 + j % 100);
			written[j] = 1;
		}
	printf("maps %ld\n", count_maps());
	for (long f = 0; f < forks; f++) {
		pid_t pid = fork();
		int st;

		if (pid < 0)
			return 2;
		if (pid == 0) {
			for (long i = 0; i < n; i++) {
				if (b[i][0] != expect(i, written))
					_exit(1);
				b[i][0] = 127; /* the parent must not see it */
			}
			_exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			bad_child++;
	}
	for (long i = 0; i < n; i++)
		bad += b[i][0] != expect(i, written);
	printf("children %s, parent's blocks %s\n", bad_child ? "wrong" : "ok",
	       bad ? "wrong" : "ok");
	return bad_child || bad;
}
