/* Blocked LU decomposition (no pivoting) on the DSM, the RTL paper's LU
 * after Splash-2's contiguous-blocks version: each B x B block of the matrix
 * is laid out contiguously and is one allocation (a region in the RT
 * version, pages in the VM version). Blocks are dealt to ranks in a 2-D
 * scatter. Step k: the owner of the diagonal block factors it; the owners of
 * the blocks in row k and column k divide them by it; every owner updates
 * its blocks below and right of them; barriers between. Rank 0 checks every
 * block against the same block operations run sequentially, bit for bit.
 * The kernels touch their blocks first (app.h): their loops address blocks
 * through pointers the compiler moves outside the block. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dsm/app.h"

static long n = 512, B = 64, nb;
static int pr, pc; /* the rank grid */
static double *volatile *blk;

#define AT(m, i, j) ((m)[(i)*B + (j)])

static int owner(long I, long J)
{
	return (int)((I % pr) * pc + (J % pc));
}

static double init_value(long i, long j)
{
	if (i == j)
		return (double)n + 1.0; /* diagonally dominant: no pivoting */
	return (double)((i * 7 + j * 3) % 11) / 10.0 - 0.5;
}

/* Factor the diagonal block in place: unit lower L and upper U. */
static void lu0(double *d)
{
	touch_write(d);
	for (long k = 0; k < B; k++)
		for (long i = k + 1; i < B; i++) {
			double l = AT(d, i, k) /= AT(d, k, k);
			for (long j = k + 1; j < B; j++)
				AT(d, i, j) -= l * AT(d, k, j);
		}
}

/* A block of column k: a := a U^-1. */
static void bdiv(double *a, const double *d)
{
	touch_read(d);
	touch_write(a);
	for (long r = 0; r < B; r++)
		for (long k = 0; k < B; k++) {
			double x = AT(a, r, k) /= AT(d, k, k);
			for (long j = k + 1; j < B; j++)
				AT(a, r, j) -= x * AT(d, k, j);
		}
}

/* A block of row k: a := L^-1 a. */
static void bmodd(double *a, const double *d)
{
	touch_read(d);
	touch_write(a);
	for (long k = 0; k < B; k++)
		for (long i = k + 1; i < B; i++) {
			double l = AT(d, i, k);
			for (long j = 0; j < B; j++)
				AT(a, i, j) -= l * AT(a, k, j);
		}
}

/* An interior block: a -= l u. */
static void bmod(double *a, const double *l, const double *u)
{
	touch_read(l);
	touch_read(u);
	touch_write(a);
	for (long i = 0; i < B; i++)
		for (long k = 0; k < B; k++) {
			double x = AT(l, i, k);
			for (long j = 0; j < B; j++)
				AT(a, i, j) -= x * AT(u, k, j);
		}
}

static void fill(double *m, long I, long J)
{
	touch_write(m);
	for (long i = 0; i < B; i++)
		for (long j = 0; j < B; j++)
			AT(m, i, j) = init_value(I * B + i, J * B + j);
}

/* Step k on the blocks this rank owns (all of them when rank < 0). */
static void step(double *volatile *m, long k, int rank, int phase)
{
	for (long I = k; I < nb; I++)
		for (long J = k; J < nb; J++) {
			if (rank >= 0 && owner(I, J) != rank)
				continue;
			if (phase == 0 && I == k && J == k)
				lu0(m[k * nb + k]);
			else if (phase == 1 && I == k && J > k)
				bmodd(m[I * nb + J], m[k * nb + k]);
			else if (phase == 1 && J == k && I > k)
				bdiv(m[I * nb + J], m[k * nb + k]);
			else if (phase == 2 && I > k && J > k)
				bmod(m[I * nb + J], m[I * nb + k],
				     m[k * nb + J]);
		}
}

static double sequential(double **m)
{
	double t = app_now();

	app.private = 1;
	for (long I = 0; I < nb; I++)
		for (long J = 0; J < nb; J++)
			fill(m[I * nb + J], I, J);
	for (long k = 0; k < nb; k++)
		for (int ph = 0; ph < 3; ph++)
			step((double *volatile *)m, k, -1, ph);
	app.private = 0;
	return app_now() - t;
}

int main(int argc, char **argv)
{
	long vals[2] = { n, B };
	size_t bs;
	double seq = 0;
	int ok = 1;
	char params[64];

	app_init(&argc, &argv, "lu", "nb", vals);
	n = vals[0];
	B = vals[1];
	if (n % B) {
		if (app.rank == 0)
			fprintf(stderr, "lu: -n must be a multiple of -b\n");
		app_finish("lu", 0, 0, "");
	}
	nb = n / B;
	for (pr = 1; (pr + 1) * (pr + 1) <= app.nprocs; pr++)
		;
	while (app.nprocs % pr)
		pr--;
	pc = app.nprocs / pr;
	bs = (size_t)(B * B) * sizeof(double);
	blk = calloc((size_t)(nb * nb), sizeof(*blk));
	for (long i = 0; i < nb * nb; i++)
		app_alloc(bs, (void *)&blk[i]);
	app_start();
	for (long I = 0; I < nb; I++)
		for (long J = 0; J < nb; J++)
			if (owner(I, J) == app.rank)
				fill(blk[I * nb + J], I, J);
	dsm_barrier();
	for (long k = 0; k < nb; k++)
		for (int ph = 0; ph < 3; ph++) {
			step(blk, k, app.rank, ph);
			dsm_barrier();
		}
	app_stop();
	if (app.rank == 0) {
		double **m = malloc((size_t)(nb * nb) * sizeof(*m));
		for (long i = 0; i < nb * nb; i++)
			m[i] = malloc(bs);
		seq = sequential(m);
		for (long i = 0; i < nb * nb && ok; i++) {
			an_read(blk[i]);
			ok = !memcmp(m[i], blk[i], bs);
		}
	}
	snprintf(params, sizeof(params), "\"n\":%ld,\"block\":%ld", n, B);
	app_finish("lu", ok, seq, params);
}
