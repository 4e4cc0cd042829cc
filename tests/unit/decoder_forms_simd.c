/* SSE, AVX, AVX2 and x87 access forms run against a trapping region and
 * ordinary memory (forms.h): loads, stores, non-temporal, masked, partial
 * (movhps, pextr, pinsr), state saves; prefetch never traps. AVX-512 cannot
 * run on every machine (this one has none): its forms are checked by
 * decoding only, and gathers and scatters must come out unsupported. */
#include "tests/unit/forms.h"
#include "tests/unit/x86_regs.h"

/* ---- SSE ---- */

VEC(v_movss, "movss (%[p]), %%xmm0")
VEC(v_movsd, "movsd 8(%[p]), %%xmm0")
VEC(v_movups, "movups 3(%[p]), %%xmm0")
VEC(v_movaps, "movaps 16(%[p]), %%xmm0")
VEC(v_movdqa, "movdqa (%[p]), %%xmm0")
VEC(v_lddqu, "lddqu 5(%[p]), %%xmm0")
VEC(v_movntdqa, "movntdqa 32(%[p]), %%xmm0")
VEC(v_movhps_ld, "movhps 8(%[p]), %%xmm0")
VEC(v_movlps_ld, "movlps 8(%[p]), %%xmm0")
VEC(v_pinsrq, "pinsrq $1, 8(%[p]), %%xmm0")
VEC(v_pmovzxbw, "pmovzxbw 4(%[p]), %%xmm0")
VEC(v_pcmpeqb, "pcmpeqb (%[p]), %%xmm0")
VEC(v_pshufb, "pshufb 16(%[p]), %%xmm0")
VEC(v_cvtsi2sd, "cvtsi2sdq 8(%[p]), %%xmm0")
VEC(v_movss_st, "movss %%xmm0, 4(%[p])")
VEC(v_movups_st, "movups %%xmm0, 1(%[p])")
VEC(v_movaps_st, "movaps %%xmm0, 16(%[p])")
VEC(v_movntdq, "movntdq %%xmm0, 32(%[p])")
VEC(v_movntps, "movntps %%xmm0, 48(%[p])")
VEC(v_movhps_st, "movhps %%xmm0, 8(%[p])")
VEC(v_movq_st, "movq %%xmm0, 8(%[p])")
VEC(v_movd_st, "movd %%xmm0, 8(%[p])")
VEC(v_pextrb, "pextrb $3, %%xmm0, 9(%[p])")
VEC(v_pextrw, "pextrw $3, %%xmm0, 10(%[p])")
VEC(v_pextrq, "pextrq $1, %%xmm0, 8(%[p])")
VEC(v_extractps, "extractps $2, %%xmm0, 12(%[p])")
VEC(v_stmxcsr, "stmxcsr 20(%[p])")

/* maskmovdqu writes the bytes of xmm0 selected by xmm1 to [rdi]. */
static void v_maskmovdqu(char *p, char *q, struct res *r)
{
	uint64_t p0 = (uint64_t)p;
	__asm__ volatile("movdqu (%[q]), %%xmm0\n movdqu 16(%[q]), %%xmm1\n" PC
	                 "maskmovdqu %%xmm1, %%xmm0"
	                 : [pc] "=&r"(r->pc), "+D"(p)
	                 : [q] "r"(q)
	                 : "memory", "xmm0", "xmm1");
	r->v[0] = unview((uint64_t)p) - unview(p0);
}

/* ---- AVX, AVX2 ---- */

