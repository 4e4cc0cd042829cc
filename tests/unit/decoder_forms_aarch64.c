/* Every aarch64 load and store form, run against a region that traps and
 * against ordinary memory (decoder_forms.c's twin): each form is one
 * instruction in inline asm, run at both edges of a page-sized region (its
 * first bytes, and its last bytes up to the page's end) from the NONE view
 * (reads) and from the RO and NONE views (writes), with a handler that
 * grants. Results, memory, the base register's writeback and the registers
 * the form leaves must agree; the decoder's read or write must agree with
 * the access; the instruction's bytes decode to an operand holding the
 * address. Under qemu-user the signal frame has no fault syndrome, so these
 * also prove that decoding alone tells read from write. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/region/views.h"
#include "decoder/decoder.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

struct res {
	uint64_t v[8]; /* values loaded, or vector registers saved */
	int64_t moved; /* the base's writeback: where it ends, less where it began */
	uint64_t pc;   /* the address of the access instruction */
};

/* at: the address the form accesses first; the form forms its base from it. */
typedef void (*form_fn)(char *at, struct res *r);

enum { F_READ,
       F_WRITE,
       F_RMW };

struct form {
	const char *name;
	form_fn fn;
	int kind;
	unsigned bytes; /* bytes accessed from at */
};

/* A view-independent image of an address: region addresses map to the
 * NONE view, others stay. */
static inline uint64_t unview(uint64_t v)
{
	return rtl_view_move(v, RTL_VIEW_NONE);
}

#define VREGS "v0", "v1", "v2", "v3"
/* The access instruction is labelled 1; its address goes to r->pc. */
#define AT "adr %[pc], 1f\n1: "

/* An access through base %[b] = at - adj, index %[i]: a load into %[v]
 * (and %[w]), or a store of them, which start as v0 and w0. */
#define ACCESS(name, insn, adj, idx, v0, w0)                                      \
	static void name(char *at, struct res *r)                                 \
	{                                                                         \
		uint64_t v = (v0), w = (w0);                                      \
		char *b = at - (adj), *b0 = b;                                    \
		uint64_t i = (idx);                                               \
		__asm__ volatile(AT insn                                          \
		                 : [v] "+r"(v), [w] "+r"(w), [pc] "=&r"(r->pc),   \
		                   [b] "+r"(b), [i] "+r"(i)                       \
		                 :                                                \
		                 : "memory", VREGS);                              \
		r->v[0] = v;                                                      \
		r->v[1] = w;                                                      \
		r->v[2] = i;                                                      \
		r->moved = (int64_t)(unview((uint64_t)b) - unview((uint64_t)b0)); \
	}
#define LOAD(name, insn, adj, idx) \
	ACCESS(name, insn, adj, idx, 0x5a5a5a5a5a5a5a5aull, 0xa5a5a5a5a5a5a5a5ull)
#define STORE(name, insn, adj, idx) \
	ACCESS(name, insn, adj, idx, 0x1122334455667788ull, 0x99aabbccddeeff00ull)

/* A vector access: v0..v3 hold a pattern before and are saved after. */
#define VEC(name, insn, adj)                                                                   \
	static void name(char *at, struct res *r)                                              \
	{                                                                                      \
		static const uint8_t pat[64] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };              \
		char *b = at - (adj), *b0 = b;                                                 \
		__asm__ volatile("ld1 {v0.16b, v1.16b, v2.16b, v3.16b}, [%[p]]\n" AT insn "\n" \
		                 "st1 {v0.16b, v1.16b, v2.16b, v3.16b}, [%[o]]"                \
		                 : [pc] "=&r"(r->pc), [b] "+r"(b)                              \
		                 : [p] "r"(pat), [o] "r"(r->v)                                 \
		                 : "memory", VREGS);                                           \
		r->moved = (int64_t)(unview((uint64_t)b) - unview((uint64_t)b0));              \
	}

/* ---- LDR/STR: offsets, pre- and post-index, register offsets ---- */

