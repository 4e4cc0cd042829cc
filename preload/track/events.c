/* events = traps, streamed: each trap takes the next place of a ring
 * (an index claimed with a compare-and-swap, never past what is written
 * out, so a claimed place is always filled), fills it and marks it with
 * its index. The thread that finds the ring half full and can take the
 * flush flag (never waits for it) writes the run of marked places from
 * the last one written into the process's record file, as RTL_TRACK_EVENTS
 * records (format.h); the file is opened at start (rtl_events_start). A trap that
 * finds the ring full is counted and not recorded: the program never
 * waits for the disk. Memory stays the ring's, whatever the run's length.
 *
 * rtl_events_add runs in the SIGSEGV handler (and flushes there): no
 * malloc, no stdio, no lock anyone waits on; write(2) and open(2) are
 * async-signal-safe. */
#include "preload/track/events.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/util/clock.h"
#include "core/util/relax.h"
#include "preload/engine/engine.h"
#include "preload/shim/next.h"
#include "preload/track/format.h"

#define RING (1u << 16)       /* places: 1.5 MiB of events */
#define FLUSH_AT (RING / 2)   /* a flush when this many wait */
#define RECORD_MAX (RING / 4) /* events in one record: 384 KiB */

/* One event as the record holds it (format.h). */
struct ev {
	uint64_t t_ns;
	uint32_t site_write; /* site slot, bit 31: a write */
	uint32_t tid;
	uint32_t offset; /* both saturate at UINT32_MAX */
	uint32_t size;
};
_Static_assert(sizeof(struct ev) == RTL_TRACK_EVENT_BYTES, "an event is 24 bytes");

static struct ev *ring;
static _Atomic uint64_t *mark;               /* index + 1 of the event in each place */
static _Atomic uint64_t claimed, written;    /* indexes: places taken, written out */
static _Atomic uint64_t seen, lost, in_file; /* traps; not recorded; in the file */
static _Atomic int flushing, closed;
static int fd = -1, failed; /* failed: the file is gone; count, don't write */
static dev_t fd_dev;
static ino_t fd_ino;
static pid_t fd_pid; /* the process that opened it */
static char tmp_name[4096];
static rtl_events_open_fn opener;
static RTL_TLS uint32_t my_tid;

