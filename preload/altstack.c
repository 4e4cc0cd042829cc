/* sigaltstack, interposed. The kernel writes a signal frame onto the
 * alternate stack itself, with no access rtl can resolve: a stack the
 * program carved from a block the policy selected (gawk's libsigsegv
 * mallocs one) would kill the process at the first signal delivered on it,
 * rtl's own traps included (rtl's handler runs SA_ONSTACK). Such a stack
 * is swapped, per thread, for one of the same size in ordinary memory; the
 * program reads back the stack it set. Any other stack passes through. */
#include "preload.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

/* This thread's swap: the program's stack and the one the kernel has. */
static RTL_TLS struct {
	void *prog_sp;
	size_t prog_size;
	void *own_sp;
	size_t own_size;
} swap;

static int raw_sigaltstack(const stack_t *ss, stack_t *old)
{
	return (int)syscall(SYS_sigaltstack, ss, old);
}

/* What the program should read: its own stack where rtl swapped it. */
static void as_program_sees(stack_t *old)
{
	if (swap.own_sp && old->ss_sp == swap.own_sp) {
		old->ss_sp = swap.prog_sp;
		old->ss_size = swap.prog_size;
	}
}

static void drop_own(void)
{
	if (swap.own_sp)
		munmap(swap.own_sp, swap.own_size);
	swap.own_sp = NULL;
	swap.own_size = 0;
}

API int sigaltstack(const stack_t *ss, stack_t *old)
{
	stack_t mine, prev;
	void *own;
	size_t len;

	if (!ss || (ss->ss_flags & SS_DISABLE) || !rtl_heap_owns(ss->ss_sp)) {
		int r = raw_sigaltstack(ss, old ? &prev : NULL);
		if (r == 0 && old) {
			as_program_sees(&prev);
			*old = prev;
		}
		if (r == 0 && ss) /* the kernel no longer has ours */
			drop_own();
		return r;
	}
	len = (ss->ss_size + 4095) & ~(size_t)4095;
	own = mmap(NULL, len, PROT_READ | PROT_WRITE,
	           MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (own == MAP_FAILED) {
		errno = ENOMEM;
		return -1;
	}
	mine = *ss;
	mine.ss_sp = own;
	mine.ss_size = len;
	if (raw_sigaltstack(&mine, old ? &prev : NULL) < 0) {
		int e = errno;
		munmap(own, len);
		errno = e;
		return -1;
	}
	if (old) {
		as_program_sees(&prev);
		*old = prev;
	}
	drop_own();
	swap.prog_sp = ss->ss_sp;
	swap.prog_size = ss->ss_size;
	swap.own_sp = own;
	swap.own_size = len;
	return 0;
}