LOAD(ldr_base, "ldr %[v], [%[b]]", 0, 0)
LOAD(ldr_uimm, "ldr %[v], [%[b], #8]", 8, 0)
LOAD(ldr_pre, "ldr %[v], [%[b], #8]!", 8, 0)
LOAD(ldr_post, "ldr %[v], [%[b]], #-8", 0, 0)
LOAD(ldr_reg, "ldr %[v], [%[b], %[i]]", 24, 24)
LOAD(ldr_reg_lsl, "ldr %[v], [%[b], %[i], lsl #3]", 24, 3)
/* uxtw ignores the index's upper half; sxtw sign-extends a negative one. */
LOAD(ldr_uxtw, "ldr %w[v], [%[b], %w[i], uxtw #2]", 20, 0xdead000000000005ull)
LOAD(ldr_sxtw, "ldr %[v], [%[b], %w[i], sxtw #3]", -16, 0xfffffffeull)
LOAD(ldrb_reg, "ldrb %w[v], [%[b], %[i]]", 7, 7)
LOAD(ldrsh_pre, "ldrsh %[v], [%[b], #-2]!", -2, 0)
LOAD(ldrsw, "ldrsw %[v], [%[b], #4]", 4, 0)
LOAD(ldur, "ldur %[v], [%[b], #-3]", -3, 0)
LOAD(ldtr, "ldtr %[v], [%[b], #8]", 8, 0)
STORE(str_base, "str %[v], [%[b]]", 0, 0)
STORE(stur_w, "stur %w[v], [%[b], #-3]", -3, 0)
STORE(strb_uimm, "strb %w[v], [%[b], #4095]", 4095, 0)
STORE(strh_post, "strh %w[v], [%[b]], #2", 0, 0)
STORE(str_pre, "str %[v], [%[b], #-16]!", -16, 0)
STORE(str_reg_lsl, "str %w[v], [%[b], %[i], lsl #2]", 12, 3)

/* ---- pairs ---- */

LOAD(ldp, "ldp %[v], %[w], [%[b]]", 0, 0)
LOAD(ldp_pre, "ldp %[v], %[w], [%[b], #16]!", 16, 0)
LOAD(ldp_post, "ldp %[v], %[w], [%[b]], #-16", 0, 0)
LOAD(ldp_w, "ldp %w[v], %w[w], [%[b], #-8]", -8, 0)
LOAD(ldpsw, "ldpsw %[v], %[w], [%[b], #8]", 8, 0)
LOAD(ldnp, "ldnp %[v], %[w], [%[b], #32]", 32, 0)
STORE(stp, "stp %[v], %[w], [%[b]]", 0, 0)
STORE(stp_pre, "stp %[v], %[w], [%[b], #-16]!", -16, 0)
STORE(stnp, "stnp %[v], %[w], [%[b]]", 0, 0)
VEC(ldp_q_post, "ldp q0, q1, [%[b]], #32", 0)
VEC(stp_q_pre, "stp q2, q3, [%[b], #32]!", 32)

/* ---- exclusives, ordered, LSE atomics ---- */

LOAD(ldxr, "ldxr %[v], [%[b]]", 0, 0)
LOAD(ldaxp, "ldaxp %[v], %[w], [%[b]]", 0, 0)
LOAD(ldar, "ldar %[v], [%[b]]", 0, 0)
STORE(stlr, "stlr %[v], [%[b]]", 0, 0)
/* An exclusive pair is retried: the return from the signal clears the
 * monitor, so the store after a trap fails once and the loop goes again. */
STORE(ldxr_stxr_loop, "0: ldxr %[w], [%[b]]\n add %[w], %[w], %[v]\n" AT "stxr %w[i], %[w], [%[b]]\n cbnz %w[i], 0b",
      0, 0)
STORE(cas, ".arch_extension lse\n" AT "cas %[w], %[v], [%[b]]", 0, 0)
STORE(casal_w, ".arch_extension lse\n" AT "casal %w[w], %w[v], [%[b]]", 0, 0)
STORE(ldadd, ".arch_extension lse\n" AT "ldadd %[v], %[w], [%[b]]", 0, 0)
STORE(ldaddalb, ".arch_extension lse\n" AT "ldaddalb %w[v], %w[w], [%[b]]", 0, 0)
STORE(stadd, ".arch_extension lse\n" AT "stadd %[v], [%[b]]", 0, 0)
STORE(swp, ".arch_extension lse\n" AT "swp %[v], %[w], [%[b]]", 0, 0)
STORE(ldset, ".arch_extension lse\n" AT "ldset %[v], %[w], [%[b]]", 0, 0)

/* ---- Advanced SIMD structures ---- */

VEC(ld1_1, "ld1 {v0.16b}, [%[b]]", 0)
VEC(ld1_2_post, "ld1 {v0.16b, v1.16b}, [%[b]], #32", 0)
VEC(ld2, "ld2 {v0.8h, v1.8h}, [%[b]]", 0)
VEC(ld4_post, "ld4 {v0.4s, v1.4s, v2.4s, v3.4s}, [%[b]], #64", 0)
VEC(st1_4, "st1 {v0.16b, v1.16b, v2.16b, v3.16b}, [%[b]]", 0)
VEC(st1_8b, "st1 {v0.8b}, [%[b]]", 0)
VEC(st1_lane, "st1 {v0.d}[1], [%[b]]", 0)
VEC(ld1_lane_post, "ld1 {v0.s}[1], [%[b]], #4", 0)
VEC(ld1r, "ld1r {v0.4s}, [%[b]]", 0)
VEC(st2_lane, "st2 {v0.b, v1.b}[3], [%[b]]", 0)
VEC(ldr_q, "ldr q0, [%[b], #16]", 16)
VEC(str_q, "str q1, [%[b]]", 0)

