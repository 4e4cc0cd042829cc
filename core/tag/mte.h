/* Arm's memory tagging (MTE) as the tag mechanism uses it: a 4-bit tag per
 * 16-byte granule of a PROT_MTE mapping, checked against bits 56-59 of the
 * pointer on every load and store. The instructions are inline (the trap
 * path and the grant use them); whether the machine has them is mte.c's.
 * On other machines the same names compile to nothing and rtl_mte_probe
 * says why. */
#ifndef RTL_MTE_H
#define RTL_MTE_H

#include <signal.h> /* SEGV_MTESERR, where the C library has it */
#include <stddef.h>
#include <stdint.h>

#include "core/util/export.h"

#define RTL_MTE_GRANULE 16u
#define RTL_MTE_TAG_SHIFT 56
/* The tag no pointer rtl hands out carries: protected and free granules. */
#define RTL_MTE_TAG_LOCKED 0u
#define RTL_MTE_TAGS 15u /* pointer tags 1..15 */

#ifndef SEGV_MTEAERR
#define SEGV_MTEAERR 8
#endif
#ifndef SEGV_MTESERR
#define SEGV_MTESERR 9
#endif

/* The address without its top byte (tag and ignored bits). */
static inline uintptr_t rtl_mte_untag(uintptr_t p)
{
	return p & (((uintptr_t)1 << RTL_MTE_TAG_SHIFT) - 1);
}

static inline uintptr_t rtl_mte_with_tag(uintptr_t p, unsigned tag)
{
	return rtl_mte_untag(p) | (uintptr_t)(tag & 15) << RTL_MTE_TAG_SHIFT;
}

static inline unsigned rtl_mte_tag_of(uintptr_t p)
{
	return (unsigned)(p >> RTL_MTE_TAG_SHIFT) & 15;
}

#if defined(__aarch64__)
/* The assembler needs the extension named: the file is built for Armv8.0,
 * and these run only where the probe found MTE. */
#define RTL_MTE_ASM ".arch armv8.5-a+memtag\n\t"

/* One tag store at p: STG, ST2G, STZG or STZ2G. */
#define RTL_MTE_STORE(insn, p)                        \
	__asm__ volatile(RTL_MTE_ASM insn " %0, [%0]" \
	                 :                            \
	                 : "r"(p)                     \
	                 : "memory")

/* Give the granules of [p, p + len) (p and len multiples of 16) the tag p
 * carries; with zero, clear their bytes too (STZG). Two granules a store
 * where it can (ST2G). No system call: any thread, any context. */
static inline void rtl_mte_set_tags(uintptr_t p, size_t len, int zero)
{
	uintptr_t end = p + len;

	for (; p + 32 <= end; p += 32) {
		if (zero)
			RTL_MTE_STORE("stz2g", p);
		else
			RTL_MTE_STORE("st2g", p);
	}
	if (p < end) {
		if (zero)
			RTL_MTE_STORE("stzg", p);
		else
			RTL_MTE_STORE("stg", p);
	}
}

/* The tag of the granule at p (LDG). */
static inline unsigned rtl_mte_load_tag(uintptr_t p)
{
	uintptr_t t = rtl_mte_untag(p);

	__asm__ volatile(RTL_MTE_ASM "ldg %0, [%1]"
	                 : "+r"(t)
	                 : "r"(p));
	return rtl_mte_tag_of(t);
}

/* Tag checks off (1) or on (0) for this thread's own accesses (PSTATE.TCO):
 * rtl's copies into and out of protected granules. A signal handler's
 * frame saves and restores it with the rest of PSTATE. */
static inline void rtl_mte_unchecked(int on)
{
	if (on)
		__asm__ volatile(RTL_MTE_ASM "msr tco, #1"
		                 :
		                 :
		                 : "memory");
	else
		__asm__ volatile(RTL_MTE_ASM "msr tco, #0"
		                 :
		                 :
		                 : "memory");
}
#else
static inline void rtl_mte_set_tags(uintptr_t p, size_t len, int zero)
{
	(void)p;
	(void)len;
	(void)zero;
}
static inline unsigned rtl_mte_load_tag(uintptr_t p)
{
	(void)p;
	return 0;
}
static inline void rtl_mte_unchecked(int on)
{
	(void)on;
}
#endif

/* Whether this process can place regions on tags: 1 (MTE in the CPU and
 * the kernel, a PROT_MTE mapping made, synchronous checks on for the
 * calling thread), 0 if not. *why, if not NULL, gets a sentence saying
 * which, and why not. Asks once; RTL_TAG=off chooses 0. Not
 * async-signal-safe. */
RTL_PRIVATE_API int rtl_mte_probe(const char **why);

/* Synchronous tag checks and tagged system-call arguments for the calling
 * thread (threads it starts inherit them). 0, or -1 with errno. */
int rtl_mte_thread_enable(void);

/* Whether the calling thread has synchronous tag checks on (a thread that
 * was running before rtl started may not). */
int rtl_mte_thread_checks(void);

#endif
