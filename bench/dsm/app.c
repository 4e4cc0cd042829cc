/* The DSM applications' common part: options, shared allocation by version,
 * timing, and the result line. Runs in the application thread only. */
#include "bench/dsm/app.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct app app;

double app_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(const char *name, const char *opts)
{
	if (app.rank == 0) {
		fprintf(stderr, "usage: mpirun -np N dsm-%s -m vm|rt|an|wb",
		        name);
		for (const char *o = opts; *o; o++)
			fprintf(stderr, " [-%c N]", *o);
		fprintf(stderr, "\n");
	}
	dsm_finish();
	exit(2);
}

void app_init(int *argc, char ***argv, const char *name, const char *opts,
              long *vals)
{
	int mode = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (dsm_init(argc, argv) < 0)
		exit(1);
	app.rank = dsm_rank();
	app.nprocs = dsm_nprocs();
	for (int i = 1; i < *argc; i++) {
		const char *a = (*argv)[i], *o;
		char *end;
		if (a[0] != '-' || !a[1] || a[2] || i + 1 >= *argc)
			usage(name, opts);
		if (a[1] == 'm') {
			const char *m = (*argv)[++i];
			if (!strcmp(m, "vm"))
				mode = 0;
			else if (!strcmp(m, "rt"))
				mode = 1;
			else if (!strcmp(m, "an"))
				mode = 2;
			else if (!strcmp(m, "wb"))
				mode = 3;
			else
				usage(name, opts);
			continue;
		}
		if (!(o = strchr(opts, a[1])))
			usage(name, opts);
		vals[o - opts] = strtol((*argv)[++i], &end, 10);
		if (*end || vals[o - opts] <= 0)
			usage(name, opts);
	}
	if (mode < 0)
		usage(name, opts);
	app.rt = mode == 1 || mode == 3;
	app.an = mode == 2;
	app.wb = mode == 3;
}

void *app_alloc(size_t size, void *bptr)
{
	void *p = app.an   ? dsm_an_alloc(size)
	          : app.wb ? dsm_region_alloc_wb(size, bptr)
	          : app.rt ? dsm_region_alloc(size, bptr)
	                   : dsm_malloc(size);

	if (!p) {
		perror("dsm allocation");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	*(void **)bptr = p;
	return p;
}

void app_share(long n, int rank, long *lo, long *hi)
{
	*lo = n * rank / app.nprocs;
	*hi = n * (rank + 1) / app.nprocs;
}

void app_start(void)
{
	dsm_barrier();
	dsm_stats_reset();
	app.t0 = app_now();
}

void app_stop(void)
{
	double mine, worst;

	dsm_barrier();
	mine = app_now() - app.t0;
	MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	app.elapsed = worst;
	if (app.rank == 0 &&
	    !(app.all = calloc((size_t)app.nprocs, sizeof(*app.all))))
		MPI_Abort(MPI_COMM_WORLD, 1);
	dsm_stats_gather(app.all);
	app.t_stop = app_now();
}

static const char *app_mode(void)
{
	return app.an ? "an" : app.wb ? "wb"
	               : app.rt       ? "rt"
	                              : "vm";
}

#define F(x) (unsigned long long)s->x
void app_finish(const char *name, int ok, double seq_time, const char *params)
{
	double check;

	if (app.rank == 0) {
		printf("%s %s on %d: %.3f s, result %s (sequential %.3f s)\n",
		       name, app_mode(), app.nprocs, app.elapsed,
		       ok ? "OK" : "WRONG", seq_time);
		printf("RESULT "
		       "{\"app\":\"%s\",\"mode\":\"%s\",\"procs\":%d,"
		       "\"params\":{%s},"
		       "\"time\":%.6f,\"seq_time\":%.6f,\"ok\":%s,\"ranks\":[",
		       name, app_mode(), app.nprocs, params,
		       app.elapsed, seq_time, ok ? "true" : "false");
		for (int r = 0; r < app.nprocs; r++) {
			const struct dsm_stats *s = &app.all[r];
			printf("%s{\"traps\":%llu,\"read_misses\":%llu,\"write_"
			       "misses\":%llu,"
			       "\"write_traps\":%llu,\"stale_traps\":%llu,"
			       "\"messages\":%llu,"
			       "\"bytes\":%llu,\"diff_requests\":%llu,\"diffs_"
			       "created\":%llu,"
			       "\"diffs_applied\":%llu,\"diff_bytes\":%llu,"
			       "\"acquires\":%llu,"
			       "\"remote_acquires\":%llu,\"barriers\":%llu,"
			       "\"miss_ns\":%llu,\"gc_runs\":%llu,"
			       "\"gc_freed\":%llu,\"cons_peak\":%llu,"
			       "\"snap_bytes\":%llu,\"twin_bytes\":%llu,"
			       "\"written_units\":%llu}",
			       r ? "," : "", F(traps), F(read_misses),
			       F(write_misses), F(write_traps), F(stale_traps),
			       F(messages), F(bytes), F(diff_requests),
			       F(diffs_created), F(diffs_applied),
			       F(diff_bytes), F(acquires), F(remote_acquires),
			       F(barriers), F(miss_ns), F(gc_runs), F(gc_freed),
			       F(cons_peak), F(snap_bytes), F(twin_bytes),
			       F(written_units));
		}
		printf("]}\n");
	}
	check = app.t_stop ? app_now() - app.t_stop : 0;
	/* Every rank waits here, serving, until rank 0 has checked the result:
	 * in an MPI collective this rank's application thread would spin in
	 * Open MPI and starve the service thread that rank 0's reads need (LU
	 * on 2 ranks: 0.7 s between the timed section and exit, against
	 * 0.02 s this way). */
	dsm_barrier();
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	dsm_finish();
	/* After the timed section: rank 0's sequential run and check, and all
	 * of it up to here (the last barriers and dsm_finish). */
	if (app.rank == 0 && app.t_stop)
		printf("FINISH {\"check\":%.6f,\"after\":%.6f}\n", check,
		       app_now() - app.t_stop);
	exit(ok ? 0 : 1);
}
