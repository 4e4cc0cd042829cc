/* DIRTY: twins per checkpoint, exact diffs on random writes, the dirty list
 * with reset, how tracking meets protection, handlers, MAP2, free and fork,
 * and the errno cases. The encoding is tested in diff.c. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/dirty_helpers.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

/* The runs where a and b differ, byte by byte: the reference for scan. */
static size_t reference_runs(const unsigned char *a, const unsigned char *b,
                             size_t n, rtl_run_t *out)
{
	size_t runs = 0;
	for (size_t i = 0; i < n;) {
		if (a[i] == b[i]) {
			i++;
			continue;
		}
		size_t s = i;
		while (i < n && a[i] != b[i])
			i++;
		out[runs++] = (rtl_run_t){ s, i - s };
	}
	return runs;
}

static void check_diff_exact(unsigned char *x, const unsigned char *snap,
                             size_t n)
{
	static rtl_run_t want[8192], got[8192];
	size_t w = reference_runs(x, snap, n, want);
	ssize_t g = region_diff(x, got, 8192);

	CHECK_EQ(g, (ssize_t)w);
	CHECK_EQ(region_diff(x, NULL, 0), g);
	for (size_t i = 0; i < w; i++) {
		CHECK_EQ(got[i].offset, want[i].offset);
		CHECK_EQ(got[i].len, want[i].len);
	}
}

TEST(diff_exact_on_random_writes)
{
	static const size_t sizes[] = { 1, 7, 8, 9, 63, 64, 100, 4097, 20000 };
	static unsigned char snap[20000];

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		unsigned char *x = region_alloc(n, &x);
		CHECK(x != NULL);
		for (size_t i = 0; i < n; i++)
			x[i] = (unsigned char)rnd();
		CHECK_EQ(region_track(x, 1), 0);
		for (int epoch = 0; epoch < 20; epoch++) {
			memcpy(snap, x, n);
			random_writes(x, n, 1 + epoch % 7);
			check_diff_exact(x, snap, n);
			CHECK_EQ(region_checkpoint(x), 0);
			CHECK_EQ(region_diff(x, NULL, 0), 0);
		}
		CHECK_EQ(region_free(x), 0);
	}
}

/* Whole words changed, runs crossing words, every other byte. */
TEST(diff_runs_word_patterns)
{
	unsigned char *x = region_alloc(64, &x);
	rtl_run_t r[64];

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	memset(x + 3, 0xff, 21); /* one run crossing three word boundaries */
	CHECK_EQ(region_diff(x, r, 64), 1);
	CHECK_EQ(r[0].offset, 3);
	CHECK_EQ(r[0].len, 21);
	CHECK_EQ(region_checkpoint(x), 0);
	for (int i = 32; i < 64; i += 2)
		poke(x + i, 1);
	CHECK_EQ(region_diff(x, r, 64), 16);
	for (int i = 0; i < 16; i++) {
		CHECK_EQ(r[i].offset, 32 + 2 * i);
		CHECK_EQ(r[i].len, 1);
	}
}

/* On traps, tracking lowers a writable region, so the first write traps;
 * with no handler rtl grants it, and the next writes do not trap. On
 * written bits the region stays writable and no write traps. */
TEST(track_lowers_then_rtl_grants)
{
	char *x = region_alloc(100, &x);
	char *before = x;
	uint64_t traps;
	int wb;

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	wb = on_wbits(x);
	CHECK(wb ? x == before : x != before); /* traps: the read-only view */
	CHECK_EQ(region_diff(x, NULL, 0), 0);
	traps = stats().traps;
	peek(x);
	CHECK_EQ(stats().traps, traps);
	poke(x + 5, 1);
	CHECK_EQ(stats().traps, traps + !wb);
	CHECK(x == before); /* granted: back in the writable view */
	poke(x + 6, 1);
	CHECK_EQ(stats().traps, traps + !wb);
	CHECK_EQ(region_diff(x, NULL, 0), 1);
	CHECK_EQ(region_track(x, 1), 0); /* idempotent: changes nothing */
	CHECK_EQ(region_diff(x, NULL, 0), 1);
}

