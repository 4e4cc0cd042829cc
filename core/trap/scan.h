/* Which of the signal frame's registers lie near a region, asked of four
 * at a time with vector compares where the CPU has them: the fast trap's
 * move (move.c), where most registers lie outside the views. With AVX2, 16
 * registers cost some 20 instructions against 64 for the scalar loop's
 * load, subtract, compare and branch each.
 *
 * Using vector registers in a signal handler is safe: the kernel saved the
 * interrupted code's in the signal frame, and sigreturn restores them. */
#ifndef RTL_TRAP_SCAN_H
#define RTL_TRAP_SCAN_H

#include <stdint.h>

#include "decoder/decoder.h"

#if defined(__x86_64__)
#include <immintrin.h>
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#endif

#define RTL_SCAN_AVX2 1

/* Whether this CPU runs rtl_scan_avx2. glibc's answer where it has one
 * (2.33 on): what it found at start, no cpuid. libgcc's
 * __builtin_cpu_supports would link its constructor into librtl, which
 * runs cpuid a dozen times in every process, each a trap to the
 * hypervisor in a virtual machine. */
static inline int rtl_scan_avx2_ok(void)
{
#ifdef CPU_FEATURE_ACTIVE
	return CPU_FEATURE_ACTIVE(AVX2);
#else
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
#endif
}

/* Bit i set when regs[i] - lo < len (unsigned), for the RTL_NGPR
 * registers of regs. AVX2 compares 64-bit lanes signed only:
 * x < len unsigned is x + 2^63 < len + 2^63 signed, and the 2^63 added to
 * every register is folded into lo. For a function of target "avx2" to
 * inline (the compiler ends that one with vzeroupper). */
static inline __attribute__((always_inline, target("avx2"))) uint32_t
rtl_scan_avx2(const uint64_t *regs, uint64_t lo, uint64_t len)
{
	const __m256i bias = _mm256_set1_epi64x((long long)(lo + (UINT64_C(1) << 63)));
	const __m256i end = _mm256_set1_epi64x((long long)(len + (UINT64_C(1) << 63)));
	uint32_t mask = 0;

	_Static_assert(RTL_NGPR % 4 == 0 && RTL_NGPR <= 32, "whole vectors, one mask");
#pragma GCC unroll 8
	for (int i = 0; i < RTL_NGPR; i += 4) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(regs + i));
		__m256i near = _mm256_cmpgt_epi64(end, _mm256_sub_epi64(v, bias));

		mask |= (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(near)) << i;
	}
	return mask;
}
#endif

#endif
