/* Waits for a signal (tests/bats/rtlctl.bats: what rtlctl run passes on,
 * and that its child dies with it). Writes its pid to the file argv[1]
 * once its handlers are set, then waits: SIGUSR1 prints "got SIGUSR1" and
 * exits 0; any other signal does what it does by default. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got;

static void on_usr1(int sig)
{
	got = sig;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t usr1, old;
	char tmp[4096];
	FILE *f;

	if (argc != 2)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	/* The pid file appears complete or not at all. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0 ||
	    rename(tmp, argv[1]) != 0)
		return 3;
	while (!got)
		sigsuspend(&old);
	printf("got SIGUSR1\n");
	return 0;
}