int rtl_events_init(void)
{
	if (ring)
		return 0;
	ring = mmap(NULL, RING * sizeof(*ring), PROT_READ | PROT_WRITE,
	            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	mark = mmap(NULL, RING * sizeof(*mark), PROT_READ | PROT_WRITE,
	            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ring == MAP_FAILED || mark == MAP_FAILED) {
		if (ring != MAP_FAILED)
			munmap(ring, RING * sizeof(*ring));
		if (mark != MAP_FAILED)
			munmap(mark, RING * sizeof(*mark));
		ring = NULL;
		return -1;
	}
	return 0;
}

void rtl_events_set_opener(rtl_events_open_fn open_record)
{
	opener = open_record;
}

static uint32_t clamp32(size_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Whether fd is still the file it opened: a program may close every
 * descriptor it did not open (closefrom) and reuse the number; then
 * nothing more is written, rather than into the program's file. */
/* What the system calls of a flush point at is here, not on the stack: a
 * trap handler may run on an alternate signal stack carved from a block
 * rtl routes (ruby's), where each pointer argument is one the system-call
 * interposition checks first (a SIGSYS, a signal frame more). The flush
 * flag's holder alone uses them. */
static struct stat st_now;
static uint32_t hdr[4];
static struct iovec iov[2];

static int still_ours(void)
{
	return fstat(fd, &st_now) == 0 && st_now.st_dev == fd_dev && st_now.st_ino == fd_ino;
}

/* The record's file, opened out of any signal handler (at start, in a
 * forked child, after a failed exec): opening it takes the record's paths
 * and a few KiB of stack. Under the flush flag. */
static int open_file(void)
{
	if (fd >= 0 || failed)
		return fd >= 0 && !failed ? 0 : -1;
	if (!opener || (fd = opener(tmp_name, sizeof(tmp_name))) < 0) {
		failed = 1;
		return -1;
	}
	if (fstat(fd, &st_now) < 0) {
		failed = 1;
		return -1;
	}
	fd_dev = st_now.st_dev;
	fd_ino = st_now.st_ino;
	fd_pid = getpid();
	return 0;
}

void rtl_events_start(void)
{
	int zero = 0;

	if (!ring || !opener || !atomic_compare_exchange_strong(&flushing, &zero, 1))
		return;
	open_file();
	atomic_store(&flushing, 0);
}

/* Write all of iov (n parts) to fd; 0, or -1 (the file is then given up). */
static int put(struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Write the marked run from the last written, RECORD_MAX at a time; the
 * caller holds the flush flag. */
static void flush(void)
{
	uint64_t from = atomic_load_explicit(&written, memory_order_relaxed);
	uint64_t to = from, end = atomic_load_explicit(&claimed, memory_order_acquire);

	while (to < end && atomic_load_explicit(&mark[to % RING], memory_order_acquire) == to + 1)
		to++;
	while (from < to) {
		uint64_t n = to - from, at = from % RING;

		if (n > RECORD_MAX)
			n = RECORD_MAX;
		if (n > RING - at)
			n = RING - at; /* the ring's end: the rest is the next record */
		hdr[0] = RTL_TRACK_EVENTS;
		hdr[1] = (uint32_t)(8 + n * sizeof(*ring));
		hdr[2] = (uint32_t)n;
		hdr[3] = (uint32_t)sizeof(*ring);
		iov[0] = (struct iovec){ hdr, sizeof(hdr) };
		iov[1] = (struct iovec){ &ring[at], n * sizeof(*ring) };
		if (failed || fd < 0 || !still_ours() || put(iov, 2) < 0) {
			failed = 1;
			atomic_fetch_add_explicit(&lost, n, memory_order_relaxed);
		} else {
			atomic_fetch_add_explicit(&in_file, n, memory_order_relaxed);
		}
		from += n;
		atomic_store_explicit(&written, from, memory_order_release);
	}
}

static int try_flush(void)
{
	int zero = 0;

	if (!atomic_compare_exchange_strong(&flushing, &zero, 1))
		return 0;
	flush();
	atomic_store_explicit(&flushing, 0, memory_order_release);
	return 1;
}

void rtl_events_add(uint32_t site, size_t offset, size_t size, int write)
{
	uint64_t i = atomic_load_explicit(&claimed, memory_order_relaxed);

	if (!ring)
		return;
	atomic_fetch_add_explicit(&seen, 1, memory_order_relaxed);
	if (atomic_load_explicit(&closed, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
		return;
	}
	do {
		/* i may be older than written (a flush since it was read):
		 * then the compare-and-swap fails and reads it again. */
		uint64_t w = atomic_load_explicit(&written, memory_order_acquire);

		if (i >= w && i - w >= RING) {
			atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
			return;
		}
	} while (!atomic_compare_exchange_weak(&claimed, &i, i + 1));
	/* From here to the mark, a place is claimed and not filled: a flush
	 * stops before it. A handler nested here that never returns (a
	 * siglongjmp out of it) would stop the flushes for good; the traps
	 * after are then counted as lost. */
	if (!my_tid)
		my_tid = (uint32_t)gettid();
	ring[i % RING] = (struct ev){
		.t_ns = rtl_now_ns() - rtl_engine.start_ns,
		.site_write = (site & 0x7fffffffu) | (write ? 0x80000000u : 0),
		.tid = my_tid,
		.offset = clamp32(offset),
		.size = clamp32(size),
	};
	atomic_store_explicit(&mark[i % RING], i + 1, memory_order_release);
	if (i + 1 >= atomic_load_explicit(&written, memory_order_relaxed) + FLUSH_AT)
		try_flush();
}

static void name_into(char *tmp, size_t len)
{
	size_t n = strlen(tmp_name);

	if (n >= len)
		n = len - 1;
	memcpy(tmp, tmp_name, n);
	tmp[n] = '\0';
}

/* Take the flush flag, waiting at most 100 ms for a thread writing now
 * (it ends its write within a few milliseconds): 0 if it could not. */
static int take_flag(void)
{
	uint64_t until = rtl_now_ns() + 100 * 1000 * 1000;

	do {
		int zero = 0;

		if (atomic_compare_exchange_strong(&flushing, &zero, 1))
			return 1;
		rtl_cpu_relax();
	} while (rtl_now_ns() < until);
	return 0;
}

/* Give the file up: its events counted as lost, its name removed. */
static void give_up_file(void)
{
	atomic_fetch_add(&lost, atomic_load(&in_file));
	atomic_store(&in_file, 0);
	if (fd >= 0 && still_ours()) {
		unlink(tmp_name);
		close(fd);
	}
	fd = -1;
}

int rtl_events_finish(char *tmp, size_t len)
{
	atomic_store(&closed, 1); /* from now on, traps are counted only */
	/* A thread stopped for good in a flush (this thread, in a fatal
	 * signal) keeps the flag: the record goes to a new file without the
	 * events, which are counted as lost. */
	if (!take_flag()) {
		atomic_fetch_add(&lost, atomic_load(&claimed) - atomic_load(&written));
		atomic_fetch_add(&lost, atomic_load(&in_file));
		return opener ? opener(tmp, len) : -1;
	}
	if (ring) {
		/* Places claimed and not yet marked are filled within
		 * microseconds; what is still unmarked after a millisecond, or
		 * claimed since, is lost. */
		uint64_t end = atomic_load(&claimed), until = rtl_now_ns() + 1000 * 1000;

		do
			flush();
		while (atomic_load(&written) < end && rtl_now_ns() < until);
		atomic_fetch_add(&lost, atomic_load(&claimed) - atomic_load(&written));
		if (fd < 0 && !failed)
			open_file(); /* not opened at start: now */
	}
	if (fd >= 0 && !failed && still_ours()) {
		name_into(tmp, len);
		return fd;
	}
	/* The file failed (a write error, or another's now): the record goes
	 * to a new one, and what the lost one held is counted. */
	give_up_file();
	failed = 1;
	return opener ? opener(tmp, len) : -1;
}

void rtl_events_counts(uint64_t *seen_out, uint64_t *lost_out)
{
	*seen_out = atomic_load(&seen);
	*lost_out = atomic_load(&lost);
}

void rtl_events_exec(void)
{
	/* A vfork child shares this memory, and the file is its parent's. */
	if (fd < 0 || getpid() != fd_pid || !take_flag())
		return;
	/* The record of an image that execs is not written: its file goes. */
	give_up_file();
	failed = 0;
	atomic_store(&flushing, 0);
}

void rtl_events_forked(void)
{
	/* The parent's file stays the parent's: its descriptor is closed
	 * here, and this process opens its own. Numbering goes on from the
	 * parent's, so the parent's marks match no new index. */
	if (fd >= 0 && still_ours())
		close(fd); /* else the number is the program's now */
	fd = -1;
	failed = 0;
	my_tid = 0;
	atomic_store(&written, atomic_load(&claimed));
	atomic_store(&seen, 0);
	atomic_store(&lost, 0);
	atomic_store(&in_file, 0);
	atomic_store(&flushing, 0);
	atomic_store(&closed, 0);
	rtl_events_start(); /* this process's own file */
}
