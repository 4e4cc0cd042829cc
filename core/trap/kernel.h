/* The kernel's accesses on the program's behalf (kernel.c): a system call
 * that will read or write a buffer in the views. The kernel raises no
 * SIGSEGV for them, so the wrappers (interpose/) ask this first. */
#ifndef RTL_KERNEL_H
#define RTL_KERNEL_H

#include <stddef.h>

#include "core/util/export.h"

/* Resolve an access of the kernel to [p, p + len), which lies in the views:
 * every region it covers whose protection forbids it goes to its handler
 * (stale pointers are healed without one). Returns the address to hand the
 * kernel (the same bytes in the RW view), or NULL with errno EFAULT if a
 * handler did not grant, or the range is not wholly in one view.
 * Async-signal-safe. Counted in region_stats' syscall_buffers. */
RTL_PRIVATE_API void *rtl_kernel_access(const void *p, size_t len, int write);

#endif
