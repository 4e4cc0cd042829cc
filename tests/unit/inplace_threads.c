/* Regions protected in place under threads (core/inplace.c): writers and
 * readers faulting while another thread changes the protection, and a
 * region put in place while another thread defines one on its last page. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/region/placement.h"
#include "tests/unit/helpers.h"
#include "tests/unit/inplace_helpers.h"
#include "tests/unit/test.h"

/* Threads writing through read-only pointers while another lowers the
 * protection again and again: every write lands, every fault is resolved
 * by a grant (the handler, or another thread's), no pointer moves. */
#define WRITERS 4
#define ROUNDS 20000

static char *shared_ro;
static _Atomic int writers_done;

static void *writer(void *arg)
{
	long id = (long)arg;
	char *mine = shared_ro + id * PAGE;

	for (int round = 0; round < ROUNDS; round++)
		*(volatile char *)(mine + round % PAGE) = (char)round;
	atomic_fetch_add(&writers_done, 1);
	return NULL;
}

TEST(threads_write_while_protection_drops)
{
	pthread_t tid[WRITERS];
	long lowered = 0;

	shared_ro = in_place(WRITERS * PAGE, PROT_READ);
	for (long i = 0; i < WRITERS; i++)
		pthread_create(&tid[i], NULL, writer, (void *)i);
	/* At least once, even if the writers are done first (under
	 * qemu-user a thread starts slowly, and its writes are fast). */
	do {
		CHECK_EQ(region_protect(shared_ro, PROT_READ), 0);
		lowered++;
		usleep(50);
	} while (atomic_load(&writers_done) < WRITERS);
	for (int i = 0; i < WRITERS; i++) {
		void *ret;
		pthread_join(tid[i], &ret);
		CHECK(ret == NULL);
	}
	for (long i = 0; i < WRITERS; i++)
		CHECK_EQ(peek(shared_ro + i * PAGE + (ROUNDS - 1) % PAGE),
		         (unsigned char)(ROUNDS - 1));
	CHECK(h_writes >= 1);
	CHECK(lowered > 0);
	CHECK_EQ(stats().in_place_failed, 0);
}

/* Readers through a read-only home while the protection drops to none:
 * a reader's fault may find the pages already granted by another reader.
 * The home view itself allows reads, and that fault is still rtl's, never
 * passed on as the program's (there is no program handler here: passed
 * on, it would have removed rtl's). */
static _Atomic int readers_stop;

static void *reader(void *arg)
{
	long id = (long)arg;

	/* All on one page: their faults meet. */
	for (long i = 0; !atomic_load(&readers_stop); i++)
		if (peek(shared_ro + id * 64 + (i & 63)) != (unsigned char)id)
			return (void *)1;
	return NULL;
}

TEST(readers_race_grants_through_a_readable_home)
{
	pthread_t tid[WRITERS];
	char *rw;

	shared_ro = in_place(PAGE, PROT_READ);
	rw = in_view(shared_ro, RW);
	for (long i = 0; i < WRITERS; i++)
		memset(rw + i * 64, (int)i, 64);
	for (long i = 0; i < WRITERS; i++)
		pthread_create(&tid[i], NULL, reader, (void *)i);
	for (int k = 0; k < 20000; k++) {
		CHECK_EQ(region_protect(shared_ro, PROT_NONE), 0);
		usleep(1);
	}
	atomic_store(&readers_stop, 1);
	for (int i = 0; i < WRITERS; i++) {
		void *ret;
		pthread_join(tid[i], &ret);
		CHECK(ret == NULL);
	}
	CHECK(h_reads >= 1);
	CHECK_EQ(stats().foreign, 0);
}

/* Putting a region in place while another thread defines a region on the
 * slack of its last page: one of the two must fail with EBUSY, never both
 * succeed (then the new region's bytes would take the other's page
 * protection). Each round starts both at a barrier; the region's mapped
 * pages make the mprotect in between long enough to meet (without the
 * shard locks region_protect_in_place now takes, 7 runs in 8 failed). */
#define RACE_ROUNDS 1000
#define RACE_PAGES 256

static pthread_barrier_t race_start;
static char *race_slack;
static _Atomic int race_stop;
static _Atomic int race_defined;

static void *define_on_slack(void *arg)
{
	(void)arg;
	for (int i = 0;; i++) {
		char *got;
		pthread_barrier_wait(&race_start);
		if (atomic_load(&race_stop))
			return NULL;
		/* A varying delay meets the other thread at every point of
		 * its call, its mprotect of the region's pages included. */
		for (volatile int spin = (i * 7919) % 20000; spin > 0; spin--)
			;
		got = region_define(race_slack, 64, NULL);
		atomic_store(&race_defined, got != NULL);
		if (!got && errno != EBUSY)
			return (void *)1;
		pthread_barrier_wait(&race_start);
	}
}

TEST(in_place_and_a_define_on_its_last_page_never_both_succeed)
{
	size_t got = 0;
	char *pool = rtl_reserve((RACE_PAGES + 2) * PAGE, &got), *rw;
	pthread_t tid;
	void *ret;

	CHECK(pool != NULL && got >= (RACE_PAGES + 2) * PAGE);
	race_slack = pool + RACE_PAGES * PAGE + 256;
	pthread_barrier_init(&race_start, NULL, 2);
	pthread_create(&tid, NULL, define_on_slack, NULL);
	for (int i = 0; i < RACE_ROUNDS; i++) {
		int placed;

		rw = region_define(pool, RACE_PAGES * PAGE + 64, NULL);
		CHECK(rw == pool);
		/* Pages the kernel maps: its mprotect has them to change. */
		for (size_t k = 0; k <= RACE_PAGES; k++)
			(void)peek(in_view(rw, PROT_READ) + k * PAGE);
		pthread_barrier_wait(&race_start);
		placed = region_protect_in_place(in_view(rw, PROT_READ), RW) == 0;
		CHECK(placed || errno == EBUSY);
		pthread_barrier_wait(&race_start); /* the define is done */
		CHECK(placed + atomic_load(&race_defined) == 1);
		if (atomic_load(&race_defined))
			CHECK_EQ(region_free(race_slack), 0);
		CHECK_EQ(region_free(rw), 0);
	}
	atomic_store(&race_stop, 1);
	pthread_barrier_wait(&race_start);
	pthread_join(tid, &ret);
	CHECK(ret == NULL);
}
