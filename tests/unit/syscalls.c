/* System calls on region memory, in the manner of libsigsegv's efault
 * tests: the kernel's access is resolved like a trap before the call, a
 * refusal is EFAULT with no side effect. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/region/placement.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

static int pipe_with(const char *data, int fds[2])
{
	static int ordinary[2];
	if (pipe(ordinary) < 0)
		return -1;
	fds[0] = ordinary[0];
	fds[1] = ordinary[1];
	return (int)write(fds[1], data, strlen(data));
}

/* read() into a read-only region: the handler sees one write, grants it,
 * and the data lands. */
TEST(read_into_readonly_region)
{
	char *buf = region_alloc(64, &buf);
	int fds[2];

	CHECK(buf != NULL);
	region_handler(buf, grant_handler);
	region_protect(buf, PROT_READ);
	CHECK_EQ(pipe_with("hello", fds), 5);
	CHECK_EQ(read(fds[0], buf, 64), 5);
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(h_writes, 1);
	CHECK_EQ(memcmp(buf, "hello", 5), 0);
	/* Granted: a second read needs no handler. */
	CHECK_EQ(write(fds[1], "again", 5), 5);
	CHECK_EQ(read(fds[0], buf, 64), 5);
	CHECK_EQ(h_calls, 1);
}

/* write() from a PROT_NONE region: one read access. */
TEST(write_from_none_region)
{
	char *buf = region_alloc(64, &buf);
	char out[16] = { 0 };
	int fds[2];

	CHECK(buf != NULL);
	memcpy(buf, "region", 6);
	region_handler(buf, grant_handler);
	region_protect(buf, PROT_NONE);
	CHECK_EQ(pipe(fds), 0);
	CHECK_EQ(write(fds[1], buf, 6), 6);
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(h_reads, 1);
	CHECK_EQ(read(fds[0], out, sizeof(out)), 6);
	CHECK_EQ(memcmp(out, "region", 6), 0);
}

static void refuse(rtl_trap_t *t)
{
	(void)t;
	h_calls++;
}

/* A handler that refuses: EFAULT, and the pipe still holds its data. */
TEST(refused_read_is_efault_and_consumes_nothing)
{
	char *buf = region_alloc(64, &buf);
	char out[16];
	int fds[2];

	CHECK(buf != NULL);
	region_handler(buf, refuse);
	region_protect(buf, PROT_READ);
	CHECK_EQ(pipe_with("kept", fds), 4);
	errno = 0;
	CHECK_EQ(read(fds[0], buf, 64), -1);
	CHECK_EQ(errno, EFAULT);
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(read(fds[0], out, sizeof(out)), 4);
	CHECK_EQ(memcmp(out, "kept", 4), 0);
}

/* Without any handler the call fails with EFAULT, as it would without rtl. */
TEST(no_handler_is_efault)
{
	char *buf = region_alloc(64, &buf);
	int fds[2];

	CHECK(buf != NULL);
	region_protect(buf, PROT_NONE);
	CHECK_EQ(pipe_with("x", fds), 1);
	errno = 0;
	CHECK_EQ(read(fds[0], buf, 1), -1);
	CHECK_EQ(errno, EFAULT);
}

/* readv and writev across two regions at different protections. */
TEST(readv_writev_two_regions)
{
	char *a = region_alloc(8, &a), *b = region_alloc(8, &b);
	char out[16] = { 0 };
	int fds[2];

	CHECK(a && b);
	region_handler(NULL, grant_handler);
	region_protect(a, PROT_READ);
	region_protect(b, PROT_NONE);
	CHECK_EQ(pipe_with("abcdefgh", fds), 8);
	struct iovec in[2] = { { a, 4 }, { b, 4 } };
	CHECK_EQ(readv(fds[0], in, 2), 8);
	CHECK_EQ(h_writes, 2);
	CHECK_EQ(memcmp(a, "abcd", 4), 0);
	CHECK_EQ(memcmp(b, "efgh", 4), 0);
	region_protect(a, PROT_NONE);
	region_protect(b, PROT_READ);
	struct iovec outv[2] = { { b, 4 }, { a, 4 } };
	CHECK_EQ(writev(fds[1], outv, 2), 8);
	CHECK_EQ(h_reads, 1); /* only a, at NONE, traps for a read */
	CHECK_EQ(read(fds[0], out, sizeof(out)), 8);
	CHECK_EQ(memcmp(out, "efghabcd", 8), 0);
}