VEC(v_vmovdqu, "vmovdqu 7(%[p]), %%ymm0")
VEC(v_vmovdqa, "vmovdqa 32(%[p]), %%ymm0")
VEC(v_vmovups_idx, "mov $3, %%eax\n 1: vmovups 4(%[p],%%rax,8), %%ymm0\n lea 1b(%%rip), %[pc]")
VEC(v_vbroadcastss, "vbroadcastss 12(%[p]), %%ymm0")
VEC(v_vpbroadcastb, "vpbroadcastb 13(%[p]), %%ymm0")
VEC(v_vinserti128, "vinserti128 $1, 16(%[p]), %%ymm0, %%ymm0")
VEC(v_vpcmpeqb, "vpcmpeqb (%[p]), %%ymm0, %%ymm0")
VEC(v_vpminub, "vpminub 32(%[p]), %%ymm0, %%ymm0")
VEC(v_vpermq, "vpermq $0x1b, (%[p]), %%ymm0")
VEC(v_vmaskmovps_ld, "vmaskmovps 4(%[p]), %%ymm1, %%ymm0")
VEC(v_vpmaskmovd_ld, "vpmaskmovd 8(%[p]), %%ymm1, %%ymm0")
VEC(v_vmovdqu_st, "vmovdqu %%ymm0, 3(%[p])")
VEC(v_vmovdqa_st, "vmovdqa %%ymm0, 64(%[p])")
VEC(v_vmovntdq, "vmovntdq %%ymm0, 64(%[p])")
VEC(v_vextracti128, "vextracti128 $1, %%ymm0, 16(%[p])")
VEC(v_vmaskmovps_st, "vmaskmovps %%ymm0, %%ymm1, 4(%[p])")
VEC(v_vpmaskmovd_st, "vpmaskmovd %%ymm0, %%ymm1, 8(%[p])")
VEC(v_vcvtps2ph, "vcvtps2ph $0, %%ymm0, 16(%[p])")
VEC(v_vstmxcsr, "vstmxcsr 20(%[p])")

/* ---- x87 and state saves ---- */

VEC(v_fld, "fldl 8(%[p])\n fstpl 40(%[o])")
VEC(v_fild, "fildq 8(%[p])\n fistpq 40(%[o])")
VEC(v_fstp, "fldpi\n 1: fstpl 8(%[p])\n lea 1b(%%rip), %[pc]")
VEC(v_fistp, "fld1\n 1: fistpl 8(%[p])\n lea 1b(%%rip), %[pc]")
VEC(v_fnstcw, "fnstcw 8(%[p])")
VEC(v_fldcw, "fldcw 8(%[p])\n fninit")
/* fxsave: 512 bytes; clear what differs between the two runs first. */
VEC(v_fxsave, "fninit\n vzeroall\n 1: fxsave (%[p])\n lea 1b(%%rip), %[pc]")

/* ---- prefetches: never a fault, never a trap ---- */

VEC(v_prefetcht0, "prefetcht0 (%[p])")
VEC(v_prefetchnta, "prefetchnta 64(%[p])")
VEC(v_prefetchw, "prefetchw 128(%[p])")

