/* The x86-64 shapes (shapes_x86_64.c): GP, SSE2 and, where the CPU has
 * AVX2, VEX loops. */
#ifndef RTL_SELFTEST_SHAPES_X86_64_H
#define RTL_SELFTEST_SHAPES_X86_64_H

/* Whether the CPU runs AVX2 code (the VEX shapes; variant_x86_64.c). */
int st_have_avx2(void);

#define ST_SHAPES(X)                                                                              \
	X(offset_gp, NULL, "aligned source + running offset, biased destination (GP)")            \
	X(offset_sse2, NULL, "aligned source + running offset, biased destination (SSE2)")        \
	X(offset_avx2, st_have_avx2, "aligned source + running offset, biased destination (VEX)") \
	X(dstdiff_gp, NULL, "destination + (source - destination) (GP)")                          \
	X(dstdiff_sse2, NULL, "destination + (source - destination) (SSE2)")                      \
	X(dstdiff_avx2, st_have_avx2, "destination + (source - destination) (VEX)")               \
	X(diffptr_gp, NULL, "difference as base, pointer as index (GP)")                          \
	X(diffptr_sse2, NULL, "difference as base, pointer as index (SSE2)")                      \
	X(diffptr_avx2, st_have_avx2, "difference as base, pointer as index (VEX)")               \
	X(srcdiff_gp, NULL, "store through source + (destination - source) (GP)")                 \
	X(srcdiff_sse2, NULL, "store through source + (destination - source) (SSE2)")             \
	X(srcdiff_avx2, st_have_avx2, "store through source + (destination - source) (VEX)")      \
	X(scaled_1, NULL, "element index, scale 1, beside two bases")                             \
	X(scaled_2, NULL, "element index, scale 2, beside two bases")                             \
	X(scaled_4, NULL, "element index, scale 4, beside two bases")                             \
	X(scaled_8, NULL, "element index, scale 8, beside two bases")

#endif
