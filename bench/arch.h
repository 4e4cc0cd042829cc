/* The benchmark's few machine-specific lines, one definition per
 * architecture: a one-byte read or write through a pointer kept in the
 * first argument register (x86-64 rdi, aarch64 x0), which the floor
 * handlers rewrite in the signal frame, and a fine tick counter (x86-64
 * rdtsc; aarch64 the virtual counter cntvct_el0, a fixed-frequency clock,
 * not cycles). Under qemu-user every figure is the emulator's (README). */
#ifndef RTL_BENCH_ARCH_H
#define RTL_BENCH_ARCH_H

#include <stdint.h>
#include <ucontext.h>

#if defined(__x86_64__)
#include <x86intrin.h>

static inline void arch_read_byte(char *p)
{
	__asm__ volatile("movb (%0), %%al"
	                 : "+D"(p)
	                 :
	                 : "rax", "memory");
}

static inline void arch_write_byte(char *p)
{
	__asm__ volatile("movb $1, (%0)"
	                 : "+D"(p)
	                 :
	                 : "memory");
}

static inline void arch_set_pointer(ucontext_t *uc, void *p)
{
	uc->uc_mcontext.gregs[REG_RDI] = (greg_t)p;
}

static inline uint64_t arch_ticks(void)
{
	uint64_t t;
	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
}

#elif defined(__aarch64__)

static inline void arch_read_byte(char *p)
{
	register char *x0 __asm__("x0") = p;
	__asm__ volatile("ldrb w1, [%0]"
	                 : "+r"(x0)
	                 :
	                 : "x1", "memory");
}

static inline void arch_write_byte(char *p)
{
	register char *x0 __asm__("x0") = p;
	__asm__ volatile("mov w1, #1\n strb w1, [%0]"
	                 : "+r"(x0)
	                 :
	                 : "x1", "memory");
}

static inline void arch_set_pointer(ucontext_t *uc, void *p)
{
	uc->uc_mcontext.regs[0] = (uint64_t)p;
}

static inline uint64_t arch_ticks(void)
{
	uint64_t t;
	__asm__ volatile("isb\n mrs %0, cntvct_el0\n isb"
	                 : "=r"(t)
	                 :
	                 : "memory");
	return t;
}

#endif

#endif