static const struct form forms[] = {
	{ "ldr x, [b]", ldr_base, F_READ, 8 },
	{ "ldr x, [b, #8]", ldr_uimm, F_READ, 8 },
	{ "ldr x, [b, #8]!", ldr_pre, F_READ, 8 },
	{ "ldr x, [b], #-8", ldr_post, F_READ, 8 },
	{ "ldr x, [b, i]", ldr_reg, F_READ, 8 },
	{ "ldr x, [b, i, lsl #3]", ldr_reg_lsl, F_READ, 8 },
	{ "ldr w, [b, w, uxtw #2]", ldr_uxtw, F_READ, 4 },
	{ "ldr x, [b, w, sxtw #3]", ldr_sxtw, F_READ, 8 },
	{ "ldrb w, [b, i]", ldrb_reg, F_READ, 1 },
	{ "ldrsh x, [b, #-2]!", ldrsh_pre, F_READ, 2 },
	{ "ldrsw x, [b, #4]", ldrsw, F_READ, 4 },
	{ "ldur x, [b, #-3]", ldur, F_READ, 8 },
	{ "ldtr x, [b, #8]", ldtr, F_READ, 8 },
	{ "str x, [b]", str_base, F_WRITE, 8 },
	{ "stur w, [b, #-3]", stur_w, F_WRITE, 4 },
	{ "strb w, [b, #4095]", strb_uimm, F_WRITE, 1 },
	{ "strh w, [b], #2", strh_post, F_WRITE, 2 },
	{ "str x, [b, #-16]!", str_pre, F_WRITE, 8 },
	{ "str w, [b, i, lsl #2]", str_reg_lsl, F_WRITE, 4 },
	{ "ldp x, x, [b]", ldp, F_READ, 16 },
	{ "ldp x, x, [b, #16]!", ldp_pre, F_READ, 16 },
	{ "ldp x, x, [b], #-16", ldp_post, F_READ, 16 },
	{ "ldp w, w, [b, #-8]", ldp_w, F_READ, 8 },
	{ "ldpsw x, x, [b, #8]", ldpsw, F_READ, 8 },
	{ "ldnp x, x, [b, #32]", ldnp, F_READ, 16 },
	{ "stp x, x, [b]", stp, F_WRITE, 16 },
	{ "stp x, x, [b, #-16]!", stp_pre, F_WRITE, 16 },
	{ "stnp x, x, [b]", stnp, F_WRITE, 16 },
	{ "ldp q, q, [b], #32", ldp_q_post, F_READ, 32 },
	{ "stp q, q, [b, #32]!", stp_q_pre, F_WRITE, 32 },
	{ "ldxr x, [b]", ldxr, F_READ, 8 },
	{ "ldaxp x, x, [b]", ldaxp, F_READ, 16 },
	{ "ldar x, [b]", ldar, F_READ, 8 },
	{ "stlr x, [b]", stlr, F_WRITE, 8 },
	{ "ldxr/stxr loop", ldxr_stxr_loop, F_WRITE, 8 },
	{ "cas x, x, [b]", cas, F_RMW, 8 },
	{ "casal w, w, [b]", casal_w, F_RMW, 4 },
	{ "ldadd x, x, [b]", ldadd, F_RMW, 8 },
	{ "ldaddalb w, w, [b]", ldaddalb, F_RMW, 1 },
	{ "stadd x, [b]", stadd, F_RMW, 8 },
	{ "swp x, x, [b]", swp, F_RMW, 8 },
	{ "ldset x, x, [b]", ldset, F_RMW, 8 },
	{ "ld1 {v.16b}, [b]", ld1_1, F_READ, 16 },
	{ "ld1 {2 x v.16b}, [b], #32", ld1_2_post, F_READ, 32 },
	{ "ld2 {v.8h, v.8h}, [b]", ld2, F_READ, 32 },
	{ "ld4 {4 x v.4s}, [b], #64", ld4_post, F_READ, 64 },
	{ "st1 {4 x v.16b}, [b]", st1_4, F_WRITE, 64 },
	{ "st1 {v.8b}, [b]", st1_8b, F_WRITE, 8 },
	{ "st1 {v.d}[1], [b]", st1_lane, F_WRITE, 8 },
	{ "ld1 {v.s}[1], [b], #4", ld1_lane_post, F_READ, 4 },
	{ "ld1r {v.4s}, [b]", ld1r, F_READ, 4 },
	{ "st2 {v.b, v.b}[3], [b]", st2_lane, F_WRITE, 2 },
	{ "ldr q, [b, #16]", ldr_q, F_READ, 16 },
	{ "str q, [b]", str_q, F_WRITE, 16 },
};

