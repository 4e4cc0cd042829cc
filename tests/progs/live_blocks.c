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
 *     exits 0 if it read what the parent wrote (by exit: under the preload
 *     the child leaves its record); the parent checks that the children's
 *     writes did not reach it.
 *
 * Prints the mappings the process held when its blocks were written
 * ("maps M"), how many blocks it wrote ("written W"), the children's verdict, and the median time of a fork, its
 * child's work and the wait ("fork US us"); exits 1 on any mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
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
	long n, forks, bad_child = 0, bad = 0, nwritten = 0;
	double *took;
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
	for (long i = 0; i < n; i++)
		nwritten += written[i];
	printf("maps %ld\nwritten %ld\n", count_maps(), nwritten);
	fflush(stdout); /* a child ends with exit: nothing of the parent's twice */
	took = calloc((size_t)(forks ? forks : 1), sizeof(*took));
	for (long f = 0; f < forks; f++) {
		double t0 = now_us();
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
			exit(0); /* the preload's record of the child too */
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			bad_child++;
		took[f] = now_us() - t0;
	}
	for (long i = 0; i < n; i++)
		bad += b[i][0] != expect(i, written);
	printf("children %s, parent's blocks %s\n", bad_child ? "wrong" : "ok",
	       bad ? "wrong" : "ok");
	if (forks) {
		qsort(took, (size_t)forks, sizeof(*took), by_value);
		printf("fork %.0f us\n", took[forks / 2]);
	}
	return bad_child || bad;
}
