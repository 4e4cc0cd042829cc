/* Regions protected in place (core/inplace.c): pointers never leave the home
 * view, the protection is on the home view's pages. What swizzling cannot
 * give code whose pointer copies rtl cannot reach: a copy kept in memory and
 * a register a trap would have moved still compare equal. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/region/placement.h"
#include "tests/unit/helpers.h"
#include "tests/unit/inplace_helpers.h"
#include "tests/unit/test.h"

/* The end of the loop below lives in memory, where no trap can move it. */
static char *volatile loop_end;

static __attribute__((noinline)) long fill_to_end(char *p, char v)
{
	long n = 0;

	for (; p != loop_end; p++, n++)
		*(volatile char *)p = v;
	return n;
}

/* The loop pointer traps in a register; the end pointer is a copy in
 * memory. Moved to the RW view, the loop pointer would never meet it. */
TEST(pointer_kept_in_memory_still_meets_the_loop_pointer)
{
	char *ro = in_place(3 * PAGE, PROT_READ);

	loop_end = ro + 3 * PAGE;
	CHECK_EQ(fill_to_end(ro, 7), 3 * PAGE);
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(h_writes, 1);
	CHECK_EQ(peek(in_view(ro, RW) + 3 * PAGE - 1), 7);
	CHECK_EQ(stats().stale_traps, 0);
	CHECK_EQ(stats().in_place_protects, 1);
	/* Read-only again: the pages are, so the next write traps again. */
	CHECK_EQ(region_protect(ro, PROT_READ), 0);
	CHECK_EQ(fill_to_end(ro + PAGE, 8), 2 * PAGE);
	CHECK_EQ(h_calls, 2);
	CHECK_EQ(peek(ro), 7);
	CHECK_EQ(peek(ro + PAGE), 8);
}

TEST(none_home_reads_then_writes)
{
	char *rw = region_alloc(2 * PAGE, NULL);
	char *none;

	CHECK(rw != NULL);
	rw[100] = 42;
	region_handler(rw, grant_handler);
	none = in_view(rw, PROT_NONE);
	CHECK_EQ(region_protect_in_place(none, PROT_NONE), 0);
	CHECK_EQ(peek(none + 100), 42);
	CHECK_EQ(h_reads, 1);
	poke(none + 101, 43);
	CHECK_EQ(h_writes, 1);
	CHECK_EQ(peek(rw + 101), 43);
	CHECK_EQ(h_calls, 2);
	/* Down to none: a read traps again. */
	CHECK_EQ(region_protect(none, PROT_NONE), 0);
	CHECK_EQ(peek(none + 101), 43);
	CHECK_EQ(h_calls, 3);
}

/* region_find reports the protection the home pages have. */
TEST(find_reports_the_region_protection_at_home)
{
	char *ro = in_place(PAGE, PROT_READ);
	struct region_info r;

	CHECK_EQ(region_find(ro, &r), 0);
	CHECK_EQ(r.prot, PROT_READ);
	CHECK_EQ(region_protect(ro, RW), 0);
	CHECK_EQ(region_find(ro, &r), 0);
	CHECK_EQ(r.prot, RW);
	CHECK_EQ(region_protect(ro, PROT_NONE), 0);
	CHECK_EQ(region_find(ro, &r), 0);
	CHECK_EQ(r.prot, PROT_NONE);
}

/* System calls: resolved like a trap, the pointer the program holds is
 * the one it keeps. */
