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

#include "tools/selftest/pair.h"
#include "tools/selftest/selftest.h"
#include "tools/selftest/shapes.h"

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

#define CHECK_FN(fn)                            \
	void st_shape_##fn(struct st_report *r) \
	{                                       \
		st_shape_run(fn, #fn, r);       \
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
