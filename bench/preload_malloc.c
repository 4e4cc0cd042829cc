/* rtl-malloc-bench: malloc + free throughput of whatever allocator the
 * process has (glibc, an LD_PRELOADed jemalloc, or rtl's preload). Knows
 * nothing of rtl. Usage: rtl-malloc-bench THREADS OPS_PER_THREAD; prints
 * "ns_per_op X" (wall time per malloc+free pair, all threads together).
 * rtl-malloc-bench page-trap N [THREADS]: the page-protection trap the
 * preload's protect = read is held against (bench/README.md): a write to a
 * read-only page, whose SIGSEGV handler mprotects it read-write, then the
 * page made read-only again; prints "ns_per_trap X" (fault + 2 mprotect;
 * with THREADS, each on a page of its own, wall time per trap).
 * rtl-malloc-bench floor N: what the kernel charges a trap, the floor a
 * real program's traps are held against (bench/programs.py): the bare
 * signal round trip (a read of a PROT_NONE page whose SIGSEGV handler
 * points the register elsewhere, arch.h) and one mprotect of one page of
 * this small process; prints "signal_ns X mprotect_ns Y", medians of 9
 * batches of N. Then, where the kernel has userfaultfd write-protection of
 * shared memory (else -1): "uffd_wp_ns" one write-protect call on one page
 * of a memfd mapping, and "uffd_trap_ns" a whole trap as the page-table
 * backend takes it: the page write-protected, written (a SIGBUS whose
 * handler clears the bit) and written again; "uffd_refault_ns" the part
 * of it that is a page fault more: after the bit is cleared the kernel
 * leaves a shared mapping's entry read-only, and the write faults again
 * (the pair of calls and a write, less the pair), and
 * "uffd_refaults_per_trap" those faults counted (getrusage's minor faults:
 * the SIGBUS fault is not counted there, the one after it is). */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "bench/arch.h"

#define LIVE 1024 /* allocations each thread keeps alive */

static long ops;

static void *worker(void *arg)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1);
	void *live[LIVE] = { 0 };

	for (long i = 0; i < ops; i++) {
		size_t slot, size;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		slot = x % LIVE;
		size = 16 + (x >> 32) % 4081; /* 16 B .. 4 KiB */
		free(live[slot]);
		live[slot] = malloc(size);
		if (!live[slot])
			abort();
		*(volatile char *)live[slot] = 1;
	}
	for (int i = 0; i < LIVE; i++)
		free(live[i]);
	return NULL;
}

static long page_size;
static long traps;

/* The grant: the faulting page made read-write (each thread has its own). */
static void grant(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	mprotect((void *)((uintptr_t)si->si_addr & ~(uintptr_t)(page_size - 1)),
	         (size_t)page_size, PROT_READ | PROT_WRITE);
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *trapper(void *arg)
{
	char *page = arg;

	for (long i = 0; i < traps; i++) {
		mprotect(page, (size_t)page_size, PROT_READ);
		*(volatile char *)page = (char)i;
	}
	return NULL;
}

/* n traps in each of threads threads, each on a page of its own: wall
 * time per trap, all threads together (as ns_per_op). With 2 threads the
 * mprotects of one process's threads meet in the kernel, as the preload's
 * do under protect = read. */
static int page_trap(long n, int threads)
{
	struct sigaction sa = { .sa_sigaction = grant, .sa_flags = SA_SIGINFO };
	pthread_t t[64];
	char *pages;
	double t0;

	page_size = sysconf(_SC_PAGESIZE);
	traps = n;
	pages = mmap(NULL, (size_t)page_size * (size_t)threads, PROT_READ | PROT_WRITE,
	             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL) < 0) {
		perror("rtl-malloc-bench page-trap");
		return 1;
	}
	t0 = seconds();
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, trapper, pages + (long)i * page_size);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("ns_per_trap %.2f\n", (seconds() - t0) * 1e9 / ((double)n * threads));
	return 0;
}

/* ---- the page-table backend's calls (core/prot/pagetable.c) ---- */

static int uffd = -1;

