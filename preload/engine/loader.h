/* rtl's own calls into the dynamic loader, kept out of fork's way
 * (loader.c). Naming a site (dl_iterate_phdr, dladdr) and unwinding a stack
 * (libunwind, which calls dl_iterate_phdr and keeps a cache under a lock)
 * take locks of glibc's and libunwind's; a child forked while another
 * thread held one inherits it held, and hangs at its own first call. A
 * fork waits until no thread is inside such a call and keeps new ones out
 * until it is done. */
#ifndef RTL_LOADER_H
#define RTL_LOADER_H

/* Registers the fork handlers: before any thread can enter. */
void rtl_loader_start(void);
/* Enters, waiting out a fork under way in another thread. */
void rtl_loader_enter(void);
/* Enters unless a fork is under way in another thread: 1 entered, 0 not
 * (nothing to leave). Signal handler: no lock, no wait. */
int rtl_loader_try_enter(void);
/* Leaves what enter, or a try_enter that returned 1, entered. */
void rtl_loader_leave(void);

#endif
