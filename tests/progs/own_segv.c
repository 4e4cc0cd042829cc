/* A program with its own SIGSEGV handler that mprotects a page of its own
 * heap and takes the faults: its handler must see exactly its faults, with
 * or without the preload, whatever view rtl put the page in. Prints what it
 * saw; the output must not depend on the preload. The block is two pages
 * (8192 bytes), a size no other allocation here has, so that a policy can
 * select it alone. */
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* volatile: every access goes through the pointer malloc returned (under a
 * trapping policy, a pointer into rtl's RO or NONE view), never through a
 * copy in a register that rtl moved to another view. */
static volatile char *volatile page;
static volatile int faults;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if ((char *)si->si_addr < (char *)page ||
	    (char *)si->si_addr >= (char *)page + 4096) {
		signal(SIGSEGV, SIG_DFL); /* not ours: die of it */
		return;
	}
	faults++;
	mprotect((void *)page, 4096, PROT_READ | PROT_WRITE);
}

int main(void)
{
	struct sigaction sa, old;
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) < 0 ||
	    sigaction(SIGSEGV, NULL, &old) < 0)
		return 1;
	printf("handler reads back: %s\n",
	       old.sa_sigaction == on_segv ? "yes" : "no");

	if (posix_memalign((void **)&page, 4096, 8192))
		return 2;
	memcpy((void *)page, "hello", 6);

	if (mprotect((void *)page, 4096, PROT_READ) < 0)
		return 3;
	page[0] = 'H'; /* faults once; the handler opens the page */
	printf("after write to a read-only page: %s, faults %d\n", (char *)page,
	       faults);

	if (mprotect((void *)page, 4096, PROT_NONE) < 0)
		return 4;
	c = page[1];
	printf("read from an inaccessible page: %c, faults %d\n", c, faults);

	if (mprotect((void *)page, 4096, PROT_READ) < 0)
		return 5;
	c = page[4];
	printf("read from a read-only page: %c, faults %d\n", c, faults);
	if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) < 0)
		return 6;
	page[4] = 'O';
	printf("write after restoring: %s, faults %d\n", (char *)page, faults);

	/* signal() hands back the handler sigaction installed. */
	printf("signal() returns the handler: %s\n",
	       (uintptr_t)signal(SIGSEGV, SIG_DFL) == (uintptr_t)on_segv ? "yes" : "no");
	free((void *)page);
	return 0;
}