static int write_protect(void *p, int on)
{
	struct uffdio_writeprotect wp = {
		.range = { (uintptr_t)p, (uint64_t)page_size },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

static void unprotect(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	write_protect((void *)((uintptr_t)si->si_addr & ~(uintptr_t)(page_size - 1)), 0);
}

static int by_value(const void *a, const void *b);

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Appends " uffd_wp_ns X uffd_trap_ns Y uffd_refault_ns Z
 * uffd_refaults_per_trap F" (-1 each where the kernel has no
 * write-protection of shared memory with SIGBUS). */
static void uffd_costs(long n)
{
	struct sigaction sa = { .sa_sigaction = unprotect, .sa_flags = SA_SIGINFO };
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_SIGBUS | UFFD_FEATURE_WP_HUGETLBFS_SHMEM,
	};
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	double wp[9], trap[9], refault[9], refaults = 0;
	int fd = memfd_create("rtl-bench-uffd", MFD_CLOEXEC);
	volatile char *p = MAP_FAILED;

	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | 1 /* user mode only */);
	if (uffd < 0)
		uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && ftruncate(fd, page_size) == 0)
		p = mmap(NULL, (size_t)page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	reg.range.start = (uintptr_t)p;
	reg.range.len = (uint64_t)page_size;
	if (uffd < 0 || p == MAP_FAILED || ioctl(uffd, UFFDIO_API, &api) < 0 ||
	    ioctl(uffd, UFFDIO_REGISTER, &reg) < 0 || sigaction(SIGBUS, &sa, NULL) < 0) {
		printf(" uffd_wp_ns -1 uffd_trap_ns -1 uffd_refault_ns -1 "
		       "uffd_refaults_per_trap -1");
		return;
	}
	p[0] = 1;
	for (int b = 0; b < 9; b++) {
		double t0 = seconds();

		for (long i = 0; i < n; i++)
			write_protect((void *)p, i & 1);
		wp[b] = (seconds() - t0) * 1e9 / (double)n;
		long f0 = minor_faults();

		t0 = seconds();
		for (long i = 0; i < n; i++) {
			write_protect((void *)p, 1);
			p[0] = (char)i; /* SIGBUS: the handler clears the bit */
			p[1] = (char)i;
		}
		trap[b] = (seconds() - t0) * 1e9 / (double)n;
		refaults += (double)(minor_faults() - f0) / (double)n / 9;
		t0 = seconds();
		for (long i = 0; i < n; i++) {
			write_protect((void *)p, 1);
			write_protect((void *)p, 0);
			p[0] = (char)i; /* no SIGBUS: only the fault after a clear */
		}
		refault[b] = (seconds() - t0) * 1e9 / (double)n - 2 * wp[b];
	}
	qsort(wp, 9, sizeof(*wp), by_value);
	qsort(trap, 9, sizeof(*trap), by_value);
	qsort(refault, 9, sizeof(*refault), by_value);
	printf(" uffd_wp_ns %.1f uffd_trap_ns %.1f uffd_refault_ns %.1f "
	       "uffd_refaults_per_trap %.2f",
	       wp[4], trap[4], refault[4], refaults);
}

/* ---- floor ---- */

static char *readable;

static void rewrite(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	arch_set_pointer(uc, readable);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int floor_costs(long n)
{
	struct sigaction sa = { .sa_sigaction = rewrite, .sa_flags = SA_SIGINFO };
	double sig[9], mp[9];
	char *none;

	page_size = sysconf(_SC_PAGESIZE);
	none = mmap(NULL, (size_t)page_size * 2, PROT_NONE,
	            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	readable = mmap(NULL, (size_t)page_size, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none == MAP_FAILED || readable == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL) < 0) {
		perror("rtl-malloc-bench floor");
		return 1;
	}
	for (int b = 0; b < 9; b++) {
		double t0 = seconds();

		for (long i = 0; i < n; i++)
			arch_read_byte(none);
		sig[b] = (seconds() - t0) * 1e9 / (double)n;
		t0 = seconds();
		for (long i = 0; i < n; i++)
			mprotect(none + page_size, (size_t)page_size,
			         i & 1 ? PROT_NONE : PROT_READ);
		mp[b] = (seconds() - t0) * 1e9 / (double)n;
	}
	qsort(sig, 9, sizeof(*sig), by_value);
	qsort(mp, 9, sizeof(*mp), by_value);
	printf("signal_ns %.1f mprotect_ns %.1f", sig[4], mp[4]);
	uffd_costs(n);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	int threads;

	if (argc > 1 && !strcmp(argv[1], "floor")) {
		long n = argc > 2 ? atol(argv[2]) : 20000;

		if (n < 1) {
			fprintf(stderr, "usage: %s floor N\n", argv[0]);
			return 2;
		}
		return floor_costs(n);
	}

	if (argc > 1 && !strcmp(argv[1], "page-trap")) {
		long n = argc > 2 ? atol(argv[2]) : 100000;

		threads = argc > 3 ? atoi(argv[3]) : 1;
		if (n < 1 || threads < 1 || threads > 64) {
			fprintf(stderr, "usage: %s page-trap N [THREADS]\n", argv[0]);
			return 2;
		}
		return page_trap(n, threads);
	}
	threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[64];
	struct timespec a, b;
	double ns;

	ops = argc > 2 ? atol(argv[2]) : 1000000;
	if (threads < 1 || threads > 64 || ops < 1) {
		fprintf(stderr, "usage: %s THREADS OPS_PER_THREAD | page-trap N [THREADS]\n",
		        argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	printf("ns_per_op %.2f\n", ns / ((double)ops * threads));
	return 0;
}
