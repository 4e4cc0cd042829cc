/* Floyd-Warshall all-pairs shortest paths on the DSM (the RTL paper's
 * FLOYD): every row of the distance matrix is one allocation, a region in
 * the RT version, packed pages in the VM version. Each rank relaxes a band of
 * rows; in step k every rank reads row k, written by its owner in earlier
 * steps; a barrier ends each step. Rank 0 checks the matrix against a
 * sequential run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dsm/app.h"

#define INF 1000000000

static long n = 300;
static int *volatile *d;

static int edge(long i, long j)
{
	unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(j * 40503u + 7u);

	h ^= h >> 13;
	h *= 0x5bd1e995u;
	h ^= h >> 15;
	if (i == j)
		return 0;
	return h % 100 < 20 ? (int)(h % 1000) + 1 : INF;
}

/* Step k on rows [lo, hi). */
static void relax(int *volatile *m, long k, long lo, long hi)
{
	const int *rowk;

	an_read(m[k]);
	rowk = m[k];
	for (long i = lo; i < hi; i++) {
		an_write(m[i]);
		int *row = m[i];
		int dik = row[k];
		if (dik == INF)
			continue;
		for (long j = 0; j < n; j++)
			if (rowk[j] != INF && dik + rowk[j] < row[j])
				row[j] = dik + rowk[j];
	}
}

static double sequential(int **m)
{
	double t = app_now();

	app.private = 1;
	for (long i = 0; i < n; i++)
		for (long j = 0; j < n; j++)
			m[i][j] = edge(i, j);
	for (long k = 0; k < n; k++)
		relax((int *volatile *)m, k, 0, n);
	app.private = 0;
	return app_now() - t;
}

int main(int argc, char **argv)
{
	long vals[1] = { n }, lo, hi;
	size_t rs;
	double seq = 0;
	int ok = 1;
	char params[64];

	app_init(&argc, &argv, "floyd", "n", vals);
	n = vals[0];
	rs = (size_t)n * sizeof(int);
	d = calloc((size_t)n, sizeof(*d));
	for (long i = 0; i < n; i++)
		app_alloc(rs, (void *)&d[i]);
	app_share(n, app.rank, &lo, &hi);
	app_start();
	for (long i = lo; i < hi; i++) {
		an_write(d[i]);
		int *row = d[i];
		for (long j = 0; j < n; j++)
			row[j] = edge(i, j);
	}
	dsm_barrier();
	for (long k = 0; k < n; k++) {
		relax(d, k, lo, hi);
		dsm_barrier();
	}
	app_stop();
	if (app.rank == 0) {
		int **m = malloc((size_t)n * sizeof(*m));
		for (long i = 0; i < n; i++)
			m[i] = malloc(rs);
		seq = sequential(m);
		for (long i = 0; i < n && ok; i++) {
			an_read(d[i]);
			ok = !memcmp(m[i], d[i], rs);
		}
	}
	snprintf(params, sizeof(params), "\"nodes\":%ld", n);
	app_finish("floyd", ok, seq, params);
}
