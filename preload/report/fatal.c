/* The report on a fatal signal. jansson allocates, so the report is never
 * built in a signal handler: a writer thread, started with the preload and
 * again in each forked child, waits on a semaphore; the handler posts it
 * (sem_post is async-signal-safe), waits for the writer's byte on a pipe
 * with a bounded poll, then lets the signal take the process as it would
 * have without rtl. No hang, ever: if the writer cannot finish (a lock held
 * by the dying thread), the wait ends and the process dies without it.
 *
 * The handlers go only on signals whose action is the default, and stay
 * invisible: sigaction and signal() report SIG_DFL for them (signals.c),
 * and a program that sets its own action replaces ours. */
#include "fatal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "next.h"
#include "report.h"

static const int sigs[] = { SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGSEGV,
	                    SIGTERM, SIGINT, SIGQUIT, SIGHUP };

static _Atomic uint64_t owned; /* bit per signal number */
static sem_t wake;
static int done[2] = { -1, -1 };
static _Atomic int pending;
static _Atomic int writer_up;

static void *writer_main(void *arg)
{
	sigset_t all;
	char c = 1;

	(void)arg;
	rtl_preload_busy = 1;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		while (sem_wait(&wake) < 0 && errno == EINTR)
			;
		rtl_report_emit(-atomic_load(&pending));
		while (write(done[1], &c, 1) < 0 && errno == EINTR)
			;
	}
	return NULL;
}

static void start_writer(void)
{
	pthread_t t;
	pthread_attr_t attr;

	if (done[0] < 0 && pipe2(done, O_CLOEXEC) < 0)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, writer_main, NULL) == 0)
		atomic_store(&writer_up, 1);
	pthread_attr_destroy(&attr);
}

void rtl_fatal_report(int sig)
{
	struct pollfd p;

	if (!rtl_report_claim())
		return; /* written already, or being written */
	if (!atomic_load(&writer_up))
		return;
	atomic_store(&pending, sig);
	sem_post(&wake);
	p.fd = done[0];
	p.events = POLLIN;
	while (poll(&p, 1, 5000) < 0 && errno == EINTR)
		;
}

static int is_fault(int sig, const siginfo_t *si)
{
	return si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS ||
	                           sig == SIGFPE || sig == SIGILL);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	struct sigaction dfl;
	sigset_t set;

	(void)uc;
	rtl_fatal_report(sig);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	rtl_next()->sigaction(sig, &dfl, NULL);
	atomic_fetch_and(&owned, ~(1ull << sig));
	if (is_fault(sig, si))
		return; /* the instruction faults again and the process dies */
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

int rtl_fatal_init(void)
{
	const struct rtl_next *n = rtl_next();

	if (sem_init(&wake, 0, 0) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa, old;

		if (n->sigaction(sigs[i], NULL, &old) < 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_fatal;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
		sigemptyset(&sa.sa_mask);
		if (n->sigaction(sigs[i], &sa, NULL) == 0)
			atomic_fetch_or(&owned, 1ull << sigs[i]);
	}
	start_writer();
	return 0;
}

int rtl_fatal_owns(int sig, const void *handler)
{
	if (handler)
		return handler == (const void *)on_fatal;
	return sig > 0 && sig < 64 && ((atomic_load(&owned) >> sig) & 1);
}

void rtl_fatal_disown(int sig)
{
	if (sig > 0 && sig < 64)
		atomic_fetch_and(&owned, ~(1ull << sig));
}

void rtl_fatal_forked(void)
{
	atomic_store(&writer_up, 0); /* threads do not survive fork */
	rtl_report_forked();
	if (done[0] < 0)
		return; /* never started */
	/* A semaphore and a pipe of the child's own. */
	close(done[0]);
	close(done[1]);
	done[0] = done[1] = -1;
	sem_init(&wake, 0, 0);
	start_writer();
}
