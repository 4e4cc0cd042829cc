/* Faults that are not rtl's, and what an interposer of sigaction and
 * mprotect (the preload) asks of the core: the program's SIGSEGV action set
 * while rtl runs, a fault the view's own mapping allows, the fault filter;
 * and the lookup and release calls of the preload's heap. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/region/placement.h"
#include "core/region/views.h"
#include "core/trap/hooks.h"
#include "interpose/access.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

static _Atomic int prog_calls;
static char *prog_page;

static void prog_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	prog_calls++;
	mprotect((char *)((uintptr_t)si->si_addr & ~(uintptr_t)4095), 4096,
	         PROT_READ | PROT_WRITE);
}

/* Set after rtl started, the program's action is what foreign faults run,
 * reads back, and rtl's handler stays in the kernel. */
TEST(program_action_set_while_rtl_runs)
{
	struct sigaction sa, old, kernel;
	char *x = region_alloc(64, &x); /* rtl starts */

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prog_handler;
	sa.sa_flags = SA_SIGINFO;
	CHECK_EQ(rtl_sigaction(SIGSEGV, &sa, &old), 0);
#if !defined(__SANITIZE_ADDRESS__) /* there, ASan's handler came first */
	CHECK(old.sa_handler == SIG_DFL);
#endif
	CHECK_EQ(rtl_sigaction(SIGSEGV, NULL, &old), 0);
	CHECK(old.sa_sigaction == prog_handler);
	sigaction(SIGSEGV, NULL, &kernel);
	CHECK(kernel.sa_sigaction != prog_handler);
	prog_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
	                 -1, 0);
	poke(prog_page, 1);
	CHECK_EQ(prog_calls, 1);
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	poke(x, 2); /* still rtl's */
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(prog_calls, 1);
}

/* A page of the RW view the program made read-only: the fault is the
 * program's (it used to loop in rtl as a stale trap). */
TEST(fault_the_view_allows_is_the_programs)
{
	struct sigaction sa;
	char *x = region_alloc(8192, &x);
	char *page = (char *)(((uintptr_t)x + 4095) & ~(uintptr_t)4095);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prog_handler;
	sa.sa_flags = SA_SIGINFO;
	rtl_sigaction(SIGSEGV, &sa, NULL);
	CHECK_EQ(mprotect(page, 4096, PROT_READ), 0);
	poke(page, 3);
	CHECK_EQ(prog_calls, 1);
	CHECK_EQ(peek(page), 3);
	CHECK_EQ(stats().traps, 0);
}

static void *claimed_page;
static int claim(void *addr, int write)
{
	return write && (uintptr_t)addr - (uintptr_t)claimed_page < 4096;
}

/* The filter gives a write through the RO view to the program; other
 * faults there stay region traps. */
TEST(filter_claims_for_the_program)
{
	struct sigaction sa;
	char *x = region_alloc(8192, &x);

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prog_handler;
	sa.sa_flags = SA_SIGINFO;
	rtl_sigaction(SIGSEGV, &sa, NULL);
	region_handler(x, grant_handler);
	region_protect(x, PROT_READ);
	claimed_page = (void *)(((uintptr_t)x + 4096) & ~(uintptr_t)4095);
	rtl_hook_fault_filter(claim);
	/* prog_handler opens the RO view's page: the write then succeeds
	 * there, without rtl. */
	poke(claimed_page, 4);
	CHECK_EQ(prog_calls, 1);
	CHECK_EQ(h_calls, 0);
	poke(x, 5); /* the region's first page: rtl's */
	CHECK_EQ(h_calls, 1);
	rtl_hook_fault_filter(NULL);
}

/* A one-shot action runs once, then the default: the process dies. */
static void oneshot_child(void)
{
	struct sigaction sa;
	char *x = region_alloc(64, &x);

	(void)x;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prog_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	rtl_sigaction(SIGSEGV, &sa, NULL);
	prog_page = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
	                 -1, 0);
	poke(prog_page, 1);
	if (prog_calls != 1)
		_exit(3);
	poke(prog_page + 4096, 1);
	_exit(0);
}

TEST(resethand_runs_once)
{
	char err[1024];
	int st = test_run_captured(oneshot_child, err, sizeof(err));

	CHECK(test_died_of(st, SIGSEGV));
}

/* region_find from any view; the preload's heap releases pages. */
TEST(region_find_and_release)
{
	struct region_info r;
	size_t got;
	char *ext = rtl_reserve(1 << 16, &got);
	char *p = ext + 128;

	CHECK(ext != NULL);
	CHECK_EQ(region_find(p, &r), -1);
	CHECK(region_define(p, 100, NULL) == p);
	/* The same byte through the NONE view. */
	CHECK_EQ(region_find(region_view(p + 99, PROT_NONE), &r), 0);
	CHECK(r.base == region_view(p, PROT_NONE));
	CHECK_EQ(r.size, 100);
	CHECK_EQ(r.offset, 99);
	CHECK_EQ(r.prot, PROT_NONE);
	CHECK_EQ(region_find(p + 100 + 64, &r), -1); /* past its span */
	region_free(p);
	CHECK_EQ(region_find(p, &r), -1);
	memset(ext + 4096, 9, 8192);
	CHECK_EQ(rtl_release(ext + 4096, 8192), 0);
	CHECK_EQ(peek(ext + 4096), 0);
	CHECK_EQ(peek(ext + 4096 + 8191), 0);
	CHECK_EQ(rtl_release((void *)&r, 10), -1);
}

