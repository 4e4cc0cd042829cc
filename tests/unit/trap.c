/* The trap path: stale pointers, deaths with a diagnostic, faults that are
 * not rtl's, nested traps, the decode cache. */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/region/views.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

/* A copy of a pointer taken while the region was NONE traps once the region
 * is RW again; rtl resolves it by swizzling, without the handler. */
TEST(stale_pointer_resolved_and_counted)
{
	char *x = region_alloc(64, &x);
	char *stale;

	CHECK(x != NULL);
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	stale = x; /* unregistered copy into the NONE view */
	region_protect(x, RW);
	CHECK(stale != x);
	poke(stale + 5, 7);
	CHECK_EQ(h_calls, 0);
	CHECK_EQ(stats().stale_traps, 1);
	CHECK_EQ(x[5], 7);
	/* Through RO view, a read of a RW region is no trap at all. */
	region_protect(x, PROT_READ);
	stale = x;
	region_protect(x, RW);
	CHECK_EQ(peek(stale + 5), 7);
	CHECK_EQ(stats().stale_traps, 1);
}

/* A stale pointer whose access the region still forbids goes to the
 * handler like any trap. */
TEST(stale_pointer_forbidden_goes_to_handler)
{
	char *x = region_alloc(64, &x);
	char *stale;

	CHECK(x != NULL);
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	stale = x;
	region_protect(x, PROT_READ);
	poke(stale, 1); /* write through NONE view, region RO: handler */
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(x[0], 1);
}

static void unhandled_write(void)
{
	char *x = region_alloc(64, &x);
	region_protect(x, PROT_READ);
	poke(x + 3, 1);
	_exit(0); /* not reached */
}

TEST(unhandled_trap_dies_with_diagnostic)
{
	char err[8192];
	int st = test_run_captured(unhandled_write, err, sizeof(err));

	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "rtl: unhandled region trap") != NULL);
	CHECK(strstr(err, "write at 0x") != NULL);
	CHECK(strstr(err, "offset 3 of region") != NULL);
	CHECK(strstr(err, "PROT_READ") != NULL);
#if defined(__aarch64__)
	CHECK(strstr(err, "instruction: strb") != NULL);
#else
	CHECK(strstr(err, "instruction: mov") != NULL);
#endif
	CHECK(strstr(err, "unhandled_write") != NULL); /* in the backtrace */
}

static void refuse(rtl_trap_t *t) { (void)t; }

static void refused_read(void)
{
	char *x = region_alloc(64, &x);
	region_handler(x, refuse);
	region_protect(x, PROT_NONE);
	peek(x);
	_exit(0);
}

TEST(handler_that_does_not_grant_dies)
{
	char err[8192];
	int st = test_run_captured(refused_read, err, sizeof(err));

	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "not granted by its handler") != NULL);
	CHECK(strstr(err, "read at") != NULL);
}

static void null_deref(void)
{
	char *x = region_alloc(64, &x);
	CHECK(x != NULL);
	char *volatile null = NULL;
	peek(null + 16);
	_exit(0);
}

/* A fault that is not rtl's dies exactly as before: SIGSEGV, no message.
 * Under AddressSanitizer, "before" is ASan's own report and exit. */
TEST(foreign_fault_still_dies)
{
	char err[4096];
	int st = test_run_captured(null_deref, err, sizeof(err));

	CHECK(strstr(err, "rtl:") == NULL);
#if defined(__SANITIZE_ADDRESS__)
	CHECK(strstr(err, "AddressSanitizer: SEGV") != NULL);
#else
	CHECK(test_died_of(st, SIGSEGV));
#endif
}

static char *foreign_page;
static _Atomic int foreign_calls;
static void foreign_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if ((char *)si->si_addr >= foreign_page &&
	    (char *)si->si_addr < foreign_page + 4096) {
		foreign_calls++;
		mprotect(foreign_page, 4096, PROT_READ | PROT_WRITE);
	}
}

/* A SIGSEGV handler installed before rtl keeps working for its own pages,
 * while rtl handles its regions. */
TEST(foreign_handler_installed_before_runs)
{
	struct sigaction sa;
	char *x;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = foreign_handler;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	foreign_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
	                    -1, 0);
	x = region_alloc(64, &x); /* rtl starts here */
	CHECK(x != NULL);
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	poke(foreign_page, 1);
	CHECK_EQ(foreign_calls, 1);
	peek(x);
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(foreign_calls, 1);
	CHECK_EQ(stats().foreign, 1);
}

