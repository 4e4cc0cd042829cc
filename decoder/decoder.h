/* What rtl needs to know about a faulting instruction, independent of the
 * architecture: its memory operands in terms of general registers.
 *
 * rtl_decode runs in a signal handler: no malloc, no locks held by the
 * interrupted code. One backend per architecture over Capstone, chosen at
 * build time: x86_64.c, aarch64.c. */
#ifndef RTL_DECODER_H
#define RTL_DECODER_H

#include <stddef.h>
#include <stdint.h>

/* General registers, in the backend's numbering: x86-64's encoding order
 * rax, rcx ... r15; aarch64's x0 ... x30, then sp as 31. */
#if defined(__aarch64__)
#define RTL_NGPR 32
#else
#define RTL_NGPR 16
#endif
#define RTL_REG_NONE -1
#define RTL_REG_PC RTL_NGPR /* pc-relative operand: base is the next pc */

/* A set of general registers, one bit each. */
typedef uint32_t rtl_regset_t;

enum {
	RTL_ACC_READ = 1,
	RTL_ACC_WRITE = 2,
};

enum {
	RTL_INSN_REP = 1,         /* repeated string instruction */
	RTL_INSN_NOFAULT = 2,     /* prefetch and the like: never a real access */
	RTL_INSN_UNSUPPORTED = 4, /* cannot be swizzled (gather, scatter ...) */
	RTL_INSN_MASKED = 8,      /* element-masked: touches part of the operand */
	RTL_INSN_PLAIN = 16,      /* the move plan is one form (derive.h) */
};

/* An index register used through its low 32 bits (aarch64's uxtw and sxtw
 * register offsets): zero- or sign-extended before scaling. */
enum {
	RTL_EXT_NONE,
	RTL_EXT_UXTW,
	RTL_EXT_SXTW,
};

static inline uint64_t rtl_index_value(uint64_t v, uint8_t ext)
{
	if (ext == RTL_EXT_UXTW)
		return (uint32_t)v;
	if (ext == RTL_EXT_SXTW)
		return (uint64_t)(int64_t)(int32_t)v;
	return v;
}

struct rtl_mem_op {
	int8_t base, index; /* register numbers, RTL_REG_NONE if absent */
	uint8_t scale;      /* 1, 2, 4, 8 (16: aarch64's q registers) */
	uint8_t access;     /* RTL_ACC_*, 0 if the backend cannot tell */
	uint8_t addr32;     /* 32-bit address size: the sum is truncated */
	uint8_t segment;    /* fs/gs override: address not computable here */
	uint8_t ext;        /* RTL_EXT_*: how a 32-bit index is widened */
	uint16_t size;      /* bytes accessed, 0 if unknown */
	int64_t disp;
};

#define RTL_INSN_MAX_MEM 2
#define RTL_INSN_MAX_BYTES 15
#define RTL_INSN_MAX_LATER 10

/* A condition on the way to a form: (reg + off) cc imm held there, reg's
 * value taken at the trap (a cmp with a constant, then a jump). */
enum {
	RTL_CC_B,
	RTL_CC_AE,
	RTL_CC_BE,
	RTL_CC_A,
	RTL_CC_E,
	RTL_CC_NE,
	RTL_CC_L,
	RTL_CC_GE,
	RTL_CC_LE,
	RTL_CC_G,
};

struct rtl_cond {
	int8_t reg;
	uint8_t cc;
	uint8_t w32; /* a 32-bit compare */
	int32_t imm;
	int32_t off;
};

#define RTL_FORM_MAX_COND 2

/* An address form used by an instruction that follows the faulting one,
 * reached before either register is redefined (adds of constants are
 * followed and folded into disp). lea forms count: they build pointers.
 * It is taken into account only where its conditions hold. */
struct rtl_form {
	int8_t base, index; /* registers; index RTL_REG_NONE for base + disp */
	uint8_t scale;
	uint8_t ncond;
	uint8_t ext; /* RTL_EXT_*, as in rtl_mem_op */
	struct rtl_cond cond[RTL_FORM_MAX_COND];
	int64_t disp;
};

/* Whether condition c holds for the registers gpr. */
static inline int rtl_cond_holds(const struct rtl_cond *c,
                                 const uint64_t gpr[RTL_NGPR])
{
	uint64_t v = gpr[c->reg] + (uint64_t)(int64_t)c->off;
	uint64_t k = (uint64_t)(int64_t)c->imm;
	int64_t sv, sk;

	if (c->w32) {
		v = (uint32_t)v;
		k = (uint32_t)k;
		sv = (int32_t)v;
		sk = (int32_t)k;
	} else {
		sv = (int64_t)v;
		sk = (int64_t)k;
	}
	switch (c->cc) {
	case RTL_CC_B: return v < k;
	case RTL_CC_AE: return v >= k;
	case RTL_CC_BE: return v <= k;
	case RTL_CC_A: return v > k;
	case RTL_CC_E: return v == k;
	case RTL_CC_NE: return v != k;
	case RTL_CC_L: return sv < sk;
	case RTL_CC_GE: return sv >= sk;
	case RTL_CC_LE: return sv <= sk;
	case RTL_CC_G: return sv > sk;
	}
	return 1;
}

