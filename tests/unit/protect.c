/* region_protect and region_protect_ptr: which pointers move, which regions
 * trap, and that offsets and pointer arithmetic survive the move. */
#include <string.h>

#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

/* Three regions on one page at NONE, RO and RW: each traps exactly as its
 * own protection says, whatever its neighbours are set to. */
TEST(three_regions_one_page)
{
	char *a = region_alloc(40, &a), *b = region_alloc(40, &b),
	     *c = region_alloc(40, &c);

	CHECK(a && b && c);
	CHECK(((uintptr_t)a >> 12) == ((uintptr_t)b >> 12));
	CHECK(((uintptr_t)b >> 12) == ((uintptr_t)c >> 12));
	region_handler(NULL, grant_handler);

	region_protect(a, PROT_NONE);
	region_protect(b, PROT_READ);
	region_protect(c, RW);
	h_calls = 0;
	peek(c);
	poke(c, 1); /* RW: nothing traps */
	peek(b);    /* RO: reads do not trap */
	CHECK_EQ(h_calls, 0);
	poke(b, 1); /* RO: a write traps */
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(h_writes, 1);
	peek(a); /* NONE: a read traps */
	CHECK_EQ(h_calls, 2);
	CHECK_EQ(h_reads, 1);
	poke(a, 1); /* now RO: the write traps again */
	CHECK_EQ(h_calls, 3);
	peek(a);
	poke(a, 2);
	peek(b);
	poke(b, 2);
	peek(c);
	poke(c, 2);
	CHECK_EQ(h_calls, 3);
	CHECK_EQ(a[0] + b[0] + c[0], 6);
}

/* Interior bound pointers keep their offset; differences of pointers that
 * moved together stay right. */
TEST(interior_pointers_and_arithmetic)
{
	int *x = region_alloc(100 * sizeof(int), &x);
	int *mid, *end;

	CHECK(x != NULL);
	mid = x + 50;
	end = x + 100; /* one past the end is a valid bound pointer */
	CHECK_EQ(region_bptr(&x, &mid), 0);
	CHECK_EQ(region_bptr(&x, &end), 0);
	for (int i = 0; i < 100; i++)
		x[i] = i;
	for (int prot = 0; prot < 3; prot++) {
		static const int prots[] = { PROT_NONE, PROT_READ, RW };
		int *before = x;
		CHECK_EQ(region_protect(x, prots[prot]), 0);
		CHECK(prot == 2 || x != before);
		CHECK_EQ(mid - x, 50);
		CHECK_EQ(end - x, 100);
	}
	for (int *p = x; p < end; p++)
		CHECK_EQ(*p, p - x);
	CHECK_EQ(*mid, 50);
}

/* A bound pointer set to something else is left alone by protect. */
TEST(bound_pointer_reassigned_elsewhere)
{
	char *x = region_alloc(10, &x);
	char *keep = x;
	static char other[1];

	CHECK(x != NULL);
	x = other;
	CHECK_EQ(region_protect(keep, PROT_NONE), 0);
	CHECK(x == other);
}

/* Many bound pointers all move; an unbounded pointer moves only with the
 * region it points into. */
TEST(many_bound_and_unbounded)
{
	char *x = region_alloc(64, &x), *y = region_alloc(64, &y);
	char *b[64], *u = NULL;

	CHECK(x && y);
	for (int i = 0; i < 64; i++) {
		b[i] = x + i;
		CHECK_EQ(region_bptr(&x, &b[i]), 0);
	}
	CHECK_EQ(region_ptr(&u), 0);
	u = y + 3;
	CHECK_EQ(region_protect(x, PROT_READ), 0);
	for (int i = 0; i < 64; i++)
		CHECK(b[i] == x + i);
	CHECK(u == y + 3); /* not x's: untouched */
	CHECK_EQ(region_protect(y, PROT_NONE), 0);
	CHECK(u == y + 3); /* moved with y */
	CHECK_EQ(region_ptr_free(&u), 0);
	CHECK_EQ(region_protect(y, RW), 0);
	CHECK(u != y + 3); /* no longer registered */
}

/* A handler may protect another region; the interrupted code then traps on
 * that region as well. */
static char *other_region;
static _Atomic int cross_calls;
static void protect_other(rtl_trap_t *t)
{
	cross_calls++;
	region_protect(other_region, PROT_NONE);
	region_protect(t->addr, RW);
}

TEST(handler_protects_another_region)
{
	char *x = region_alloc(16, &x);
	other_region = region_alloc(16, &other_region);

	CHECK(x && other_region);
	region_handler(x, protect_other);
	region_handler(other_region, grant_handler);
	region_protect(x, PROT_NONE);
	poke(x, 1);
	CHECK_EQ(cross_calls, 1);
	CHECK_EQ(h_calls, 0);
	peek(other_region);
	CHECK_EQ(h_calls, 1);
}

/* region_protect called in a handler moves the interrupted registers, not
 * just pointers in memory: a loop holding the pointer only in a register
 * continues in the granted view and traps once. */
TEST(handler_swizzles_registers)
{
	unsigned char *x = region_alloc(4096, &x);
	unsigned char *volatile keep;
	unsigned sum = 0;

	CHECK(x != NULL);
	memset(x, 1, 4096);
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	keep = x; /* a copy the loop below uses; rtl does not know it */
	unsigned char *p = keep;
	for (int i = 0; i < 4096; i++)
		sum += ((volatile unsigned char *)p)[i];
	CHECK_EQ(sum, 4096);
	CHECK_EQ(h_calls, 1);
}

/* MAP2: two pointers to one region through different views. */
TEST(map2_two_views)
{
	char *rd = region_alloc(32, &rd);
	char *wr = rd;

	CHECK(rd != NULL);
	CHECK_EQ(region_bptr(&rd, &wr), 0);
	CHECK_EQ(region_protect_ptr(&rd, PROT_READ), 0);
	CHECK(rd != wr);
	region_handler(rd, grant_handler);
	poke(wr, 9);           /* the RW pointer writes freely */
	CHECK_EQ(peek(rd), 9); /* and the RO one sees it, same memory */
	CHECK_EQ(h_calls, 0);
	poke(rd, 3); /* the RO pointer traps: MAP2 goes to the handler */
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(peek(wr), 3);
}

/* Protecting to the current protection is a no-op that succeeds. */
TEST(protect_same_prot)
{
	char *x = region_alloc(8, &x);
	char *before;

	CHECK(x != NULL);
	CHECK_EQ(region_protect(x, PROT_READ), 0);
	before = x;
	CHECK_EQ(region_protect(x, PROT_READ), 0);
	CHECK(x == before);
	CHECK_EQ(stats().protects, 2);
}
