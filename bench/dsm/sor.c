/* Red-black successive over-relaxation on the DSM, as in the RTL paper's
 * Table 6: every row of the red and the black matrix is its own allocation,
 * dsm_malloc in the VM version and a region in the RT version (the only
 * difference). Each rank computes a band of rows; the rows at a band's edges
 * come from its neighbours. Rank 0 checks every element against a
 * sequential run, bit for bit.
 *
 * Rows are reached through the registered pointer arrays red[] and black[]
 * (volatile: read again after every barrier); the locals the loops keep are
 * only ever copies of a pointer read in the same phase. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dsm/app.h"

static long M = 512, N = 2048, ITERS = 50; /* interior rows, floats per row */
static float *volatile *red, *volatile *black;

static float init_value(long i, long k)
{
	return (float)((i * 7 + k * 13) % 97) / 97.0f;
}

/* One half-iteration on rows [lo, hi): dst from src (Table 6). */
static void sweep(float *volatile *dst, float *volatile *src, long lo, long hi,
                  int black_phase)
{
	for (long j = lo; j < hi; j++) {
		an_write(dst[j]);
		an_read(src[j - 1]);
		an_read(src[j]);
		an_read(src[j + 1]);
		float *d = dst[j];
		const float *up = src[j - 1], *mid = src[j], *down = src[j + 1];
		if (black_phase)
			for (long k = 0; k < N - 1; k++)
				d[k] = (up[k] + down[k] + mid[k] + mid[k + 1]) /
				       4.0f;
		else
			for (long k = 1; k < N; k++)
				d[k] = (up[k] + down[k] + mid[k - 1] + mid[k]) /
				       4.0f;
	}
}

static void init_rows(float *volatile *m, long lo, long hi)
{
	for (long i = lo; i < hi; i++) {
		an_write(m[i]);
		float *row = m[i];
		for (long k = 0; k < N; k++)
			row[k] = init_value(i, k);
	}
}

/* The same computation in private memory. */
static double sequential(float **r, float **b)
{
	double t = app_now();

	app.private = 1;
	for (long i = 0; i < M + 2; i++)
		for (long k = 0; k < N; k++)
			r[i][k] = b[i][k] = init_value(i, k);
	for (long it = 0; it < ITERS; it++) {
		sweep((float *volatile *)b, (float *volatile *)r, 1, M + 1, 1);
		sweep((float *volatile *)r, (float *volatile *)b, 1, M + 1, 0);
	}
	app.private = 0;
	return app_now() - t;
}

int main(int argc, char **argv)
{
	long vals[3] = { M, N, ITERS }, lo, hi;
	size_t ns;
	double seq = 0;
	int ok = 1;
	char params[128];

	app_init(&argc, &argv, "sor", "rci", vals);
	M = vals[0];
	N = vals[1];
	ITERS = vals[2];
	ns = (size_t)N * sizeof(float);
	red = calloc((size_t)M + 2, sizeof(*red));
	black = calloc((size_t)M + 2, sizeof(*black));
	if (!red || !black)
		return 1;
	for (long i = 0; i < M + 2; i++) {
		app_alloc(ns, (void *)&red[i]);
		app_alloc(ns, (void *)&black[i]);
	}
	/* Interior rows 1..M by band; the first and last rank own the edges. */
	app_share(M, app.rank, &lo, &hi);
	lo += 1;
	hi += 1;
	app_start();
	init_rows(red, lo - (app.rank == 0), hi + (app.rank == app.nprocs - 1));
	init_rows(black, lo - (app.rank == 0),
	          hi + (app.rank == app.nprocs - 1));
	dsm_barrier();
	for (long it = 0; it < ITERS; it++) {
		sweep(black, red, lo, hi, 1);
		dsm_barrier();
		sweep(red, black, lo, hi, 0);
		dsm_barrier();
	}
	app_stop();
	if (app.rank == 0) {
		float **r = malloc((size_t)(M + 2) * sizeof(*r));
		float **b = malloc((size_t)(M + 2) * sizeof(*b));
		for (long i = 0; i < M + 2; i++) {
			r[i] = malloc(ns);
			b[i] = malloc(ns);
		}
		seq = sequential(r, b);
		for (long i = 0; i < M + 2 && ok; i++) {
			an_read(red[i]);
			an_read(black[i]);
			ok = !memcmp(r[i], red[i], ns) &&
			     !memcmp(b[i], black[i], ns);
		}
	}
	snprintf(params, sizeof(params),
	         "\"rows\":%ld,\"cols\":%ld,\"iterations\":%ld", M, N, ITERS);
	app_finish("sor", ok, seq, params);
}
