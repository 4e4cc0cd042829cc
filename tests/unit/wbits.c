/* Which way tracked regions' writes are seen (core/dirty/wbits.c): the
 * backend and why, the fallback to traps when the kernel refuses, the
 * kernel's own writes (read(2) into a tracked region), regions sharing a
 * page, handlers, switching ways, fork, regions protected in place and
 * many regions at once. Linked with the system-call wrappers, as a program
 * that lets the kernel write into regions must be under traps. tests/run.sh
 * runs this file as the kernel allows and with RTL_DIRTY=traps: every
 * result below is the same both ways. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

#include "core/dirty/wbits.h"
#include "tests/unit/dirty_helpers.h"
#include "tests/unit/helpers.h"
#include "tests/unit/inplace_helpers.h"
#include "tests/unit/test.h"

/* The process's way, and a region with no handler takes it. */
TEST(backend_says_why)
{
	const char *why = NULL, *env = getenv("RTL_DIRTY"), *run = getenv("RTL_RUN");
	int b = region_dirty_backend(&why);
	char *x = region_alloc(64, &x);

	CHECK(b == RTL_DIRTY_TRAPS || b == RTL_DIRTY_WRITTEN_BITS);
	CHECK(why != NULL && strlen(why) > 10);
	printf("# %s: %s\n", b == RTL_DIRTY_TRAPS ? "traps" : "written bits", why);
	if (env && !strcmp(env, "traps")) {
		CHECK_EQ(b, RTL_DIRTY_TRAPS);
		CHECK(strstr(why, "RTL_DIRTY=traps") != NULL);
	}
	/* qemu-user has no userfaultfd: the fallback, saying so. */
	if (run && strstr(run, "qemu") && !(env && !strcmp(env, "traps"))) {
		CHECK_EQ(b, RTL_DIRTY_TRAPS);
		CHECK(strstr(why, "ENOSYS") != NULL);
	}
	CHECK(x != NULL);
	CHECK_EQ(region_tracking(x), 0);
	CHECK_EQ(region_track(x, RTL_TRACK_ON), 0);
	CHECK_EQ(region_tracking(x), b);
	CHECK_EQ(region_track(x, RTL_TRACK_OFF), 0);
	CHECK_EQ(region_tracking(x), 0);
	EXPECT_ERR(region_tracking(NULL), EINVAL);
	EXPECT_ERR(region_track(x, 4), EINVAL);
	EXPECT_ERR(region_track(x, -1), EINVAL);
}

/* userfaultfd(2) fails with EPERM from now on (a seccomp filter, as a
 * container's may be). 0, or -1 where seccomp is not to be had. */
static int deny_userfaultfd(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* Where the kernel refuses, tracking falls back to traps and says why;
 * it works all the same. */
TEST(fallback_when_the_kernel_refuses)
{
	const char *why = NULL;
	char *x = region_alloc(200, &x);
	rtl_run_t r[2];
	int denied;

	unsetenv("RTL_DIRTY"); /* the kernel's answer, not the variable's */
	denied = deny_userfaultfd() == 0;
	CHECK(x != NULL);
	CHECK_EQ(region_track(x, RTL_TRACK_ON), 0);
	CHECK_EQ(region_dirty_backend(&why), RTL_DIRTY_TRAPS);
	printf("# %s\n", why);
	if (denied)
		CHECK(strstr(why, "EPERM") != NULL);
	CHECK_EQ(region_tracking(x), RTL_DIRTY_TRAPS);
	CHECK_EQ(region_track(x, RTL_TRACK_WRITTEN), 0); /* asked: not to be had */
	CHECK_EQ(region_tracking(x), RTL_DIRTY_TRAPS);
	poke(x + 150, 3);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(r[0].offset, 150);
}

/* The kernel writes into a tracked region (read(2) from a pipe): the
 * region is dirty and the diff holds the bytes. On traps the wrapper
 * resolves the buffer first (the twin is taken as at a write trap); on
 * written bits the kernel's write sets the page's bit. */
TEST(read_into_a_tracked_region_is_dirty)
{
	static const size_t sizes[] = { 100, 3000, 3 * 4096 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k], at = n / 3, len = n / 3 + 1;
		char *x = region_alloc(n, &x), data[8192];
		void *b[2];
		rtl_run_t r[2];
		int fd[2];

		CHECK(x != NULL && len <= sizeof(data));
		CHECK_EQ(region_track(x, RTL_TRACK_ON), 0);
		for (size_t i = 0; i < len; i++)
			data[i] = (char)(1 + i % 200);
		CHECK_EQ(pipe(fd), 0);
		CHECK_EQ(write(fd[1], data, len), (ssize_t)len);
		CHECK_EQ(read(fd[0], x + at, len), (ssize_t)len);
		close(fd[0]);
		close(fd[1]);
		CHECK(memcmp(x + at, data, len) == 0);
		CHECK_EQ(region_dirty(b, 2, 1), 1);
		CHECK(b[0] == x);
		CHECK_EQ(region_diff(x, r, 2), 1);
		CHECK_EQ(r[0].offset, at);
		CHECK_EQ(r[0].len, len);
		CHECK_EQ(region_free(x), 0);
	}
}