static const struct form simd_forms[] = {
	{ "movss xmm, [m]", v_movss, F_READ },
	{ "movsd xmm, [m]", v_movsd, F_READ },
	{ "movups xmm, [m] (unaligned)", v_movups, F_READ },
	{ "movaps xmm, [m]", v_movaps, F_READ },
	{ "movdqa xmm, [m]", v_movdqa, F_READ },
	{ "lddqu xmm, [m]", v_lddqu, F_READ },
	{ "movntdqa xmm, [m]", v_movntdqa, F_READ },
	{ "movhps xmm, [m]", v_movhps_ld, F_READ },
	{ "movlps xmm, [m]", v_movlps_ld, F_READ },
	{ "pinsrq xmm, [m], 1", v_pinsrq, F_READ },
	{ "pmovzxbw xmm, [m]", v_pmovzxbw, F_READ },
	{ "pcmpeqb xmm, [m]", v_pcmpeqb, F_READ },
	{ "pshufb xmm, [m]", v_pshufb, F_READ },
	{ "cvtsi2sd xmm, [m]", v_cvtsi2sd, F_READ },
	{ "movss [m], xmm", v_movss_st, F_WRITE },
	{ "movups [m], xmm", v_movups_st, F_WRITE },
	{ "movaps [m], xmm", v_movaps_st, F_WRITE },
	{ "movntdq [m], xmm", v_movntdq, F_WRITE },
	{ "movntps [m], xmm", v_movntps, F_WRITE },
	{ "movhps [m], xmm", v_movhps_st, F_WRITE },
	{ "movq [m], xmm", v_movq_st, F_WRITE },
	{ "movd [m], xmm", v_movd_st, F_WRITE },
	{ "pextrb [m], xmm, 3", v_pextrb, F_WRITE },
	{ "pextrw [m], xmm, 3", v_pextrw, F_WRITE },
	{ "pextrq [m], xmm, 1", v_pextrq, F_WRITE },
	{ "extractps [m], xmm, 2", v_extractps, F_WRITE },
	{ "stmxcsr [m]", v_stmxcsr, F_WRITE },
	{ "maskmovdqu (implicit rdi)", v_maskmovdqu, F_WRITE },
	{ "vmovdqu ymm, [m]", v_vmovdqu, F_READ },
	{ "vmovdqa ymm, [m]", v_vmovdqa, F_READ },
	{ "vmovups ymm, [b+i*8+d]", v_vmovups_idx, F_READ },
	{ "vbroadcastss ymm, [m]", v_vbroadcastss, F_READ },
	{ "vpbroadcastb ymm, [m]", v_vpbroadcastb, F_READ },
	{ "vinserti128 ymm, ymm, [m]", v_vinserti128, F_READ },
	{ "vpcmpeqb ymm, ymm, [m]", v_vpcmpeqb, F_READ },
	{ "vpminub ymm, ymm, [m]", v_vpminub, F_READ },
	{ "vpermq ymm, [m], imm", v_vpermq, F_READ },
	{ "vmaskmovps ymm, mask, [m]", v_vmaskmovps_ld, F_READ },
	{ "vpmaskmovd ymm, mask, [m]", v_vpmaskmovd_ld, F_READ },
	{ "vmovdqu [m], ymm", v_vmovdqu_st, F_WRITE },
	{ "vmovdqa [m], ymm", v_vmovdqa_st, F_WRITE },
	{ "vmovntdq [m], ymm", v_vmovntdq, F_WRITE },
	{ "vextracti128 [m], ymm, 1", v_vextracti128, F_WRITE },
	{ "vmaskmovps [m], mask, ymm", v_vmaskmovps_st, F_WRITE },
	{ "vpmaskmovd [m], mask, ymm", v_vpmaskmovd_st, F_WRITE },
	{ "vcvtps2ph [m], ymm", v_vcvtps2ph, F_WRITE },
	{ "vstmxcsr [m]", v_vstmxcsr, F_WRITE },
	{ "fld qword [m]", v_fld, F_READ },
	{ "fild qword [m]", v_fild, F_READ },
	{ "fstp qword [m]", v_fstp, F_WRITE },
	{ "fistp dword [m]", v_fistp, F_WRITE },
	{ "fnstcw [m]", v_fnstcw, F_WRITE },
	{ "fldcw [m]", v_fldcw, F_READ },
	{ "fxsave [m] (512 bytes)", v_fxsave, F_WRITE },
	{ "prefetcht0 [m]", v_prefetcht0, F_NOTRAP },
	{ "prefetchnta [m]", v_prefetchnta, F_NOTRAP },
	{ "prefetchw [m]", v_prefetchw, F_NOTRAP },
};

TEST(simd_and_x87_forms)
{
	run_forms(simd_forms, sizeof(simd_forms) / sizeof(simd_forms[0]));
}

/* ---- AVX-512: decoded only ---- */

