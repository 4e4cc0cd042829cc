/* Protocol scenarios for tests/bats/dsm.bats, each proving one promise of
 * docs/dsm.md on 2-4 ranks: dsm-proto SCENARIO vm|rt. Rank 0 prints
 * "PASS scenario mode" when every rank found what it expected, and each rank
 * prints one "stats" line; any wrong value ends the run with "FAIL ...". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "dsm/dsm.h"

static int rt, wb, rank, nprocs; /* wb: regions on written bits */
static long iterations = 10000;  /* longrun; the optional third argument */

#define FAIL(...)                               \
	do {                                    \
		printf("FAIL rank %d: ", rank); \
		printf(__VA_ARGS__);            \
		printf("\n");                   \
		fflush(stdout);                 \
		MPI_Abort(MPI_COMM_WORLD, 1);   \
	} while (0)

/* Shared memory of either kind; *bptr is the (registered, for regions)
 * pointer variable. */
static void *shared(size_t n, void *bptr)
{
	/* On written bits, units of a page at least: smaller ones trap. */
	void *p = wb   ? dsm_region_alloc_wb(n < 4096 ? 4096 : n, bptr)
	          : rt ? dsm_region_alloc(n, bptr)
	               : dsm_malloc(n);

	if (!p)
		FAIL("allocation of %zu bytes failed", n);
	*(void **)bptr = p;
	return p;
}

static void stats_line(const char *what)
{
	struct dsm_stats s;

	dsm_stats(&s);
	printf("stats %s rank %d: traps %llu misses %llu diffreq %llu msgs "
	       "%llu "
	       "applied %llu\n",
	       what, rank, (unsigned long long)s.traps,
	       (unsigned long long)(s.read_misses + s.write_misses),
	       (unsigned long long)s.diff_requests,
	       (unsigned long long)s.messages,
	       (unsigned long long)s.diffs_applied);
	fflush(stdout);
}

/* Each rank adds 1 to a shared counter K times under lock 3. */
static void counter(void)
{
	static int *volatile c;
	const int k = 50;

	shared(sizeof(int), (void *)&c);
	dsm_barrier();
	for (int i = 0; i < k; i++) {
		dsm_lock_acquire(3);
		c[0] = c[0] + 1;
		dsm_lock_release(3);
	}
	dsm_barrier();
	if (c[0] != nprocs * k)
		FAIL("counter is %d, expected %d", c[0], nprocs * k);
}

/* Ranks take turns by a shared counter under lock 5: rank r may add only
 * when the counter is r modulo nprocs, so the lock travels round the ranks
 * (through the manager's forwarding) and every turn sees the last one's
 * write. A second lock, held across the turn, guards a running sum. */
static void turns(void)
{
	static long *volatile t, *volatile sum;
	const int k = 15;
	long want = 0;

	shared(sizeof(long), (void *)&t);
	shared(sizeof(long), (void *)&sum);
	dsm_barrier();
	for (int done = 0; done < k;) {
		dsm_lock_acquire(5);
		if (t[0] % nprocs == rank) {
			dsm_lock_acquire(2);
			sum[0] += t[0];
			dsm_lock_release(2);
			t[0]++;
			done++;
		}
		dsm_lock_release(5);
	}
	dsm_barrier();
	for (long i = 0; i < (long)k * nprocs; i++)
		want += i;
	if (t[0] != (long)k * nprocs || sum[0] != want)
		FAIL("counter %ld, sum %ld (expected %d, %ld)", t[0], sum[0],
		     k * nprocs, want);
}

/* Phases separated by barriers: each rank writes its slot, then everyone
 * reads every slot of this phase. */
static void phases(void)
{
	static int *volatile slot[8];

	for (int r = 0; r < nprocs; r++)
		shared(64, (void *)&slot[r]);
	dsm_barrier();
	for (int ph = 1; ph <= 6; ph++) {
		slot[rank][0] = ph * 1000 + rank;
		slot[rank][15] = -ph;
		dsm_barrier();
		for (int r = 0; r < nprocs; r++)
			if (slot[r][0] != ph * 1000 + r || slot[r][15] != -ph)
				FAIL("phase %d: slot %d holds %d/%d", ph, r,
				     slot[r][0], slot[r][15]);
		dsm_barrier();
	}
}

/* Two 64-byte objects on one page: ranks 0 and 1 each write and read only
 * their own. Pages: the page ping-pongs (diff requests); regions: nothing
 * moves until the end, when each reads the other's. */
static void falseshare(void)
{
	static long *volatile obj[2];
	const int rounds = 8;

	shared(64, (void *)&obj[0]);
	shared(64, (void *)&obj[1]);
	dsm_barrier();
	dsm_stats_reset();
	for (int i = 1; i <= rounds; i++) {
		if (rank < 2) {
			obj[rank][0] = i * 10 + rank;
			if (obj[rank][0] != i * 10 + rank)
				FAIL("own object lost its value");
		}
		dsm_barrier();
		if (rank < 2 && obj[rank][0] != i * 10 + rank)
			FAIL("round %d: own object holds %ld", i, obj[rank][0]);
	}
	stats_line("rounds");
	dsm_barrier();
	for (int r = 0; r < 2; r++)
		if (obj[r][0] != rounds * 10 + r)
			FAIL("object %d holds %ld, expected %d", r, obj[r][0],
			     rounds * 10 + r);
}

