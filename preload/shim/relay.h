/* The program's signal handlers, run through a relay once rtl runs
 * (relay.c), so that the program's SIGSEGV mask (sigmask.c) follows each
 * handler in and out as the kernel's mask would. */
#ifndef RTL_RELAY_H
#define RTL_RELAY_H

#include <signal.h>

/* Take over the handlers set so far, and the program's own SIGSEGV
 * handler (run by the trap path). Called by rtl_sigmask_start. */
void rtl_relay_start(void);

/* sigaction for a signal other than SIGSEGV once rtl runs: the kernel gets
 * the relay for a handler and the mask without SIGSEGV; old reads back
 * what the program set. 0, or -1 with errno. */
int rtl_relay_sigaction(int sig, const struct sigaction *act,
                        struct sigaction *old);

#endif