static const struct evex {
	const char *text;
	uint8_t len, bytes[15];
	int ok; /* 0: Capstone 4.0.2 cannot decode it (see docs/decoder.md) */
	uint8_t flags;
	int8_t base, index;
	uint8_t scale;
	int64_t disp;
	uint16_t size;
	uint8_t access;
} evex[] = {
	{ "vmovdqu64 zmm0, [rdi+rcx*8+0x40] (disp8*64)", 8, { 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x44, 0xcf, 0x01 }, 1, 0, RDI, RCX, 8, 0x40, 64, RTL_ACC_READ },
	{ "vmovdqu32 [rsi]{k1}, zmm1", 6, { 0x62, 0xf1, 0x7e, 0x49, 0x7f, 0x0e }, 1, RTL_INSN_MASKED, RSI, -1, 1, 0, 64, RTL_ACC_WRITE },
	{ "vmovdqu8 zmm1{k2}{z}, [rsi]", 6, { 0x62, 0xf1, 0x7f, 0xca, 0x6f, 0x0e }, 1, RTL_INSN_MASKED, RSI, -1, 1, 0, 64, RTL_ACC_READ },
	{ "vpbroadcastd zmm0, [rax+4]", 7, { 0x62, 0xf2, 0x7d, 0x48, 0x58, 0x40, 0x01 }, 1, 0, RAX, -1, 1, 4, 4, RTL_ACC_READ },
	{ "vmovntdq [rdi], zmm0", 6, { 0x62, 0xf1, 0x7d, 0x48, 0xe7, 0x07 }, 1, 0, RDI, -1, 1, 0, 64, RTL_ACC_WRITE },
	{ "vpcompressd [rdi]{k1}, zmm0", 6, { 0x62, 0xf2, 0x7d, 0x49, 0x8b, 0x07 }, 1, RTL_INSN_MASKED, RDI, -1, 1, 0, 64, RTL_ACC_WRITE },
	{ "vmovdqu64 [rdi+r9-0x20], ymm16", 8, { 0x62, 0xa1, 0xfe, 0x28, 0x7f, 0x44, 0x0f, 0xff }, 1, 0, RDI, R9, 1, -0x20, 32, RTL_ACC_WRITE },
	{ "vmovdqu16 [r8+r9*2-0x20], ymm16", 8, { 0x62, 0x81, 0xff, 0x28, 0x7f, 0x44, 0x48, 0xff }, 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "vpgatherdd zmm0{k1}, [rdi+zmm1*4]", 7, { 0x62, 0xf2, 0x7d, 0x49, 0x90, 0x04, 0x8f }, 1, RTL_INSN_UNSUPPORTED | RTL_INSN_MASKED, -1, -1, 0, 0, 0, 0 },
	{ "vpscatterdd [rdi+zmm1*4]{k1}, zmm0", 7, { 0x62, 0xf2, 0x7d, 0x49, 0xa0, 0x04, 0x8f }, 1, RTL_INSN_UNSUPPORTED | RTL_INSN_MASKED, -1, -1, 0, 0, 0, 0 },
	{ "vgatherdps ymm0, [rdi+ymm1*4], ymm2 (AVX2)", 6, { 0xc4, 0xe2, 0x6d, 0x92, 0x04, 0x8f }, 1, RTL_INSN_UNSUPPORTED, -1, -1, 0, 0, 0, 0 },
	{ "vpcmpeqb k1, zmm0, [rdi]", 6, { 0x62, 0xf1, 0x7d, 0x48, 0x74, 0x0f }, 0, 0, 0, 0, 0, 0, 0, 0 },
};

TEST(avx512_forms_decoded)
{
	CHECK_EQ(rtl_decoder_init(), 0);
	for (size_t k = 0; k < sizeof(evex) / sizeof(evex[0]); k++) {
		const struct evex *e = &evex[k];
		struct rtl_insn in;
		int rc = rtl_decode_buf(e->bytes, e->len, 0x1000, &in);

		printf("# %s\n", e->text);
		if (!e->ok) {
			CHECK_EQ(rc, -1);
			continue;
		}
		CHECK_EQ(rc, 0);
		CHECK_EQ(in.len, e->len);
		CHECK_EQ(in.flags & ~RTL_INSN_PLAIN, e->flags); /* the plan aside */
		if (e->flags & RTL_INSN_UNSUPPORTED)
			continue;
		CHECK_EQ(in.nmem, 1);
		CHECK_EQ(in.mem[0].base, e->base);
		CHECK_EQ(in.mem[0].index, e->index);
		if (e->index >= 0)
			CHECK_EQ(in.mem[0].scale, e->scale);
		CHECK_EQ(in.mem[0].disp, e->disp);
		CHECK_EQ(in.mem[0].size, e->size);
		CHECK_EQ(in.mem[0].access, e->access);
	}
}

/* No decode allocated after start: Capstone's lazy tables were built at
 * init, so a decode in a signal handler never calls malloc. */
TEST(decoding_allocates_nothing)
{
	CHECK_EQ(rtl_decoder_init(), 0);
	for (size_t k = 0; k < sizeof(evex) / sizeof(evex[0]); k++) {
		struct rtl_insn in;
		rtl_decode_buf(evex[k].bytes, evex[k].len, 0x1000, &in);
	}
	CHECK_EQ(rtl_decoder_late_allocs(), 0);
}
