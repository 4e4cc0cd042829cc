// rtl::region_ptr<T>: registration by constructor and destructor, copies and
// moves, the pointer operators, and the paper's Table 2 column 4 sequence.
#include <rtl/region.hpp>

#include <cerrno>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "tests/unit/test.h"

#define RW (PROT_READ | PROT_WRITE)

static volatile int traps, write_traps;

// Table 3, right column.
static void reg_handler(rtl_trap_t *t)
{
	traps = traps + 1;
	if (t->write) {
		write_traps = write_traps + 1;
		region_protect(t->addr, RW);
	} else {
		region_protect(t->addr, PROT_READ);
	}
}

// The trap counter after every access before it: the compiler may not move
// a store to region memory past this point.
static int traps_now()
{
	asm volatile("" ::
	                     : "memory");
	return traps;
}

template <typename T>
static T *alloc(size_t n)
{
	return static_cast<T *>(region_alloc(n * sizeof(T), nullptr));
}

TEST(table2_column4)
{
	rtl::region_ptr<char> x;
	int a;

	x = alloc<char>(1000);
	CHECK(x != nullptr);
	CHECK_EQ(region_handler(x, reg_handler), 0);
	CHECK_EQ(region_protect(x, PROT_READ), 0);
	a = x[0]; // no trap
	CHECK_EQ(traps_now(), 0);
	x[1] = 1; // trap
	CHECK_EQ(traps_now(), 1);
	CHECK_EQ(write_traps, 1);
	x[2] = 2; // no trap
	CHECK_EQ(traps_now(), 1);
	CHECK_EQ(a + x[1] + x[2], 3);
}

TEST(follows_protection_changes)
{
	rtl::region_ptr<int> x = alloc<int>(100);
	rtl::region_ptr<int> mid = x + 50;
	int *rw = x;

	CHECK(x != nullptr);
	CHECK_EQ(region_protect(x, PROT_NONE), 0);
	CHECK(x != rw);
	CHECK_EQ(mid - x, 50);
	CHECK_EQ(region_protect(x, PROT_READ), 0);
	CHECK(x != rw);
	CHECK_EQ(region_protect(x, RW), 0);
	CHECK(x == rw);
	CHECK(mid == rw + 50);
}

TEST(destructor_unregisters)
{
	alignas(rtl::region_ptr<char>) unsigned char mem[sizeof(rtl::region_ptr<char>)];
	char *r = alloc<char>(64);
	char *seen;

	CHECK(r != nullptr);
	auto *p = new (mem) rtl::region_ptr<char>(r);
	CHECK_EQ(region_protect(r, PROT_READ), 0);
	CHECK(p->get() != r); // registered: moved
	seen = p->get();
	p->~region_ptr();
	errno = 0;
	CHECK_EQ(region_ptr_free(mem), -1); // already unregistered
	CHECK_EQ(errno, ENOENT);
	CHECK_EQ(region_protect(seen, RW), 0);
	char *left;
	std::memcpy(&left, mem, sizeof(left));
	CHECK(left == seen); // not moved any more
}

TEST(copies_and_moves_are_registered)
{
	rtl::region_ptr<int> a = alloc<int>(10);
	int *rw = a;
	CHECK(a != nullptr);
	rtl::region_ptr<int> c(a);
	rtl::region_ptr<int> d;
	{
		rtl::region_ptr<int> b(a);
		rtl::region_ptr<int> m(std::move(b));
		d = m; // assignment: value only
		CHECK_EQ(region_protect(a, PROT_READ), 0);
		CHECK(a != rw);
		CHECK(b == a && m == a && c == a && d == a);
	} // b and m unregister here
	CHECK_EQ(region_protect(a, PROT_NONE), 0);
	CHECK(c == a && d == a);
	CHECK_EQ(region_protect(a, RW), 0);
	CHECK(a == rw && c == rw && d == rw);
}

TEST(vector_of_region_ptrs)
{
	int *r = alloc<int>(1000);
	std::vector<rtl::region_ptr<int>> v;

	CHECK(r != nullptr);
	for (int i = 0; i < 1000; i++)
		v.push_back(r + i); // reallocates: elements move, stay registered
	CHECK_EQ(region_protect(r, PROT_READ), 0);
	for (int i = 0; i < 1000; i++)
		CHECK(v[i] != r + i && v[i] - v[0] == i);
	v.erase(v.begin(), v.begin() + 500);
	CHECK_EQ(region_protect(r, RW), 0);
	for (int i = 0; i < 500; i++)
		CHECK(v[i] == r + 500 + i);
}

struct point {
	int x, y;
};

TEST(operators)
{
	rtl::region_ptr<point> p = alloc<point>(4);
	rtl::region_ptr<char> s = alloc<char>(32);
	rtl::region_ptr<char> n;

	CHECK(p != nullptr && s != nullptr);
	CHECK(n == nullptr && !n && nullptr == n);
	region_handler(p, reg_handler);
	region_protect(p, PROT_READ);
	p->x = 3; // trap through operator->
	CHECK_EQ(traps_now(), 1);
	(*p).y = 4;
	p[1].x = 5;
	CHECK_EQ(traps_now(), 1);
	CHECK_EQ(p->x + p->y + p[1].x, 12);

	// Implicit use as a char*: library calls and arithmetic.
	std::strcpy(s, "region");
	CHECK_EQ(std::strlen(s), 6);
	CHECK(std::memcmp(s + 1, "egion", 5) == 0);
	rtl::region_ptr<char> q = s;
	CHECK(q == s && q <= s && q >= s && !(q < s) && !(q > s));
	++q;
	CHECK(*q == 'e' && q > s && q - s == 1);
	char *old = q++;
	CHECK(*old == 'e' && *q == 'g');
	q += 3;
	CHECK(*q == 'n');
	q -= 2;
	CHECK(*q == 'i');
	--q;
	CHECK(*q == 'g' && q != s);
	CHECK(*(q + 1) == 'i' && *(1 + q) == 'i' && *(q - 1) == 'e');
	CHECK((q - 2) == s.get());
	const char *cq = q;
	CHECK(cq == q.get());

	// Still right after a protection change moved both.
	region_handler(s, reg_handler);
	region_protect(s, PROT_NONE);
	CHECK(q - s == 2);
	CHECK(*q == 'g'); // read trap
	CHECK_EQ(traps_now(), 2);
}
