/* The addressing shapes of glibc's string code (EVEX, AVX2, SSE2 variants),
 * rebuilt from instructions every x86-64 machine has (general-purpose and
 * SSE2 loads and stores; VEX where the CPU has AVX2), so that a machine
 * without AVX-512 still exercises what AVX-512 code does:
 *  - offset:  base = aligned source, index = running offset, and the
 *             destination biased back by the source's alignment (EVEX
 *             strcpy: its base may lie in a live neighbour);
 *  - dstdiff: base = destination, index = source - destination;
 *  - diffptr: base = the difference, index = the pointer;
 *  - srcdiff: the store through base = source, index = dst - src;
 *  - scaled:  an element index with scale 1, 2, 4, 8 beside two bases.
 * Each copies n bytes (rounded up to its step) from a region into another
 * that revoke each other (pair.c), and must leave exactly what the same
 * routine leaves on ordinary memory. */
#include <string.h>

#include "pair.h"
#include "selftest.h"

typedef void (*copy_fn)(char *dst, const char *src, size_t n);

/* ---- the routines: one loop each, the shape in its addresses ---- */

/* Four loops, each written once over (step, register, load, store): a
 * setup, one access pair, then advance a register to a bound. */
#define LOOP_BODY(setup, access, advance_reg, bound_reg)          \
	setup "1:\n\t" access "add %[inc], %%" advance_reg "\n\t" \
	      "cmp %%" bound_reg ", %%" advance_reg "\n\t"        \
	      "jb 1b"

#define OFFSET_SETUP                              \
	"mov %[s], %%rcx\n\tand $63, %%rcx\n\t"   \
	"mov %[s], %%rsi\n\tsub %%rcx, %%rsi\n\t" \
	"mov %[d], %%rdi\n\tsub %%rcx, %%rdi\n\t" \
	"lea (%%rcx,%[n]), %%rdx\n\t"
#define DIFF_SETUP(diff_to, diff_from, ptr, end)                       \
	"mov %[" diff_to "], %%rdx\n\tsub %[" diff_from "], %%rdx\n\t" \
	"mov %[" ptr "], %%" end "\n\t"

#define DEFINE(fname, stepv, setup, access, adv, bound)                     \
	static void fname(char *dst, const char *src, size_t n)             \
	{                                                                   \
		__asm__ volatile(LOOP_BODY(setup, access, adv, bound)       \
		                 :                                          \
		                 : [d] "r"(dst), [s] "r"(src), [n] "r"(n),  \
		                   [inc] "i"(stepv)                         \
		                 : "rcx", "rsi", "rdi", "rdx", "r8", "rax", \
		                   "xmm0", "memory", "cc");                 \
	}

#define OFFSET(name, step, reg, load, store)                          \
	DEFINE(name, step, OFFSET_SETUP,                              \
	       load " (%%rsi,%%rcx,1), %%" reg "\n\t" store " %%" reg \
	            ", (%%rdi,%%rcx,1)\n\t",                          \
	       "rcx", "rdx")
#define DSTDIFF(name, step, reg, load, store)                                \
	DEFINE(name, step,                                                   \
	       DIFF_SETUP("s", "d", "d", "rdi") "lea (%[d],%[n]), %%r8\n\t", \
	       load " (%%rdi,%%rdx,1), %%" reg "\n\t" store " %%" reg        \
	            ", (%%rdi)\n\t",                                         \
	       "rdi", "r8")
#define DIFFPTR(name, step, reg, load, store)                                \
	DEFINE(name, step,                                                   \
	       DIFF_SETUP("s", "d", "d", "rdi") "lea (%[d],%[n]), %%r8\n\t", \
	       load " (%%rdx,%%rdi,1), %%" reg "\n\t" store " %%" reg        \
	            ", (%%rdi)\n\t",                                         \
	       "rdi", "r8")
#define SRCDIFF(name, step, reg, load, store)                                \
	DEFINE(name, step,                                                   \
	       DIFF_SETUP("d", "s", "s", "rsi") "lea (%[s],%[n]), %%r8\n\t", \
	       load " (%%rsi), %%" reg "\n\t" store " %%" reg                \
	            ", (%%rsi,%%rdx,1)\n\t",                                 \
	       "rsi", "r8")

