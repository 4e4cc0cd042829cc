/* Start and end of the DSM: MPI with MPI_THREAD_MULTIPLE (and the MPI
 * settings that keep the MPI stack off rtl's trap path), rtl, the service
 * and fetch threads; fatal errors; the counters. The one place that prints
 * and ends the run (dsm_die); never called from a trap handler. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rtl/region.h>

#include "dsm/wire.h"

struct dsm dsm = { .lock = PTHREAD_MUTEX_INITIALIZER,
	           .arrived = PTHREAD_COND_INITIALIZER };

void dsm_die(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n = snprintf(line, sizeof(line), "dsm: rank %d: ", dsm.rank);
	ssize_t rc;

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(line);
	line[n++] = '\n';
	rc = write(2, line,
	           (size_t)n); /* one write: lines from ranks do not mix */
	(void)rc;
	MPI_Abort(MPI_COMM_WORLD, 3);
	_exit(3);
}

void dsm_check_mpi(int rc, const char *call)
{
	char s[MPI_MAX_ERROR_STRING];
	int n = 0;

	if (rc == MPI_SUCCESS)
		return;
	MPI_Error_string(rc, s, &n);
	dsm_die("%s failed: %s (a rank died?)", call, s);
}

static void on_mpi_error(MPI_Comm *c, int *code, ...)
{
	(void)c;
	dsm_check_mpi(*code, "an MPI call");
}

/* Settings that would otherwise collide with rtl's trap path or with
 * mprotect-based sharing; the environment wins
 * (docs/dsm-mpi.md, "MPI: which, and what to switch off"). */
static void mpi_defaults(void)
{
	/* Open MPI installs a SIGSEGV handler at MPI_Init that prints a stack
	 * and aborts; keep its handlers for SIGABRT, SIGBUS and SIGFPE only. */
	setenv("OMPI_MCA_opal_signal", "6,7,8", 0);
	/* Its memory patcher rewrites munmap/madvise & co. for registration
	 * caches that shared-memory and TCP transports do not use. */
	setenv("OMPI_MCA_memory", "^patcher", 0);
	/* UCX, if selected, would install handlers for SIGSEGV and hooks on
	 * mmap; ob1 over shared memory and TCP needs neither. */
	setenv("OMPI_MCA_pml", "ob1", 0);
	setenv("OMPI_MCA_btl", "self,vader,tcp", 0);
	/* Cross-memory attach (process_vm_readv) fails in containers without
	 * CAP_SYS_PTRACE; copying through the shared segment always works. */
	setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
	setenv("UCX_ERROR_SIGNALS", "", 0);
	setenv("UCX_MEM_MALLOC_HOOKS", "no", 0);
}

const char *dsm_inject(const char *name)
{
	size_t n = strlen(name);

	for (const char *x = dsm.inject; x && *x;) {
		if (!strncmp(x, name, n) &&
		    (x[n] == ':' || x[n] == ',' || !x[n]))
			return x;
		x = strchr(x, ',');
		x = x ? x + 1 : NULL;
	}
	return NULL;
}

static double env_num(const char *name, double dflt, double lo, double hi)
{
	const char *s = getenv(name);
	char *end;
	double v;

	if (!s || !*s)
		return dflt;
	v = strtod(s, &end);
	if (*end || v < lo || v > hi)
		dsm_die("%s=%s is not a number between %g and %g", name, s, lo,
		        hi);
	return v;
}

