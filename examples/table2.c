/* The paper's Table 2: one program four ways. Protect x read-only, then
 *     a = x[0];   no trap (reads are allowed)
 *     x[1] = 1;   trap    (the handler makes x writable)
 *     x[2] = 2;   no trap
 * 1. with pages: valloc, sigaction, mprotect (what rtl replaces);
 * 2. with a region and a bound pointer (region_alloc(N, &x));
 * 3. with a region and an unbounded pointer (region_ptr(&x));
 * 4. with the C++ rtl::region_ptr<char> (table2_col4.cpp).
 * Each line prints what each statement did; all four must agree. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "examples/handlers.h"
#include "examples/step.h"

#define N 1000

volatile int traps;

static void check(const char *x)
{
	if (x[1] != 1 || x[2] != 2)
		printf("  WRONG VALUES");
}

static void column1(void)
{
	char *x;
	struct sigaction s1, s2;
	int a;

	x = valloc(N);
	sigemptyset(&s1.sa_mask);
	s1.sa_flags = SA_SIGINFO;
	s1.sa_sigaction = page_handler;
	sigaction(SIGSEGV, &s1, &s2);
	mprotect(x, N, PROT_READ);
	STEP(a = x[0]); /* no trap */
	STEP(x[1] = 1); /* trap */
	STEP(x[2] = 2); /* no trap */
	(void)a;
	check(x);
	sigaction(SIGSEGV, &s2, NULL); /* rtl installs its own handler next */
	free(x);
}

static void column2(void)
{
	char *x;
	int a;

	x = region_alloc(N, &x); /* x: a bound pointer of the new region */
	region_handler(x, reg_handler);
	region_protect(x, PROT_READ);
	STEP(a = x[0]); /* no trap */
	STEP(x[1] = 1); /* trap */
	STEP(x[2] = 2); /* no trap */
	(void)a;
	check(x);
	region_free(x);
}

static void column3(void)
{
	char *x;
	int a;

	x = region_alloc(N, NULL);
	region_ptr(&x); /* x may point into any region */
	region_handler(x, reg_handler);
	region_protect(x, PROT_READ);
	STEP(a = x[0]); /* no trap */
	STEP(x[1] = 1); /* trap */
	STEP(x[2] = 2); /* no trap */
	(void)a;
	check(x);
	region_ptr_free(&x); /* x is a local: unregister before it goes */
}

void column4(void);

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("Table 2: protect x read-only, then read x[0], write x[1], write x[2]\n");
	printf("%-34s", "1. pages (valloc, mprotect)");
	column1();
	printf("\n%-34s", "2. region, bound pointer");
	column2();
	printf("\n%-34s", "3. region, unbounded pointer");
	column3();
	printf("\n%-34s", "4. C++ rtl::region_ptr<char>");
	column4();
	printf("\ntraps in all: %d (one per column)\n", traps);
	return traps == 4 ? 0 : 1;
}