OFFSET(offset_gp, 8, "rax", "mov", "mov")
OFFSET(offset_sse2, 16, "xmm0", "movdqu", "movdqu")
OFFSET(offset_avx2, 32, "ymm0", "vmovdqu", "vmovdqu")
DSTDIFF(dstdiff_gp, 8, "rax", "mov", "mov")
DSTDIFF(dstdiff_sse2, 16, "xmm0", "movdqu", "movdqu")
DSTDIFF(dstdiff_avx2, 32, "ymm0", "vmovdqu", "vmovdqu")
DIFFPTR(diffptr_gp, 8, "rax", "mov", "mov")
DIFFPTR(diffptr_sse2, 16, "xmm0", "movdqu", "movdqu")
DIFFPTR(diffptr_avx2, 32, "ymm0", "vmovdqu", "vmovdqu")
SRCDIFF(srcdiff_gp, 8, "rax", "mov", "mov")
SRCDIFF(srcdiff_sse2, 16, "xmm0", "movdqu", "movdqu")
SRCDIFF(srcdiff_avx2, 32, "ymm0", "vmovdqu", "vmovdqu")

/* An element index beside two bases: [rsi + rcx*s] -> [rdi + rcx*s]. */
#define SCALED(name, scale, reg, mov)                                                                                                 \
	static void name(char *dst, const char *src, size_t n)                                                                        \
	{                                                                                                                             \
		size_t count = (n + scale - 1) / scale;                                                                               \
		__asm__ volatile("xor %%ecx, %%ecx\n\t"                                                                               \
		                 "1:\n\t" mov " (%[s],%%rcx," #scale "), %%" reg "\n\t" mov " %%" reg ", (%[d],%%rcx," #scale ")\n\t" \
		                 "inc %%rcx\n\t"                                                                                      \
		                 "cmp %[c], %%rcx\n\t"                                                                                \
		                 "jb 1b"                                                                                              \
		                 :                                                                                                    \
		                 : [d] "r"(dst), [s] "r"(src), [c] "r"(count)                                                         \
		                 : "rcx", "rax", "memory", "cc");                                                                     \
	}

SCALED(scaled_1, 1, "al", "movb")
SCALED(scaled_2, 2, "ax", "movw")
SCALED(scaled_4, 4, "eax", "movl")
SCALED(scaled_8, 8, "rax", "movq")

/* ---- the check ---- */

static const size_t sizes[] = { 16, 200, 1000 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define ROOM 128 /* bytes past n compared (a routine rounds up to 32) */

static uint32_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

static void shape(copy_fn fn, const char *name, struct st_report *r)
{
	static char o0[4096] __attribute__((aligned(4096)));
	static char o1[4096] __attribute__((aligned(4096)));
	uint64_t t0 = st_traps();

	rng_state = 11;
	for (int li = 0; li < st_nlayouts; li++) {
		const struct st_layout *l = &st_layouts[li];

		if (st_pair_setup(l) < 0) {
			st_fail(r, "region_alloc(%zu) failed", l->size);
			st_pair_teardown();
			return;
		}
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

#define CHECK_FN(fn)                            \
	void st_shape_##fn(struct st_report *r) \
	{                                       \
		shape(fn, #fn, r);              \
	}

CHECK_FN(offset_gp)
CHECK_FN(offset_sse2)
CHECK_FN(offset_avx2)
CHECK_FN(dstdiff_gp)
CHECK_FN(dstdiff_sse2)
CHECK_FN(dstdiff_avx2)
CHECK_FN(diffptr_gp)
CHECK_FN(diffptr_sse2)
CHECK_FN(diffptr_avx2)
CHECK_FN(srcdiff_gp)
CHECK_FN(srcdiff_sse2)
CHECK_FN(srcdiff_avx2)
CHECK_FN(scaled_1)
CHECK_FN(scaled_2)
CHECK_FN(scaled_4)
CHECK_FN(scaled_8)