/* The twin and the dirty mark exist before the handler runs; the handler
 * decides the protection. */
static _Atomic int seen_dirty = -1, seen_prot = -1;
static void look_then_grant(rtl_trap_t *t)
{
	seen_dirty = (int)region_dirty(NULL, 0, 0);
	seen_prot = t->prot;
	region_protect(t->addr, RW);
}

TEST(twin_before_handler)
{
	char *x = region_alloc(50, &x);
	rtl_run_t r[4];

	CHECK(x != NULL);
	CHECK_EQ(region_handler(x, look_then_grant), 0);
	CHECK_EQ(region_track(x, 1), 0);
	poke(x + 10, 42);
	CHECK_EQ(seen_dirty, 1);
	CHECK_EQ(seen_prot, PROT_READ);
	CHECK_EQ(region_diff(x, r, 4), 1);
	CHECK_EQ(r[0].offset, 10);
}

/* A handler that does not grant the write: the process dies as for any
 * region; the region is unchanged. */
static void refuse(rtl_trap_t *t)
{
	(void)t;
}

static void write_refused(void)
{
	char *x = region_alloc(50, &x);
	region_handler(x, refuse);
	region_track(x, 1);
	poke(x, 1);
}

TEST(handler_refusing_write_dies)
{
	char err[4096];
	int st = test_run_captured(write_refused, err, sizeof(err));
	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "not granted") != NULL);
}

/* Twins per checkpoint: each epoch's diff holds that epoch's writes only,
 * and the checkpoint re-arms the trap (or the written bit). */
TEST(twin_per_checkpoint)
{
	char *x = region_alloc(256, &x);
	rtl_run_t r[4];
	uint64_t traps;
	int wb;

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	wb = on_wbits(x);
	poke(x + 1, 1);
	CHECK_EQ(region_diff(x, r, 4), 1);
	CHECK_EQ(r[0].offset, 1);
	CHECK_EQ(region_checkpoint(x), 0);
	CHECK_EQ(region_diff(x, r, 4), 0);
	CHECK_EQ(region_dirty(NULL, 0, 0), 0);
	traps = stats().traps;
	poke(x + 200, 2);
	CHECK_EQ(stats().traps, traps + !wb);
	CHECK_EQ(region_diff(x, r, 4), 1);
	CHECK_EQ(r[0].offset, 200);
	CHECK_EQ(r[0].len, 1);
	/* A write of the same value traps and marks, but changes nothing. On
	 * written bits the page is written and the region compared with its
	 * twin: no mark. */
	CHECK_EQ(region_checkpoint(x), 0);
	poke(x + 200, 2);
	CHECK_EQ(region_dirty(NULL, 0, 0), !wb);
	CHECK_EQ(region_diff(x, r, 4), 0);
	/* A checkpoint of a region at PROT_NONE leaves it there. */
	CHECK_EQ(region_protect(x, PROT_NONE), 0);
	CHECK_EQ(region_checkpoint(x), 0);
	CHECK_EQ(region_protect(x, PROT_READ), 0);
	CHECK_EQ(peek(x + 200), 2);
}

