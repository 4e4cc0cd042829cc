/* The kernel's side of written bits (wbits_kernel.h): userfaultfd in
 * asynchronous write-protect mode (Linux 6.7) and PAGEMAP_SCAN, opened and
 * probed once; wbits.c keeps the armed pages' counts and scans. Nothing
 * here runs in a signal handler. */
#include "core/dirty/wbits_kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/dirty/wbits.h"
#include "core/region/views.h"
#include "core/util/page.h"

#define PAGE rtl_page_size()

static char why[240];
static int uffd = -1, pagemap = -1;
static _Atomic uint64_t n_protects, n_scans;

void rtl_wbits_say_why(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
}

const char *rtl_wbits_why(void)
{
	return why[0] ? why : "written bits not probed yet";
}

/* ---- the kernel's calls ---- */

int rtl_wbits_kernel_protect(uintptr_t start, uint64_t len, int on)
{
	struct rtl_uffdio_writeprotect wp = {
		.range = { start, len },
		.mode = on ? RTL_UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	atomic_fetch_add_explicit(&n_protects, 1, memory_order_relaxed);
	return ioctl(uffd, RTL_UFFDIO_WRITEPROTECT, &wp);
}

long rtl_wbits_kernel_scan(uintptr_t start, uintptr_t end,
                           struct rtl_page_region *vec, uint64_t n,
                           uint64_t flags, uint64_t *walk_end)
{
	struct rtl_pm_scan_arg a = {
		.size = sizeof(a),
		.flags = flags | RTL_PM_SCAN_CHECK_WPASYNC,
		.start = start,
		.end = end,
		.vec = (uintptr_t)vec,
		.vec_len = n,
		.category_mask = RTL_PAGE_IS_WRITTEN,
		.return_mask = RTL_PAGE_IS_WRITTEN,
	};
	long r = ioctl(pagemap, RTL_PAGEMAP_SCAN, &a);

	atomic_fetch_add_explicit(&n_scans, 1, memory_order_relaxed);
	*walk_end = a.walk_end;
	return r;
}

/* ---- the probe ---- */

/* A uffd with asynchronous write-protection enabled, or -1 (why said). */
static int open_uffd(void)
{
	uint64_t avail = 0, want = RTL_UFFD_FEATURE_WP_ASYNC;
	int fd = rtl_uffd_open(), e;

	if (fd < 0) {
		e = errno;
		if (e == ENOSYS)
			rtl_wbits_say_why("userfaultfd(2) is not implemented here (ENOSYS: a kernel "
			                  "built without it, or an emulator such as qemu-user)");
		else if (e == EPERM)
			rtl_wbits_say_why("userfaultfd(2) was refused (EPERM: "
			                  "vm.unprivileged_userfaultfd, or a seccomp filter)");
		else
			rtl_wbits_say_why("userfaultfd(2) failed: %s", strerror(e));
		return -1;
	}
	/* UFFDIO_API answers once per descriptor: ask with no feature to
	 * learn what the kernel has, then enable on a new one. */
	if (rtl_uffd_api(fd, 0, &avail) < 0) {
		rtl_wbits_say_why("UFFDIO_API failed: %s", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (!(avail & RTL_UFFD_FEATURE_WP_ASYNC)) {
		rtl_wbits_say_why("the kernel has no asynchronous write-protection "
		                  "(UFFD_FEATURE_WP_ASYNC, Linux 6.7)");
		return -1;
	}
	want |= avail & RTL_UFFD_FEATURE_WP_HUGETLBFS_SHMEM;
	if ((fd = rtl_uffd_open()) < 0 || rtl_uffd_api(fd, want, NULL) < 0) {
		rtl_wbits_say_why("UFFDIO_API with asynchronous write-protection failed: %s",
		                  strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* The kernel reports a written page of a shared memfd mapping exactly, and
 * re-arms it: on two pages of a memfd of its own. */
static int self_test(void)
{
	struct rtl_page_region v[2];
	uint64_t walk;
	int mfd = memfd_create("rtl-wbits-probe", MFD_CLOEXEC), ok = 0;
	char *p = MAP_FAILED;

	if (mfd >= 0 && ftruncate(mfd, (off_t)(2 * PAGE)) == 0)
		p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	if (p != MAP_FAILED && rtl_uffd_register_wp(uffd, (uintptr_t)p, 2 * PAGE) == 0 &&
	    rtl_wbits_kernel_protect((uintptr_t)p, 2 * PAGE, 1) == 0) {
		long n, again;

		*(volatile char *)(p + PAGE) = 1;
		n = rtl_wbits_kernel_scan((uintptr_t)p, (uintptr_t)p + 2 * PAGE, v, 2,
		                          RTL_PM_SCAN_WP_MATCHING, &walk);
		again = rtl_wbits_kernel_scan((uintptr_t)p, (uintptr_t)p + 2 * PAGE, v + 1, 1, 0,
		                              &walk);
		ok = n == 1 && v[0].start == (uintptr_t)p + PAGE &&
		     v[0].end == (uintptr_t)p + 2 * PAGE && again == 0;
		if (!ok && n < 0)
			rtl_wbits_say_why("PAGEMAP_SCAN on a registered mapping failed: %s",
			                  strerror(errno));
		else if (!ok)
			rtl_wbits_say_why("the kernel's written bits failed rtl's self-test "
			                  "(a written page not reported exactly)");
	} else {
		rtl_wbits_say_why("userfaultfd write-protection of a memfd mapping failed: %s",
		                  strerror(errno));
	}
	if (p != MAP_FAILED)
		munmap(p, 2 * PAGE); /* unregisters it */
	if (mfd >= 0)
		close(mfd);
	return ok ? 0 : -1;
}

int rtl_wbits_kernel_open(void)
{
	struct rtl_page_region v;
	uintptr_t here = (uintptr_t)&v & ~(uintptr_t)(PAGE - 1);
	struct rtl_pm_scan_arg a = {
		.size = sizeof(a),
		.start = here,
		.end = here + PAGE,
		.vec = (uintptr_t)&v,
		.vec_len = 1,
		.category_mask = RTL_PAGE_IS_WRITTEN,
		.return_mask = RTL_PAGE_IS_WRITTEN,
	};

	if ((uffd = open_uffd()) < 0)
		return -1;
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pagemap < 0) {
		rtl_wbits_say_why("/proc/self/pagemap cannot be opened: %s", strerror(errno));
		return -1;
	}
	/* PAGEMAP_SCAN exists? One page of this stack, nothing checked. */
	if (ioctl(pagemap, RTL_PAGEMAP_SCAN, &a) < 0) {
		if (errno == ENOTTY)
			rtl_wbits_say_why("the kernel has no PAGEMAP_SCAN (Linux 6.7)");
		else
			rtl_wbits_say_why("PAGEMAP_SCAN failed: %s", strerror(errno));
		return -1;
	}
	if (self_test() < 0)
		return -1;
	/* RO and RW side by side: one range, however many mappings. */
	if (rtl_uffd_register_wp(uffd, rtl_view_base(RTL_VIEW_RO), 2 * rtl_views.size) < 0) {
		rtl_wbits_say_why("UFFDIO_REGISTER of rtl's views failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void rtl_wbits_kernel_close(void)
{
	if (uffd >= 0)
		close(uffd);
	if (pagemap >= 0)
		close(pagemap);
	uffd = pagemap = -1;
}

void rtl_wbits_kernel_counts(uint64_t *protects, uint64_t *scans)
{
	*protects = atomic_load(&n_protects);
	*scans = atomic_load(&n_scans);
}
