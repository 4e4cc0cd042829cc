/* Matrix multiplication C = A B on the DSM (the RTL paper's MM): the rows of
 * A and of C that one rank computes are aggregated into one allocation per
 * rank, B is one allocation; a region each in the RT version, pages in the VM
 * version. Rank 0 fills B, every rank its block of A, then computes its block
 * of C. Rank 0 checks C against a sequential run, bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dsm/app.h"

static long n = 384;
static double *volatile *ablk, *volatile *cblk, *volatile b;

static double a_value(long i, long k)
{
	return (double)((i * 3 + k * 5) % 17) - 8.0;
}

static double b_value(long k, long j)
{
	return (double)((k * 7 + j * 11) % 13) / 4.0;
}

/* Rows [0, rows) of c = a b, each row of a and c n doubles. */
static void multiply(double *c, const double *a, const double *bm, long rows)
{
	for (long i = 0; i < rows; i++) {
		double *ci = c + i * n;
		memset(ci, 0, (size_t)n * sizeof(double));
		for (long k = 0; k < n; k++) {
			double aik = a[i * n + k];
			const double *bk = bm + k * n;
			for (long j = 0; j < n; j++)
				ci[j] += aik * bk[j];
		}
	}
}

static double sequential(double *c)
{
	double t = app_now();
	double *a = malloc((size_t)(n * n) * sizeof(double));
	double *bm = malloc((size_t)(n * n) * sizeof(double));

	for (long i = 0; i < n; i++)
		for (long k = 0; k < n; k++) {
			a[i * n + k] = a_value(i, k);
			bm[i * n + k] = b_value(i, k);
		}
	multiply(c, a, bm, n);
	t = app_now() - t;
	free(a);
	free(bm);
	return t;
}

int main(int argc, char **argv)
{
	long vals[1] = { n }, lo, hi;
	double seq = 0;
	int ok = 1;
	char params[64];

	app_init(&argc, &argv, "mm", "n", vals);
	n = vals[0];
	ablk = calloc((size_t)app.nprocs, sizeof(*ablk));
	cblk = calloc((size_t)app.nprocs, sizeof(*cblk));
	for (int p = 0; p < app.nprocs; p++) {
		app_share(n, p, &lo, &hi);
		app_alloc((size_t)((hi - lo) * n) * sizeof(double),
		          (void *)&ablk[p]);
	}
	for (int p = 0; p < app.nprocs; p++) {
		app_share(n, p, &lo, &hi);
		app_alloc((size_t)((hi - lo) * n) * sizeof(double),
		          (void *)&cblk[p]);
	}
	app_alloc((size_t)(n * n) * sizeof(double), (void *)&b);
	app_share(n, app.rank, &lo, &hi);
	app_start();
	if (app.rank == 0) {
		an_write(b);
		for (long k = 0; k < n; k++)
			for (long j = 0; j < n; j++)
				b[k * n + j] = b_value(k, j);
	}
	{
		double *a = ablk[app.rank];
		an_write(a);
		for (long i = lo; i < hi; i++)
			for (long k = 0; k < n; k++)
				a[(i - lo) * n + k] = a_value(i, k);
	}
	dsm_barrier();
	an_write(cblk[app.rank]);
	an_read(ablk[app.rank]);
	an_read(b);
	multiply(cblk[app.rank], ablk[app.rank], b, hi - lo);
	app_stop();
	if (app.rank == 0) {
		double *c = malloc((size_t)(n * n) * sizeof(double));
		seq = sequential(c);
		for (int p = 0; p < app.nprocs && ok; p++) {
			app_share(n, p, &lo, &hi);
			an_read(cblk[p]);
			ok = !memcmp(c + lo * n, cblk[p],
			             (size_t)((hi - lo) * n) * sizeof(double));
		}
		free(c);
	}
	snprintf(params, sizeof(params), "\"n\":%ld", n);
	app_finish("mm", ok, seq, params);
}
