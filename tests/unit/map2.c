/* MAP2: one region reached through pointers at different protections at
 * once (region_protect_ptr). Each pointer traps as its own view says,
 * whatever the others do, also when two threads use them at the same time. */
#include <pthread.h>

#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

#define N 2000

/* Which pointer variable the handler raises: the faulting thread's own. */
static __thread char **raise_me;
/* volatile: the compiler does not know that a store may run the handler,
 * and may read the counter before it (gcc for aarch64 does). */
static __thread volatile int my_traps;
static _Atomic int traps_write, traps_read, bad_prot;

/* Grant the access by moving only the faulting pointer, as MAP2 requires:
 * the region itself has no single protection to raise. */
static void raise_pointer(rtl_trap_t *t)
{
	my_traps++;
	if (t->write) {
		traps_write++;
		if (t->prot != PROT_READ && t->prot != PROT_NONE)
			bad_prot++;
		region_protect_ptr(raise_me, RW);
	} else {
		traps_read++;
		if (t->prot != PROT_NONE)
			bad_prot++;
		region_protect_ptr(raise_me, PROT_READ);
	}
}

TEST(read_and_write_pointers_trap_independently)
{
	char *rd = region_alloc(64, &rd);
	char *wr = rd, *no = rd;

	CHECK(rd != NULL);
	CHECK_EQ(region_bptr(&rd, &wr), 0);
	CHECK_EQ(region_bptr(&rd, &no), 0);
	CHECK_EQ(region_handler(rd, raise_pointer), 0);
	CHECK_EQ(region_protect_ptr(&rd, PROT_READ), 0);
	CHECK_EQ(region_protect_ptr(&no, PROT_NONE), 0);
	CHECK(rd != wr && no != wr && rd != no);

	for (int i = 0; i < 64; i++)
		poke(wr + i, (unsigned char)i); /* RW: never traps */
	for (int i = 0; i < 64; i++)
		CHECK_EQ(peek(rd + i), i); /* RO: reads do not trap, same bytes */
	CHECK_EQ(my_traps, 0);

	raise_me = &rd;
	for (int i = 0; i < 10; i++) {
		CHECK_EQ(region_protect_ptr(&rd, PROT_READ), 0);
		poke(rd + i, 100); /* RO: each write traps once */
		poke(rd + i + 1, 101);
		CHECK_EQ(my_traps, i + 1);
		CHECK(rd == wr); /* the handler moved only rd */
	}
	CHECK_EQ(traps_write, 10);

	raise_me = &no;
	CHECK_EQ(peek(no + 5), 100); /* NONE: a read traps */
	CHECK_EQ(traps_read, 1);
	CHECK_EQ(peek(wr + 5), 100); /* the others never did */
	CHECK_EQ(my_traps, 11);
	CHECK_EQ(bad_prot, 0);

	/* region_protect puts every registered pointer back in one view. */
	CHECK_EQ(region_protect(wr, PROT_READ), 0);
	CHECK(rd == wr && no == wr);
}

/* Thread A writes through the RW pointer, thread B through its own RO
 * pointer, at the same time (A runs until B is done): only B's writes trap,
 * one each, and neither disturbs the other's bytes. */
static char *shared;
static _Atomic int go, b_done;

static void *writer_rw(void *arg)
{
	char *wr = shared;
	(void)arg;
	while (!go)
		;
	for (int i = 0; i < N || !b_done; i++) {
		poke(wr + (i % 32), (unsigned char)i);
		if (peek(wr + (i % 32)) != (unsigned char)i)
			return (void *)1;
	}
	return (void *)(long)my_traps;
}

static void *writer_ro(void *arg)
{
	char *rd = shared;
	(void)arg;
	raise_me = &rd;
	while (!go)
		;
	for (int i = 0; i < N; i++) {
		if (region_protect_ptr(&rd, PROT_READ) < 0)
			break;
		poke(rd + 32 + (i % 32), (unsigned char)i);
	}
	b_done = 1;
	return (void *)(long)my_traps;
}

TEST(two_threads_two_protections)
{
	pthread_t a, b;
	void *ra, *rb;

	shared = region_alloc(64, &shared);
	CHECK(shared != NULL);
	CHECK_EQ(region_handler(shared, raise_pointer), 0);
	CHECK_EQ(pthread_create(&a, NULL, writer_rw, NULL), 0);
	CHECK_EQ(pthread_create(&b, NULL, writer_ro, NULL), 0);
	go = 1;
	CHECK_EQ(pthread_join(a, &ra), 0);
	CHECK_EQ(pthread_join(b, &rb), 0);
	CHECK_EQ((long)ra, 0); /* A: no trap, always read its own write */
	CHECK_EQ((long)rb, N); /* B: one trap per write */
	CHECK_EQ(traps_write, N);
	CHECK_EQ(bad_prot, 0);
	for (int i = 0; i < 32; i++) {
		int last = (N - 1 - i) / 32 * 32 + i; /* B's last write there */
		CHECK_EQ(peek(shared + 32 + i), (unsigned char)last);
	}
}

/* Two threads, each with its own RO pointer to one region, trapping at the
 * same time: every trap reaches the handler, on the thread that made it. */
static void *ro_trapper(void *arg)
{
	long id = (long)arg;
	char *rd = shared;
	raise_me = &rd;
	while (!go)
		;
	for (int i = 0; i < N; i++) {
		if (region_protect_ptr(&rd, PROT_READ) < 0)
			return (void *)-1;
		poke(rd + id, (unsigned char)i);
	}
	return (void *)(long)my_traps;
}

TEST(two_threads_both_read_only)
{
	pthread_t t[2];
	void *r[2];

	shared = region_alloc(16, &shared);
	CHECK(shared != NULL);
	CHECK_EQ(region_handler(shared, raise_pointer), 0);
	for (long i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, ro_trapper, (void *)i), 0);
	go = 1;
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(pthread_join(t[i], &r[i]), 0);
		CHECK_EQ((long)r[i], N);
	}
	CHECK_EQ(traps_write, 2 * N);
	CHECK_EQ(peek(shared), (unsigned char)(N - 1));
	CHECK_EQ(peek(shared + 1), (unsigned char)(N - 1));
}
