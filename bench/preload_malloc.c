/* rtl-malloc-bench: malloc + free throughput of whatever allocator the
 * process has (glibc, an LD_PRELOADed jemalloc, or rtl's preload). Knows
 * nothing of rtl. Usage: rtl-malloc-bench THREADS OPS_PER_THREAD; prints
 * "ns_per_op X" (wall time per malloc+free pair, all threads together).
 * rtl-malloc-bench page-trap N: the page-protection trap the preload's
 * protect = read is held against (bench/README.md): a write to a
 * read-only page, whose SIGSEGV handler mprotects it read-write, then the
 * page made read-only again; prints "ns_per_trap X" (fault + 2 mprotect). */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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

static char *page;
static long page_size;

static void grant(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	mprotect(page, page_size, PROT_READ | PROT_WRITE);
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int page_trap(long n)
{
	struct sigaction sa = { .sa_sigaction = grant, .sa_flags = SA_SIGINFO };
	double t0;

	page_size = sysconf(_SC_PAGESIZE);
	page = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
	            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || sigaction(SIGSEGV, &sa, NULL) < 0) {
		perror("rtl-malloc-bench page-trap");
		return 1;
	}
	t0 = seconds();
	for (long i = 0; i < n; i++) {
		mprotect(page, page_size, PROT_READ);
		*(volatile char *)page = (char)i;
	}
	printf("ns_per_trap %.2f\n", (seconds() - t0) * 1e9 / (double)n);
	return 0;
}

int main(int argc, char **argv)
{
	int threads;

	if (argc > 1 && !strcmp(argv[1], "page-trap"))
		return page_trap(argc > 2 ? atol(argv[2]) : 100000);
	threads = argc > 1 ? atoi(argv[1]) : 1;
	pthread_t t[64];
	struct timespec a, b;
	double ns;

	ops = argc > 2 ? atol(argv[2]) : 1000000;
	if (threads < 1 || threads > 64 || ops < 1) {
		fprintf(stderr, "usage: %s THREADS OPS_PER_THREAD | page-trap N\n", argv[0]);
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
