/* The aarch64 shapes (shapes_aarch64.c): general-register and q-register
 * (Advanced SIMD) loops, and the writeback and 32-bit index forms that
 * aarch64 code adds. */
#ifndef RTL_SELFTEST_SHAPES_AARCH64_H
#define RTL_SELFTEST_SHAPES_AARCH64_H

#define ST_SHAPES(X)                                                                      \
	X(offset_gp, NULL, "aligned source + running offset, biased destination (x)")     \
	X(offset_simd, NULL, "aligned source + running offset, biased destination (q)")   \
	X(dstdiff_gp, NULL, "destination + (source - destination) (x)")                   \
	X(dstdiff_simd, NULL, "destination + (source - destination) (q)")                 \
	X(diffptr_gp, NULL, "difference as base, pointer as index (x)")                   \
	X(diffptr_simd, NULL, "difference as base, pointer as index (q)")                 \
	X(srcdiff_gp, NULL, "store through source + (destination - source) (x)")          \
	X(srcdiff_simd, NULL, "store through source + (destination - source) (q)")        \
	X(scaled_1, NULL, "element index, lsl 0, beside two bases")                       \
	X(scaled_2, NULL, "element index, lsl 1, beside two bases")                       \
	X(scaled_4, NULL, "element index, lsl 2, beside two bases")                       \
	X(scaled_8, NULL, "element index, lsl 3, beside two bases")                       \
	X(uxtw_4, NULL, "32-bit element index, uxtw #2, beside two bases")                \
	X(postindex_pair, NULL, "ldp/stp with post-index writeback (glibc's copy loops)") \
	X(preindex_pair, NULL, "ldp/stp q with pre-index writeback, end pointers beside") \
	X(ld1_st1_post, NULL, "ld1/st1 of four q registers, post-increment")

#endif