/* One buffer covering a region and the memory after it that is no
 * region (inside an extent rtl handed out). */
TEST(buffer_spanning_region_and_plain_memory)
{
	size_t got;
	char *ext = rtl_reserve(4096, &got), *r;
	int fds[2];

	CHECK(ext != NULL);
	r = region_define(ext, 100, NULL);
	CHECK(r == ext);
	region_handler(r, grant_handler);
	region_protect(r, PROT_READ); /* no pointer registered: r stays RW */
	CHECK_EQ(pipe(fds), 0);
	char data[1000];
	memset(data, 'z', sizeof(data));
	CHECK_EQ(write(fds[1], data, sizeof(data)), 1000);
	CHECK_EQ(read(fds[0], ext, 1000), 1000);
	CHECK_EQ(h_calls, 0);                   /* through the RW view: allowed, no trap */
	char *ro = region_view(ext, PROT_READ); /* the same bytes, read-only */
	CHECK_EQ(write(fds[1], data, sizeof(data)), 1000);
	CHECK_EQ(read(fds[0], ro, 1000), 1000);
	CHECK_EQ(h_calls, 1); /* the region asked once; the rest is plain */
	CHECK_EQ(h_writes, 1);
	CHECK_EQ(ext[999], 'z');
}

/* A stale pointer: the region is RW, the buffer pointer still in NONE. */
TEST(stale_buffer_healed_without_handler)
{
	char *buf = region_alloc(64, &buf), *stale;
	int fds[2];

	CHECK(buf != NULL);
	region_handler(buf, grant_handler);
	region_protect(buf, PROT_NONE);
	stale = buf;
	region_protect(buf, RW);
	CHECK_EQ(pipe_with("s", fds), 1);
	CHECK_EQ(read(fds[0], stale, 1), 1);
	CHECK_EQ(h_calls, 0);
	CHECK_EQ(stats().stale_traps, 1);
	CHECK_EQ(buf[0], 's');
}

/* Result buffers: stat, clock_gettime, pipe, getrandom, poll, socketpair,
 * recv and send, recvmsg and sendmsg, each with its buffer in a region. */
TEST(result_buffers_in_regions)
{
	struct stat *st = region_alloc(sizeof(*st), &st);
	struct timespec *ts = region_alloc(sizeof(*ts), &ts);
	int *fds = region_alloc(2 * sizeof(int), &fds);
	unsigned char *rnd = region_alloc(32, &rnd);
	struct pollfd *pf = region_alloc(sizeof(*pf), &pf);
	char *msgbuf = region_alloc(32, &msgbuf);
	int sv[2];

	CHECK(st && ts && fds && rnd && pf && msgbuf);
	region_handler(NULL, grant_handler);
	region_protect(st, PROT_NONE);
	CHECK_EQ(stat("/", st), 0);
	CHECK(S_ISDIR(st->st_mode));
	region_protect(ts, PROT_READ);
	CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, ts), 0);
	CHECK(ts->tv_sec > 0 || ts->tv_nsec > 0);
	region_protect(fds, PROT_READ);
	CHECK_EQ(pipe(fds), 0);
	CHECK(fds[0] > 2 && fds[1] > 2);
	region_protect(rnd, PROT_NONE);
	CHECK_EQ(getrandom(rnd, 32, 0), 32);
	CHECK_EQ(write(fds[1], "p", 1), 1);
	pf->fd = fds[0];
	pf->events = POLLIN;
	region_protect(pf, PROT_READ);
	CHECK_EQ(poll(pf, 1, 1000), 1);
	CHECK(pf->revents & POLLIN);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	memcpy(msgbuf, "sent", 4);
	region_protect(msgbuf, PROT_NONE);
	CHECK_EQ(send(sv[0], msgbuf, 4, 0), 4);
	region_protect(msgbuf, PROT_READ);
	CHECK_EQ(recv(sv[1], msgbuf + 8, 4, 0), 4);
	CHECK_EQ(memcmp(msgbuf + 8, "sent", 4), 0);
	struct iovec iov = { NULL, 4 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	region_protect(msgbuf, PROT_NONE);
	iov.iov_base = msgbuf; /* a copy taken after the protection change */
	CHECK_EQ(sendmsg(sv[0], &mh, 0), 4);
	region_protect(msgbuf, PROT_READ);
	iov.iov_base = msgbuf + 16;
	CHECK_EQ(recvmsg(sv[1], &mh, 0), 4);
	CHECK_EQ(memcmp(msgbuf + 16, "sent", 4), 0);
	/* One handler call per protected buffer, each granted at its first
	 * access: stat, clock_gettime, pipe, getrandom, poll, send, recv,
	 * sendmsg, recvmsg. */
	CHECK_EQ(h_calls, 9);
}

