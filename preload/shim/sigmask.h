/* The program's SIGSEGV mask, kept apart from the kernel's (sigmask.c):
 * the kernel never blocks SIGSEGV in a traced process, since a region trap
 * with SIGSEGV blocked ends it; the program sees the mask it set. The same
 * for SIGBUS where rtl takes it (page-table protection), and for SIGSYS
 * (the system-call mechanism). */
#ifndef RTL_SIGMASK_H
#define RTL_SIGMASK_H

#include <signal.h>
#include <stdint.h>

/* Once rtl runs: take the calling thread's SIGSEGV out of the kernel's
 * mask (the program's view keeps it), hook the trap path, and from now on
 * keep the two apart in every mask call. */
void rtl_sigmask_start(void);

/* Whether rtl_sigmask_start has run. */
int rtl_sigmask_on(void);

/* The signals kept out of the kernel's mask, as bits: SIGBUS only where
 * rtl takes it (rtl_traps_signal). */
#define RTL_HIDE_SEGV 1
#define RTL_HIDE_SYS 2
#define RTL_HIDE_BUS 4
#define RTL_HIDE_ALL (RTL_HIDE_SEGV | RTL_HIDE_SYS | RTL_HIDE_BUS)

/* The bit of a kept-out signal (0 for any other); the kept-out signals a
 * set holds, as bits; add bits' signals to a set; take every kept-out
 * signal out of one. Async-signal-safe. */
int rtl_sigmask_bit(int sig);
int rtl_sigmask_bits(const sigset_t *set);
void rtl_sigmask_add(sigset_t *set, int bits);
void rtl_sigmask_del(sigset_t *set);

/* Around a program's signal handler (relay.c), in that handler's context:
 * uc is the frame the kernel made, sp an address in the caller's own
 * stack frame, bits the kept-out signals the handler runs with blocked
 * (its sa_mask; for SIGSEGV itself, unless SA_NODEFER). Enter returns what
 * leave needs. Async-signal-safe. */
int rtl_sigmask_enter(void *uc, uintptr_t sp, int bits);
void rtl_sigmask_leave(void *uc, int token);

/* Around an exec, a spawn, system() or popen(): the new program inherits
 * the kernel's mask, which gets SIGSEGV for the call if the program blocks
 * it. Nothing in the call may trap meanwhile (exec.c grants its strings
 * first). begin returns what end needs. */
int rtl_sigmask_exec_begin(void);
void rtl_sigmask_exec_end(int begun);

#endif
