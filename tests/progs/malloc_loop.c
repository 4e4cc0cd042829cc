/* The cost of one malloc + free pair, for docs/programs.md: N pairs of
 * size bytes (one block live at a time), then N blocks live at once.
 * Usage: malloc_loop N SIZE; prints ns per pair for each phase. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 64;
	char **keep = malloc(n * sizeof(*keep));
	double t0, t1, t2;

	t0 = now();
	for (long i = 0; i < n; i++) {
		char *volatile p = malloc(size);
		p[0] = 1;
		free(p);
	}
	t1 = now();
	for (long i = 0; i < n; i++) {
		keep[i] = malloc(size);
		keep[i][0] = 1;
	}
	for (long i = 0; i < n; i++)
		free(keep[i]);
	t2 = now();
	printf("one live: %.0f ns/pair, %ld live: %.0f ns/pair\n",
	       (t1 - t0) / n, n, (t2 - t1) / n);
	free(keep);
	return 0;
}
