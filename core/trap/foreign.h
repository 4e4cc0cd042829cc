/* Faults that are not rtl's: where they go (the program's action for
 * SIGSEGV, and for SIGBUS where page-table protection runs: kept by rtl
 * while its own handler stays installed) and how the core changes signal
 * actions. Nothing here knows of preloading. */
#ifndef RTL_FOREIGN_H
#define RTL_FOREIGN_H

#include <signal.h>
#include <stdint.h>

/* Install rtl's action sa for sig (SIGSEGV or SIGBUS); what was there
 * becomes the foreign action. 0, or -1 with errno. */
int rtl_foreign_install(int sig, const struct sigaction *sa);

/* Whether rtl's handler is installed for sig. */
int rtl_foreign_installed(int sig);

/* sigaction(sig, act, old) as the program sees it, for SIGSEGV or SIGBUS:
 * once rtl's handler is installed for sig, act becomes the foreign action
 * and old what it was; before, the kernel's action. */
int rtl_foreign_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* Run the foreign action for a fault or signal that is not rtl's, as the
 * kernel would have run it. In rtl's SIGSEGV or SIGBUS handler. */
void rtl_foreign_pass_on(int sig, siginfo_t *si, void *uc);

/* Around fork: hold the foreign action still (innermost of the core's
 * locks), release it in parent and child. */
void rtl_foreign_fork_prepare(void);
void rtl_foreign_fork_done(void);

#endif
