/* Mapping, releasing and (after fork) privatising the three views. */
#include "core/region/views.h"
#include "core/util/page.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DEFAULT_SIZE ((size_t)64 << 30)
#define PAGE rtl_page_size()
#define COMMIT_STEP ((uint64_t)8 << 20) /* the file grows 8 MiB at a time */

struct rtl_views rtl_views = { .fd = -1 };

/* The file's size. Growers take the mutex so that no ftruncate ever
 * shrinks it under another's; readers need only the atomic. A fork child
 * starts a file of its own with a fresh mutex (rtl_views_fork_child). */
static _Atomic uint64_t committed;
static pthread_mutex_t commit_lock = PTHREAD_MUTEX_INITIALIZER;

/* The gap: offsets [gap_lo, gap_hi) lie between what the bottom has handed
 * out (region_alloc, rtl_reserve) and the top's reservation (the preload's
 * pool). Once the top has memory they are inside the file, yet nothing
 * there is anyone's: RO and RW map them PROT_NONE, so an access that runs
 * down off the pool, or lands there from an address computed across views,
 * faults (ours(), trap.c) instead of populating shared memory. Written
 * under commit_lock; the trap path reads them. Empty until a top
 * reservation (gap_lo == gap_hi). */
static _Atomic uint64_t gap_lo, gap_hi;

/* Give RO and RW their own protection back over [lo, hi), or (closed)
 * none. Under commit_lock. The system call itself: the preload interposes
 * mprotect, and would take the gap for the program's own. */
static int set_gap(uint64_t lo, uint64_t hi, int closed)
{
	if (hi <= lo)
		return 0;
	if (syscall(SYS_mprotect, (void *)rtl_view_addr(RTL_VIEW_RO, lo), hi - lo,
	            closed ? PROT_NONE : PROT_READ) < 0 ||
	    syscall(SYS_mprotect, (void *)rtl_view_addr(RTL_VIEW_RW, lo), hi - lo,
	            closed ? PROT_NONE : PROT_READ | PROT_WRITE) < 0)
		return -1;
	return 0;
}

