/* The shape checks' runner, the same for every architecture: a routine
 * copies n bytes between two regions that revoke each other, beside live
 * neighbours (pair.c), at many alignments, and must leave exactly what it
 * leaves on ordinary memory, trapping at least twice per case. The
 * routines are the architecture's (shapes_x86_64.c, shapes_aarch64.c). */
#include <string.h>

#include "tools/selftest/pair.h"
#include "tools/selftest/shapes.h"

static const size_t sizes[] = { 16, 200, 1000 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define ROOM 128 /* bytes past n compared (a routine rounds up to 32) */

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

void st_shape_run(st_copy_fn fn, const char *name, struct st_report *r)
{
	static char o0[4096] __attribute__((aligned(4096)));
	static char o1[4096] __attribute__((aligned(4096)));
	uint64_t t0 = st_traps();

	rng_state = 11;
	for (int li = 0; li < st_nlayouts; li++) {
		const struct st_layout *l = &st_layouts[li];

		if (st_pair_setup(l, r) < 0)
			return;
		for (size_t si = 0; si < NSIZES; si++) {
			size_t n = sizes[si], len = 64 + n + ROOM;
			for (size_t c = 0; c < (st_full ? 64 * 64 : 64); c++) {
				size_t sa = c % 64;
				size_t da = st_full ? c / 64 : 63 - (sa * 29 + 5) % 64;
				const char *why;

				st_progress(r, "%s n=%zu src+%zu dst+%zu, regions of %zu bytes, %s first",
				            name, n, sa, da, l->size,
				            l->dst_first ? "destination" : "source");
				for (size_t k = 0; k < len; k++) {
					o0[k] = (char)rng();
					o1[k] = (char)rng();
				}
				int nb = st_pair_neighbour_traps();
				st_pair_load(o0, o1, len);
				fn(o1 + da, o0 + sa, n);
				fn(st_dst() + da, st_src() + sa, n);
				r->cases++;
				why = st_pair_differs(o0, o1, len);
				if (why)
					st_fail(r, "%s n=%zu src+%zu dst+%zu (regions of %zu bytes): %s differs",
					        name, n, sa, da, l->size, why);
				else if (st_pair_neighbour_traps() != nb)
					st_fail(r, "%s n=%zu src+%zu dst+%zu (regions of %zu bytes): trap on a neighbour: %s",
					        name, n, sa, da, l->size,
					        st_pair_neighbour_trap());
			}
		}
		if (!st_pair_neighbours_intact())
			st_fail(r, "%s: a neighbour's bytes changed", name);
		st_pair_teardown();
	}
	r->traps = st_traps() - t0;
	if (r->traps < 2 * r->cases)
		st_fail(r, "%s: %llu traps in %u cases: the shape did not trap", name,
		        (unsigned long long)r->traps, r->cases);
}