/* One 4 KiB unit (one page, one region) written by every rank at once, each
 * in its own part: the diffs merge. Three rounds with new values. */
static void multiwriter(void)
{
	static unsigned char *volatile u;
	const int n = 4096, part = n / nprocs;

	shared((size_t)n, (void *)&u);
	dsm_barrier();
	for (int round = 1; round <= 3; round++) {
		for (int i = rank * part; i < (rank + 1) * part; i++)
			u[i] = (unsigned char)(round * 16 + rank + (i & 3));
		dsm_barrier();
		for (int i = 0; i < part * nprocs; i++) {
			int w = i / part;
			if (u[i] != (unsigned char)(round * 16 + w + (i & 3)))
				FAIL("round %d: byte %d is %d, expected %d",
				     round, i, u[i], round * 16 + w + (i & 3));
		}
		dsm_barrier();
	}
}

/* Ranks 1 then 2 write x under a lock (rank 2 after rank 1's release, so
 * its write comes later); rank 1 also writes z. Rank 0, which saw neither,
 * must apply rank 1's diff before rank 2's: x = 2, z = 1. Rank 2's interval
 * dominates rank 1's, so rank 0 asks rank 2 alone, for both diffs. */
static void order(void)
{
	static int *volatile v;

	if (nprocs < 3)
		FAIL("needs 3 ranks");
	shared(2 * sizeof(int), (void *)&v);
	dsm_barrier();
	if (rank == 1) {
		dsm_lock_acquire(0);
		v[0] = 1;
		v[1] = 1;
		dsm_lock_release(0);
	}
	dsm_barrier();
	if (rank == 2) {
		dsm_lock_acquire(0);
		v[0] = 2;
		dsm_lock_release(0);
	}
	dsm_barrier();
	dsm_stats_reset();
	if (rank == 0) {
		int x = v[0], z = v[1];
		struct dsm_stats s;
		dsm_stats(&s);
		if (x != 2 || z != 1)
			FAIL("x = %d, z = %d: diffs applied out of order "
			     "(expected 2, 1)",
			     x, z);
		if (s.diff_requests != 1 || s.diffs_applied != 2)
			FAIL("%llu diff requests, %llu diffs applied (expected "
			     "1 and 2)",
			     (unsigned long long)s.diff_requests,
			     (unsigned long long)s.diffs_applied);
	}
	dsm_barrier();
}

/* Regions only: rank 0 keeps an unregistered copy of a region pointer and
 * writes through it after the DSM lowered the region to serve rank 1. The
 * DSM must refuse to go on silently (plain MPI orders the two ranks). */
static void contract(void)
{
	static char *volatile a;
	char *copy;

	if (!rt)
		FAIL("regions only");
	shared(256, (void *)&a);
	dsm_barrier();
	if (rank == 0)
		a[0] = 1; /* twinned, writable */
	copy = a;         /* the unregistered copy */
	dsm_barrier();
	if (rank == 1) {
		if (a[0] != 1) /* fetches rank 0's diff: rank 0 lowers a */
			FAIL("a[0] = %d", a[0]);
		MPI_Send(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD);
	} else if (rank == 0) {
		MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD,
		         MPI_STATUS_IGNORE);
		copy[1] =
		        2; /* no trap: the copy points into the writable view */
	}
	dsm_barrier(); /* rank 0 must stop here */
	if (rank == 0)
		FAIL("a write through an unregistered pointer went unnoticed");
}

/* Run with DSM_GC_BYTES=0 (a collection at every barrier that has anything
 * to collect). Rank 1 writes
 * x; ranks 0 and 2 never look, so the collection leaves their copies
 * discarded, held by rank 1. Rank 2 then writes y (its miss fetches rank
 * 1's copy first); the next collection moves the holder to rank 2, and
 * rank 1's copy is now stale too. At the end everybody reads both. */
static void discard(void)
{
	static int *volatile v;
	struct dsm_stats s;

	if (nprocs != 3)
		FAIL("needs 3 ranks");
	shared(2 * sizeof(int), (void *)&v);
	dsm_barrier();
	if (rank == 1)
		v[0] = 1;
	dsm_barrier(); /* collected: 0 and 2 discard, 1 holds */
	dsm_barrier(); /* nothing written: nothing to collect, nothing moves */
	if (rank == 2)
		v[1] = 2;
	dsm_barrier(); /* collected: 0 and 1 discard, 2 holds */
	dsm_barrier();
	if (v[0] != 1 || v[1] != 2)
		FAIL("x = %d, y = %d after collections (expected 1, 2)", v[0],
		     v[1]);
	dsm_stats(&s);
	if (s.gc_runs < 2)
		FAIL("%llu collections (expected 2 or more)",
		     (unsigned long long)s.gc_runs);
	dsm_barrier();
}

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Many barriers, each after every rank rewrote one of its two 1 KB units
 * (by turns, so that nobody writes what a neighbour still reads); each rank
 * then reads its neighbour's (a miss, a diff fetched and kept). Without
 * garbage collection the intervals, notices and diffs grow by a few KB per
 * barrier; with it (DSM_GC_BYTES) they stay under the threshold, and so
 * does the memory of the process after its first thousand barriers. */
