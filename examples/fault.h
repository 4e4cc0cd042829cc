/* Whether a SIGSEGV on a page protected with mprotect was a write, for the
 * page-protection columns of the examples: x86-64's page-fault error code
 * says so; elsewhere (aarch64: the kernel's syndrome record is not always
 * there, and qemu-user writes none) a fault on a page the kernel can read
 * was a write, and one on an unreadable page is taken for a read (a write
 * then faults once more, on the page made readable). Signal-safe: a probe
 * through a pipe, whose write(2) copies from addr or fails with EFAULT. */
#ifndef EXAMPLES_FAULT_H
#define EXAMPLES_FAULT_H

#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

static inline int fault_was_write(void *ucv, const void *addr)
{
#if defined(__x86_64__)
	(void)addr;
	return (((ucontext_t *)ucv)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
	static int probe[2] = { -1, -1 };
	char byte;
	int readable;

	(void)ucv;
	if (probe[0] < 0 && pipe(probe) < 0)
		return 1;
	readable = write(probe[1], addr, 1) == 1;
	if (readable && read(probe[0], &byte, 1) != 1)
		return 1;
	return readable;
#endif
}

#endif
