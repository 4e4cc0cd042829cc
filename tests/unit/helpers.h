/* Helpers shared by rtl's unit tests: a granting handler with counters, and
 * access helpers that the compiler cannot move or merge.
 *
 * Region memory is read and written through volatile here: a test checks a
 * counter right after an access, and the compiler does not know that an
 * access can run a handler (see docs/guide.md, "Views and the compiler"). */
#ifndef RTL_TEST_HELPERS_H
#define RTL_TEST_HELPERS_H

#include <rtl/region.h>
#include <stdatomic.h>
#include <stdint.h>

#define R(p) ((void *)(uintptr_t)(p))
#define RW (PROT_READ | PROT_WRITE)

static _Atomic int h_calls, h_reads, h_writes;

/* Table 3: grant exactly what was asked. */
static inline void grant_handler(rtl_trap_t *t)
{
	atomic_fetch_add(&h_calls, 1);
	if (t->write) {
		atomic_fetch_add(&h_writes, 1);
		region_protect(t->addr, RW);
	} else {
		atomic_fetch_add(&h_reads, 1);
		region_protect(t->addr, PROT_READ);
	}
}

/* A thread's own region (a bound pointer) and the handler calls it took:
 * the region's data for count_and_grant, which grants what was asked. */
struct worker {
	char *region;
	_Atomic long calls;
	int id;
};

static inline void count_and_grant(rtl_trap_t *t)
{
	struct worker *w = t->data;

	w->calls++;
	region_protect(t->addr, t->write ? RW : PROT_READ);
}

static inline unsigned char peek(const void *p)
{
	return *(const volatile unsigned char *)p;
}

static inline void poke(void *p, unsigned char v)
{
	*(volatile unsigned char *)p = v;
}

static inline struct region_stats stats(void)
{
	struct region_stats s;
	region_stats(&s);
	return s;
}

#endif
