/* The CPU's spin-wait hint, for the few loops that wait on another thread
 * (x86-64 pause, aarch64 yield). */
#ifndef RTL_RELAX_H
#define RTL_RELAX_H

static inline void rtl_cpu_relax(void)
{
#if defined(__x86_64__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::
	                         : "memory");
#endif
}

#endif