/* A trap in the views with no region there dies with a clear message. */
static void none_view_no_region(void)
{
	region_init();
	peek((char *)rtl_view_base(RTL_VIEW_RO) - 64); /* the NONE view's last granule */
	_exit(0);
}

TEST(access_outside_any_region_dies)
{
	char err[8192];
	int st = test_run_captured(none_view_no_region, err, sizeof(err));

	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "outside any region") != NULL);
}

/* A handler that touches another protected region traps inside itself:
 * the nested trap is handled, then the outer one completes. */
static char *inner_region;
static void touch_inner(rtl_trap_t *t)
{
	peek(inner_region); /* nested trap */
	region_protect(t->addr, RW);
}

TEST(nested_trap_in_handler)
{
	char *x = region_alloc(64, &x);
	inner_region = region_alloc(64, &inner_region);

	CHECK(x && inner_region);
	region_handler(x, touch_inner);
	region_handler(inner_region, grant_handler);
	region_protect(x, PROT_NONE);
	region_protect(inner_region, PROT_NONE);
	poke(x, 4);
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(x[0], 4);
	CHECK_EQ(stats().handler_calls, 2);
}

static void always_trap(rtl_trap_t *t)
{
	peek(t->addr); /* traps again, forever */
}

static void runaway(void)
{
	char *x = region_alloc(64, &x);
	region_handler(x, always_trap);
	region_protect(x, PROT_NONE);
	peek(x);
	_exit(0);
}

TEST(runaway_nested_traps_die)
{
	char err[16384];
	int st = test_run_captured(runaway, err, sizeof(err));

	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "nested too deeply") != NULL);
}

/* A handler that itself faults outside rtl's memory: that fault is not
 * rtl's, so the process dies of it as it would have, promptly. */
static void handler_faults(rtl_trap_t *t)
{
	char *volatile null = NULL;
	(void)t;
	peek(null + 8);
}

static void faulting_handler(void)
{
	char *x = region_alloc(64, &x);
	region_handler(x, handler_faults);
	region_protect(x, PROT_NONE);
	peek(x);
	_exit(0);
}

TEST(handler_faulting_on_its_own_dies)
{
	char err[4096];
	int st = test_run_captured(faulting_handler, err, sizeof(err));

#if defined(__SANITIZE_ADDRESS__)
	CHECK(strstr(err, "AddressSanitizer: SEGV") != NULL);
#else
	CHECK(test_died_of(st, SIGSEGV));
#endif
}

/* The same instruction trapping again is decoded once. */
TEST(decode_cache_hits)
{
	char *x = region_alloc(64, &x);
	struct region_stats s0, s1;

	CHECK(x != NULL);
	region_handler(x, grant_handler);
	s0 = stats();
	for (int i = 0; i < 100; i++) {
		region_protect(x, PROT_NONE);
		peek(x);
	}
	s1 = stats();
	CHECK_EQ(h_calls, 100);
	CHECK(s1.decode_misses - s0.decode_misses <= 1);
	CHECK(s1.decode_hits - s0.decode_hits >= 99);
}

#if defined(__x86_64__)
/* A string instruction interrupted mid-way resumes with its count intact:
 * rep movsb from a NONE region into a RO region. (aarch64 has no string
 * instructions; its writeback forms are decoder_forms_aarch64.c's.) */
TEST(rep_movsb_resumes)
{
	char *src = region_alloc(5000, &src), *dst = region_alloc(5000, &dst);
	char *s, *d;
	size_t n = 5000;

	CHECK(src && dst);
	for (int i = 0; i < 5000; i++)
		src[i] = (char)(i * 7);
	region_handler(NULL, grant_handler);
	region_protect(src, PROT_NONE);
	region_protect(dst, PROT_READ);
	s = src;
	d = dst;
	__asm__ volatile("rep movsb"
	                 : "+S"(s), "+D"(d), "+c"(n)
	                 :
	                 : "memory");
	CHECK_EQ(n, 0);
	CHECK_EQ(h_calls, 2);
	CHECK_EQ(memcmp(src, dst, 5000), 0);
	CHECK(d == dst + 5000);
}
#endif
