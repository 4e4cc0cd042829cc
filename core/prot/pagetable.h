/* The page-table side of the protection backend (prot.c): a userfaultfd in
 * write-protect mode with UFFD_FEATURE_SIGBUS over rtl's own shared
 * mappings. A write-protected page is read-only in the page tables alone:
 * no mapping is split, and a write to it is a SIGBUS in the writing thread
 * (no fault-handling thread). Internal to core/prot. */
#ifndef RTL_PROT_PAGETABLE_H
#define RTL_PROT_PAGETABLE_H

#include <stddef.h>
#include <stdint.h>

/* Whether protection may live in the page tables here: RTL_PROTECT does
 * not say mprotect, the kernel has userfaultfd write-protection of shared
 * memory with SIGBUS, lets this process use it, and passes rtl's
 * self-test. 1, the descriptor open (keep) or closed again; else 0. why
 * (len bytes) gets the sentence the report says, which opens with the
 * backend's name ("page tables: ...", "mprotect: ..."). Also for rtlctl
 * check: libc only. Not in a signal handler. */
int rtl_pt_choose(char *why, size_t len, int keep);

/* In a forked child: the parent's descriptor is the parent's (an ioctl on
 * it would change the parent's page tables); the child's own. 0 or -1. */
int rtl_pt_reopen(void);

/* A mapping rtl made at [at, at + len): its writes may be protected from
 * now on. A system call; signal-safe. 0 or -1 with errno. */
int rtl_pt_register(uintptr_t at, size_t len);

/* Write-protect [at, at + len) (on) or let it be written again (off). A
 * system call; signal-safe. 0 or -1 with errno. */
int rtl_pt_protect(uintptr_t at, size_t len, int on);

#endif
