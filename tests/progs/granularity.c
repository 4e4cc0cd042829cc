/* Known page and region trap counts, for mechanism = page and rtlctl
 * compare (tests/bats/compare.bats). Every block comes from new_block, so
 * that a rule's `site = *new_block` selects these and nothing else.
 *
 *   granularity shared N SIZE  N pairs of SIZE-byte blocks, made one by
 *                              one: a block is written, its neighbour
 *                              made (never written), the block written
 *                              again. Regions trap once per pair; a page
 *                              tracker twice: the second write finds the
 *                              page protected for the neighbour (false
 *                              sharing) when the pair shares a page
 *   granularity big SIZE [MS]  one block, every byte written; with MS,
 *                              MS milliseconds of doing nothing (epochs
 *                              go by), one byte written again, MS more
 *   granularity pointer        prints a block's address (it differs
 *                              between mechanisms: compare must say so)
 * Each prints a checksum of what it wrote. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline)) static unsigned char *new_block(size_t size)
{
	unsigned char *p = malloc(size);

	if (!p) {
		perror("malloc");
		exit(1);
	}
	return p;
}

static unsigned long sum(const unsigned char *p, size_t n)
{
	unsigned long s = 0;

	for (size_t i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

static int shared(size_t n, size_t size)
{
	unsigned char **b = calloc(n, sizeof(*b));
	unsigned long s = 0;

	for (size_t i = 0; i < n; i++) {
		b[i] = new_block(size);
		memset(b[i], (int)i, size);
		(void)new_block(size); /* its neighbour: protected, never used */
		b[i][1] = (unsigned char)(i + 1);
	}
	for (size_t i = 0; i < n; i++)
		s += sum(b[i], size);
	printf("shared %zu x %zu: %lu\n", n, size, s);
	return 0;
}

static int big(size_t size, long ms)
{
	unsigned char *p = new_block(size);
	struct timespec t = { ms / 1000, ms % 1000 * 1000000 };

	for (size_t i = 0; i < size; i++)
		p[i] = (unsigned char)(i * 7);
	if (ms > 0) {
		while (nanosleep(&t, &t))
			;
		p[0] = 255;
		t = (struct timespec){ ms / 1000, ms % 1000 * 1000000 };
		while (nanosleep(&t, &t))
			;
	}
	printf("big %zu: %lu\n", size, sum(p, size));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "shared"))
		return shared(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "big"))
		return big(strtoul(argv[2], NULL, 0), argc == 4 ? atol(argv[3]) : 0);
	if (argc == 2 && !strcmp(argv[1], "pointer")) {
		unsigned char *p = new_block(64);

		p[0] = 1;
		printf("block at %p\n", (void *)p);
		return 0;
	}
	fprintf(stderr, "usage: granularity shared N SIZE | big SIZE [MS] | pointer\n");
	return 2;
}
