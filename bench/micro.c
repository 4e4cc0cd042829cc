/* Micro-benchmarks of the core's pieces: a bare signal round trip (the
 * floor), one rtl trap, one region_protect, region lookup at many regions.
 * Prints one line per figure: name, nanoseconds (min over runs). */
#include <rtl/ext.h>
#include <rtl/region.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ---- floor: a SIGSEGV whose handler only rewrites a register ---- */

static char *none_page, *rw_page;

static void floor_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)sig, (void)si;
	uc->uc_mcontext.gregs[REG_RDI] = (greg_t)rw_page;
}

static double floor_trap(int reps)
{
	struct sigaction sa = { 0 }, old;
	double t0, t;

	sa.sa_sigaction = floor_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, &old);
	t0 = now_ns();
	for (int i = 0; i < reps; i++) {
		char *p = none_page;
		__asm__ volatile("movb (%0), %%al" : "+D"(p) : : "rax", "memory");
	}
	t = (now_ns() - t0) / reps;
	sigaction(SIGSEGV, &old, NULL);
	return t;
}

/* ---- rtl: trap with a null handler that grants, and protect alone ---- */

static void grant(rtl_trap_t *t) { region_protect(t->addr, PROT_READ | PROT_WRITE); }

static double protect_pair(char **x, int reps)
{
	double t0 = now_ns();
	for (int i = 0; i < reps; i++) {
		region_protect(*x, PROT_NONE);
		region_protect(*x, PROT_READ | PROT_WRITE);
	}
	return (now_ns() - t0) / reps;
}

static double protect_and_trap(char **x, int reps)
{
	double t0 = now_ns();
	for (int i = 0; i < reps; i++) {
		region_protect(*x, PROT_NONE);
		*(volatile char *)*x;
	}
	return (now_ns() - t0) / reps;
}

static double lookup(int n, int reps)
{
	char **r = malloc(sizeof(char *) * n);
	char **addr = malloc(sizeof(char *) * reps);
	void *base;
	size_t size;
	double t0, t;

	for (int i = 0; i < n; i++)
		r[i] = region_alloc(64, NULL);
	srand(1);
	/* Random regions, read from a sequential list: the list itself
	 * costs no cache miss, the lookup's own misses are measured. */
	for (int i = 0; i < reps; i++)
		addr[i] = r[(unsigned)rand() % n] + 17;
	t0 = now_ns();
	for (int i = 0; i < reps; i++)
		rtl_ext_lookup(addr[i], &base, &size);
	t = (now_ns() - t0) / reps;
	for (int i = 0; i < n; i++)
		region_free(r[i]);
	free(r);
	free(addr);
	return t;
}

static double min_of(double (*f)(char **, int), char **x, int reps)
{
	double best = 1e300;
	for (int run = 0; run < 7; run++) {
		double t = f(x, reps);
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 100000;
	double fl = 1e300, pp, pt, lk;
	char *x;

	none_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	rw_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int run = 0; run < 7; run++) {
		double t = floor_trap(reps);
		if (t < fl)
			fl = t;
	}
	x = region_alloc(4096, &x);
	region_handler(x, grant);
	protect_and_trap(&x, 1000); /* warm: decode cache */
	pp = min_of(protect_pair, &x, reps);
	pt = min_of(protect_and_trap, &x, reps);
	printf("floor_signal_roundtrip_ns %.1f\n", fl);
	printf("region_protect_ns %.1f\n", pp / 2);
	printf("rtl_trap_ns %.1f\n", pt - pp / 2);
	printf("rtl_trap_over_floor %.2f\n", (pt - pp / 2) / fl);
	for (int n = 1000; n <= 1000000; n *= 10) {
		double best = 1e300;
		for (int run = 0; run < 3; run++) {
			lk = lookup(n, 1000000);
			if (lk < best)
				best = lk;
		}
		printf("lookup_%d_ns %.1f\n", n, best);
	}
	return 0;
}