/* ---- the hooks the preload's alias mechanism uses ---- */

static char *hook_page;
static _Atomic int hook_calls, hook_writes, hook_sig;

/* Owns faults on hook_page only: opens it and says it handled them. */
static int hook(void *addr, int write, int sig, void *uc)
{
	(void)uc;
	hook_sig = sig;
	if ((char *)addr < hook_page || (char *)addr >= hook_page + 4096)
		return 0;
	hook_calls++;
	hook_writes += write != 0;
	mprotect(hook_page, 4096, PROT_READ | PROT_WRITE);
	return 1;
}

/* A fault outside the views goes to the hook before the program's action;
 * one the hook declines still reaches the program. */
TEST(foreign_hook_before_program_action)
{
	struct sigaction sa;
	char *x = region_alloc(64, &x); /* rtl starts */

	(void)x;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prog_handler;
	sa.sa_flags = SA_SIGINFO;
	CHECK_EQ(rtl_sigaction(SIGSEGV, &sa, NULL), 0);
	hook_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	prog_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rtl_hook_foreign(hook);
	poke(hook_page + 10, 7);
	CHECK_EQ(hook_calls, 1);
	CHECK_EQ(hook_writes, 1);
	CHECK_EQ(hook_sig, SIGSEGV);
	CHECK_EQ(peek(hook_page + 10), 7);
	poke(prog_page, 1); /* declined: the program's */
	CHECK_EQ(prog_calls, 1);
	CHECK_EQ(hook_calls, 1);
	rtl_hook_foreign(NULL);
}

static char *range;
static _Atomic int resolves;

/* The extra range's resolver: grants by mprotect, refuses the last page. */
static void *resolve(const void *p, size_t len, int write)
{
	(void)len;
	resolves++;
	if ((const char *)p >= range + 4096) {
		errno = EFAULT;
		return NULL;
	}
	mprotect(range, 4096, write ? PROT_READ | PROT_WRITE : PROT_READ);
	return (void *)p;
}

/* read(2) into the extra range goes through its resolver first; a refusal
 * is EFAULT with the pipe's data left in it. */
TEST(access_range_resolves_system_call_buffers)
{
	struct region_stats st;
	int fd[2];
	char *x = region_alloc(64, &x);

	range = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rtl_access_set_range(range, 8192, resolve);
	CHECK_EQ(pipe(fd), 0);
	CHECK_EQ(write(fd[1], "abcdef", 6), 6);
	CHECK_EQ(read(fd[0], range + 100, 3), 3);
	CHECK_EQ(resolves, 1);
	CHECK_EQ(peek(range + 101), 'b');
	errno = 0;
	CHECK_EQ(read(fd[0], range + 4096, 3), -1);
	CHECK_EQ(errno, EFAULT);
	CHECK_EQ(resolves, 2);
	CHECK_EQ(read(fd[0], range + 200, 3), 3); /* still there */
	CHECK_EQ(peek(range + 200), 'd');
	CHECK(rtl_views.fd >= 0);
	/* Buffers in the views are counted; the time in traps adds up once
	 * someone asks for it. */
	region_stats(&st);
	CHECK_EQ(st.syscall_buffers, 0);
	CHECK_EQ(st.trap_ns, 0);
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	peek(x); /* a trap, not timed */
	region_stats(&st);
	CHECK_EQ(st.trap_ns, 0);
	h_calls = 0;
	region_time_traps(1);
	region_handler(x, grant_handler);
	region_protect(x, PROT_READ);
	CHECK_EQ(write(fd[1], "gh", 2), 2);
	CHECK_EQ(read(fd[0], x, 2), 2); /* a write access: the handler grants */
	poke(x + 8, 1);                 /* no trap: granted */
	region_protect(x, PROT_NONE);
	poke(x + 9, 1); /* a trap */
	region_stats(&st);
	CHECK_EQ(st.syscall_buffers, 1);
	CHECK_EQ(h_calls, 2);
	CHECK(st.trap_ns > 0);
}

/* The preload's mask hooks (hooks.h): while the hook says the program
 * blocks SIGSEGV, a sent one goes to the hook, not to the program; a fault
 * gets the default action whatever the program's handler; region traps
 * never ask. */
static _Atomic int held_code = 1;
static int say_blocked(const siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code <= 0)
		held_code = si->si_code;
	return 1;
}

static void fault_while_blocked(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prog_handler;
	sa.sa_flags = SA_SIGINFO;
	rtl_sigaction(SIGSEGV, &sa, NULL);
	rtl_hook_blocked(say_blocked);
	prog_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	poke(prog_page, 1);
	_exit(0); /* the program's handler would have let it go on */
}

TEST(blocked_hook_holds_sent_and_ends_faults)
{
	struct sigaction sa;
	char *x = region_alloc(64, &x), err[256];

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = prog_handler;
	sa.sa_flags = SA_SIGINFO;
	CHECK_EQ(rtl_sigaction(SIGSEGV, &sa, NULL), 0);
	rtl_hook_blocked(say_blocked);
	raise(SIGSEGV);
	CHECK_EQ(held_code, SI_TKILL);
	CHECK_EQ(prog_calls, 0);
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	poke(x, 2); /* a region trap: rtl's, blocked or not */
	CHECK_EQ(h_calls, 1);
	rtl_hook_blocked(NULL);
	raise(SIGSEGV);
	CHECK_EQ(prog_calls, 1);
	CHECK(test_died_of(test_run_captured(fault_while_blocked, err, sizeof(err)),
	                   SIGSEGV));
}