/* Buffers outside the views go straight through. */
TEST(ordinary_buffers_untouched)
{
	char buf[8];
	int fds[2];

	region_alloc(8, NULL); /* rtl is up */
	CHECK_EQ(pipe_with("plain", fds), 5);
	CHECK_EQ(read(fds[0], buf, sizeof(buf)), 5);
	CHECK_EQ(stats().traps, 0);
}

/* The _FORTIFY_SOURCE forms a fortified program calls where the compiler
 * knows the buffer's size (core/sys_fortify.c). */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
size_t __fread_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
char *__getcwd_chk(char *buf, size_t size, size_t buflen);

TEST(fortified_forms_resolve_like_the_plain_calls)
{
	char *buf = region_alloc(4096, &buf), cwd[4096];
	int fds[2], sv[2];
	FILE *f;

	CHECK(buf != NULL);
	region_handler(buf, grant_handler);
	region_protect(buf, PROT_READ);
	CHECK_EQ(pipe_with("fortified", fds), 9);
	CHECK_EQ(__read_chk(fds[0], buf, 64, 4096), 9);
	CHECK_EQ(h_writes, 1);
	CHECK_EQ(memcmp(buf, "fortified", 9), 0);

	region_protect(buf, PROT_READ);
	CHECK((f = fopen("/proc/self/exe", "rb")) != NULL);
	CHECK_EQ(__fread_chk(buf, 4096, 1, 4, f), 4);
	fclose(f);
	CHECK_EQ(h_writes, 2);
	CHECK_EQ(memcmp(buf, "\177ELF", 4), 0);

	region_protect(buf, PROT_READ);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	CHECK_EQ(send(sv[0], "sock", 4, 0), 4);
	CHECK_EQ(__recv_chk(sv[1], buf + 100, 4, 4096 - 100, 0), 4);
	CHECK_EQ(h_writes, 3);
	CHECK_EQ(memcmp(buf + 100, "sock", 4), 0);

	/* The result is the pointer passed (buf, bound, has moved since). */
	region_protect(buf, PROT_READ);
	CHECK(__getcwd_chk(buf, 4096, 4096) != NULL);
	CHECK_EQ(h_writes, 4);
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_EQ(strcmp(buf, cwd), 0);
}

static void read_past_buffer(void)
{
	char *buf = region_alloc(64, NULL);
	int fds[2] = { -1, -1 };

	pipe_with("0123456789", fds);
	__read_chk(fds[0], buf, 65, 64);
	_exit(0); /* not reached */
}

/* A size past the buffer fails as glibc's would: SIGABRT, no read. */
TEST(fortified_overflow_still_aborts)
{
	char err[512];
	int st = test_run_captured(read_past_buffer, err, sizeof(err));

	CHECK(test_died_of(st, SIGABRT));
	CHECK(strstr(err, "buffer overflow detected") != NULL);
}

/* An alternate signal stack in a region protected in place, read-only (a
 * stack malloc'ed under the preload): the kernel writes signal frames there
 * later, so the stack is resolved as a write when it is set, the kernel
 * gets the RW view, and the program is told back its own address. */
static volatile uintptr_t on_stack_at;

static void on_usr1(int sig)
{
	int local;

	(void)sig;
	on_stack_at = (uintptr_t)&local;
}

TEST(sigaltstack_in_a_readonly_region)
{
	char *x = region_alloc(64 << 10, NULL);
	char *ro = region_view(x, PROT_READ);
	stack_t ss = { .ss_sp = ro, .ss_size = 64 << 10 }, old;
	struct sigaction sa;

	CHECK_EQ(region_protect_in_place(ro, PROT_READ), 0);
	region_handler(ro, grant_handler);
	CHECK_EQ(sigaltstack(&ss, NULL), 0);
	CHECK_EQ(h_writes, 1); /* resolved as the kernel's write */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
	CHECK_EQ(raise(SIGUSR1), 0); /* without the RW view: death by SIGSEGV */
	CHECK(on_stack_at - (uintptr_t)x < (64 << 10) ||
	      on_stack_at - (uintptr_t)ro < (64 << 10));
	CHECK_EQ(sigaltstack(NULL, &old), 0);
	CHECK(old.ss_sp == ro);
}
