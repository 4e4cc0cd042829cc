/* The epoch timer: one thread (auto, alias and page rules with an epoch)
 * that sleeps until the next rule's epoch is due and runs its work
 * (rtl_epoch_tick, epoch.c). An epoch whose work takes more than a tenth
 * of its period puts the next one off, and the report says by how much.
 * The thread blocks every signal and allocates from glibc; it ends the
 * process when the program's last thread has left with pthread_exit. */
#include "preload/engine/epoch.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/util/clock.h"
#include "policy/policy.h"
#include "preload/engine/engine.h"
#include "preload/engine/reprotect.h"
#include "preload/shim/next.h"

static pthread_t thread;
static int thread_running;
static uint64_t n_epochs, n_calls, n_blocks, n_stretched, stretch_ns;

/* The process's threads that still run (a main thread that left with
 * pthread_exit stays a zombie till the end), or -1. */
static long threads_running(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		ssize_t len;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* The state follows the command's closing parenthesis. */
		if ((p = strrchr(buf, ')')) && p[1] == ' ' && p[2] != 'Z' &&
		    p[2] != 'X')
			n++;
	}
	closedir(d);
	return n;
}

/* An epoch whose work took more than a tenth of the period: the next one
 * comes that much later, so that the epochs' own work stays under a tenth
 * of the time (it would starve the program otherwise). */
static void stretch(uint64_t *next, uint64_t period, uint64_t work)
{
	if (10 * work <= period)
		return;
	*next += 10 * work - period;
	n_stretched++;
	stretch_ns += 10 * work - period;
}

static void *epoch_main(void *arg)
{
	uint64_t last_check = 0;
	uint64_t next[RTL_POLICY_MAX_RULES] = { 0 };
	sigset_t all;

	(void)arg;
	rtl_preload_busy = 1; /* whatever this thread allocates is glibc's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (int i = 0; i < rtl_engine.policy.nrules; i++)
		if (rtl_engine.rules[i].r->epoch_ns)
			next[i] = rtl_now_ns() + rtl_engine.rules[i].r->epoch_ns;
	for (;;) {
		uint64_t due = UINT64_MAX, mask = 0, now, work;
		struct rtl_reprotect_stats st;
		struct timespec ts;

		for (int i = 0; i < rtl_engine.policy.nrules; i++)
			if (next[i] && next[i] < due)
				due = next[i];
		ts.tv_sec = (time_t)(due / 1000000000u);
		ts.tv_nsec = (long)(due % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			;
		now = rtl_now_ns();
		for (int i = 0; i < rtl_engine.policy.nrules; i++) {
			if (!next[i] || next[i] > now)
				continue;
			mask |= 1ull << i;
			while (next[i] <= now) /* a late tick does not pile up */
				next[i] += rtl_engine.rules[i].r->epoch_ns;
		}
		rtl_epoch_tick(mask, &st);
		n_epochs++;
		n_calls += st.calls;
		n_blocks += st.blocks;
		work = rtl_now_ns() - now;
		for (int i = 0; i < rtl_engine.policy.nrules; i++)
			if ((mask >> i) & 1)
				stretch(&next[i], rtl_engine.rules[i].r->epoch_ns, work);
		/* The program's last thread left with pthread_exit: the process
		 * ends as the kernel would have ended it, with status 0 and the
		 * atexit handlers run, not kept alive by this thread. */
		if (now - last_check > 100 * 1000 * 1000) {
			last_check = now;
			if (threads_running() == 1)
				exit(0);
		}
	}
	return NULL;
}

void rtl_epoch_counts(struct rtl_epoch_counts *out)
{
	out->epochs = n_epochs;
	out->calls = n_calls;
	out->blocks = n_blocks;
	out->stretched = n_stretched;
	out->stretch_ns = stretch_ns;
}

int rtl_epoch_start(void)
{
	if (thread_running)
		return 0;
	if (pthread_create(&thread, NULL, epoch_main, NULL))
		return -1;
	thread_running = 1;
	return 0;
}

void rtl_epoch_timer_forked(void)
{
	n_epochs = n_calls = n_blocks = n_stretched = stretch_ns = 0;
	thread_running = 0; /* threads do not survive fork */
	if (rtl_engine.any_epoch)
		rtl_epoch_start();
}
