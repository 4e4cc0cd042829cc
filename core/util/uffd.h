/* The kernel's userfaultfd and PAGEMAP_SCAN interface, as rtl uses it: the
 * written-bits backend (core/dirty/wbits_kernel.c: asynchronous
 * write-protection, Linux 6.7, and PAGEMAP_SCAN) and the page-table
 * protection backend (core/prot/pagetable.c: write-protection of shared
 * memory that raises SIGBUS, Linux 5.19), from
 * include/uapi/linux/userfaultfd.h and fs.h.
 * Debian 12's headers (Linux 6.1) lack most of it, so the constants and
 * structures are defined here under names of rtl's own (rtl_uffd_*,
 * RTL_PM_*): a system header that has them cannot clash. The sizes and
 * ioctl numbers are checked against the kernel's at compile time; the
 * encoding is asm-generic's, the same on x86-64 and aarch64. */
#ifndef RTL_UTIL_UFFD_H
#define RTL_UTIL_UFFD_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_userfaultfd
#if defined(__x86_64__)
#define SYS_userfaultfd 323
#elif defined(__aarch64__)
#define SYS_userfaultfd 282
#endif
#endif

/* userfaultfd(2) flags (O_CLOEXEC and O_NONBLOCK are fcntl.h's). */
#define RTL_UFFD_USER_MODE_ONLY 1 /* Linux 5.11 */
#define RTL_UFFD_API ((uint64_t)0xAA)

#define RTL_UFFD_FEATURE_SIGBUS (1ull << 7)              /* Linux 4.14 */
#define RTL_UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1ull << 12) /* Linux 5.19 */
#define RTL_UFFD_FEATURE_WP_UNPOPULATED (1ull << 13)     /* Linux 6.4 */
#define RTL_UFFD_FEATURE_WP_ASYNC (1ull << 15)           /* Linux 6.7 */

struct rtl_uffdio_api {
	uint64_t api;
	uint64_t features;
	uint64_t ioctls;
};

struct rtl_uffdio_range {
	uint64_t start;
	uint64_t len;
};

#define RTL_UFFDIO_REGISTER_MODE_WP ((uint64_t)1 << 1)
struct rtl_uffdio_register {
	struct rtl_uffdio_range range;
	uint64_t mode;
	uint64_t ioctls; /* out: the ioctls the range supports */
};

#define RTL_UFFDIO_WRITEPROTECT_MODE_WP ((uint64_t)1 << 0)
struct rtl_uffdio_writeprotect {
	struct rtl_uffdio_range range;
	uint64_t mode;
};

#define RTL_UFFDIO_WRITEPROTECT_BIT 0x06 /* in rtl_uffdio_register.ioctls */
#define RTL_UFFDIO_API _IOWR(0xAA, 0x3F, struct rtl_uffdio_api)
#define RTL_UFFDIO_REGISTER _IOWR(0xAA, 0x00, struct rtl_uffdio_register)
#define RTL_UFFDIO_UNREGISTER _IOR(0xAA, 0x01, struct rtl_uffdio_range)
#define RTL_UFFDIO_WRITEPROTECT \
	_IOWR(0xAA, RTL_UFFDIO_WRITEPROTECT_BIT, struct rtl_uffdio_writeprotect)

/* PAGEMAP_SCAN (fs.h): the page categories, a result, the argument. */
#define RTL_PAGE_IS_WRITTEN (1ull << 1)

struct rtl_page_region {
	uint64_t start;
	uint64_t end; /* exclusive */
	uint64_t categories;
};

#define RTL_PM_SCAN_WP_MATCHING (1ull << 0)
#define RTL_PM_SCAN_CHECK_WPASYNC (1ull << 1)

struct rtl_pm_scan_arg {
	uint64_t size; /* sizeof(struct rtl_pm_scan_arg) */
	uint64_t flags;
	uint64_t start;
	uint64_t end;
	uint64_t walk_end; /* out: where the walk stopped */
	uint64_t vec;
	uint64_t vec_len;
	uint64_t max_pages;
	uint64_t category_inverted;
	uint64_t category_mask;
	uint64_t category_anyof_mask;
	uint64_t return_mask;
};

#define RTL_PAGEMAP_SCAN _IOWR('f', 16, struct rtl_pm_scan_arg)

_Static_assert(sizeof(struct rtl_uffdio_api) == 24, "uffdio_api");
_Static_assert(sizeof(struct rtl_uffdio_register) == 32, "uffdio_register");
_Static_assert(sizeof(struct rtl_uffdio_writeprotect) == 24, "uffdio_writeprotect");
_Static_assert(sizeof(struct rtl_page_region) == 24, "page_region");
_Static_assert(sizeof(struct rtl_pm_scan_arg) == 96, "pm_scan_arg");
_Static_assert(RTL_UFFDIO_API == 0xc018aa3f, "UFFDIO_API");
_Static_assert(RTL_UFFDIO_REGISTER == 0xc020aa00, "UFFDIO_REGISTER");
_Static_assert(RTL_UFFDIO_UNREGISTER == 0x8010aa01, "UFFDIO_UNREGISTER");
_Static_assert(RTL_UFFDIO_WRITEPROTECT == 0xc018aa06, "UFFDIO_WRITEPROTECT");
_Static_assert(RTL_PAGEMAP_SCAN == 0xc0606610, "PAGEMAP_SCAN");

/* ---- the calls both backends make ---- */

/* A userfaultfd for this process's own faults (close-on-exec, never
 * blocking), or -1 with errno. */
static inline int rtl_uffd_open(void)
{
	int fd = (int)syscall(SYS_userfaultfd,
	                      O_CLOEXEC | O_NONBLOCK | RTL_UFFD_USER_MODE_ONLY);

	/* Before Linux 5.11 the flag is unknown: without it, as privileged. */
	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	return fd;
}

/* UFFDIO_API with features (once per descriptor); what the kernel has
 * into *avail if not NULL. 0, or -1 with errno. */
static inline int rtl_uffd_api(int fd, uint64_t features, uint64_t *avail)
{
	struct rtl_uffdio_api a = { .api = RTL_UFFD_API, .features = features };

	if (ioctl(fd, RTL_UFFDIO_API, &a) < 0)
		return -1;
	if (avail)
		*avail = a.features;
	return 0;
}

/* [start, start + len) registered for write-protection, which the kernel
 * must then offer; reg is the ioctl's argument, the caller's memory. 0, or
 * -1 with errno. */
static inline int rtl_uffd_register_wp_in(int fd, struct rtl_uffdio_register *reg,
                                          uintptr_t start, uint64_t len)
{
	*reg = (struct rtl_uffdio_register){
		.range = { start, len },
		.mode = RTL_UFFDIO_REGISTER_MODE_WP,
	};
	if (ioctl(fd, RTL_UFFDIO_REGISTER, reg) < 0)
		return -1;
	if (!(reg->ioctls & (1ull << RTL_UFFDIO_WRITEPROTECT_BIT))) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return 0;
}

static inline int rtl_uffd_register_wp(int fd, uintptr_t start, uint64_t len)
{
	struct rtl_uffdio_register reg;

	return rtl_uffd_register_wp_in(fd, &reg, start, len);
}

#endif
