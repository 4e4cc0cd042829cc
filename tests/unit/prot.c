/* The protection backend (core/prot/prot.c): which backend runs and why;
 * in the page tables, read-only and read-write by a write-protect bit with
 * the mapping left whole, a write to a protected page a SIGBUS that the
 * program's own SIGBUS action receives when no extension claims it, the
 * kernel's writes refused with EFAULT, no access by mprotect and back;
 * outside the span, and under the fallback, mprotect throughout. tests/run.sh
 * runs this file as the kernel allows and with RTL_PROTECT=mprotect. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/prot/prot.h"
#include "core/trap/hooks.h"
#include "core/util/page.h"
#include "tests/unit/test.h"
#include <rtl/region.h>

#define PAGE rtl_page_size()
#define RW (PROT_READ | PROT_WRITE)
#define PAGES 16

static sigjmp_buf back;
static volatile int faults, fault_sig;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	faults++;
	fault_sig = sig;
	siglongjmp(back, 1);
}

/* rtl started, its backend chosen, the program's action for both fault
 * signals on_fault (kept behind rtl's, which claims none of these). */
static int start(void)
{
	struct sigaction sa;
	int b;

	CHECK_EQ(region_init(), 0);
	b = rtl_prot_start();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	CHECK_EQ(rtl_sigaction(SIGSEGV, &sa, NULL), 0);
	CHECK_EQ(rtl_sigaction(SIGBUS, &sa, NULL), 0);
	return b;
}

/* A span of PAGES pages of a memfd of its own, mapped through the backend
 * at prot. */
static char *span(int prot)
{
	int fd = memfd_create("prot-test", MFD_CLOEXEC);
	void *res = mmap(NULL, PAGES * PAGE, PROT_NONE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	CHECK(fd >= 0 && res != MAP_FAILED);
	CHECK_EQ(ftruncate(fd, (off_t)(PAGES * PAGE)), 0);
	rtl_prot_span((uintptr_t)res, PAGES * PAGE);
	CHECK_EQ(rtl_prot_map((uintptr_t)res, PAGES * PAGE, fd, 0, prot), 0);
	return res;
}

/* The signal an access took (0: none). */
static int touch(volatile char *p, int write)
{
	fault_sig = 0;
	if (sigsetjmp(back, 1) == 0) {
		if (write)
			*p = 1;
		else
			(void)*p;
	}
	return fault_sig;
}

/* The mappings of the process that overlap [p, p + len). */
static int mappings(const char *p, size_t len)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo < (uintptr_t)p + len &&
		    hi > (uintptr_t)p)
			n++;
	}
	fclose(f);
	return n;
}

TEST(backend_says_why)
{
	const char *env = getenv("RTL_PROTECT"), *run = getenv("RTL_RUN");
	int b = start();
	const char *why = rtl_prot_why();

	printf("# %s\n", why);
	CHECK_EQ(rtl_prot_backend(), b);
	CHECK(!strncmp(why, b == RTL_PROT_PAGE_TABLES ? "page tables: " : "mprotect: ",
	               b == RTL_PROT_PAGE_TABLES ? 13 : 10));
	if (env && !strcmp(env, "mprotect")) {
		CHECK_EQ(b, RTL_PROT_MPROTECT);
		CHECK(!strcmp(why, "mprotect: chosen by RTL_PROTECT=mprotect"));
	}
	/* qemu-user has no userfaultfd. */
	if (run && strstr(run, "qemu") && !(env && !strcmp(env, "mprotect")))
		CHECK(strstr(why, "ENOSYS") != NULL);
	CHECK_EQ(rtl_traps_signal(SIGBUS), b == RTL_PROT_PAGE_TABLES);
	CHECK_EQ(rtl_prot_start(), b); /* chosen once */
}

/* Read-only pages among read-write ones: a write traps, a read does not,
 * the kernel's write is refused; raised again, all is allowed. Under page
 * tables the span stays one mapping and the trap is a SIGBUS, with no
 * mprotect made. */