/* The bottom hands out memory up to end: open the gap's part below it. */
static int open_below(uint64_t end)
{
	uint64_t lo = atomic_load_explicit(&gap_lo, memory_order_relaxed);
	uint64_t hi = atomic_load_explicit(&gap_hi, memory_order_relaxed);

	if (end <= lo || end > hi)
		return 0; /* no gap there, or the top's own memory */
	end = (end + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
	if (end > hi)
		end = hi;
	if (set_gap(lo, end, 0) < 0)
		return -1;
	atomic_store_explicit(&gap_lo, end, memory_order_release);
	return 0;
}

int rtl_views_commit(uint64_t end)
{
	uint64_t want;
	int r = 0;

	if (end <= atomic_load_explicit(&committed, memory_order_acquire) &&
	    !(end > atomic_load_explicit(&gap_lo, memory_order_acquire) &&
	      end <= atomic_load_explicit(&gap_hi, memory_order_acquire)))
		return 0; /* in the file, and not in the gap */
	if (end > rtl_views.size) {
		errno = ENOMEM;
		return -1;
	}
	want = (end + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
	if (want > rtl_views.size)
		want = rtl_views.size;
	pthread_mutex_lock(&commit_lock);
	if (open_below(end) < 0)
		r = -1;
	else if (want > atomic_load(&committed)) {
		if (ftruncate(rtl_views.fd, (off_t)want) == 0)
			atomic_store_explicit(&committed, want, memory_order_release);
		else
			r = -1;
	}
	pthread_mutex_unlock(&commit_lock);
	if (r < 0)
		errno = ENOMEM;
	return r;
}

/* The gap ends this far below the top's reservation: a read a little
 * before a block at the pool's start (a header, a vector block, a scan
 * that stops soon) finds memory there, as it would without rtl, and can
 * populate no more than the slack the file's end leaves above. */
#define GAP_MARGIN COMMIT_STEP

int rtl_views_reserve_top(uint64_t off)
{
	uint64_t lo, hi, end = off > GAP_MARGIN ? off - GAP_MARGIN : 0;
	int r = 0;

	pthread_mutex_lock(&commit_lock);
	lo = atomic_load_explicit(&gap_lo, memory_order_relaxed);
	hi = atomic_load_explicit(&gap_hi, memory_order_relaxed);
	if (lo == hi) {
		/* The first: close what lies between the bottom's memory
		 * and this reservation. */
		lo = (atomic_load(&committed) + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
		if (lo < end && set_gap(lo, end, 1) == 0) {
			atomic_store_explicit(&gap_lo, lo, memory_order_relaxed);
			atomic_store_explicit(&gap_hi, end, memory_order_release);
		}
	} else if (end < hi) {
		/* Another, below the first: the gap ends below it. */
		if (end < lo)
			end = lo;
		if (set_gap(end, hi, 0) < 0)
			r = -1;
		else
			atomic_store_explicit(&gap_hi, end, memory_order_release);
	}
	pthread_mutex_unlock(&commit_lock);
	if (r < 0)
		errno = ENOMEM;
	return r;
}

int rtl_views_in_gap(uintptr_t a)
{
	int view = rtl_view_of(a);
	uint64_t off;

	if (view < 0)
		return 0;
	off = rtl_view_offset(a, view);
	return off >= atomic_load_explicit(&gap_lo, memory_order_acquire) &&
	       off < atomic_load_explicit(&gap_hi, memory_order_acquire);
}

int rtl_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	case 't':
	case 'T':
		shift = 40;
		end++;
		break;
	}
	if ((*end == 'b' || *end == 'B') && shift)
		end++;
	if (*end || (shift && v > (~0ull >> shift)))
		return -1;
	*out = (size_t)(v << shift);
	return 0;
}

/* Under qemu-user, which keeps state for every guest page it maps and
 * grew to 24 GiB on the default views (the machine's OOM killer ended
 * it), the default is QEMU_SIZE. qemu-user is told by the process's name,
 * which the kernel keeps as the emulator's ("qemu-aarch64-st"), where
 * /proc/self/exe, which qemu stands in for, names the guest program; a
 * native qemu-img has both its own name. */
#define QEMU_SIZE ((size_t)1 << 30)

static int under_qemu_user(void)
{
	char buf[64] = "", exe[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1), e;
	const char *name = buf + 6, *base;

	if (fd >= 0)
		close(fd);
	if (n <= 6 || strncmp(buf, "Name:\tqemu-", 11) != 0)
		return 0;
	buf[n] = '\0';
	buf[6 + strcspn(name, "\n")] = '\0';
	e = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (e <= 0)
		return 1;
	exe[e] = '\0';
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	/* The kernel keeps 15 bytes of a name. */
	return strncmp(base, name, 15) != 0;
}

int rtl_views_init(void)
{
	size_t size = under_qemu_user() ? QEMU_SIZE : DEFAULT_SIZE;
	const char *env = secure_getenv("RTL_ARENA_SIZE");
	void *res, *ro, *rw;
	int fd;

	if (env && *env) {
		if (rtl_parse_size(env, &size) < 0 || size < (1u << 20) ||
		    size > ((size_t)1 << 44)) {
			errno = EINVAL;
			return -1;
		}
	}
	size = (size + (1u << 21) - 1) & ~(size_t)((1u << 21) - 1);

	/* Empty: rtl_views_commit grows it as extents are handed out. */
	fd = memfd_create("rtl-views", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	/* One reservation for all three, so the views are adjacent; at rtl's
	 * home if it is free (docs/internals.md, "Views"), else anywhere. */
	res = !RTL_HOME ? MAP_FAILED
	                : mmap((void *)RTL_HOME, RTL_NVIEWS * size, PROT_NONE,
	                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
	                               MAP_FIXED_NOREPLACE,
	                       -1, 0);
	if (res == MAP_FAILED || res != (void *)RTL_HOME) {
		if (res != MAP_FAILED)
			munmap(res, RTL_NVIEWS * size); /* an old kernel's hint */
		res = mmap(NULL, RTL_NVIEWS * size, PROT_NONE,
		           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	}
	if (res == MAP_FAILED)
		goto fail_fd;
	ro = mmap((char *)res + size, size, PROT_READ, MAP_SHARED | MAP_FIXED,
	          fd, 0);
	rw = mmap((char *)res + 2 * size, size, PROT_READ | PROT_WRITE,
	          MAP_SHARED | MAP_FIXED, fd, 0);
	if (ro == MAP_FAILED || rw == MAP_FAILED) {
		munmap(res, RTL_NVIEWS * size);
		goto fail_fd;
	}
	rtl_views.fd = fd;
	rtl_views.size = size;
	rtl_views.base = (uintptr_t)res;
	return 0;

fail_fd:
	close(fd);
	errno = ENOMEM;
	return -1;
}

void rtl_views_release(uint64_t off, size_t len)
{
	char *rw = (char *)rtl_view_base(RTL_VIEW_RW);
	uint64_t lo = (off + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	uint64_t hi = (off + len) & ~(uint64_t)(PAGE - 1);

	if (hi <= lo) {
		memset(rw + off, 0, len);
		return;
	}
	memset(rw + off, 0, lo - off);
	memset(rw + hi, 0, off + len - hi);
	if (fallocate(rtl_views.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
	              (off_t)lo, (off_t)(hi - lo)) < 0)
		memset(rw + lo, 0, hi - lo);
}

/* Copy [off, off+len) of the old memfd into fd, file to file: no view
 * needs to be readable (a region protected in place may have made its home
 * pages PROT_NONE). */
static int copy_range(int fd, off_t off, off_t len)
{
	char buf[16384];

	while (len > 0) {
		off_t in = off, out = off;
		ssize_t n = copy_file_range(rtl_views.fd, &in, fd, &out,
		                            (size_t)len, 0);
		if (n <= 0) {
			/* Old kernels: through a buffer. */
			n = pread(rtl_views.fd, buf,
			          len < (off_t)sizeof(buf) ? (size_t)len : sizeof(buf),
			          off);
			if (n > 0 && pwrite(fd, buf, (size_t)n, off) != n)
				n = -1;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			return -1; /* the file ended early: cannot be */
		off += n;
		len -= n;
	}
	return 0;
}

int rtl_views_fork_child(void)
{
	int fd = memfd_create("rtl-views", MFD_CLOEXEC);
	off_t end = (off_t)atomic_load(&committed), data = 0, hole;
	void *ro, *rw;

	/* A thread of the parent's may have held the mutex: it is not here. */
	pthread_mutex_init(&commit_lock, NULL);
	if (fd < 0 || ftruncate(fd, end) < 0)
		goto fail;
	/* Only the populated extents: the file is sparse. */
	for (;;) {
		data = lseek(rtl_views.fd, data, SEEK_DATA);
		if (data < 0)
			break; /* ENXIO: no more data */
		hole = lseek(rtl_views.fd, data, SEEK_HOLE);
		if (hole < 0)
			hole = end;
		if (copy_range(fd, data, hole - data) < 0)
			goto fail;
		data = hole;
	}
	ro = mmap((void *)rtl_view_base(RTL_VIEW_RO), rtl_views.size, PROT_READ,
	          MAP_SHARED | MAP_FIXED, fd, 0);
	rw = mmap((void *)rtl_view_base(RTL_VIEW_RW), rtl_views.size,
	          PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	if (ro == MAP_FAILED || rw == MAP_FAILED ||
	    set_gap(atomic_load(&gap_lo), atomic_load(&gap_hi), 1) < 0)
		goto fail;
	close(rtl_views.fd);
	rtl_views.fd = fd;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}
