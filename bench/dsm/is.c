/* Integer sort on the DSM (the RTL paper's IS, after the NAS kernel): the
 * one shared structure is the bucket array (a region in the RT version,
 * pages in the VM version). In each iteration every rank counts its own keys
 * privately, adds its counts into the shared buckets under a lock, and after
 * a barrier reads all the buckets to rank its keys; a second barrier ends
 * the iteration. The buckets accumulate
 * over iterations; a rank takes this iteration's counts as the difference
 * from what it read last time. Rank 0 checks the buckets and every rank's
 * rank checksums against a sequential run. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dsm/app.h"

static long nkeys = 1L << 20, nbuckets = 1L << 15, iters = 10;
static int *volatile bucket;

static unsigned long long mix(unsigned long long x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* Key number g (of all nkeys) in iteration it. */
static int key(long it, long g)
{
	return (int)(mix((unsigned long long)it << 40 ^ (unsigned long long)g) %
	             (unsigned long long)nbuckets);
}

/* Rank keys [lo, hi) given this iteration's totals: checksum of the ranks
 * (the count of smaller keys everywhere). */
static unsigned long long rank_keys(long it, long lo, long hi,
                                    const long *total, long *prefix)
{
	unsigned long long sum = 0;
	long acc = 0;

	for (long b = 0; b < nbuckets; b++) {
		prefix[b] = acc;
		acc += total[b];
	}
	for (long g = lo; g < hi; g++)
		sum = sum * 31 + (unsigned long long)prefix[key(it, g)];
	return sum;
}

int main(int argc, char **argv)
{
	long vals[3] = { nkeys, nbuckets, iters }, lo, hi;
	long *mine, *seen, *total, *prefix;
	unsigned long long *sums, *all = NULL;
	double seq = 0;
	int ok = 1;
	char params[128];

	app_init(&argc, &argv, "is", "kbi", vals);
	nkeys = vals[0];
	nbuckets = vals[1];
	iters = vals[2];
	mine = calloc((size_t)nbuckets, sizeof(long));
	seen = calloc((size_t)nbuckets, sizeof(long));
	total = calloc((size_t)nbuckets, sizeof(long));
	prefix = calloc((size_t)nbuckets, sizeof(long));
	sums = calloc((size_t)iters, sizeof(*sums));
	app_alloc((size_t)nbuckets * sizeof(int), (void *)&bucket);
	app_share(nkeys, app.rank, &lo, &hi);
	app_start();
	for (long it = 0; it < iters; it++) {
		memset(mine, 0, (size_t)nbuckets * sizeof(long));
		for (long g = lo; g < hi; g++)
			mine[key(it, g)]++;
		dsm_lock_acquire(0);
		an_write(bucket);
		for (long b = 0; b < nbuckets; b++)
			bucket[b] += (int)mine[b];
		dsm_lock_release(0);
		dsm_barrier();
		an_read(bucket);
		for (long b = 0; b < nbuckets; b++) {
			long now = bucket[b];
			total[b] = now - seen[b];
			seen[b] = now;
		}
		dsm_barrier(); /* everyone has read before anyone adds again */
		sums[it] = rank_keys(it, lo, hi, total, prefix);
	}
	app_stop();
	if (app.rank == 0)
		all = calloc((size_t)(iters * app.nprocs), sizeof(*all));
	MPI_Gather(sums, (int)iters, MPI_UNSIGNED_LONG_LONG, all, (int)iters,
	           MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
	if (app.rank == 0) {
		double t = app_now();
		memset(seen, 0, (size_t)nbuckets * sizeof(long));
		for (long it = 0; it < iters; it++) {
			memset(total, 0, (size_t)nbuckets * sizeof(long));
			for (long g = 0; g < nkeys; g++)
				total[key(it, g)]++;
			for (long b = 0; b < nbuckets; b++)
				seen[b] += total[b];
			for (int p = 0; p < app.nprocs; p++) {
				long plo, phi;
				app_share(nkeys, p, &plo, &phi);
				if (rank_keys(it, plo, phi, total, prefix) !=
				    all[p * iters + it])
					ok = 0;
			}
		}
		seq = app_now() - t;
		an_read(bucket);
		for (long b = 0; b < nbuckets; b++)
			if (bucket[b] != seen[b])
				ok = 0;
	}
	snprintf(params, sizeof(params),
	         "\"keys\":%ld,\"buckets\":%ld,\"iterations\":%ld", nkeys,
	         nbuckets, iters);
	app_finish("is", ok, seq, params);
}
