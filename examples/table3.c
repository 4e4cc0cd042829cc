/* The paper's Table 3: the page handler and the region handler have the same
 * shape (grant what was asked), but not the same reach. Two 100-byte objects
 * a and b share one page; only a is protected (PROT_NONE). Then
 *     read b, read a, write a, write a
 * With pages, protecting a protects b too (false sharing): reading b traps,
 * and the grant for b unprotects a, whose read then goes unseen. With
 * regions, each object traps as its own protection says. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "examples/handlers.h"
#include "examples/step.h"

volatile int traps;
static volatile char v; /* where reads go */

static void pages(void)
{
	char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a = page, *b = page + 100; /* two objects, one page */
	struct sigaction s1, s2;

	memset(&s1, 0, sizeof(s1));
	s1.sa_flags = SA_SIGINFO;
	s1.sa_sigaction = page_handler;
	sigaction(SIGSEGV, &s1, &s2);
	mprotect(a, 100, PROT_NONE); /* rounds to the page: b goes too */
	STEP(v = b[0]);
	STEP(v = a[0]);
	STEP(a[1] = 1);
	STEP(a[2] = 2);
	sigaction(SIGSEGV, &s2, NULL);
	munmap(page, 4096);
}

static void regions(void)
{
	char *a = region_alloc(100, &a); /* rtl puts both on one page */
	char *b = region_alloc(100, &b);

	region_handler(a, reg_handler);
	region_handler(b, reg_handler);
	region_protect(a, PROT_NONE); /* a alone */
	STEP(v = b[0]);
	STEP(v = a[0]);
	STEP(a[1] = 1);
	STEP(a[2] = 2);
	if ((uintptr_t)a >> 12 != (uintptr_t)b >> 12)
		printf("  (a and b not on one page)");
}

int main(void)
{
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("Table 3: a and b share a page; protect a only (PROT_NONE)\n");
	printf("%-10s", "pages");
	pages();
	n = traps;
	printf("  -> %d traps\n%-10s", n, "regions");
	regions();
	printf("  -> %d traps\n", traps - n);
	printf("pages: b's read trapped for a's sake, and a's read went unseen\n"
	       "regions: exactly a's first read and first write trapped\n");
	return 0;
}