/* Small regions share a page: a write to one marks it alone, and a
 * neighbour's checkpoint (which arms the page again) does not lose it. */
TEST(regions_sharing_a_page)
{
	char *x[8];
	void *b[8];

	for (int i = 0; i < 8; i++) {
		x[i] = region_alloc(100, &x[i]);
		CHECK(x[i] != NULL);
		CHECK_EQ(region_track(x[i], RTL_TRACK_ON), 0);
	}
	poke(x[2] + 5, 1);
	poke(x[5] + 7, 2);
	CHECK_EQ(region_checkpoint(x[5]), 0); /* before any region_dirty */
	CHECK_EQ(region_dirty(b, 8, 1), 1);
	CHECK(b[0] == x[2]);
	CHECK_EQ(region_diff(x[5], NULL, 0), 0);
	poke(x[5] + 8, 3);
	poke(x[6] + 1, 4);
	CHECK_EQ(region_dirty(b, 8, 0), 2);
	CHECK(b[0] == x[5] && b[1] == x[6]);
	/* Written twice in one epoch, marked once; a reset holds till the
	 * checkpoint, as on traps. */
	CHECK_EQ(region_dirty(b, 8, 1), 2);
	poke(x[6] + 2, 5);
	CHECK_EQ(region_dirty(NULL, 0, 0), 0);
	CHECK_EQ(region_diff(x[6], NULL, 0), 1);
	CHECK_EQ(region_checkpoint(x[6]), 0);
	poke(x[6] + 3, 6);
	CHECK_EQ(region_dirty(b, 8, 1), 1);
	CHECK(b[0] == x[6]);
}

/* A handler sees writes: RTL_TRACK_ON gives such a region traps, and
 * RTL_TRACK_WRITTEN written bits where there are (the handler then sees
 * only what the protection makes trap). */
TEST(handlers_and_the_ways_asked)
{
	int b = region_dirty_backend(NULL);
	char *x = region_alloc(300, &x);
	rtl_run_t r[2];

	CHECK(x != NULL);
	CHECK_EQ(region_handler(x, grant_handler), 0);
	CHECK_EQ(region_track(x, RTL_TRACK_ON), 0);
	CHECK_EQ(region_tracking(x), RTL_DIRTY_TRAPS);
	poke(x + 10, 1);
	CHECK_EQ(h_writes, 1);
	/* Switched mid-epoch: the write stays in the diff and the mark. */
	CHECK_EQ(region_track(x, RTL_TRACK_WRITTEN), 0);
	CHECK_EQ(region_tracking(x), b);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
	CHECK_EQ(region_checkpoint(x), 0);
	CHECK_EQ(region_protect(x, RW), 0);
	poke(x + 20, 2); /* writable: no trap either way */
	CHECK_EQ(h_writes, 1);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(r[0].offset, 20);
	/* And back: written bits to traps keeps the epoch's write. */
	CHECK_EQ(region_track(x, RTL_TRACK_TRAPS), 0);
	CHECK_EQ(region_tracking(x), RTL_DIRTY_TRAPS);
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
	CHECK_EQ(region_checkpoint(x), 0);
	poke(x + 30, 3);
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(r[0].offset, 30);
}

/* After fork each process sees its own writes only. */
TEST(fork_each_sees_its_own_writes)
{
	char *x = region_alloc(4096, &x), *y = region_alloc(64, &y);
	int fd[2], st;
	char c;
	pid_t pid;

	CHECK(x && y);
	CHECK_EQ(region_track(x, RTL_TRACK_ON), 0);
	CHECK_EQ(region_track(y, RTL_TRACK_ON), 0);
	CHECK_EQ(pipe(fd), 0);
	pid = fork();
	if (pid == 0) {
		void *b[2];
		int ok;

		/* The parent writes x meanwhile: not this process's. */
		ok = read(fd[0], &c, 1) == 1;
		poke(y + 3, 9);
		ok = ok && region_dirty(b, 2, 1) == 1 && b[0] == y;
		ok = ok && region_diff(x, NULL, 0) == 0;
		_exit(ok ? 0 : 1);
	}
	CHECK(pid > 0);
	poke(x + 4000, 7);
	CHECK_EQ(write(fd[1], "g", 1), 1);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
	CHECK_EQ(region_diff(y, NULL, 0), 0);
	CHECK_EQ(region_diff(x, NULL, 0), 1);
}