TEST(read_only_and_back)
{
	int b = start(), pipefd[2];
	char *p = span(RW);
	uint64_t pt0, mp0, pt1, mp1;

	for (int i = 0; i < PAGES; i++)
		p[i * PAGE] = (char)i;
	rtl_prot_calls(&pt0, &mp0);
	CHECK_EQ(rtl_prot_set((uintptr_t)p + 3 * PAGE, 2 * PAGE, PROT_READ), 0);
	CHECK_EQ(rtl_prot_set((uintptr_t)p + 9 * PAGE, PAGE, PROT_READ), 0);
	rtl_prot_calls(&pt1, &mp1);
	CHECK_EQ(touch(p + 3 * PAGE, 0), 0);
	CHECK_EQ(touch(p + 4 * PAGE + 10, 1), b == RTL_PROT_PAGE_TABLES ? SIGBUS : SIGSEGV);
	CHECK_EQ(touch(p + 9 * PAGE, 1), b == RTL_PROT_PAGE_TABLES ? SIGBUS : SIGSEGV);
	CHECK_EQ(touch(p + 5 * PAGE, 1), 0);
	CHECK_EQ(p[4 * PAGE], 4); /* the write did not happen */
	CHECK_EQ(pipe(pipefd), 0);
	CHECK_EQ(write(pipefd[1], "xy", 2), 2);
	errno = 0;
	CHECK_EQ(read(pipefd[0], p + 3 * PAGE, 1), -1);
	CHECK_EQ(errno, EFAULT);
	if (b == RTL_PROT_PAGE_TABLES) {
		CHECK_EQ(mappings(p, PAGES * PAGE), 1);
		CHECK_EQ(pt1 - pt0, 2);
		CHECK_EQ(mp1 - mp0, 0);
	} else {
		CHECK_EQ(mappings(p, PAGES * PAGE), 5);
		CHECK_EQ(mp1 - mp0, 2);
	}
	CHECK_EQ(rtl_prot_set((uintptr_t)p, PAGES * PAGE, RW), 0);
	CHECK_EQ(touch(p + 4 * PAGE, 1), 0);
	CHECK_EQ(touch(p + 9 * PAGE, 1), 0);
	CHECK_EQ(read(pipefd[0], p + 3 * PAGE, 1), 1);
	CHECK_EQ(p[3 * PAGE], 'x');
	CHECK_EQ(mappings(p, PAGES * PAGE), 1);
}

/* No access is an mprotect under either backend, and so is read-only from
 * there (a write then traps as SIGSEGV under both), and read-write after:
 * one call each, as the fallback makes them; read-write takes the page back
 * to the write-protect bits under page tables. */
TEST(no_access_and_back)
{
	int b = start();
	char *p = span(RW);
	uint64_t pt0, mp0, pt1, mp1;

	p[2 * PAGE] = 7;
	rtl_prot_calls(&pt0, &mp0);
	CHECK_EQ(rtl_prot_set((uintptr_t)p + 2 * PAGE, PAGE, PROT_NONE), 0);
	rtl_prot_calls(&pt1, &mp1);
	CHECK_EQ(mp1 - mp0, 1);
	CHECK_EQ(touch(p + 2 * PAGE, 0), SIGSEGV);
	CHECK_EQ(touch(p + 2 * PAGE, 1), SIGSEGV);
	CHECK_EQ(rtl_prot_set((uintptr_t)p + 2 * PAGE, PAGE, PROT_READ), 0);
	CHECK_EQ(touch(p + 2 * PAGE, 0), 0);
	CHECK_EQ(p[2 * PAGE], 7);
	CHECK_EQ(touch(p + 2 * PAGE, 1), SIGSEGV);
	CHECK_EQ(rtl_prot_set((uintptr_t)p + 2 * PAGE, PAGE, RW), 0);
	rtl_prot_calls(&pt1, &mp1);
	CHECK_EQ(mp1 - mp0, 3);
	CHECK_EQ(pt1 - pt0, b == RTL_PROT_PAGE_TABLES ? 1 : 0); /* the bits cleared at none */
	CHECK_EQ(touch(p + 2 * PAGE, 1), 0);
	/* Back with the bits: read-only is a write-protect call again. */
	CHECK_EQ(rtl_prot_set((uintptr_t)p + 2 * PAGE, PAGE, PROT_READ), 0);
	CHECK_EQ(touch(p + 2 * PAGE, 1), b == RTL_PROT_PAGE_TABLES ? SIGBUS : SIGSEGV);
	/* A range half at no access, half read-only by its bit, to read-write. */
	CHECK_EQ(rtl_prot_set((uintptr_t)p + 3 * PAGE, PAGE, PROT_NONE), 0);
	CHECK_EQ(rtl_prot_set((uintptr_t)p, PAGES * PAGE, RW), 0);
	CHECK_EQ(touch(p + 2 * PAGE, 1), 0);
	CHECK_EQ(touch(p + 3 * PAGE, 1), 0);
	CHECK_EQ(mappings(p, PAGES * PAGE), 1);
}

