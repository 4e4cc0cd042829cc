/* mprotect, interposed (mprotect.c): the program's own protection of view
 * pages, remembered for the fault filter. */
#ifndef RTL_MPROTECT_H
#define RTL_MPROTECT_H

/* The fault filter handed to the core: whether addr lies in a range of the
 * views that the program mprotect'ed itself. Signal-safe. */
int rtl_mprotect_claims(void *addr, int write);

/* Around fork (pthread_atfork, from init.c). */
void rtl_mprotect_fork_prepare(void);
void rtl_mprotect_fork_done(void);

#endif
