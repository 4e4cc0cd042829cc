/* What one barrier costs: its messages and bytes (arrivals and departures,
 * over all ranks) and time, in two phases of one run: barriers with nothing
 * written, then barriers after every rank wrote its own unit and read its
 * neighbour's (so every rank has one interval per barrier to spread; two
 * units each, by turns, so that nobody writes what is being read). Run it
 * with DSM_BARRIER_FANOUT=2 (the tree) and nprocs - 1 (the barrier at rank
 * 0) to compare. Used by make bench-dsm. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/dsm/app.h"

static long nbarriers = 200;
static int *volatile (*unit)[2];

struct cost {
	double messages, bytes, seconds;
};

/* Per barrier, summed over ranks (rank 0's result). */
static struct cost measure(int write)
{
	struct dsm_stats s;
	double mine[2], all[2], t0;
	struct cost c;

	dsm_barrier();
	dsm_stats_reset();
	t0 = app_now();
	for (long i = 1; i <= nbarriers; i++) {
		int next = (app.rank + 1) % app.nprocs;
		if (write)
			unit[app.rank][i & 1][0] = (int)i;
		dsm_barrier();
		if (write && unit[next][i & 1][0] != (int)i)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	c.seconds = (app_now() - t0) / (double)nbarriers;
	dsm_stats(&s);
	mine[0] = (double)s.barrier_messages;
	mine[1] = (double)s.barrier_bytes;
	MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	c.messages = all[0] / (double)nbarriers;
	c.bytes = all[1] / (double)nbarriers;
	return c;
}

int main(int argc, char **argv)
{
	long vals[1] = { nbarriers };
	struct cost empty, written;
	const char *fanout = getenv("DSM_BARRIER_FANOUT");

	app_init(&argc, &argv, "barrier", "b", vals);
	nbarriers = vals[0];
	unit = calloc((size_t)app.nprocs, sizeof(*unit));
	if (!unit)
		return 1;
	for (int r = 0; r < app.nprocs; r++)
		for (int t = 0; t < 2; t++)
			app_alloc(64, (void *)&unit[r][t]);
	empty = measure(0);
	written = measure(1);
	if (app.rank == 0) {
		printf("barrier on %d ranks, fanout %s: nothing written %.1f "
		       "messages %.0f bytes %.1f us; one unit written per rank "
		       "%.1f messages %.0f bytes %.1f us\n",
		       app.nprocs, fanout ? fanout : "2", empty.messages,
		       empty.bytes, empty.seconds * 1e6, written.messages,
		       written.bytes, written.seconds * 1e6);
		printf("RESULT {\"app\":\"barrier\",\"mode\":\"%s\",\"procs\":%d,"
		       "\"fanout\":%s,\"barriers\":%ld,"
		       "\"empty\":{\"messages\":%.2f,\"bytes\":%.1f,"
		       "\"seconds\":%.7f},"
		       "\"written\":{\"messages\":%.2f,\"bytes\":%.1f,"
		       "\"seconds\":%.7f}}\n",
		       app.rt ? "rt" : "vm", app.nprocs, fanout ? fanout : "2",
		       nbarriers, empty.messages, empty.bytes, empty.seconds,
		       written.messages, written.bytes, written.seconds);
	}
	dsm_finish();
	return 0;
}
