/* The addressing shapes of string code, rebuilt from aarch64 instructions
 * (shapes_x86_64.c's twin): the four shapes of glibc's x86-64 code in
 * x-register and q-register loops, and the forms aarch64 code has besides:
 *  - offset:   base = aligned source, index = running offset, and the
 *              destination biased back by the source's alignment;
 *  - dstdiff:  base = destination, index = source - destination;
 *  - diffptr:  base = the difference, index = the pointer;
 *  - srcdiff:  the store through base = source, index = dst - src;
 *  - scaled:   an element index, lsl 0 to 3, beside two bases; uxtw_4 the
 *              same with a 32-bit index (ldr w, [x, w, uxtw #2]);
 *  - postindex_pair: ldp/stp x with post-index writeback;
 *  - preindex_pair:  glibc's memcpy: ldp/stp q with pre-index writeback
 *              from pointers biased 32 bytes back, counted down, then the
 *              last 32 bytes through end pointers (src + n, dst + n) kept
 *              in registers;
 *  - ld1_st1_post: ld1/st1 of four q registers, post-increment by 64.
 * Each copies n bytes (rounded up to its step) from a region into another
 * that revoke each other (pair.c, shapes.c). */
#include <string.h>

#include "tools/selftest/selftest.h"
#include "tools/selftest/shapes.h"

#define CLOBBERS \
	"x9", "x10", "x11", "x12", "x13", "x14", "x15", "v0", "v1", "v2", "v3", "memory", "cc"

#define COPY(fname, body)                                                 \
	static void fname(char *dst, const char *src, size_t n)           \
	{                                                                 \
		__asm__ volatile(body                                     \
		                 :                                        \
		                 : [d] "r"(dst), [s] "r"(src), [n] "r"(n) \
		                 : CLOBBERS);                             \
	}

/* x9 = src & 63 runs from there to x12 = x9 + n; x10 = src - x9 (aligned),
 * x11 = dst - x9 (biased back: it may lie in the neighbour before dst). */
#define OFFSET(name, step, reg)                 \
	COPY(name, "and x9, %[s], #63\n\t"      \
	           "sub x10, %[s], x9\n\t"      \
	           "sub x11, %[d], x9\n\t"      \
	           "add x12, x9, %[n]\n"        \
	           "1:\n\t"                     \
	           "ldr " reg ", [x10, x9]\n\t" \
	           "str " reg ", [x11, x9]\n\t" \
	           "add x9, x9, #" #step "\n\t" \
	           "cmp x9, x12\n\t"            \
	           "b.lo 1b")

/* x12 = diff_to - diff_from; x10 runs over ptr to x11 = ptr + n. */
#define DIFF(name, step, reg, to, from, ptr, load, store) \
	COPY(name, "sub x12, %[" to "], %[" from "]\n\t"  \
	           "mov x10, %[" ptr "]\n\t"              \
	           "add x11, %[" ptr "], %[n]\n"          \
	           "1:\n\t"                               \
	           "ldr " reg ", " load "\n\t"            \
	           "str " reg ", " store "\n\t"           \
	           "add x10, x10, #" #step "\n\t"         \
	           "cmp x10, x11\n\t"                     \
	           "b.lo 1b")

OFFSET(offset_gp, 8, "x13")
OFFSET(offset_simd, 16, "q0")
DIFF(dstdiff_gp, 8, "x13", "s", "d", "d", "[x10, x12]", "[x10]")
DIFF(dstdiff_simd, 16, "q0", "s", "d", "d", "[x10, x12]", "[x10]")
DIFF(diffptr_gp, 8, "x13", "s", "d", "d", "[x12, x10]", "[x10]")
DIFF(diffptr_simd, 16, "q0", "s", "d", "d", "[x12, x10]", "[x10]")
DIFF(srcdiff_gp, 8, "x13", "d", "s", "s", "[x10]", "[x10, x12]")
DIFF(srcdiff_simd, 16, "q0", "d", "s", "s", "[x10]", "[x10, x12]")

/* An element index beside two bases: [src + x9 << k] -> [dst + x9 << k]. */
#define SCALED(name, scale, load, store, reg, ext)                                                                       \
	static void name(char *dst, const char *src, size_t n)                                                           \
	{                                                                                                                \
		size_t count = (n + scale - 1) / scale;                                                                  \
		__asm__ volatile("mov x9, #0\n"                                                                          \
		                 "1:\n\t" load " " reg "13, [%[s], " ext "]\n\t" store " " reg "13, [%[d], " ext "]\n\t" \
		                 "add x9, x9, #1\n\t"                                                                    \
		                 "cmp x9, %[c]\n\t"                                                                      \
		                 "b.lo 1b"                                                                               \
		                 :                                                                                       \
		                 : [d] "r"(dst), [s] "r"(src), [c] "r"(count)                                            \
		                 : CLOBBERS);                                                                            \
	}

SCALED(scaled_1, 1, "ldrb", "strb", "w", "x9")
SCALED(scaled_2, 2, "ldrh", "strh", "w", "x9, lsl #1")
SCALED(scaled_4, 4, "ldr", "str", "w", "x9, lsl #2")
SCALED(scaled_8, 8, "ldr", "str", "x", "x9, lsl #3")
SCALED(uxtw_4, 4, "ldr", "str", "w", "w9, uxtw #2")

COPY(postindex_pair, "mov x10, %[s]\n\t"
                     "mov x11, %[d]\n\t"
                     "add x12, %[s], %[n]\n"
                     "1:\n\t"
                     "ldp x13, x14, [x10], #16\n\t"
                     "stp x13, x14, [x11], #16\n\t"
                     "cmp x10, x12\n\t"
                     "b.lo 1b")

COPY(preindex_pair, "sub x10, %[s], #32\n\t"
                    "sub x11, %[d], #32\n\t"
                    "add x14, %[s], %[n]\n\t"
                    "add x15, %[d], %[n]\n\t"
                    "mov x12, %[n]\n"
                    "1:\n\t"
                    "ldp q0, q1, [x10, #32]!\n\t"
                    "stp q0, q1, [x11, #32]!\n\t"
                    "subs x12, x12, #32\n\t"
                    "b.hi 1b\n\t"
                    "cmp %[n], #32\n\t"
                    "b.lo 2f\n\t"
                    "ldp q0, q1, [x14, #-32]\n\t"
                    "stp q0, q1, [x15, #-32]\n"
                    "2:")

COPY(ld1_st1_post, "mov x10, %[s]\n\t"
                   "mov x11, %[d]\n\t"
                   "add x12, %[s], %[n]\n"
                   "1:\n\t"
                   "ld1 {v0.16b, v1.16b, v2.16b, v3.16b}, [x10], #64\n\t"
                   "st1 {v0.16b, v1.16b, v2.16b, v3.16b}, [x11], #64\n\t"
                   "cmp x10, x12\n\t"
                   "b.lo 1b")

#define CHECK_FN(fn, avail, what)               \
	void st_shape_##fn(struct st_report *r) \
	{                                       \
		st_shape_run(fn, #fn, r);       \
	}

ST_SHAPES(CHECK_FN)