/* A region protected in place writes through its home (the RO view's pages
 * raised): seen there too. */
TEST(in_place_region_writes_seen)
{
	char *ro = in_place(2 * PAGE, RW);
	rtl_run_t r[2];
	void *b[1];

	CHECK_EQ(region_track(ro, RTL_TRACK_WRITTEN), 0);
	poke(ro + PAGE + 1, 5);
	CHECK_EQ(region_dirty(b, 1, 1), 1);
	CHECK(b[0] == ro);
	CHECK_EQ(region_diff(ro, r, 2), 1);
	CHECK_EQ(r[0].offset, PAGE + 1);
	CHECK_EQ(region_checkpoint(ro), 0);
	poke(ro + 2, 6);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
	CHECK_EQ(region_diff(ro, r, 2), 1);
	CHECK_EQ(r[0].offset, 2);
}

/* Many regions of two sizes, a few written each epoch: region_dirty lists
 * exactly the changed ones, in tracking order; a free in between. */
TEST(many_regions_few_written)
{
	enum { SMALL = 3000,
	       BIG = 300,
	       N = SMALL + BIG };
	static char *x[N];
	static unsigned char written[N];
	static void *b[N];

	for (int i = 0; i < N; i++) {
		x[i] = region_alloc(i < SMALL ? 48 : 4096, &x[i]);
		CHECK(x[i] != NULL);
		CHECK_EQ(region_track(x[i], RTL_TRACK_ON), 0);
	}
	for (int epoch = 0; epoch < 6; epoch++) {
		size_t want = 0, got;

		memset(written, 0, sizeof(written));
		for (int k = 0; k < N / 100; k++) {
			int i = (int)(rnd() % N);

			if (!x[i])
				continue;
			char *at = x[i] + rnd() % (i < SMALL ? 48 : 4096);

			poke(at, (unsigned char)(peek(at) + 1)); /* a change */
			written[i] = 1;
		}
		if (epoch == 3) { /* freed: forgotten, whatever it was */
			written[7] = 0;
			CHECK_EQ(region_free(x[7]), 0);
			x[7] = NULL;
		}
		for (int i = 0; i < N; i++)
			want += written[i] && x[i];
		got = region_dirty(b, N, 1);
		CHECK_EQ(got, want);
		for (size_t k = 0, i = 0; k < got; k++, i++) {
			while (i < N && !(written[i] && x[i]))
				i++;
			CHECK(i < N && b[k] == x[i]);
			CHECK_EQ(region_checkpoint(b[k]), 0);
		}
		CHECK_EQ(region_dirty(NULL, 0, 0), 0);
	}
}

/* On written bits region_dirty learns the written pages from the kernel:
 * it finds exactly the pages written, and a write takes no trap. */
TEST(written_pages_come_from_the_kernel)
{
	enum { N = 200 };
	static char *x[N];
	static void *b[N];
	struct rtl_wbits_counts before, after;
	uint64_t traps;

	for (int i = 0; i < N; i++) {
		x[i] = region_alloc(4096, &x[i]);
		CHECK(x[i] != NULL);
		CHECK_EQ(region_track(x[i], RTL_TRACK_ON), 0);
	}
	if (!on_wbits(x[0])) {
		printf("# traps: the kernel's bits are not read\n");
		return;
	}
	CHECK_EQ(region_dirty(b, N, 1), 0);
	rtl_wbits_counts(&before);
	traps = stats().traps;
	poke(x[3] + 1, 1);
	poke(x[3] + 2000, 1);
	poke(x[150] + 4095, 1);
	CHECK_EQ(stats().traps, traps);
	CHECK_EQ(region_dirty(b, N, 1), 2);
	rtl_wbits_counts(&after);
	CHECK_EQ(after.pages_written - before.pages_written, 2);
	CHECK(after.scans - before.scans >= 1);
	/* Armed again: nothing new. */
	CHECK_EQ(region_dirty(b, N, 1), 0);
	rtl_wbits_counts(&before);
	CHECK_EQ(before.pages_written, after.pages_written);
}