static void longrun(void)
{
	static int *volatile unit[8][2];
	const int words = 256;
	long rss_early = 0;
	struct dsm_stats s;

	for (int r = 0; r < nprocs; r++)
		for (int t = 0; t < 2; t++)
			shared((size_t)words * sizeof(int),
			       (void *)&unit[r][t]);
	dsm_barrier();
	for (long i = 1; i <= iterations; i++) {
		int next = (rank + 1) % nprocs, t = (int)(i & 1);
		for (int k = 0; k < words; k++)
			unit[rank][t][k] = (int)(i * 7 + k + rank);
		dsm_barrier();
		if (unit[next][t][words - 1] !=
		            (int)(i * 7 + words - 1 + next) ||
		    unit[next][t][0] != (int)(i * 7 + next))
			FAIL("barrier %ld: neighbour's unit holds %d", i,
			     unit[next][t][0]);
		if (i == iterations / 10)
			rss_early = maxrss_kb();
	}
	dsm_barrier();
	dsm_stats(&s);
	printf("longrun rank %d: barriers %ld gc_runs %llu gc_freed_kb %llu "
	       "cons_peak_kb %llu snap_kb %llu maxrss_kb at %ld: %ld, at "
	       "%ld: %ld\n",
	       rank, iterations, (unsigned long long)s.gc_runs,
	       (unsigned long long)s.gc_freed / 1024,
	       (unsigned long long)s.cons_peak / 1024,
	       (unsigned long long)s.snap_bytes / 1024, iterations / 10,
	       rss_early, iterations, maxrss_kb());
}

/* Rank 1 allocates one more unit than the others: the next barrier must
 * stop the run rather than let unit ids disagree. */
static void badalloc(void)
{
	static char *volatile a, *volatile extra;

	shared(100, (void *)&a);
	if (rank == 1)
		shared(100, (void *)&extra);
	dsm_barrier();
	FAIL("ranks that allocated differently passed a barrier");
}

/* A plain bug in a DSM program: the fault is neither the DSM's nor rtl's
 * and must kill the process with SIGSEGV, as it would without them. */
static void crash(void)
{
	static int *volatile nowhere;

	dsm_barrier();
	if (rank == nprocs - 1)
		nowhere[1] = 1;
	dsm_barrier();
}

/* Every rank writes 32 units of its own; after a barrier every rank but 0
 * goes straight to dsm_finish, while rank 0 reads all of them: its diff
 * requests reach ranks already finishing, which must serve them. */
static void finishread(void)
{
	static long *volatile u[8][32];

	for (int r = 0; r < nprocs; r++)
		for (int i = 0; i < 32; i++)
			shared(4096, (void *)&u[r][i]);
	dsm_barrier();
	for (int i = 0; i < 32; i++)
		for (int k = 0; k < 512; k++)
			u[rank][i][k] = rank * 100000 + i * 1000 + k;
	dsm_barrier();
	if (rank != 0)
		return;
	for (int r = 1; r < nprocs; r++)
		for (int i = 0; i < 32; i++)
			for (int k = 0; k < 512; k++)
				if (u[r][i][k] != r * 100000 + i * 1000 + k)
					FAIL("unit %d of rank %d holds %ld at %d", i, r,
					     u[r][i][k], k);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} tests[] = { { "counter", counter },
		      { "turns", turns },
		      { "phases", phases },
		      { "falseshare", falseshare },
		      { "multiwriter", multiwriter },
		      { "order", order },
		      { "longrun", longrun },
		      { "discard", discard },
		      { "contract", contract },
		      { "badalloc", badalloc },
		      { "crash", crash },
		      { "finishread", finishread } };
	const char *which = argc > 1 ? argv[1] : "";

	if (argc < 3 || argc > 4 ||
	    (strcmp(argv[2], "vm") && strcmp(argv[2], "rt") && strcmp(argv[2], "wb"))) {
		fprintf(stderr, "usage: dsm-proto SCENARIO vm|rt|wb [N]\n");
		return 2;
	}
	if (argc == 4 && (iterations = atol(argv[3])) <= 0)
		return 2;
	wb = !strcmp(argv[2], "wb");
	rt = wb || !strcmp(argv[2], "rt");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (dsm_init(&argc, &argv) < 0)
		return 1;
	rank = dsm_rank();
	nprocs = dsm_nprocs();
	if (nprocs > 8)
		FAIL("at most 8 ranks");
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(which, tests[i].name)) {
			tests[i].fn();
			stats_line("end");
			dsm_finish();
			if (rank == 0)
				printf("PASS %s %s\n", which, argv[2]);
			return 0;
		}
	if (rank == 0)
		fprintf(stderr, "dsm-proto: no scenario %s\n", which);
	dsm_finish();
	return 2;
}
