/* Miss latency: how long one access miss takes, from the trap to the access
 * going on, while the rank that holds the diffs keeps its application thread
 * busy in one of three ways, all measured in one run:
 *   mpi      its application thread waits in MPI_Bcast (Open MPI spins),
 *   compute  its application thread computes (a CPU loop),
 *   barrier  its application thread waits in dsm_barrier (the DSM's wait).
 * Rank 1 writes N units; after a barrier rank 0 reads each once, timing each
 * miss; rank 1 does the chosen thing until rank 0 is done. Rounds repeat with
 * new writes. Two ranks; prints min/median/p90/p99/max per scenario and a
 * RESULT line with every sample (microseconds). Used by make bench-dsm. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/dsm/app.h"

static long nunits = 200, usize = 4096, rounds = 5;
static int *volatile *unit;

enum { BUSY_MPI,
       BUSY_COMPUTE,
       BUSY_BARRIER,
       NBUSY };
static const char *const busy_name[NBUSY] = { "mpi", "compute", "barrier" };

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Rank 1's application thread: compute until rank 0 says it is done (a
 * plain MPI message, tested every ~0.2 ms of work). */
static void compute_until_done(void)
{
	volatile double x = 1;
	MPI_Request rq;
	int done = 0;

	MPI_Irecv(NULL, 0, MPI_BYTE, 0, 77, MPI_COMM_WORLD, &rq);
	while (!done) {
		for (int i = 0; i < 50000; i++)
			x = x * 1.0000001 + 1e-9;
		MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
	}
}

/* One round: rank 1 writes every unit, rank 0 misses on each. Rank 0 stores
 * the latencies (us) in out[nunits]. */
static void round_of(int busy, int round, double *out)
{
	int token = 0;

	if (app.rank == 1)
		for (long i = 0; i < nunits; i++)
			unit[i][0] = round * 1000 + (int)i;
	dsm_barrier();
	if (app.rank == 0) {
		for (long i = 0; i < nunits; i++) {
			double t = app_now();
			int v = unit[i][0];
			out[i] = (app_now() - t) * 1e6;
			if (v != round * 1000 + (int)i) {
				fprintf(stderr, "latency: unit %ld holds %d\n",
				        i, v);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
	}
	if (busy == BUSY_MPI) {
		MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
	} else if (busy == BUSY_COMPUTE) {
		if (app.rank == 0)
			MPI_Send(NULL, 0, MPI_BYTE, 1, 77, MPI_COMM_WORLD);
		else if (app.rank == 1)
			compute_until_done();
	}
	dsm_barrier(); /* BUSY_BARRIER: rank 1 has waited here all along */
}

static void print_summary(const char *name, double *s, long n)
{
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	printf("miss latency (us) while the holder waits in %-8s min %7.1f  "
	       "median %7.1f  p90 %7.1f  p99 %7.1f  max %8.1f  (%ld misses)\n",
	       name, s[0], s[n / 2], s[n * 9 / 10], s[n * 99 / 100], s[n - 1],
	       n);
}

int main(int argc, char **argv)
{
	long vals[3] = { nunits, usize, rounds };
	double *lat[NBUSY];
	long n;

	app_init(&argc, &argv, "latency", "nsr", vals);
	nunits = vals[0];
	usize = vals[1];
	rounds = vals[2];
	if (app.nprocs != 2 || usize < (long)sizeof(int)) {
		if (app.rank == 0)
			fprintf(stderr, "latency: 2 ranks, -s at least 4\n");
		dsm_finish();
		return 2;
	}
	n = nunits * rounds;
	unit = calloc((size_t)nunits, sizeof(*unit));
	for (int b = 0; b < NBUSY; b++)
		lat[b] = calloc((size_t)n, sizeof(double));
	if (!unit || !lat[0] || !lat[1] || !lat[2])
		return 1;
	for (long i = 0; i < nunits; i++)
		app_alloc((size_t)usize, (void *)&unit[i]);
	app_start();
	for (int r = 0; r < (int)rounds; r++)
		for (int b = 0; b < NBUSY; b++)
			round_of(b, r * NBUSY + b + 1, lat[b] + r * nunits);
	app_stop();
	if (app.rank == 0) {
		printf("RESULT {\"app\":\"latency\",\"mode\":\"%s\",\"procs\":2,"
		       "\"units\":%ld,\"unit_bytes\":%ld,\"rounds\":%ld",
		       app.rt ? "rt" : "vm", nunits, usize, rounds);
		for (int b = 0; b < NBUSY; b++) {
			printf(",\"%s\":[", busy_name[b]);
			for (long i = 0; i < n; i++)
				printf("%s%.1f", i ? "," : "", lat[b][i]);
			printf("]");
		}
		printf("}\n");
		for (int b = 0; b < NBUSY; b++)
			print_summary(busy_name[b], lat[b], n);
	}
	dsm_finish();
	return 0;
}
