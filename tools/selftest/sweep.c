/* The revoking sweep: glibc's string functions copy and compare between two
 * regions that revoke each other (pair.c), so traps land in the middle of
 * glibc's loops, with every source alignment, sizes to 64 KiB, and live
 * neighbours close enough that a pointer biased by an alignment lies in
 * one. Each result is compared with the same call on ordinary memory.
 *
 * Uses the public API only. */
#include <string.h>

#include "tools/selftest/pair.h"
#include "tools/selftest/selftest.h"

#define ROOM 256 /* bytes past the operands that are filled and compared */

enum fn { F_STRCPY,
	  F_MEMCPY,
	  F_STRCMP,
	  F_MEMCMP };
static const char *const fn_name[] = { "strcpy", "memcpy", "strcmp", "memcmp" };

static const size_t sizes[] = { 40, 100, 300, 1000, 2047, 4000, 20000, 65536 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

static int sign(int v)
{
	return (v > 0) - (v < 0);
}

/* One call on the regions and on ordinary memory (o0, o1: the reference
 * buffers, page-aligned like the regions). NULL if alike, else what
 * differed. */
static const char *one(enum fn f, size_t n, size_t sa, size_t da, char *o0,
                       char *o1)
{
	size_t len = 64 + n + ROOM;
	char *s, *d;
	int ref = 0, got = 0;

	for (size_t k = 0; k < len; k++) {
		o0[k] = (char)(1 + rng() % 254);
		o1[k] = (char)(1 + rng() % 254);
	}
	o0[sa + n] = 0;
	o1[da + n] = 0;
	if (f == F_STRCMP || f == F_MEMCMP) {
		memcpy(o1 + da, o0 + sa, n);
		o1[da + n - 1 - rng() % 3] ^= 1; /* differ near the end */
	}
	st_pair_load(o0, o1, len);
	s = st_src() + sa;
	d = st_dst() + da;
	switch (f) {
	case F_STRCPY:
		strcpy(o1 + da, o0 + sa);
		if (!st_same_place(strcpy(d, s), d))
			return "return value";
		break;
	case F_MEMCPY:
		memcpy(o1 + da, o0 + sa, n);
		if (!st_same_place(memcpy(d, s, n), d))
			return "return value";
		break;
	case F_STRCMP:
		ref = sign(strcmp(o0 + sa, o1 + da));
		got = sign(strcmp(s, d));
		break;
	case F_MEMCMP:
		ref = sign(memcmp(o0 + sa, o1 + da, n));
		got = sign(memcmp(s, d, n));
		break;
	}
	if (ref != got)
		return "sign of the result";
	return st_pair_differs(o0, o1, len);
}

static int few_alignments(size_t sa)
{
	return sa == 0 || sa == 1 || sa == 7 || sa == 15 || sa == 16 ||
	       sa == 31 || sa == 33 || sa == 63;
}

static void sweep(enum fn f, struct st_report *r)
{
	static char o0[65536 + 4096] __attribute__((aligned(4096)));
	static char o1[65536 + 4096] __attribute__((aligned(4096)));
	const char *name = fn_name[f];
	uint64_t t0 = st_traps();

	rng_state = 7;
	for (int li = 0; li < st_nlayouts; li++) {
		const struct st_layout *l = &st_layouts[li];

		if (st_pair_setup(l, r) < 0)
			return;
		for (size_t si = 0; si < NSIZES; si++) {
			size_t n = sizes[si];
			/* Past ~2 KiB memcpy is rep movsb, which moves a byte
			 * per pair of traps here: correct, and slow. */
			if (f == F_MEMCPY && n > 2047)
				continue;
			for (size_t sa = 0; sa < 64; sa++) {
				size_t das[64];
				int nda = 0;
				/* Past 2 KiB the loops are the same at every
				 * alignment: eight of them, to stay quick. */
				if (n > 2047 && !few_alignments(sa) && !st_full)
					continue;
				if (st_full) {
					for (size_t da = 0; da < 64; da++)
						das[nda++] = da;
				} else {
					das[nda++] = (sa * 37 + 11) % 64;
					das[nda++] = 63 - sa;
				}
				for (int k = 0; k < nda; k++) {
					const char *why;
					st_progress(r, "%s n=%zu src+%zu dst+%zu, regions of %zu bytes, %s first",
					            name, n, sa, das[k], l->size,
					            l->dst_first ? "destination" : "source");
					r->cases++;
					int nb = st_pair_neighbour_traps();
					why = one(f, n, sa, das[k], o0, o1);
					if (why)
						st_fail(r, "%s n=%zu src+%zu dst+%zu (regions of %zu bytes): %s differ",
						        name, n, sa, das[k], l->size, why);
					else if (st_pair_neighbour_traps() != nb)
						st_fail(r, "%s n=%zu src+%zu dst+%zu (regions of %zu bytes): trap on a neighbour: %s",
						        name, n, sa, das[k], l->size,
						        st_pair_neighbour_trap());
				}
			}
		}
		if (!st_pair_neighbours_intact())
			st_fail(r, "%s: a neighbour's bytes changed (regions of %zu bytes)",
			        name, l->size);
		st_pair_teardown();
	}
	r->traps = st_traps() - t0;
	if (r->traps < r->cases)
		st_fail(r, "%s: %llu traps in %u cases: the sweep did not trap", name,
		        (unsigned long long)r->traps, r->cases);
}

void st_sweep_strcpy(struct st_report *r)
{
	sweep(F_STRCPY, r);
}

void st_sweep_memcpy(struct st_report *r)
{
	sweep(F_MEMCPY, r);
}

void st_sweep_strcmp(struct st_report *r)
{
	sweep(F_STRCMP, r);
}

void st_sweep_memcmp(struct st_report *r)
{
	sweep(F_MEMCMP, r);
}