int dsm_init(int *argc, char ***argv)
{
	MPI_Errhandler eh;
	int provided;

	mpi_defaults();
	if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) !=
	    MPI_SUCCESS) {
		fprintf(stderr, "dsm: MPI_Init_thread failed\n");
		return -1;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &dsm.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &dsm.nprocs);
	if (provided < MPI_THREAD_MULTIPLE)
		dsm_die("the MPI library gives thread level %d, the DSM needs "
		        "MPI_THREAD_MULTIPLE (%d)",
		        provided, MPI_THREAD_MULTIPLE);
	MPI_Comm_create_errhandler(on_mpi_error, &eh);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
	dsm_check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &dsm.req), "MPI_Comm_dup");
	dsm_check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &dsm.rep), "MPI_Comm_dup");
	MPI_Comm_set_errhandler(dsm.req, eh);
	MPI_Comm_set_errhandler(dsm.rep, eh);
	dsm.timeout = env_num("DSM_TIMEOUT", 60, 0.2, 1e6);
	dsm.poll_max_ns =
	        (long)(env_num("DSM_POLL_MAX_US", 500, 1, 100000) * 1000);
	dsm.inject = getenv("DSM_INJECT");
	db_init(getenv("DSM_DOORBELL"));
	/* rtl after MPI: its SIGSEGV handler passes foreign faults on to
	 * whatever MPI left; the page heap's handler (vm.c) goes on top. */
	if (region_init() < 0)
		dsm_die("rtl cannot start: %s", strerror(errno));
	if (dsm_vm_init() < 0)
		dsm_die("cannot map the shared page heap: %s", strerror(errno));
	lrc_init();
	alive_init();
	barrier_init();
	gc_init();
	for (int l = 0; l < DSM_MAX_LOCKS; l++) {
		dsm.locks[l].token = l % dsm.nprocs == dsm.rank;
		dsm.locks[l].mgr_last = dsm.rank;
	}
	dsm_stats_reset();
	if (pthread_create(&dsm.service, NULL, service_main, NULL) ||
	    pthread_create(&dsm.fetcher, NULL, fetch_main, NULL))
		dsm_die("cannot start the service threads");
	return 0;
}

int dsm_finish(void)
{
	struct wbuf w;

	dsm_barrier();
	atomic_store(&dsm.doing, DOING_FINISH);
	w_init(&w, T_STOP);
	net_send(dsm.rank, dsm.req, T_STOP, &w, "stop");
	w_free(&w);
	pthread_join(dsm.service, NULL);
	fetch_stop();
	pthread_join(dsm.fetcher, NULL);
	db_fini();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}

int dsm_rank(void)
{
	return dsm.rank;
}

int dsm_nprocs(void)
{
	return dsm.nprocs;
}

/* ---- counters ---- */

static uint64_t rtl_stale(void)
{
	struct region_stats s;

	return region_stats(&s) < 0 ? 0 : s.stale_traps;
}

#define LOAD(f) out->f = atomic_load(&dsm.st.f)
void dsm_stats(struct dsm_stats *out)
{
	LOAD(traps);
	LOAD(read_misses);
	LOAD(write_misses);
	LOAD(write_traps);
	LOAD(messages);
	LOAD(bytes);
	LOAD(diff_requests);
	LOAD(diffs_created);
	LOAD(diffs_applied);
	LOAD(diff_bytes);
	LOAD(acquires);
	LOAD(remote_acquires);
	LOAD(barriers);
	LOAD(intervals);
	LOAD(notices);
	LOAD(miss_ns);
	LOAD(gc_runs);
	LOAD(gc_freed);
	LOAD(barrier_messages);
	LOAD(barrier_bytes);
	LOAD(twin_bytes);
	LOAD(written_units);
	out->stale_traps = rtl_stale() - dsm.stale_base;
	/* Plain reads of words the application thread updates: a snapshot
	 * that may lag, good enough for counters. */
	out->cons_bytes = dsm.cons_bytes;
	out->cons_peak = dsm.cons_peak;
	out->snap_bytes = dsm.snap_bytes;
}

void dsm_stats_reset(void)
{
	memset((void *)&dsm.st, 0, sizeof(dsm.st));
	dsm.stale_base = rtl_stale();
}

int dsm_stats_gather(struct dsm_stats *all)
{
	struct dsm_stats mine;

	dsm_stats(&mine);
	dsm_check_mpi(MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all,
	                         (int)sizeof(mine), MPI_BYTE, 0,
	                         MPI_COMM_WORLD),
	              "MPI_Gather");
	return 0;
}