static size_t page;

/* The pattern. */
static void fill(char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(i * 7 + 3);
}

/* A small region kept below the tested one, so that a base formed below
 * the tested region still lies in a view (unview can then tell how far
 * the form's writeback took it). */
static void spacer(void)
{
	static char *s;
	if (!s)
		s = region_alloc(64, NULL);
	CHECK(s != NULL);
}

static void decoder_up(void)
{
	static int done;
	if (!done)
		CHECK_EQ(rtl_decoder_init(), 0);
	done = 1;
}

/* One form at offset off of a page-sized region protected prot. */
static void run_form(const struct form *f, size_t off, int prot)
{
	char *buf = aligned_alloc(page, page);
	char *x, *view;
	struct res ref, got;
	struct rtl_insn in;
	uint64_t gpr[RTL_NGPR] = { 0 };

	printf("# %s at +%zu from %s\n", f->name, off,
	       prot == PROT_NONE ? "NONE" : "RO");
	fflush(stdout);
	decoder_up();
	spacer();
	memset(&ref, 0, sizeof(ref));
	memset(&got, 0, sizeof(got));
	fill(buf, page);
	f->fn(buf + off, &ref);

	x = region_alloc(page, &x);
	CHECK(x != NULL);
	CHECK_EQ((uintptr_t)x % page, 0);
	fill(x, page);
	region_handler(x, grant_handler);
	region_protect(x, prot);
	view = *(char *volatile *)&x;
	h_calls = h_reads = h_writes = 0;
	f->fn(view + off, &got);

	CHECK(h_calls >= 1);
	if (f->kind == F_READ)
		CHECK_EQ(h_writes, 0);
	else
		CHECK_EQ(h_writes, 1);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(got.v[i], ref.v[i]);
	CHECK_EQ(got.moved, ref.moved);
	CHECK(memcmp(*(char *volatile *)&x, buf, page) == 0);

	/* The decoder: one operand, read or write as the form is, whose
	 * address (base formed as the form formed it) is the access's. */
	CHECK_EQ(rtl_decode_buf((const uint8_t *)got.pc, 4, got.pc, &in), 0);
	CHECK_EQ(in.nmem, 1);
	CHECK_EQ(!!(in.mem[0].access & RTL_ACC_WRITE), f->kind != F_READ);
	CHECK_EQ(!!(in.mem[0].access & RTL_ACC_READ), f->kind != F_WRITE);
	CHECK(in.mem[0].size == 0 || in.mem[0].size == f->bytes);
	(void)gpr;
	region_free(x);
	free(buf);
}

static void run_at_edges(const struct form *f)
{
	run_form(f, 0, PROT_NONE);
	run_form(f, page - f->bytes, PROT_NONE);
	if (f->kind != F_READ) {
		run_form(f, 0, PROT_READ);
		run_form(f, page - f->bytes, PROT_READ);
	}
}

TEST(every_form_at_the_page_edges)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		run_at_edges(&forms[i]);
}

/* DC ZVA in a function of its own: qemu-user reports a fault inside it
 * with the pc of the start of its translated block, and resumes there, so
 * nothing but the instruction may come before it in the block. */
__attribute__((noinline)) static void zero_block(char *p)
{
	__asm__ volatile("dc zva, %0"
	                 :
	                 : "r"(p)
	                 : "memory");
}

/* DC ZVA zeroes the aligned block holding its address: glibc's memset uses
 * it for large sizes. Its address is not base + disp (it is aligned down),
 * and the trap is still explained by the register, as a write. */
TEST(dc_zva_zeroes_a_trapping_block)
{
	uint64_t dczid;
	size_t block;
	char *x, *p;

	__asm__("mrs %0, dczid_el0"
	        : "=r"(dczid));
	if (dczid & 16) {
		printf("# DC ZVA prohibited here: nothing to test\n");
		return;
	}
	block = 4u << (dczid & 15);
	page = (size_t)sysconf(_SC_PAGESIZE);
	CHECK(block <= page);
	x = region_alloc(page, &x);
	CHECK(x != NULL);
	fill(x, page);
	region_handler(x, grant_handler);
	region_protect(x, PROT_READ);
	p = *(char *volatile *)&x + page - block + 5; /* the last block */
	h_calls = h_writes = 0;
	zero_block(p);
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(h_writes, 1);
	x = *(char *volatile *)&x;
	for (size_t i = 0; i < page; i++)
		CHECK_EQ(x[i], i >= page - block ? 0 : (char)(i * 7 + 3));
	region_free(x);
}