TEST(dirty_list_with_reset)
{
	char *x[10];
	void *b[10];

	for (int i = 0; i < 10; i++) {
		x[i] = region_alloc(40 + i, &x[i]);
		CHECK(x[i] != NULL);
		CHECK_EQ(region_track(x[i], 1), 0);
	}
	CHECK_EQ(region_dirty(b, 10, 0), 0);
	poke(x[7], 1);
	poke(x[2], 1);
	poke(x[5], 1);
	poke(x[5] + 1, 1); /* no second mark */
	CHECK_EQ(region_dirty(NULL, 0, 0), 3);
	CHECK_EQ(region_dirty(b, 10, 0), 3); /* in the order tracking began */
	CHECK(b[0] == x[2] && b[1] == x[5] && b[2] == x[7]);
	/* max below the count: the total is returned, only the filled-in
	 * marks are reset. */
	b[1] = NULL;
	CHECK_EQ(region_dirty(b, 1, 1), 3);
	CHECK(b[0] == x[2] && b[1] == NULL);
	CHECK_EQ(region_dirty(b, 10, 1), 2);
	CHECK(b[0] == x[5] && b[1] == x[7]);
	CHECK_EQ(region_dirty(b, 10, 1), 0);
	/* Still writable after a reset: no trap, no new mark; the diff still
	 * sees everything since the checkpoint. */
	poke(x[5] + 2, 1);
	CHECK_EQ(region_dirty(NULL, 0, 0), 0);
	CHECK_EQ(region_diff(x[5], NULL, 0), 1);
	/* The checkpoint re-arms it. */
	CHECK_EQ(region_checkpoint(x[5]), 0);
	poke(x[5] + 3, 1);
	CHECK_EQ(region_dirty(b, 10, 1), 1);
	CHECK(b[0] == x[5]);
	/* Bases are in the view of the current protection. */
	poke(x[9], 1);
	CHECK_EQ(region_protect(x[9], PROT_NONE), 0);
	CHECK_EQ(region_dirty(b, 10, 0), 1);
	CHECK(b[0] == x[9]);
}

/* Raising a tracked region to RW outside a trap takes the twin then, so
 * writes that will not trap are still in the diff. (On traps the raise
 * marks the region; on written bits the write does.) */
TEST(protect_rw_takes_twin)
{
	char *x = region_alloc(30, &x);
	rtl_run_t r[2];
	uint64_t traps;
	int wb;

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	wb = on_wbits(x);
	CHECK_EQ(region_protect(x, RW), 0);
	CHECK_EQ(region_dirty(NULL, 0, 0), !wb);
	traps = stats().traps;
	poke(x + 29, 9);
	CHECK_EQ(stats().traps, traps);
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(r[0].offset, 29);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
}

/* A MAP2 region with a pointer in the writable view: the checkpoint takes
 * the twin at once, so writes through that pointer are in the diff. */
TEST(map2_region_twin_taken_at_checkpoint)
{
	char *x = region_alloc(64, &x);
	char *w = x;
	rtl_run_t r[2];

	CHECK(x != NULL);
	CHECK_EQ(region_protect(x, PROT_READ), 0);
	CHECK_EQ(region_protect_ptr(&w, RW), 0);
	CHECK_EQ(region_track(x, 1), 0);
	poke(w + 40, 1); /* no trap */
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(r[0].offset, 40);
	CHECK_EQ(region_checkpoint(x), 0);
	CHECK_EQ(region_diff(x, r, 2), 0);
	poke(w + 41, 1);
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(r[0].offset, 41);
}

TEST(errno_cases)
{
	char *x = region_alloc(100, &x), *u = region_alloc(10, &u);
	static char not_region[16];
	rtl_run_t r[2];

	CHECK(x && u);
	EXPECT_ERR(region_track(NULL, 1), EINVAL);
	EXPECT_ERR(region_track(not_region, 1), ENOENT);
	EXPECT_ERR(region_diff(NULL, r, 2), EINVAL);
	EXPECT_ERR(region_diff(not_region, r, 2), ENOENT);
	EXPECT_ERR(region_diff(u, r, 2), EINVAL); /* not tracked */
	EXPECT_ERR(region_checkpoint(u), EINVAL);
	EXPECT_ERR(region_checkpoint(not_region), ENOENT);
	EXPECT_ERR(region_checkpoint(NULL), EINVAL);

	CHECK_EQ(region_track(x, 1), 0);
	EXPECT_ERR(region_diff(x, NULL, 2), EINVAL);
	for (int i = 0; i < 10; i += 2)
		poke(x + i, 1);
	/* Too small: ENOSPC, the first max runs filled in; max 0 counts. */
	r[1].offset = 12345;
	EXPECT_ERR(region_diff(x, r, 1), ENOSPC);
	CHECK_EQ(r[0].offset, 0);
	CHECK_EQ(r[1].offset, 12345);
	CHECK_EQ(region_diff(x, NULL, 0), 5);

	/* Tracking off: the region is an ordinary one again. */
	CHECK_EQ(region_track(x, 0), 0);
	CHECK_EQ(region_track(x, 0), 0);
	EXPECT_ERR(region_diff(x, r, 2), EINVAL);
	CHECK_EQ(region_dirty(NULL, 0, 0), 0);
}