TEST(read_into_in_place_region_and_refusal)
{
	char *ro = in_place(2 * PAGE, PROT_READ);
	char out[8];
	int fds[2];

	CHECK_EQ(pipe(fds), 0);
	CHECK_EQ(write(fds[1], "hello", 5), 5);
	CHECK_EQ(read(fds[0], ro + PAGE - 2, 5), 5);
	CHECK_EQ(h_writes, 1);
	CHECK_EQ(memcmp(ro + PAGE - 2, "hello", 5), 0);
	/* A write() from it needs no handler: it is readable. */
	CHECK_EQ(write(fds[1], ro + PAGE - 2, 5), 5);
	CHECK_EQ(read(fds[0], out, 5), 5);
	CHECK_EQ(memcmp(out, "hello", 5), 0);
	CHECK_EQ(h_calls, 1);
	/* Down to none with a handler that refuses: EFAULT, data kept. */
	region_handler(ro, NULL);
	CHECK_EQ(region_protect(ro, PROT_NONE), 0);
	CHECK_EQ(write(fds[1], "kept", 4), 4);
	errno = 0;
	CHECK_EQ(read(fds[0], ro, 4), -1);
	CHECK_EQ(errno, EFAULT);
	CHECK_EQ(read(fds[0], out, 8), 4);
	CHECK_EQ(memcmp(out, "kept", 4), 0);
}

TEST(bad_requests)
{
	char *a = region_alloc(2 * PAGE, NULL), *small, *b;

	CHECK(a != NULL);
	errno = 0;
	CHECK_EQ(region_protect_in_place(a + 64, PROT_READ), -1);
	CHECK_EQ(errno, EINVAL); /* not the region's start */
	errno = 0;
	CHECK_EQ(region_protect_in_place(a, 7), -1);
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK_EQ(region_protect_in_place(a, RW), -1);
	CHECK_EQ(errno, EINVAL); /* the RW view is never a home */
	CHECK_EQ(region_protect_in_place(in_view(a, PROT_READ), RW), 0);
	errno = 0;
	CHECK_EQ(region_protect_in_place(in_view(a, PROT_READ), RW), -1);
	CHECK_EQ(errno, EINVAL); /* twice */
	/* MAP2 would put its pointers in other views. */
	b = a;
	errno = 0;
	CHECK_EQ(region_protect_ptr(&b, PROT_READ), -1);
	CHECK_EQ(errno, EINVAL);
	/* Small regions share a page: not in place. */
	small = region_alloc(100, NULL);
	CHECK(region_alloc(100, NULL) != NULL);
	errno = 0;
	CHECK_EQ(region_protect_in_place(in_view(small, PROT_READ), PROT_READ), -1);
	CHECK_EQ(errno, EBUSY);
	errno = 0;
	CHECK_EQ(region_protect_in_place(NULL, PROT_READ), -1);
	CHECK(errno == EINVAL || errno == ENOENT);
}

/* Whether the kernel lets this process write at p (EFAULT, not a fault):
 * process_vm_writev, or where the system lacks it (qemu-user) read(2) from
 * a pipe holding a zero byte, as a raw system call: this test links the
 * wrappers, whose read would hand the kernel the RW view. */
static int writable(void *p)
{
	char byte = 0;
	struct iovec local = { &byte, 1 }, remote = { p, 1 };
	int fds[2], ok;

	if (process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == 1)
		return 1;
	if (errno != ENOSYS || pipe(fds) < 0)
		return 0;
	ok = write(fds[1], &byte, 1) == 1 && syscall(SYS_read, fds[0], p, 1) == 1;
	close(fds[0]);
	close(fds[1]);
	return ok;
}

/* No region may be defined on an in-place region's pages; after it is
 * freed they are ordinary view pages again. */
TEST(free_gives_the_pages_back)
{
	size_t got = 0;
	char *pool = rtl_reserve(16 * PAGE, &got), *ro, *rw;

	CHECK(pool != NULL && got >= 16 * PAGE);
	rw = region_define(pool, 2 * PAGE, NULL);
	CHECK(rw == pool);
	ro = in_view(rw, PROT_READ);
	CHECK(!writable(ro));
	CHECK_EQ(region_protect_in_place(ro, RW), 0);
	CHECK(writable(ro) && writable(ro + 2 * PAGE));
	/* The slack after the region, on its last page. */
	errno = 0;
	CHECK(region_define(rw + 2 * PAGE + 128, 64, NULL) == NULL);
	CHECK_EQ(errno, EBUSY);
	/* A page further is free for anyone. */
	CHECK(region_define(rw + 3 * PAGE, 64, NULL) != NULL);
	CHECK_EQ(region_free(ro), 0);
	CHECK(!writable(ro) && !writable(ro + 2 * PAGE));
	CHECK(region_define(rw + 2 * PAGE + 128, 64, NULL) != NULL);
}

