/* The paper's Tables 2 and 3: read no trap, write trap, next write no trap,
 * with a bound pointer and with an unbounded pointer; the handler skeleton
 * grants exactly the access asked for.
 *
 * Region accesses go through volatile pointers here: the test reads counters
 * right after an access, and without volatile the compiler may move a plain
 * store past those reads (it cannot know the store calls a handler). */
#include <rtl/region.h>

#include "tests/unit/test.h"

#define N 1000

/* Written by the handler, which the compiler cannot see being called. */
static volatile int traps, write_traps;

/* Table 3, right column. */
static void reg_handler(rtl_trap_t *t)
{
	traps++;
	if (t->write) {
		write_traps++;
		region_protect(t->addr, PROT_READ | PROT_WRITE);
	} else {
		region_protect(t->addr, PROT_READ);
	}
}

/* Table 2's column through the pointer variable *xp, the one rtl knows
 * (a copy of it would stay in the view it was copied from): read no trap,
 * write trap (granted), write no trap. Returns the first read. */
static int column(volatile char *volatile *xp)
{
	int a;

	CHECK(*xp != NULL);
	CHECK_EQ(region_handler((void *)*xp, reg_handler), 0);
	CHECK_EQ(region_protect((void *)*xp, PROT_READ), 0);
	a = (*xp)[0]; /* no trap */
	CHECK_EQ(traps, 0);
	(*xp)[1] = 1; /* trap */
	CHECK_EQ(traps, 1);
	CHECK_EQ(write_traps, 1);
	(*xp)[2] = 2; /* no trap */
	CHECK_EQ(traps, 1);
	return a;
}

TEST(table2_bound_pointer)
{
	volatile char *volatile x = region_alloc(N, (void *)&x);
	int a = column(&x);

	CHECK_EQ(a, 0);
	CHECK_EQ(x[1], 1);
	CHECK_EQ(x[2], 2);
}

TEST(table2_unbounded_pointer)
{
	volatile char *volatile x = region_alloc(N, NULL);
	int a;

	CHECK_EQ(region_ptr((void *)&x), 0);
	a = column(&x);
	CHECK_EQ(a + x[1] + x[2], 3);
	CHECK_EQ(region_ptr_free((void *)&x), 0);
}

/* Table 3 from PROT_NONE: a read is granted read only, so the following
 * write traps once more, then nothing traps. */
TEST(table3_none_read_then_write)
{
	volatile int *x = region_alloc(64 * sizeof(int), &x);
	int sum = 0;

	CHECK(x != NULL);
	CHECK_EQ(region_handler(NULL, reg_handler), 0); /* default handler */
	CHECK_EQ(region_protect((void *)x, PROT_NONE), 0);
	for (int i = 0; i < 64; i++)
		sum += x[i];
	CHECK_EQ(traps, 1);
	CHECK_EQ(write_traps, 0);
	for (int i = 0; i < 64; i++)
		x[i] = i;
	CHECK_EQ(traps, 2);
	CHECK_EQ(write_traps, 1);
	for (int i = 0; i < 64; i++)
		sum += x[i];
	CHECK_EQ(sum, 63 * 64 / 2);
	CHECK_EQ(traps, 2);
}

/* The trap record describes the access. */
static volatile rtl_trap_t seen;
static void record_handler(rtl_trap_t *t)
{
	seen.addr = t->addr;
	seen.base = t->base;
	seen.size = t->size;
	seen.offset = t->offset;
	seen.write = t->write;
	seen.prot = t->prot;
	seen.data = t->data;
	region_protect(t->addr, PROT_READ | PROT_WRITE);
}

TEST(trap_record_fields)
{
	volatile char *x = region_alloc(100, &x);
	int tag;

	CHECK(x != NULL);
	region_set_data((void *)x, &tag);
	region_handler((void *)x, record_handler);
	region_protect((void *)x, PROT_READ);
	x[37] = 5;
	CHECK(seen.write);
	CHECK_EQ(seen.size, 100);
	CHECK_EQ(seen.offset, 37);
	CHECK(seen.prot == PROT_READ);
	CHECK(seen.data == &tag);
	CHECK((char *)seen.addr == (char *)seen.base + 37);
	/* addr is in the view the program used, not where x points now. */
	CHECK((char *)seen.base != x);
	CHECK_EQ(x[37], 5);
}
