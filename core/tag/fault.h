/* Traps on memory tags (fault.c). Signal-handler code. */
#ifndef RTL_TAG_FAULT_H
#define RTL_TAG_FAULT_H

#include <signal.h>
#include <stddef.h>
#include <ucontext.h>

#include "core/util/export.h"

/* A SIGSEGV that may be a tag-check fault on a tag region: 0 if it was
 * (handled, or the process is ending with rtl's message), -1 if it is not
 * rtl's. si_addr with or without the pointer's tag (hardware clears it
 * unless SA_EXPOSE_TAGBITS). Exported for tests/unit/tag.c, which hands
 * it both forms. */
RTL_PRIVATE_API int rtl_tag_fault(const siginfo_t *si, ucontext_t *uc);

/* rtl_kernel_access for a buffer in the tag arena: every tag region the
 * range covers whose protection forbids the access goes to its handler.
 * The pointer to hand the kernel (p itself), or NULL with errno EFAULT. */
/* rtl_tag_protect made r read-write: if this thread is in a trap on r,
 * its handler granted it. Signal handler. */
struct rtl_tag_region;
void rtl_tag_granted(const struct rtl_tag_region *r);

RTL_PRIVATE_API void *rtl_tag_kernel_access(const void *p, size_t len, int write);

#endif
