/* The preload's slots (preload/place/auto.c) under page protection, for
 * tests/bats/slots.bats.
 *
 *   slot_runs ring N [T]  N blocks of 16 B to 4 KiB (sizes from a fixed
 *                      sequence), 512 live at once, each written whole
 *                      when made and checked whole before its free; with
 *                      T, T threads at once, each with blocks of its own;
 *                      prints how many were of 1 KiB or less, how many
 *                      larger, and a checksum of what it read back
 *   slot_runs dense N T   T threads, each keeping 5000 blocks of 16 bytes
 *                      live and replacing one at random N times, so that
 *                      pages hold up to 256 of them, each through a copy
 *                      of its own; each block is read once; prints the
 *                      number of blocks made
 *   slot_runs forked N  N blocks of 64 B, every other one written and the
 *                      others freed unwritten; then a child makes N/2
 *                      blocks of 64 B, writes each and the parent's live
 *                      ones (its new blocks land on pages whose free
 *                      copies held its parent's blocks, read-only there
 *                      while the live ones were granted); prints the
 *                      child's exit status
 *   slot_runs maps     one 64-byte block, read: prints the permissions of
 *                      the mapping that holds it and how many pages that
 *                      mapping has (under a rule that protects it, a
 *                      slot's run of pages set with the block's own;
 *                      without rtl, the heap) */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIVE 512
#define MAX_THREADS 8

struct ring {
	long n;
	uint64_t rng;
	long small, large;
	uint64_t sum;
	int failed;
};

static uint64_t next(struct ring *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

static void *ring(void *arg)
{
	struct ring *r = arg;
	unsigned char *block[LIVE] = { 0 };
	size_t size[LIVE];

	for (long i = 0; i < r->n + LIVE; i++) {
		int k = (int)(i % LIVE);

		if (block[k]) {
			unsigned char want = (unsigned char)(i - LIVE);

			for (size_t b = 0; b < size[k]; b++) {
				if (block[k][b] != want) {
					fprintf(stderr, "block %ld byte %zu: %u, not %u\n",
					        i - LIVE, b, block[k][b], want);
					r->failed = 1;
					return NULL;
				}
				r->sum += block[k][b];
			}
			free(block[k]);
			block[k] = NULL;
		}
		if (i >= r->n)
			continue;
		size[k] = 16 + next(r) % 4081;
		block[k] = malloc(size[k]);
		if (!block[k]) {
			perror("malloc");
			r->failed = 1;
			return NULL;
		}
		memset(block[k], (unsigned char)i, size[k]);
		if (size[k] <= 1024)
			r->small++;
		else
			r->large++;
	}
	return NULL;
}

/* Run fn on threads rings of their own; their counts summed into *total.
 * 0, or 1 if one failed. */
static int run_threads(void *(*fn)(void *), long n, int threads, struct ring *total)
{
	static struct ring r[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	int failed = 0;

	*total = (struct ring){ 0 };
	for (int i = 0; i < threads; i++) {
		r[i] = (struct ring){ .n = n, .rng = 0x9e3779b97f4a7c15ull + (uint64_t)i };
		if (pthread_create(&t[i], NULL, fn, &r[i]) != 0) {
			perror("pthread_create");
			exit(1);
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		failed |= r[i].failed;
		total->small += r[i].small;
		total->large += r[i].large;
		total->sum += r[i].sum;
	}
	return failed;
}

#define DENSE 5000

static void *dense(void *arg)
{
	struct ring *r = arg;
	static __thread unsigned char *block[DENSE];

	for (long i = 0; i < DENSE + r->n; i++) {
		int k = i < DENSE ? (int)i : (int)(next(r) % DENSE);

		free(block[k]);
		block[k] = malloc(16);
		if (!block[k]) {
			perror("malloc");
			r->failed = 1;
			return NULL;
		}
		(void)*(volatile unsigned char *)block[k];
		r->small++;
	}
	for (int k = 0; k < DENSE; k++)
		free(block[k]);
	return NULL;
}

static int maps(void)
{
	char *volatile p = malloc(64);
	char line[512], perms[8];
	uintptr_t lo, hi, a = (uintptr_t)p;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!p || !f) {
		perror("slot_runs maps");
		return 1;
	}
	(void)*(volatile char *)p; /* a read: allowed */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &lo, &hi, perms) == 3 &&
		    a >= lo && a < hi) {
			printf("%s %zu\n", perms, (size_t)(hi - lo) / (size_t)sysconf(_SC_PAGESIZE));
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	fprintf(stderr, "no mapping holds %p\n", (void *)p);
	return 1;
}

static int forked(long n)
{
	char **b = malloc(sizeof(*b) * (size_t)n);
	int status;
	pid_t pid;

	if (!b)
		return 1;
	for (long i = 0; i < n; i++) {
		if (!(b[i] = malloc(64)))
			return 1;
		if (i % 2)
			b[i][0] = 1;
	}
	for (long i = 0; i < n; i += 2)
		free(b[i]);
	fflush(stdout);
	if ((pid = fork()) < 0)
		return 1;
	if (pid == 0) {
		for (long i = 0; i < n / 2; i++) {
			char *p = malloc(64);
			if (!p)
				_exit(1);
			p[1] = 2;
		}
		for (long i = 1; i < n; i += 2)
			if (b[i][0] != 1 || (b[i][2] = 3) != 3)
				_exit(1);
		exit(0); /* under the preload, the child leaves its record */
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	printf("child %d\n", status);
	return 0;
}

int main(int argc, char **argv)
{
	struct ring total;
	int threads = argc == 4 ? atoi(argv[3]) : 1;

	if ((argc == 3 || argc == 4) && strcmp(argv[1], "ring") == 0 && threads >= 1 &&
	    threads <= MAX_THREADS) {
		if (run_threads(ring, atol(argv[2]), threads, &total))
			return 1;
		printf("%ld small %ld large sum %" PRIu64 "\n", total.small, total.large,
		       total.sum);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "dense") == 0 && threads >= 1 &&
	    threads <= MAX_THREADS) {
		if (run_threads(dense, atol(argv[2]), threads, &total))
			return 1;
		printf("%ld blocks\n", total.small);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "forked") == 0 && atol(argv[2]) > 0)
		return forked(atol(argv[2]));
	if (argc == 2 && strcmp(argv[1], "maps") == 0)
		return maps();
	fprintf(stderr, "usage: slot_runs ring N [THREADS 1-8] | slot_runs dense N THREADS | "
	                "slot_runs forked N | slot_runs maps\n");
	return 2;
}
