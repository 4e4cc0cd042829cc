/* The SIGSEGV handler and what the rest of the core asks of it. */
#ifndef RTL_TRAP_H
#define RTL_TRAP_H

#include <signal.h>

#include "region.h"
#include "rtl/ext.h"

int rtl_trap_install(void);

/* sigaction(SIGSEGV, act, old) as the program sees it: once rtl's handler is
 * installed, act becomes where foreign faults go and old what went there;
 * before, the kernel's action. */
int rtl_trap_sigaction(const struct sigaction *act, struct sigaction *old);

/* The function the core changes signal actions with (NULL: libc's), and a
 * call through it. */
void rtl_trap_set_sigaction(rtl_ext_sigaction_fn fn);
int rtl_trap_real_sigaction(int sig, const struct sigaction *act,
                            struct sigaction *old);

/* Around fork: hold the foreign action still (innermost of the core's
 * locks), release it in parent and child. */
void rtl_trap_fork_prepare(void);
void rtl_trap_fork_done(void);

/* A filter that may claim faults in the views for the program. */
void rtl_trap_set_fault_filter(rtl_ext_fault_filter_fn fn);

/* Inside a region handler, the protection calls also move the interrupted
 * thread's registers: every register in r's span, in any view other than
 * to (from < 0), or in view from only, goes to view to. No-op outside a
 * handler. */
void rtl_trap_move_registers(const struct rtl_region *r, int from, int to);

#endif