/* A mapping made at read-only starts write-protected in its page tables,
 * pages not yet touched included. */
TEST(mapped_read_only)
{
	int b = start();
	char *p = span(PROT_READ);

	CHECK_EQ(touch(p + 6 * PAGE, 0), 0);
	CHECK_EQ(touch(p + 6 * PAGE, 1), b == RTL_PROT_PAGE_TABLES ? SIGBUS : SIGSEGV);
	CHECK_EQ(touch(p + 11 * PAGE, 1), b == RTL_PROT_PAGE_TABLES ? SIGBUS : SIGSEGV);
	CHECK_EQ(faults, 2);
}

/* Outside the span (rtl's views, regions protected in place) it is an
 * mprotect whatever the backend. */
TEST(outside_the_span_mprotect)
{
	char *q;
	uint64_t pt0, mp0, pt1, mp1;

	start();
	span(RW);
	q = mmap(NULL, PAGE, RW, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	rtl_prot_calls(&pt0, &mp0);
	CHECK_EQ(rtl_prot_set((uintptr_t)q, PAGE, PROT_READ), 0);
	rtl_prot_calls(&pt1, &mp1);
	CHECK_EQ(pt1 - pt0, 0);
	CHECK_EQ(mp1 - mp0, 1);
	CHECK_EQ(touch(q, 1), SIGSEGV);
}

/* Whether the mapping at p is registered for userfaultfd write-protection
 * (the kernel's "uw" among its VmFlags). */
static int registered(const char *p)
{
	char line[512];
	int in = 0, uw = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	CHECK(f != NULL);
	while (uw < 0 && fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo <= (uintptr_t)p && (uintptr_t)p < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			uw = strstr(line, " uw") != NULL;
	}
	fclose(f);
	CHECK(uw >= 0);
	return uw;
}

static int pair_fd;

/* Two mappings of one granule each of a memfd (pair_fd) whose first 64
 * pages hold data, at read-write through the backend. */
static char *granule_pair(void)
{
	size_t g = RTL_PROT_GRANULE;
	int fd = pair_fd = memfd_create("prot-test", MFD_CLOEXEC);
	char *res = mmap(NULL, 3 * g, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *p = (char *)(((uintptr_t)res + g - 1) & ~(g - 1)), page[4096] = { 0 };

	CHECK(fd >= 0 && res != MAP_FAILED);
	CHECK_EQ(ftruncate(fd, (off_t)g), 0);
	for (int i = 0; i < 64; i++)
		CHECK_EQ(pwrite(fd, page, sizeof(page), (off_t)(i * PAGE)), (ssize_t)sizeof(page));
	rtl_prot_span((uintptr_t)p, 2 * g);
	CHECK_EQ(rtl_prot_map((uintptr_t)p, g, fd, 0, RW), 0);
	CHECK_EQ(rtl_prot_map((uintptr_t)p + g, g, fd, 0, RW), 0);
	return p;
}

static long minor_faults(void)
{
	struct rusage ru;

	CHECK_EQ(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

/* A read-write mapping of whole granules is registered at its first
 * write-protection, not when made: until then its pages fault in as
 * shared memory's do (a read maps a page writable, and the pages around
 * it too where the kernel maps ahead), and read-write changes register
 * nothing. The first protection registers the mapping whole: still one
 * mapping, a write there a SIGBUS, and the other mapping still not
 * registered. Registered from the start, 64 pages read then written take
 * 128 faults. */
TEST(registered_at_first_protection)
{
	int b = start();
	char *p = granule_pair(), *q = p + RTL_PROT_GRANULE;
	long f0, f1;
	uint64_t pt0, mp0, pt1, mp1;

	CHECK_EQ(registered(p), 0);
	CHECK_EQ(registered(q), 0);
	f0 = minor_faults();
	for (int i = 0; i < 64; i++)
		(void)*(volatile char *)(p + i * PAGE);
	for (int i = 0; i < 64; i++)
		p[i * PAGE] = (char)i;
	f1 = minor_faults();
	printf("# 64 pages read, then written: %ld faults\n", f1 - f0);
	CHECK(f1 - f0 <= 64);
	rtl_prot_calls(&pt0, &mp0);
	CHECK_EQ(rtl_prot_set((uintptr_t)q + PAGE, 4 * PAGE, RW), 0);
	rtl_prot_calls(&pt1, &mp1);
	if (b == RTL_PROT_PAGE_TABLES)
		CHECK_EQ(pt1 - pt0 + mp1 - mp0, 0);
	CHECK_EQ(rtl_prot_set((uintptr_t)p + 5 * PAGE, PAGE, PROT_READ), 0);
	CHECK_EQ(registered(p), b == RTL_PROT_PAGE_TABLES);
	CHECK_EQ(registered(q), 0);
	CHECK_EQ(mappings(p, 2 * RTL_PROT_GRANULE), b == RTL_PROT_PAGE_TABLES ? 2 : 4);
	CHECK_EQ(touch(p + 5 * PAGE, 1), b == RTL_PROT_PAGE_TABLES ? SIGBUS : SIGSEGV);
	CHECK_EQ(p[5 * PAGE], 5);
	CHECK_EQ(touch(p + 6 * PAGE, 1), 0);
	CHECK_EQ(rtl_prot_set((uintptr_t)p + 5 * PAGE, PAGE, RW), 0);
	CHECK_EQ(touch(p + 5 * PAGE, 1), 0);
	/* Registered whole across the mappings a page at no access split it
	 * into (no access is an mprotect, and registers nothing). */
	CHECK_EQ(rtl_prot_set((uintptr_t)q + 20 * PAGE, PAGE, PROT_NONE), 0);
	CHECK_EQ(registered(q), 0);
	CHECK_EQ(rtl_prot_set((uintptr_t)q + 30 * PAGE, PAGE, PROT_READ), 0);
	CHECK_EQ(registered(q), b == RTL_PROT_PAGE_TABLES);
	CHECK_EQ(registered(q + 30 * PAGE), b == RTL_PROT_PAGE_TABLES);
	CHECK_EQ(touch(q + 20 * PAGE, 0), SIGSEGV);
	CHECK_EQ(touch(q + 30 * PAGE, 1), b == RTL_PROT_PAGE_TABLES ? SIGBUS : SIGSEGV);
	CHECK_EQ(touch(q + 31 * PAGE, 1), 0);
}

static pthread_barrier_t both;

static void *protect_page(void *at)
{
	pthread_barrier_wait(&both);
	return (void *)(intptr_t)rtl_prot_set((uintptr_t)at, PAGE, PROT_READ);
}

/* Two threads protecting pages of one mapping not registered yet both
 * register it: the kernel takes it twice, and both protections hold. Each
 * round maps it again, not registered. */
TEST(first_protections_race)
{
	int b = start();
	char *p = granule_pair();

	for (int round = 0; round < 50; round++) {
		pthread_t t[2];
		void *r[2];

		CHECK_EQ(pthread_barrier_init(&both, NULL, 2), 0);
		for (int i = 0; i < 2; i++)
			CHECK_EQ(pthread_create(&t[i], NULL, protect_page, p + (size_t)(i + 1) * PAGE), 0);
		for (int i = 0; i < 2; i++)
			CHECK_EQ(pthread_join(t[i], &r[i]), 0);
		pthread_barrier_destroy(&both);
		CHECK(r[0] == NULL && r[1] == NULL);
		for (int i = 1; i <= 3; i++)
			CHECK_EQ(touch(p + (size_t)i * PAGE, 1),
			         i == 3 ? 0 : b == RTL_PROT_PAGE_TABLES ? SIGBUS
			                                                : SIGSEGV);
		CHECK_EQ(rtl_prot_set((uintptr_t)p, 4 * PAGE, RW), 0);
		CHECK_EQ(touch(p + PAGE, 1), 0);
		CHECK_EQ(rtl_prot_map((uintptr_t)p, RTL_PROT_GRANULE, pair_fd, 0, RW), 0);
		CHECK_EQ(registered(p), 0);
	}
}

/* A program's own SIGBUS (an access past the end of a file) reaches its
 * handler through rtl's, as it would without rtl. */
TEST(own_sigbus_passes_on)
{
	char path[] = "/tmp/rtl-prot-test.XXXXXX";
	int fd = mkstemp(path);
	char *m;

	start();
	CHECK(fd >= 0);
	unlink(path);
	CHECK_EQ(ftruncate(fd, (off_t)PAGE), 0);
	m = mmap(NULL, 2 * PAGE, RW, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK_EQ(touch(m, 1), 0);
	CHECK_EQ(touch(m + PAGE, 1), SIGBUS);
	CHECK_EQ(faults, 1);
}
