/* The harness of the access-form tests (decoder_forms*.c), in the manner of
 * Basilisk II's arch_insn_skipper_tests: each form is one instruction in
 * inline asm, run once on ordinary memory and once on a region whose view
 * makes it trap (NONE for reads, RO and NONE for writes) with a handler that
 * grants; results, memory and the registers the form reports must agree.
 * The instruction's own bytes are then decoded, and the decoder's access
 * checked against what the CPU reported (the handler's t->write). */
#ifndef RTL_TEST_FORMS_H
#define RTL_TEST_FORMS_H

#include <stdlib.h>
#include <string.h>

#include "core/region/views.h"
#include "decoder/decoder.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

#define SIZE 1024 /* region size */
#define OFF 128   /* where p points in it */

struct res {
	uint64_t v[8]; /* values the form read or left in registers */
	uint64_t pc;   /* address of the access instruction */
};

/* p: the target (region or ordinary memory), q: a 256-byte ordinary buffer
 * for a second operand, pre-filled the same way in both runs. */
typedef void (*form_fn)(char *p, char *q, struct res *r);

enum {
	F_READ,
	F_WRITE,
	F_NOTRAP,
};

struct form {
	const char *name;
	form_fn fn;
	int kind;
};

/* Forms mark their access instruction with the label 1 (AT); ENDPC puts
 * its address in r->pc. PC marks the instruction that follows it. */
#define AT "1: "
#define ENDPC "\n lea 1b(%%rip), %[pc]"
#define PC "lea 1f(%%rip), %[pc]\n1: "
/* Stack accesses from inline asm must step over the red zone. */
#define PUSHES(x) "sub $128, %%rsp\n" x "\n add $128, %%rsp"

/* A view-independent image of an address: region addresses map to the NONE
 * view, others stay. Forms report moved pointers through it. */
static inline uint64_t unview(uint64_t v)
{
	return rtl_view_move(v, RTL_VIEW_NONE);
}

/* What call through memory calls. */
static uint64_t form_callee(void) { return 0x1234; }

/* The pattern; a region-sized buffer also holds a function pointer at
 * OFF + 32 (for call through memory). */
static inline void fill(char *b, size_t n, int seed)
{
	uint64_t (*f)(void) = form_callee;
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(i * 7 + 3 + seed);
	if (n == SIZE)
		memcpy(b + OFF + 32, &f, sizeof(f));
}

static int forms_decoder_ready;

static void run_form(const struct form *f, int prot)
{
	char *buf = aligned_alloc(4096, (SIZE + 4095) & ~(size_t)4095), q1[256], q2[256];
	char *x, *view;
	struct res ref, got;
	struct rtl_insn in;

	printf("# %s from %s\n", f->name, prot == PROT_NONE ? "NONE" : "RO");
	fflush(stdout);
	if (!forms_decoder_ready) {
		CHECK_EQ(rtl_decoder_init(), 0);
		forms_decoder_ready = 1;
	}
	memset(&ref, 0, sizeof(ref));
	memset(&got, 0, sizeof(got));
	fill(buf, SIZE, 0);
	fill(q1, sizeof(q1), 1);
	fill(q2, sizeof(q2), 1);
	f->fn(buf + OFF, q1, &ref);

	x = region_alloc(SIZE, &x);
	CHECK(x != NULL);
	fill(x, SIZE, 0);
	region_handler(x, grant_handler);
	region_protect(x, prot);
	view = *(char *volatile *)&x;
	h_calls = h_reads = h_writes = 0;
	f->fn(view + OFF, q2, &got);

	CHECK_EQ(h_calls, f->kind == F_NOTRAP ? 0 : 1);
	CHECK_EQ(h_writes, f->kind == F_WRITE);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(got.v[i], ref.v[i]);
	CHECK(memcmp(*(char *volatile *)&x, buf, SIZE) == 0);
	CHECK(memcmp(q1, q2, sizeof(q1)) == 0);

	/* The decoder agrees with the CPU on read versus write. */
	CHECK_EQ(rtl_decode_buf((const uint8_t *)got.pc, 15, got.pc, &in), 0);
	CHECK(in.nmem >= 1);
	if (in.nmem == 1 && f->kind != F_NOTRAP)
		CHECK_EQ(!!(in.mem[0].access & RTL_ACC_WRITE), f->kind == F_WRITE);
	region_free(x);
	free(buf);
}

static void run_forms(const struct form *forms, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (forms[i].kind == F_WRITE)
			run_form(&forms[i], PROT_READ);
		run_form(&forms[i], PROT_NONE);
	}
}

/* ---- form makers ---- */

/* A load into a 64-bit register through %[p] (pointer) and %[i] (an index
 * register holding idx); both must come back as they went in, the pointer
 * in whatever view. */
#define LOAD(name, insn, idx)                                                   \
	static void name(char *p, char *q, struct res *r)                       \
	{                                                                       \
		uint64_t v = 0x5a5a5a5a5a5a5a5aull, p0 = (uint64_t)p;           \
		long i = (idx);                                                 \
		__asm__ volatile(insn ENDPC                                     \
		                 : [v] "+r"(v), [pc] "=&r"(r->pc), [p] "+r"(p), \
		                   [i] "+r"(i)                                  \
		                 : [q] "r"(q)                                   \
		                 : "memory", "cc", "rax", "rbx", "rcx");        \
		r->v[0] = v;                                                    \
		r->v[1] = (uint64_t)i;                                          \
		r->v[2] = unview((uint64_t)p) - unview(p0);                     \
	}

/* A store or read-modify-write through %[p] and %[i], source %[s]. */
#define STORE(name, insn, idx)                                                  \
	static void name(char *p, char *q, struct res *r)                       \
	{                                                                       \
		uint64_t s = 0x1122334455667788ull, p0 = (uint64_t)p;           \
		long i = (idx);                                                 \
		(void)q;                                                        \
		__asm__ volatile(insn ENDPC                                     \
		                 : [s] "+r"(s), [pc] "=&r"(r->pc), [p] "+r"(p), \
		                   [i] "+r"(i)                                  \
		                 :                                              \
		                 : "memory", "cc", "rax", "rbx", "rcx");        \
		r->v[0] = s;                                                    \
		r->v[1] = (uint64_t)i;                                          \
		r->v[2] = unview((uint64_t)p) - unview(p0);                     \
	}

/* A vector access: ymm0 holds 32 bytes of q before, and is saved after. */
#define VEC(name, insn)                                                     \
	static void name(char *p, char *q, struct res *r)                   \
	{                                                                   \
		uint64_t p0 = (uint64_t)p;                                  \
		__asm__ volatile("vmovdqu (%[q]), %%ymm0\n"                 \
		                 "vpcmpeqd %%ymm1, %%ymm1, %%ymm1\n"        \
		                 "vpsrlq $1, %%ymm1, %%ymm1\n" PC insn "\n" \
		                 "vmovdqu %%ymm0, (%[o])\n"                 \
		                 "vzeroupper"                               \
		                 : [pc] "=&r"(r->pc), [p] "+r"(p)           \
		                 : [q] "r"(q), [o] "r"(r->v)                \
		                 : "memory", "cc", "rax", "xmm0", "xmm1");  \
		r->v[4] = unview((uint64_t)p) - unview(p0);                 \
	}

#endif
