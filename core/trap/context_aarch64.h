/* The interrupted thread's registers, as the aarch64 signal frame holds
 * them (included by context.h): x0..x30 are registers 0..30, sp is 31,
 * the decoder's numbering. Runs in the trap handler. */
#ifndef RTL_CONTEXT_AARCH64_H
#define RTL_CONTEXT_AARCH64_H

#include <stdint.h>
#include <ucontext.h>

/* The kernel's record of the fault syndrome in the frame's __reserved area
 * (asm/sigcontext.h's esr_context, spelled here: that header clashes with
 * glibc's). qemu-user writes no such record. */
#define RTL_CTX_ESR_MAGIC 0x45535201u
#define RTL_CTX_EC_DABT_LOW 0x24u /* data abort from EL0 */
#define RTL_CTX_ESR_WNR (1u << 6)

/* The syndrome's write-not-read bit says "read" for an atomic that faults
 * on its read half (a CAS on a PROT_NONE page), and qemu-user gives no
 * syndrome at all: the decoded instruction decides. */
#define RTL_CTX_DECODE_DECIDES 1

struct rtl_ctx_record {
	uint32_t magic, size;
};

static inline uint64_t rtl_ctx_pc(const ucontext_t *uc)
{
	return (uint64_t)uc->uc_mcontext.pc;
}

/* 1 write, 0 read, -1 the frame does not say. */
static inline int rtl_ctx_is_write(const ucontext_t *uc)
{
	const unsigned char *p = uc->uc_mcontext.__reserved;
	const unsigned char *end = p + sizeof(uc->uc_mcontext.__reserved);

	while (p + sizeof(struct rtl_ctx_record) <= end) {
		const struct rtl_ctx_record *h = (const void *)p;
		if (h->magic == 0 || h->size < sizeof(*h) ||
		    h->size > (size_t)(end - p))
			break;
		if (h->magic == RTL_CTX_ESR_MAGIC && h->size >= 16) {
			uint64_t esr = *(const uint64_t *)(p + 8);
			if ((esr >> 26) != RTL_CTX_EC_DABT_LOW)
				return -1;
			return (esr & RTL_CTX_ESR_WNR) != 0;
		}
		p += h->size;
	}
	return -1;
}

static inline void rtl_ctx_gprs(const ucontext_t *uc, uint64_t gpr[RTL_NGPR])
{
	for (int i = 0; i < 31; i++)
		gpr[i] = (uint64_t)uc->uc_mcontext.regs[i];
	gpr[31] = (uint64_t)uc->uc_mcontext.sp;
}

static inline void rtl_ctx_set_gprs(ucontext_t *uc,
                                    const uint64_t gpr[RTL_NGPR])
{
	for (int i = 0; i < 31; i++)
		uc->uc_mcontext.regs[i] = gpr[i];
	uc->uc_mcontext.sp = gpr[31];
}

/* The frame's general registers as one array: x0..x30, then sp, which the
 * frame keeps right after them (checked below), so the decoder's
 * numbering is the array's. The fast trap path reads and moves them where
 * they are. */
static inline uint64_t *rtl_ctx_frame(ucontext_t *uc)
{
	_Static_assert(__builtin_offsetof(mcontext_t, sp) ==
	                       __builtin_offsetof(mcontext_t, regs) + 31 * 8,
	               "sp follows x30 in the signal frame");
	return (uint64_t *)((char *)&uc->uc_mcontext +
	                    __builtin_offsetof(mcontext_t, regs));
}

static inline const int8_t *rtl_ctx_slots(void)
{
	/* clang-format off */
	static const int8_t slots[RTL_NGPR] = {
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
		16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
	};
	/* clang-format on */
	return slots;
}

#endif
