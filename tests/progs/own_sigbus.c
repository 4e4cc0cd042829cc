/* A program with its own SIGBUS handler, blocks that a policy may make
 * trap, and a file mapping that runs past the file's end. Where protection
 * lives in the page tables, rtl's own traps are SIGBUS too: the program's
 * handler must still see exactly its own fault (the page past the end),
 * never one of rtl's, and the mask and action it sets must read back as it
 * set them, with SIGBUS blocked while its blocks trap. Prints what it saw;
 * the output must not depend on the preload. Blocks are 48 bytes, a size
 * nothing else here allocates, so that a policy can select them alone. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BLOCKS 100

static sigjmp_buf back;
static volatile int faults;
static volatile long at;
static char *volatile file;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	faults++;
	at = (char *)si->si_addr - file;
	siglongjmp(back, 1);
}

int main(void)
{
	struct sigaction sa, old;
	sigset_t set, now;
	char *b[BLOCKS], path[] = "/tmp/own_sigbus.XXXXXX";
	volatile long sum = 0; /* across the siglongjmp */
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) < 0 || sigaction(SIGBUS, NULL, &old) < 0)
		return 1;
	printf("handler reads back: %s\n", old.sa_sigaction == on_bus ? "yes" : "no");

	/* Blocks written while the program blocks SIGBUS: their traps are
	 * rtl's, whatever the program's mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGBUS);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (int i = 0; i < BLOCKS; i++) {
		if (!(b[i] = malloc(48)))
			return 2;
		memset(b[i], i, 48);
	}
	sigprocmask(SIG_BLOCK, NULL, &now);
	printf("SIGBUS blocked while blocks were written: %s\n",
	       sigismember(&now, SIGBUS) ? "yes" : "no");
	sigprocmask(SIG_UNBLOCK, &set, NULL);

	/* One page of file, two mapped: the second is past its end. */
	if ((fd = mkstemp(path)) < 0 || unlink(path) < 0 || ftruncate(fd, 4096) < 0)
		return 3;
	file = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (file == MAP_FAILED)
		return 4;
	file[0] = 'a';
	if (!sigsetjmp(back, 1))
		file[4096] = 'b';
	printf("past the end of the file: %d SIGBUS, at offset %ld\n", faults, at);

	for (int i = 0; i < BLOCKS; i++) {
		b[i][47] = (char)(b[i][0] + 1); /* granted: no trap */
		sum += b[i][0] + b[i][47];
		free(b[i]);
	}
	printf("blocks: %ld; the program's SIGBUS handler ran %d time%s\n", sum, faults,
	       faults == 1 ? "" : "s");
	return 0;
}
