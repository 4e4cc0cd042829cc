/* Mapping, releasing and (after fork) privatising the three views. */
#include "views.h"
#include "page.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

int rtl_views_commit(uint64_t end)
{
	uint64_t want;
	int r = 0;

	if (end <= atomic_load_explicit(&committed, memory_order_acquire))
		return 0;
	if (end > rtl_views.size) {
		errno = ENOMEM;
		return -1;
	}
	want = (end + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
	if (want > rtl_views.size)
		want = rtl_views.size;
	pthread_mutex_lock(&commit_lock);
	if (want > atomic_load(&committed)) {
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

uint64_t rtl_views_committed(void)
{
	return atomic_load_explicit(&committed, memory_order_acquire);
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

int rtl_views_init(void)
{
	size_t size = DEFAULT_SIZE;
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
	if (ro == MAP_FAILED || rw == MAP_FAILED)
		goto fail;
	close(rtl_views.fd);
	rtl_views.fd = fd;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}
