/* A program with its own SIGSEGV handler that mprotects a page of its own
 * heap and takes the faults: its handler must see exactly its faults, with
 * or without the preload, whatever view rtl put the page in. Prints what it
 * saw; the output must not depend on the preload. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static char *page;
static volatile int faults;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if ((char *)si->si_addr < page || (char *)si->si_addr >= page + 4096) {
		signal(SIGSEGV, SIG_DFL); /* not ours: die of it */
		return;
	}
	faults++;
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

int main(void)
{
	struct sigaction sa, old;
	volatile char *p;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) < 0 ||
	    sigaction(SIGSEGV, NULL, &old) < 0)
		return 1;
	printf("handler reads back: %s\n",
	       old.sa_sigaction == on_segv ? "yes" : "no");

	if (posix_memalign((void **)&page, 4096, 4096))
		return 2;
	strcpy(page, "hello");
	p = page;

	if (mprotect(page, 4096, PROT_READ) < 0)
		return 3;
	p[0] = 'H'; /* faults once; the handler opens the page */
	printf("after write to a read-only page: %s, faults %d\n", page, faults);

	if (mprotect(page, 4096, PROT_NONE) < 0)
		return 4;
	printf("read from an inaccessible page: %c, faults %d\n", p[1], faults);

	if (mprotect(page, 4096, PROT_READ) < 0)
		return 5;
	printf("read from a read-only page: %c, faults %d\n", p[4], faults);
	if (mprotect(page, 4096, PROT_READ | PROT_WRITE) < 0)
		return 6;
	p[4] = 'O';
	printf("write after restoring: %s, faults %d\n", page, faults);

	/* signal() hands back the handler sigaction installed. */
	printf("signal() returns the handler: %s\n",
	       (void *)signal(SIGSEGV, SIG_DFL) == (void *)on_segv ? "yes" : "no");
	free(page);
	return 0;
}
