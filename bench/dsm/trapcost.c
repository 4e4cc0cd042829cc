/* The cost of the region traps the DSM takes, without the network, for the
 * RT overhead column of Table 8: the paper multiplied each application's
 * traps by the cost of each kind of trap measured alone (its Table 4); so
 * does make bench-dsm, with these costs measured on this machine in the same
 * run. Three kinds, each on tracked regions of several sizes, with a handler
 * doing what the DSM's does (region_protect):
 *   read   a read of a PROT_NONE region (an access miss, minus the fetch);
 *   write  the first write to a PROT_READ tracked region: rtl copies the
 *          region into its twin, then the handler makes it writable;
 *   none   a write of a PROT_NONE tracked region (a write miss): both.
 * Prints one JSON object: per kind and size, the median of several rounds
 * in nanoseconds per trap. Uses rtl's public API only; no MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <rtl/region.h>

#define NREG 16
#define ROUNDS 9

static char *volatile reg[NREG];
static int grant; /* the protection the handler gives */

static void handler(rtl_trap_t *t)
{
	region_protect(t->base, grant);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns per trap of one kind on regions of size bytes: median of ROUNDS
 * rounds, each trapping once on every region (the set-up between two
 * traps, outside the timed access, puts the region back). */
static double measure(const char *kind, size_t size)
{
	double t[ROUNDS];
	int reps = size >= 1 << 20 ? 4 : 64;

	grant = PROT_READ | PROT_WRITE;
	for (int i = 0; i < NREG; i++) {
		if (!region_alloc(size, (void *)&reg[i]) ||
		    region_track(reg[i], 1) < 0) {
			perror("region");
			exit(1);
		}
		region_handler(reg[i], handler);
		memset(reg[i], 1, size); /* populated, as the DSM's are */
		region_checkpoint(reg[i]);
	}
	for (int r = 0; r < ROUNDS; r++) {
		double sum = 0;
		for (int k = 0; k < reps; k++)
			for (int i = 0; i < NREG; i++) {
				double t0;
				if (!strcmp(kind, "read")) {
					region_protect(reg[i], PROT_NONE);
					grant = PROT_READ;
					t0 = now();
					(void)*(volatile char *)reg[i];
				} else if (!strcmp(kind, "write")) {
					region_checkpoint(reg[i]); /* READ */
					grant = PROT_READ | PROT_WRITE;
					t0 = now();
					*(volatile char *)reg[i] = (char)k;
				} else {
					region_checkpoint(reg[i]);
					region_protect(reg[i], PROT_NONE);
					grant = PROT_READ | PROT_WRITE;
					t0 = now();
					*(volatile char *)reg[i] = (char)k;
				}
				sum += now() - t0;
			}
		t[r] = sum / (reps * NREG);
	}
	for (int i = 0; i < NREG; i++)
		region_free(reg[i]);
	qsort(t, ROUNDS, sizeof(*t), cmp);
	return t[ROUNDS / 2];
}

int main(void)
{
	static const char *const kinds[] = { "read", "write", "none" };
	static const size_t sizes[] = { 64, 4096, 65536, 1 << 20 };

	printf("{");
	for (int k = 0; k < 3; k++) {
		printf("%s\"%s\":{", k ? "," : "", kinds[k]);
		for (int s = 0; s < 4; s++)
			printf("%s\"%zu\":%.0f", s ? "," : "", sizes[s],
			       measure(kinds[k], sizes[s]));
		printf("}");
	}
	printf("}\n");
	return 0;
}
