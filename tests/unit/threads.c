/* Regions defined, protected and trapped from many threads at once: no
 * handler call lost or duplicated, no region disturbed by another's traps. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "core/region/placement.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

#define THREADS 8
#define ROUNDS 10000

/* Each thread owns a small region; all of them share pages. Every round
 * protects NONE and reads: exactly one handler call per round. */
static void *trap_loop(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < ROUNDS; i++) {
		if (region_protect(w->region, PROT_NONE) < 0)
			return (void *)1;
		if (peek(w->region) != (unsigned char)w->id)
			return (void *)2;
	}
	return NULL;
}

TEST(eight_threads_ten_thousand_traps_each)
{
	static struct worker w[THREADS];
	pthread_t tid[THREADS];

	for (int i = 0; i < THREADS; i++) {
		w[i].region = region_alloc(24, &w[i].region);
		CHECK(w[i].region != NULL);
		w[i].region[0] = (char)i;
		w[i].id = i;
		region_set_data(w[i].region, &w[i]);
		region_handler(w[i].region, count_and_grant);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_create(&tid[i], NULL, trap_loop, &w[i]);
	for (int i = 0; i < THREADS; i++) {
		void *ret;
		pthread_join(tid[i], &ret);
		CHECK(ret == NULL);
	}
	for (int i = 0; i < THREADS; i++)
		CHECK_EQ(w[i].calls, ROUNDS);
	CHECK_EQ(stats().handler_calls, THREADS * ROUNDS);
}

/* Threads define, trap and free their own regions while others do the
 * same: every region sees only its own data. */
static void *churn(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < 2000; i++) {
		size_t n = 1 + (size_t)(i * 37 + id) % 3000;
		unsigned char *r = region_alloc(n, &r);
		if (!r)
			return (void *)1;
		memset(r, (int)id, n);
		region_protect(r, (i & 1) ? PROT_READ : PROT_NONE);
		if (peek(r + n - 1) != (unsigned char)id)
			return (void *)2;
		poke(r, (unsigned char)id);
		if (region_free(r) < 0)
			return (void *)3;
	}
	return NULL;
}

TEST(concurrent_define_trap_free)
{
	pthread_t tid[THREADS];

	region_handler(NULL, grant_handler);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&tid[i], NULL, churn, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *ret;
		pthread_join(tid[i], &ret);
		CHECK(ret == NULL);
	}
	CHECK_EQ(stats().regions, 0);
	CHECK_EQ(rtl_extent_bytes_in_use(), 0);
}

/* Several threads trap on one shared region at once: the handler runs,
 * every thread's access completes. */
static char *shared;
static void *read_shared(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		/* rtl rewrites `shared` from other threads' handlers. */
		if (peek(__atomic_load_n(&shared, __ATOMIC_RELAXED) + (i % 64)) != 1)
			return (void *)1;
	return NULL;
}

TEST(threads_trap_on_one_region)
{
	pthread_t tid[THREADS];

	shared = region_alloc(64, &shared);
	CHECK(shared != NULL);
	memset(shared, 1, 64);
	region_handler(shared, grant_handler);
	region_protect(shared, PROT_NONE);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&tid[i], NULL, read_shared, NULL);
	for (int i = 0; i < THREADS; i++) {
		void *ret;
		pthread_join(tid[i], &ret);
		CHECK(ret == NULL);
	}
	CHECK(h_calls >= 1);
	CHECK(h_calls <= THREADS);
}

/* Threads define regions in place at overlapping places of one extent, in
 * pages they share, and free them; some track theirs. A define either
 * fails with EEXIST or gets granules no other live region holds: each
 * winner claims its granules in a table and must find them unclaimed. */
#define RACE_GRANULES 1024 /* 64 KiB: 16 pages */
static char *race_base;
static _Atomic long race_owner[RACE_GRANULES];

static void *race_defines(void *arg)
{
	long id = (long)arg + 1;
	unsigned seed = (unsigned)id * 2654435761u;

	for (int i = 0; i < 20000; i++) {
		unsigned g, n;
		char *r;

		seed = seed * 1103515245u + 12345u;
		g = (seed >> 8) % RACE_GRANULES;
		n = 1 + (seed >> 20) % 96; /* up to 6 KiB: across pages */
		if (g + n > RACE_GRANULES)
			n = RACE_GRANULES - g;
		r = region_define(race_base + (size_t)g * 64, (size_t)n * 64 - 1, NULL);
		if (!r) {
			if (errno != EEXIST)
				return (void *)1;
			continue;
		}
		for (unsigned k = g; k < g + n; k++) {
			long none = 0;
			if (!atomic_compare_exchange_strong(&race_owner[k], &none, id))
				return (void *)2; /* overlaps a live region */
		}
		if ((i & 7) == 0 && region_track(r, 1) < 0)
			return (void *)3;
		for (unsigned k = g; k < g + n; k++)
			atomic_store(&race_owner[k], 0);
		if (region_free(r) < 0)
			return (void *)4;
	}
	return NULL;
}

TEST(racing_defines_never_overlap)
{
	pthread_t tid[THREADS];
	uint64_t before = stats().regions;
	size_t got;

	race_base = rtl_reserve(RACE_GRANULES * 64, &got);
	CHECK(race_base != NULL);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&tid[i], NULL, race_defines, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *ret;
		pthread_join(tid[i], &ret);
		CHECK(ret == NULL);
	}
	CHECK_EQ(stats().regions, before);
	CHECK_EQ(region_dirty(NULL, 0, 0), 0); /* no tracked record left */
	CHECK_EQ(rtl_unreserve(race_base, got), 0);
}
