/* Region traps whatever the program blocks (tests/bats/sigmask.bats): each
 * mode blocks SIGSEGV one way, then writes to a fresh 100-byte block (a
 * read-only region under the test's policy, so the write traps) and prints
 * what the program sees of its own signal mask. Run with and without the
 * preload, the output and the exit status must be the same.
 *
 *   block     sigprocmask(SIG_BLOCK, {SIGSEGV}) in main
 *   fill      sigprocmask(SIG_SETMASK, every signal)
 *   thread    a thread created after sigfillset + pthread_sigmask
 *   attr      a thread whose attributes block every signal
 *   handler   a SIGUSR1 handler whose sa_mask is full
 *   suspend   a handler run by sigsuspend with every other signal blocked
 *   signalfd  every signal blocked, SIGUSR1 read from a signalfd
 *   sent      a SIGSEGV raised while blocked waits until it is unblocked
 *   fault     a NULL dereference with SIGSEGV blocked kills, handler or not
 *   jump      siglongjmp out of a handler whose sa_mask is full
 *   fork      a child forked with SIGSEGV blocked
 *   exec      a program exec'd with SIGSEGV blocked starts with it blocked
 *   spawn     the same through posix_spawn and system()
 *   show      (what exec and spawn run) the mask it started with
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCK 100

extern char **environ;

/* One fresh block per write: each is a first write, so each traps. */
static void write_block(const char *who)
{
	char *volatile p = malloc(BLOCK);

	if (!p)
		exit(2);
	memset((char *)p, 'x', BLOCK);
	p[BLOCK - 1] = '\0';
	printf("%s: wrote %zu bytes\n", who, strlen((char *)p));
	free((char *)p);
}

/* The program's view of its mask: SIGSEGV, and how many of 1..31. */
static void show_mask(const char *who)
{
	sigset_t cur;
	int n = 0;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	for (int s = 1; s < 32; s++)
		n += sigismember(&cur, s) == 1;
	printf("%s: SIGSEGV %s, %d of 31 blocked\n", who,
	       sigismember(&cur, SIGSEGV) ? "blocked" : "unblocked", n);
}

static void show_pending(const char *who)
{
	sigset_t p;

	sigpending(&p);
	printf("%s: SIGSEGV %spending\n", who, sigismember(&p, SIGSEGV) ? "" : "not ");
}

static void block_all(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static void *thread_main(void *arg)
{
	show_mask(arg);
	write_block(arg);
	show_mask(arg);
	return NULL;
}

static void run_thread(const pthread_attr_t *attr)
{
	pthread_t t;

	if (pthread_create(&t, attr, thread_main, "thread") != 0)
		exit(3);
	pthread_join(t, NULL);
}

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	show_mask("handler");
	write_block("handler");
	handled = 1;
}

static void set_usr1(void (*fn)(int), int full_mask)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	if (full_mask)
		sigfillset(&sa.sa_mask);
	else
		sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	/* The program reads back what it set. */
	sigaction(SIGUSR1, NULL, &sa);
	printf("sa_mask has SIGSEGV: %s\n", sigismember(&sa.sa_mask, SIGSEGV) ? "yes" : "no");
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	printf("SIGSEGV handler: signal %d, code %d, from %s\n", sig, si->si_code,
	       si->si_pid == getpid() ? "this process" : "elsewhere");
}

static void set_segv_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
}

static void block_segv(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGSEGV);
	sigprocmask(SIG_BLOCK, &s, NULL);
}

static void unblock_segv(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGSEGV);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
}

static sigjmp_buf back;

static void on_usr1_jump(int sig)
{
	(void)sig;
	show_mask("handler");
	siglongjmp(back, 1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	pthread_attr_t attr;
	sigset_t all, s;

	setvbuf(stdout, NULL, _IONBF, 0);
	sigfillset(&all);
	if (!strcmp(mode, "block")) {
		block_segv();
		show_mask("main");
		write_block("main");
		unblock_segv();
		show_mask("main");
	} else if (!strcmp(mode, "fill")) {
		sigprocmask(SIG_SETMASK, &all, &s);
		show_mask("main");
		write_block("main");
		sigprocmask(SIG_SETMASK, &s, NULL);
		show_mask("main");
	} else if (!strcmp(mode, "thread")) {
		block_all();
		run_thread(NULL);
	} else if (!strcmp(mode, "attr")) {
		pthread_attr_init(&attr);
		pthread_attr_setsigmask_np(&attr, &all);
		run_thread(&attr);
		show_mask("main");
	} else if (!strcmp(mode, "handler")) {
		set_usr1(on_usr1, 1);
		raise(SIGUSR1);
		show_mask("main");
	} else if (!strcmp(mode, "suspend")) {
		set_usr1(on_usr1, 0);
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		sigprocmask(SIG_BLOCK, &s, NULL);
		raise(SIGUSR1); /* pending until sigsuspend lets it in */
		sigdelset(&all, SIGUSR1);
		while (!handled)
			sigsuspend(&all);
		show_mask("main");
	} else if (!strcmp(mode, "signalfd")) {
		struct signalfd_siginfo si;
		int fd;

		block_all();
		sigemptyset(&s);
		sigaddset(&s, SIGUSR1);
		fd = signalfd(-1, &s, 0);
		raise(SIGUSR1);
		write_block("main");
		if (fd < 0 || read(fd, &si, sizeof(si)) != sizeof(si))
			return 4;
		printf("signalfd: signal %u\n", si.ssi_signo);
		show_mask("main");
	} else if (!strcmp(mode, "sent")) {
		set_segv_handler();
		block_segv();
		raise(SIGSEGV);
		show_pending("main");
		write_block("main");
		printf("main: unblocking\n");
		unblock_segv();
		show_pending("main");
		show_mask("main");
	} else if (!strcmp(mode, "fault")) {
		set_segv_handler();
		block_segv();
		write_block("main");
		printf("main: NULL dereference\n");
		*(volatile int *)0 = 1;
		printf("main: still here\n");
	} else if (!strcmp(mode, "jump")) {
		set_usr1(on_usr1_jump, 1);
		if (!sigsetjmp(back, 1))
			raise(SIGUSR1);
		show_mask("main");
		write_block("main");
		/* A fault the program handles is still handled. */
		set_segv_handler();
		if (!sigsetjmp(back, 1))
			raise(SIGSEGV);
		show_mask("main");
	} else if (!strcmp(mode, "fork")) {
		pid_t pid;

		block_segv();
		pid = fork();
		if (pid == 0) {
			show_mask("child");
			write_block("child");
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		show_mask("parent");
	} else if (!strcmp(mode, "exec")) {
		block_segv();
		execl("/proc/self/exe", "sigmask", "show", (char *)NULL);
		return 5;
	} else if (!strcmp(mode, "spawn")) {
		char *args[] = { "sigmask", "show", NULL };
		pid_t pid;

		block_segv();
		if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) != 0)
			return 6;
		waitpid(pid, NULL, 0);
		if (system("exec /proc/$PPID/exe show") != 0)
			return 7;
		show_mask("parent");
	} else if (!strcmp(mode, "show")) {
		show_mask("started");
		write_block("started");
	} else {
		fprintf(stderr, "usage: sigmask MODE (see the source)\n");
		return 2;
	}
	return 0;
}