/* Freeing a tracked region forgets it; its record's reuse is untracked. */
TEST(free_forgets_tracking)
{
	for (int round = 0; round < 100; round++) {
		char *x = region_alloc(64, &x);
		CHECK(x != NULL);
		CHECK_EQ(region_diff(x, NULL, 0) == -1 && errno == EINVAL, 1);
		CHECK_EQ(region_track(x, 1), 0);
		poke(x, 1);
		CHECK_EQ(region_dirty(NULL, 0, 0), 1);
		CHECK_EQ(region_free(x), 0);
		CHECK_EQ(region_dirty(NULL, 0, 0), 0);
	}
}

/* A forked child has its own twins and marks. */
TEST(fork_keeps_tracking)
{
	char *x = region_alloc(64, &x);
	pid_t pid;
	int st;

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	poke(x + 1, 1);
	pid = fork();
	if (pid == 0) {
		rtl_run_t r[4];
		int ok = region_diff(x, r, 4) == 1 && r[0].offset == 1;
		poke(x + 9, 1);
		ok = ok && region_diff(x, r, 4) == 2;
		ok = ok && region_checkpoint(x) == 0;
		_exit(ok ? 0 : 1);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(region_diff(x, NULL, 0), 1); /* the child's epoch is its own */
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
}

/* Threads make their first writes to one tracked region at the same time,
 * round after round, with a checkpoint between rounds: one twin per round,
 * taken before any of the writes, so the diff holds every thread's byte. */
#define HAMMERS 4
#define HAMMER_ROUNDS 200
static unsigned char *hammered;
static pthread_barrier_t hammer_bar;

static void *hammer(void *arg)
{
	long id = (long)arg;
	for (int round = 0; round < HAMMER_ROUNDS; round++) {
		pthread_barrier_wait(&hammer_bar); /* checkpoint done */
		/* rtl rewrites `hammered` from other threads' traps. */
		poke(__atomic_load_n(&hammered, __ATOMIC_RELAXED) + id * 8 + round % 8,
		     (unsigned char)(round + 1));
		pthread_barrier_wait(&hammer_bar); /* all written */
	}
	return NULL;
}

TEST(threads_first_writes_race)
{
	pthread_t t[HAMMERS];
	rtl_run_t r[HAMMERS + 1];

	hammered = region_alloc(HAMMERS * 8, &hammered);
	CHECK(hammered != NULL);
	CHECK_EQ(region_track(hammered, 1), 0);
	CHECK_EQ(pthread_barrier_init(&hammer_bar, NULL, HAMMERS + 1), 0);
	for (long i = 0; i < HAMMERS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, hammer, (void *)i), 0);
	for (int round = 0; round < HAMMER_ROUNDS; round++) {
		CHECK_EQ(region_checkpoint(hammered), 0);
		pthread_barrier_wait(&hammer_bar);
		pthread_barrier_wait(&hammer_bar);
		CHECK_EQ(region_diff(hammered, r, HAMMERS + 1), HAMMERS);
		for (int i = 0; i < HAMMERS; i++) {
			CHECK_EQ(r[i].offset, i * 8 + round % 8);
			CHECK_EQ(r[i].len, 1);
		}
		CHECK_EQ(region_dirty(NULL, 0, 0), 1);
	}
	for (int i = 0; i < HAMMERS; i++)
		pthread_join(t[i], NULL);
}