static long mappings(void)
{
	char buf[4096];
	long lines = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY);

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

/* Regions come and go; the mappings they split are merged back. */
TEST(freed_regions_leave_no_mappings_behind)
{
	static const int prots[] = { PROT_NONE, PROT_READ, RW };
	char *keep[64];
	long before = 0;

	for (int round = 0; round < 100; round++) {
		/* After a first round: the allocators have their memory. */
		if (round == 1)
			before = mappings();
		for (int i = 0; i < 64; i++) {
			int prot = prots[(round + i) % 3];

			keep[i] = in_place((size_t)(1 + i % 3) * PAGE, prot);
			/* A protection other than home's: a split mapping. */
			CHECK_EQ(region_protect(keep[i], prot == RW ? PROT_NONE : RW), 0);
		}
		for (int i = 0; i < 64; i++)
			CHECK_EQ(region_free(keep[i]), 0);
	}
	printf("# mappings: %ld after one round, %ld after 100\n", before,
	       mappings());
	CHECK(mappings() < before + 16);
}

static int ended_calls;
static void *ended_data;

static void on_ended(void *data)
{
	ended_calls++;
	ended_data = data;
}

/* For a program that mprotects the pages itself: the region moves
 * pointers again, its pages have their view's protection back. */
TEST(in_place_ends_for_a_range)
{
	char *ro = in_place(2 * PAGE, PROT_READ);
	char *other = in_place(PAGE, PROT_READ);
	int tag;

	region_set_data(ro, &tag);
	poke(ro, 1); /* granted in place: writable pages */
	CHECK(writable(ro));
	CHECK_EQ(rtl_in_place_end(ro, 2 * PAGE, on_ended), 1);
	CHECK_EQ(ended_calls, 1);
	CHECK(ended_data == &tag);
	CHECK(!writable(ro)); /* the RO view's own protection */
	/* Still RW as a region: a write through the old pointer is a stale
	 * trap, healed by moving the register. */
	poke(ro + 1, 2);
	CHECK_EQ(stats().stale_traps, 1);
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(peek(in_view(ro, RW) + 1), 2);
	/* Ended once; the other region is untouched. */
	CHECK_EQ(rtl_in_place_end(in_view(ro, PROT_READ), 2 * PAGE,
	                          on_ended),
	         0);
	/* (The trap may have moved ro itself, a register, to the RW view.) */
	CHECK_EQ(region_protect_in_place(in_view(ro, PROT_READ), PROT_READ), 0);
	poke(other, 3);
	CHECK_EQ(h_calls, 2);
	CHECK_EQ(stats().stale_traps, 1);
}

/* fork: the child's views are a new file; the in-place protection comes
 * along, and neither side sees the other's writes. */
static void fork_keeps(void)
{
	char *ro = in_place(2 * PAGE, PROT_READ);
	char *none = in_place(PAGE, PROT_NONE);
	int status;
	pid_t pid;

	poke(ro, 1); /* granted: the parent's RO pages are writable */
	CHECK_EQ(h_calls, 1);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int ok = peek(ro) == 1;
		poke(ro, 2); /* still granted in the child: no trap */
		ok &= h_calls == 1;
		ok &= peek(none) == 0 && h_calls == 2; /* still protected */
		poke(none, 9);
		ok &= h_calls == 3;
		_exit(ok ? 0 : 1);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(peek(ro), 1);
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(peek(none), 0);
	CHECK_EQ(h_calls, 2);
}

TEST(fork_keeps_protection_and_isolation)
{
	fork_keeps();
}

/* The same for regions whose records lie past the first 2 MiB of records:
 * a forked child finds the regions to carry over by walking the record
 * pool, chunk by chunk. */
TEST(fork_carries_regions_whose_records_are_in_a_later_chunk)
{
	for (int i = 0; i < 20000; i++) /* > 2 MiB of 128-byte records */
		CHECK(region_alloc(16, NULL) != NULL);
	fork_keeps();
}
