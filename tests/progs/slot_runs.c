/* The preload's slots (preload/place/slots.c) under page protection, for
 * tests/bats/slots.bats.
 *
 *   slot_runs ring N   N blocks of 16 B to 4 KiB (sizes from a fixed
 *                      sequence), 512 live at once, each written whole
 *                      when made and checked whole before its free;
 *                      prints how many were of 1 KiB or less, how many
 *                      larger, and a checksum of what it read back
 *   slot_runs maps     one 64-byte block, read: prints the permissions of
 *                      the mapping that holds it and how many pages that
 *                      mapping has (under a rule that protects it, a
 *                      slot's run of pages set with the block's own;
 *                      without rtl, the heap) */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE 512

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int ring(long n)
{
	static unsigned char *block[LIVE];
	static size_t size[LIVE];
	long small = 0, large = 0;
	uint64_t sum = 0;

	for (long i = 0; i < n + LIVE; i++) {
		int k = (int)(i % LIVE);

		if (block[k]) {
			unsigned char want = (unsigned char)(i - LIVE);

			for (size_t b = 0; b < size[k]; b++) {
				if (block[k][b] != want) {
					fprintf(stderr, "block %ld byte %zu: %u, not %u\n",
					        i - LIVE, b, block[k][b], want);
					return 1;
				}
				sum += block[k][b];
			}
			free(block[k]);
			block[k] = NULL;
		}
		if (i >= n)
			continue;
		size[k] = 16 + next() % 4081;
		block[k] = malloc(size[k]);
		if (!block[k]) {
			perror("malloc");
			return 1;
		}
		memset(block[k], (unsigned char)i, size[k]);
		if (size[k] <= 1024)
			small++;
		else
			large++;
	}
	printf("%ld small %ld large sum %" PRIu64 "\n", small, large, sum);
	return 0;
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
	if (p[0] == 1)
		puts("(uninitialised, as it may be)");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &lo, &hi, perms) == 3 &&
		    a >= lo && a < hi) {
			printf("%s %zu\n", perms, (size_t)(hi - lo) / 4096);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	fprintf(stderr, "no mapping holds %p\n", (void *)p);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "ring") == 0)
		return ring(atol(argv[2]));
	if (argc == 2 && strcmp(argv[1], "maps") == 0)
		return maps();
	fprintf(stderr, "usage: slot_runs ring N | slot_runs maps\n");
	return 2;
}
