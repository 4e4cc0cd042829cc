/* glibc's x86-64 string-function variants: which ones this CPU can run (and the
 * GLIBC_TUNABLES value that makes glibc pick each), and what an
 * implementation glibc resolved is, read from its code with Capstone. */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tools/selftest/selftest.h"
#include "tools/selftest/shapes.h"

/* glibc 2.36's names of the features its string IFUNCs test. */
#define NO_AVX512 "-AVX512F,-AVX512VL,-AVX512BW"
#define NO_AVX2 "-AVX2,-AVX,-BMI2,-AVX_Fast_Unaligned_Load"
#define NO_SSE4 "-SSE4_1,-SSE4_2,-SSSE3"

static int have(const char *feature)
{
	__builtin_cpu_init();
	if (!strcmp(feature, "avx512"))
		return __builtin_cpu_supports("avx512f") &&
		       __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512bw");
	return __builtin_cpu_supports("avx2");
}

int st_have_avx2(void)
{
	return have("avx2");
}

int st_variants(struct st_variant *out, int max)
{
	static const struct st_variant evex = { "evex", "" };
	static const struct st_variant avx2_default = { "avx2", "" };
	static const struct st_variant avx2 = { "avx2", "glibc.cpu.hwcaps=" NO_AVX512 };
	static const struct st_variant sse2_default = { "sse2", "" };
	static const struct st_variant sse2 = {
		"sse2", "glibc.cpu.hwcaps=" NO_AVX512 "," NO_AVX2 "," NO_SSE4
	};
	int n = 0, avx512 = have("avx512"), avx2v = have("avx2");

	if (avx512 && n < max)
		out[n++] = evex;
	if (avx2v && n < max)
		out[n++] = avx512 ? avx2 : avx2_default;
	if (n < max)
		out[n++] = avx2v ? sse2 : sse2_default;
	return n;
}

/* The widest vector registers the code at p uses, read over its first
 * instructions. */
const char *st_kind_of(const void *p, const Dl_info *info)
{
	(void)info;
	static const char *const names[] = { "?", "sse2", "sse4", "avx2", "evex", "avx512" };
	csh h;
	cs_insn *insn;
	size_t count;
	int best = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return "?";
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	cs_option(h, CS_OPT_SKIPDATA, CS_OPT_ON); /* go on past what it cannot decode */
	count = cs_disasm(h, p, 2048, (uint64_t)(uintptr_t)p, 400, &insn);
	for (size_t i = 0; i < count; i++) {
		const cs_x86 *x;
		if (!insn[i].detail)
			continue; /* bytes skipped as data */
		x = &insn[i].detail->x86;
		if (insn[i].id == X86_INS_PCMPISTRI && best < 2)
			best = 2;
		for (int k = 0; k < x->op_count; k++) {
			unsigned r = x->operands[k].type == X86_OP_REG ? x->operands[k].reg : 0;
			int v = 0;
			if (r >= X86_REG_ZMM0 && r <= X86_REG_ZMM31)
				v = 5;
			else if ((r >= X86_REG_K0 && r <= X86_REG_K7) ||
			         (r >= X86_REG_XMM16 && r <= X86_REG_XMM31) ||
			         (r >= X86_REG_YMM16 && r <= X86_REG_YMM31))
				v = 4;
			else if (r >= X86_REG_YMM0 && r <= X86_REG_YMM15)
				v = 3;
			else if (r >= X86_REG_XMM0 && r <= X86_REG_XMM15)
				v = 1;
			if (v > best)
				best = v;
		}
	}
	if (count)
		cs_free(insn, count);
	cs_close(&h);
	return names[best];
}
