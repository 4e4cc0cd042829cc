/* The page-table side of the protection backend (pagetable.h): one
 * userfaultfd, opened once per process, with write-protection of shared
 * memory (Linux 5.19) and SIGBUS instead of a fault-handling thread.
 *
 * Protection lives in the page-table entries: UFFDIO_WRITEPROTECT sets or
 * clears a range's write-protect bit (on a page not yet mapped there, a
 * marker that the next fault honours; hole punching keeps it), the mapping
 * itself stays read-write and whole. A write to a protected page, by the
 * program, is a SIGBUS (BUS_ADRERR) in its thread; by the kernel on its
 * behalf (a system call), EFAULT, as for a page mprotect made read-only.
 *
 * rtl_pt_protect runs in signal handlers: one ioctl. */
#include "core/prot/pagetable.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/util/page.h"
#include "core/util/uffd.h"

#define PAGE rtl_page_size()
#define FEATURES (RTL_UFFD_FEATURE_SIGBUS | RTL_UFFD_FEATURE_WP_HUGETLBFS_SHMEM)

static int uffd = -1;

/* A descriptor with FEATURES enabled, or -1 with errno. */
static int open_enabled(void)
{
	int fd = rtl_uffd_open(), e;

	if (fd >= 0 && rtl_uffd_api(fd, FEATURES, NULL) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The ioctls' arguments, off the stack: a trap handler may run on an
 * alternate stack the program carved from a block the preload routes, and
 * a pointer there is one the system-call interposition must check first
 * (a SIGSYS, a signal frame more on a stack that may have no room for it:
 * a 10 KiB stack overflowed so). A slot per nesting depth: a handler that
 * interrupts this one between the filling and the call takes the next. */
#define PT_DEPTH 8
union pt_arg {
	struct rtl_uffdio_register reg;
	struct rtl_uffdio_writeprotect wp;
};
static __thread union pt_arg pt_args[PT_DEPTH] __attribute__((tls_model("initial-exec")));
static __thread int pt_depth __attribute__((tls_model("initial-exec")));

/* This call's slot (local past the deepest); *d gets the depth to give
 * back with arg_done. */
static union pt_arg *arg_take(union pt_arg *local, int *d)
{
	*d = pt_depth;
	pt_depth = *d + 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the depth before the slot */
	return *d < PT_DEPTH ? &pt_args[*d] : local;
}

static void arg_done(int d)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pt_depth = d;
}

int rtl_pt_register(uintptr_t at, size_t len)
{
	union pt_arg local, *a;
	int d, r;

	a = arg_take(&local, &d);
	r = rtl_uffd_register_wp_in(uffd, &a->reg, at, len);
	arg_done(d);
	return r;
}

int rtl_pt_protect(uintptr_t at, size_t len, int on)
{
	union pt_arg local, *a;
	int d, r;

	a = arg_take(&local, &d);
	a->wp = (struct rtl_uffdio_writeprotect){
		.range = { at, len },
		.mode = on ? RTL_UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};
	r = ioctl(uffd, RTL_UFFDIO_WRITEPROTECT, &a->wp);
	arg_done(d);
	return r;
}

/* The kernel writes into a page protected this way and fails with EFAULT,
 * and succeeds once the protection is off (uname(2) writes its answer
 * there: no signal needed to see it), on a page of shared memory of its
 * own (shmem, as the views' memfd is). Seven system calls: every process
 * whose policy can trap pays for them at its start. */
static int self_test(char *why, size_t len)
{
	struct utsname *m = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
	                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ok = 0;

	static_assert(sizeof(*m) <= 4096, "uname's answer fits a page");
	if (m == MAP_FAILED) {
		snprintf(why, len, "the probe's mapping failed: %s", strerror(errno));
	} else if (rtl_pt_register((uintptr_t)m, PAGE) < 0 ||
	           rtl_pt_protect((uintptr_t)m, PAGE, 1) < 0) {
		snprintf(why, len, "userfaultfd write-protection of shared memory failed: %s",
		         strerror(errno));
	} else {
		long refused = syscall(SYS_uname, m), taken = -1;

		ok = refused < 0 && errno == EFAULT;
		if (ok && rtl_pt_protect((uintptr_t)m, PAGE, 0) == 0)
			taken = syscall(SYS_uname, m);
		ok = ok && taken == 0 && m->sysname[0] != '\0';
		if (!ok)
			snprintf(why, len, "userfaultfd write-protection failed rtl's "
			                   "self-test (a protected page was written, or "
			                   "stayed protected)");
	}
	if (m != MAP_FAILED)
		munmap(m, PAGE); /* unregisters it */
	return ok ? 0 : -1;
}

static int rtl_pt_open(char *why, size_t len)
{
	uint64_t avail = 0;
	int fd = -1, e;

	/* UFFDIO_API answers once per descriptor: the features asked for at
	 * once (a process's start pays for this probe); only if the kernel
	 * refuses them, a second descriptor to learn what it has. */
	if ((uffd = open_enabled()) >= 0) {
		if (self_test(why, len) == 0)
			return 0;
		close(uffd);
		uffd = -1;
		return -1;
	}
	e = errno;
	if (e == ENOSYS)
		snprintf(why, len, "userfaultfd(2) is not implemented here (ENOSYS: a "
		                   "kernel built without it, or an emulator such as "
		                   "qemu-user)");
	else if (e == EPERM)
		snprintf(why, len, "userfaultfd(2) was refused (EPERM: "
		                   "vm.unprivileged_userfaultfd, or a seccomp filter)");
	else if ((fd = rtl_uffd_open()) < 0 || rtl_uffd_api(fd, 0, &avail) < 0)
		snprintf(why, len, "userfaultfd(2) or UFFDIO_API failed: %s", strerror(e));
	else if ((avail & FEATURES) != FEATURES)
		snprintf(why, len, "the kernel has no userfaultfd write-protection of "
		                   "shared memory with SIGBUS (Linux 5.19)");
	else
		snprintf(why, len, "UFFDIO_API with write-protection failed: %s",
		         strerror(e));
	if (fd >= 0)
		close(fd);
	return -1;
}

int rtl_pt_choose(char *why, size_t len, int keep)
{
	const char *env = secure_getenv("RTL_PROTECT");
	char reason[200];

	if (env && strcmp(env, "mprotect") == 0) {
		snprintf(why, len, "mprotect: chosen by RTL_PROTECT=mprotect");
		return 0;
	}
	if (rtl_pt_open(reason, sizeof(reason)) < 0) {
		snprintf(why, len, "mprotect: %s", reason);
		return 0;
	}
	if (!keep) {
		close(uffd);
		uffd = -1;
	}
	snprintf(why, len, "page tables: userfaultfd write-protection, a write to a "
	                   "protected page is a SIGBUS");
	return 1;
}

int rtl_pt_reopen(void)
{
	if (uffd >= 0)
		close(uffd);
	uffd = open_enabled();
	return uffd < 0 ? -1 : 0;
}