struct rtl_insn {
	uint64_t pc;
	uint8_t len;
	uint8_t nmem;
	uint8_t flags;
	uint8_t bytes[RTL_INSN_MAX_BYTES];
	struct rtl_mem_op mem[RTL_INSN_MAX_MEM];
	char text[80]; /* "mnemonic operands", for diagnostics */
	/* What follows (decoded on a cache miss, see flow.c): address forms
	 * that must stay consistent when registers move between views, and
	 * the registers used alone as a base (so: pointers). Last, so that a
	 * copy can stop after the nlater forms in use. */
	uint8_t nlater;
	rtl_regset_t ptr_regs;
	struct rtl_form later[RTL_INSN_MAX_LATER];
};

/* Bytes of in that hold information: everything up to the forms in use. */
static inline size_t rtl_insn_used(const struct rtl_insn *in)
{
	unsigned n = in->nlater < RTL_INSN_MAX_LATER ? in->nlater : RTL_INSN_MAX_LATER;
	return __builtin_offsetof(struct rtl_insn, later) + n * sizeof(struct rtl_form);
}

/* Load Capstone and open the backend once, before any trap that needs a
 * decode (not in a signal handler). -1 with errno on failure. */
int rtl_decoder_init(void);
/* Whether rtl_decoder_init has succeeded: until it has, rtl_decode and
 * rtl_decode_again fail (-1) and the trap path goes without. */
int rtl_decoder_ready(void);

/* Decode the instruction at pc in this process, through the cache (key: pc
 * and the instruction's bytes). 0, or -1 if it cannot be decoded. */
int rtl_decode(uint64_t pc, struct rtl_insn *out);

/* rtl_decode for an instruction whose decode-cache hit the caller has
 * counted already (the trap's fast path, leaving for the general one):
 * counts nothing. */
int rtl_decode_again(uint64_t pc, struct rtl_insn *out);

/* An address form in the trap's fast plan: base + index * scale + disp. */
struct rtl_plan_form {
	int8_t base, index; /* registers; index RTL_REG_NONE if absent */
	uint8_t scale;
	uint8_t ext; /* RTL_EXT_* */
	int32_t disp;
};

#define RTL_PLAN_FORMS 4

/* What the trap's fast path needs of an instruction, cached with its
 * decode (rtl_derive_fast_plan, derive.h): its one memory operand and the
 * address forms the code after it uses. */
struct rtl_fast_plan {
	struct rtl_plan_form op; /* op.base < 0: the instruction has none */
	uint8_t access;          /* op's RTL_ACC_*, 0 if the backend cannot tell */
	uint8_t nforms;
	uint8_t only_op;   /* base + disp, no form, no pointer after it: the
	                    operand in the span is the whole check */
	uint16_t size;     /* op's bytes, 0 if unknown */
	rtl_regset_t ptrs; /* registers the code after uses alone as a base */
	struct rtl_plan_form form[RTL_PLAN_FORMS];
};

/* From the decode cache only, never decoding and never copying the whole
 * entry: 0 and *out if the instruction at pc is cached with its bytes
 * unchanged and has a fast plan; -1 otherwise (rtl_decode then). Counts a
 * hit in the caller's statistics, not here (a shared counter would bounce
 * between trapping threads). */
int rtl_decode_plan(uint64_t pc, struct rtl_fast_plan *out);

/* Decode from a buffer, no cache (tests, fuzzing). The look-ahead (later,
 * ptr_regs) covers the code in the buffer only. */
int rtl_decode_buf(const uint8_t *code, size_t len, uint64_t pc,
                   struct rtl_insn *out);

/* Effective address of operand m given the registers. */
static inline uint64_t rtl_mem_ea(const struct rtl_insn *in,
                                  const struct rtl_mem_op *m,
                                  const uint64_t gpr[RTL_NGPR])
{
	uint64_t ea = (uint64_t)m->disp;
	if (m->base == RTL_REG_PC)
		ea += in->pc + in->len;
	else if (m->base >= 0)
		ea += gpr[m->base];
	if (m->index >= 0)
		ea += rtl_index_value(gpr[m->index], m->ext) * m->scale;
	return m->addr32 ? (uint32_t)ea : ea;
}

/* Register name for diagnostics ("rax", "x0"), or "?". */
const char *rtl_reg_name(int reg);

/* Capstone allocations made while decoding in a handler (should be 0: all
 * of Capstone's lazily built tables are built at init). */
uint64_t rtl_decoder_late_allocs(void);

/* Decode cache statistics since start. */
void rtl_decode_cache_stats(uint64_t *hits, uint64_t *misses);

#endif
