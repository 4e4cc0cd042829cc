/* Where the raw record goes, and, for a report to stderr, rtlctl made to
 * print it as the program ends (heaptrack's split: the program only
 * records). Under `rtlctl run` every process of the run leaves its record
 * in the run's folder and rtlctl makes one report of them all when the
 * program has ended; with a report file and no rtlctl, the record stays
 * beside the report's name and `rtlctl report` reads it when asked. Only
 * a report to stderr is made at exit: by rtlctl, in a child process that
 * gets the environment the program started with, without the preload,
 * its stderr, no other descriptor, and every signal unblocked.
 * Everything here may run in a signal handler: vfork, execve, waitpid,
 * poll and write only. */
#include "preload/track/analyse.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/util/say.h"
#include "preload/shim/next.h"
#include "preload/track/format.h"

#ifndef RTL_PRELOAD_TO_BIN
#define RTL_PRELOAD_TO_BIN "../../bin"
#endif
#define WAIT_MS 60000
#define MAX_ENV 1024

extern char **environ;

static char rtlctl[PATH_MAX];
/* The environment at start, without LD_PRELOAD and RTL_CONFIG: strings on
 * the initial stack. The program's own later ones may be blocks in rtl's
 * memory: reading one, or handing it to execve (the seccomp filter traps
 * that), would go through rtl's locks, and the _Fork child has none of
 * the other threads that may hold one (an epoch's): it hung till the
 * timeout. */
static char *start_env[MAX_ENV];
static const char *raw_kept; /* RTL_RAW, read at start (shim/children.c) */
static const char *run_dir;  /* RTL_RUN_DIR: rtlctl run's folder */

static int usable(const char *path)
{
	return path && *path && access(path, X_OK) == 0;
}

/* rtlctl at dir/rel into the buffer, if it is there. */
static int try_beside(const char *dir, size_t dlen, const char *rel)
{
	size_t rlen = strlen(rel);

	if (dlen + rlen + 1 > sizeof(rtlctl))
		return 0;
	memcpy(rtlctl, dir, dlen);
	memcpy(rtlctl + dlen, rel, rlen + 1);
	return usable(rtlctl);
}

/* The folder the preload was loaded from, absolute into dir (a relative
 * LD_PRELOAD is relative to the folder the program started in, which it
 * may leave before it ends). Its length, or 0. */
static size_t own_folder(char *dir, size_t len)
{
	Dl_info di;
	const char *slash;
	size_t n = 0, k;

	if (!dladdr(rtlctl, &di) || !di.dli_fname) /* any address of ours */
		return 0;
	if (di.dli_fname[0] != '/') {
		if (!getcwd(dir, len))
			return 0;
		n = strlen(dir);
		if (n + 1 < len)
			dir[n++] = '/';
	}
	slash = strrchr(di.dli_fname, '/');
	k = slash ? (size_t)(slash - di.dli_fname) : 0;
	if (n + k + 1 > len)
		return 0;
	memcpy(dir + n, di.dli_fname, k);
	n += k;
	dir[n] = '\0';
	return n;
}

void rtl_analyse_init(void)
{
	const char *env = secure_getenv("RTL_RTLCTL");
	char dir[PATH_MAX];
	size_t n = 0;

	raw_kept = secure_getenv("RTL_RAW");
	run_dir = secure_getenv("RTL_RUN_DIR");
	if (run_dir && run_dir[0] != '/')
		run_dir = NULL; /* rtlctl gives an absolute path */

	for (char **e = environ; e && *e && n < MAX_ENV - 1; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "RTL_CONFIG=", 11))
			start_env[n++] = *e;
	start_env[n] = NULL;

	if (usable(env)) {
		strncpy(rtlctl, env, sizeof(rtlctl) - 1);
		return;
	}
	/* A build tree (preload/ beside tools/), else an install (libdir to
	 * bindir, as meson laid it out): wherever the tree was moved. */
	n = own_folder(dir, sizeof(dir));
	if (n && (try_beside(dir, n, "/../tools/rtlctl") ||
	          try_beside(dir, n, "/" RTL_PRELOAD_TO_BIN "/rtlctl")))
		return;
	rtlctl[0] = '\0';
}

static size_t put(char *out, size_t len, size_t n, const char *s)
{
	while (*s && n + 1 < len)
		out[n++] = *s++;
	out[n] = '\0';
	return n;
}

int rtl_analyse_in_run(void)
{
	return run_dir && *run_dir;
}

void rtl_analyse_raw_path(const char *report, const char *name, char *raw,
                          size_t len)
{
	const char *keep = raw_kept, *tmp = secure_getenv("TMPDIR");
	size_t n = strlen(report);
	char pid[24], *p = pid + sizeof(pid) - 1;
	long v = (long)getpid();

	*p = '\0';
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (rtl_analyse_in_run()) {
		/* rtlctl keeps them under RTL_RAW's name, if asked. */
		n = put(raw, len, 0, run_dir);
		n = put(raw, len, n, "/");
		n = put(raw, len, n, name);
		n = put(raw, len, n, ".");
		n = put(raw, len, n, p);
		put(raw, len, n, ".raw");
		return;
	}
	if (keep && *keep) {
		put(raw, len, 0, keep); /* the caller's name: no %-expansion */
		return;
	}
	if (strcmp(report, "-")) {
		if (n > 5 && !strcmp(report + n - 5, ".json"))
			n -= 5;
		if (n >= len)
			n = len - 1;
		memcpy(raw, report, n);
		put(raw, len, n, ".raw");
		return;
	}
	n = put(raw, len, 0, tmp && *tmp ? tmp : "/tmp");
	n = put(raw, len, n, "/rtl-report.");
	n = put(raw, len, n, p);
	put(raw, len, n, ".raw");
}

static void say(const char *a, const char *b, const char *c)
{
	rtl_say(a, strlen(a));
	rtl_say(b, strlen(b));
	rtl_say(c, strlen(c));
}

/* The child: the environment at start, stderr as stdout too (a report to
 * "-" goes to the program's stderr), then rtlctl. */
static void child(const char *raw, const char *report)
{
	char *argv[8];
	int a = 0;
	sigset_t none;

	argv[a++] = rtlctl;
	argv[a++] = "report";
	argv[a++] = "--json";
	argv[a++] = "-o";
	argv[a++] = (char *)report; /* "-": stdout, which is stderr here */
	argv[a++] = (char *)raw;
	argv[a] = NULL;
	dup2(2, 1);
	syscall(SYS_close_range, 3u, ~0u, 0u);
	/* The kernel's call: the preload's sigprocmask would resend, in this
	 * child, a SIGSEGV the program held (sigmask.c). */
	sigemptyset(&none);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, _NSIG / 8);
	execve(rtlctl, argv, start_env);
	_exit(127);
}

/* Wait for pid, WAIT_MS at most; its exit status, or -1. A pidfd wakes
 * the wait when the child ends (a sleep between looks added one to every
 * report); without one (an old kernel), looks a millisecond apart. */
static int wait_for(pid_t pid)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), st, rc = -1;
	struct timespec tick = { 0, 1000 * 1000 };

	for (int ms = 0; ms < WAIT_MS;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid) {
			rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
			goto done;
		}
		if (r < 0 && errno != EINTR)
			goto done; /* reaped by the program's own SIGCHLD handler */
		if (pfd >= 0) {
			struct pollfd p = { .fd = pfd, .events = POLLIN };

			if (poll(&p, 1, 100) == 0)
				ms += 100;
		} else {
			nanosleep(&tick, NULL);
			ms++;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
done:
	if (pfd >= 0)
		close(pfd);
	return rc;
}

void rtl_analyse_failed(const char *report, const char *what, const char *path,
                        int err)
{
	say("rtl: no report written to ", strcmp(report, "-") ? report : "stderr", ": ");
	say(what, " ", path);
	say(": ", strerrordesc_np(err) ? strerrordesc_np(err) : "error", "\n");
}

void rtl_analyse(const char *raw, const char *report, int keep)
{
	struct sigaction dfl, old;
	pid_t pid;
	int rc;

	if (!rtlctl[0]) {
		say("rtl: raw record in ", raw,
		    " (rtlctl not found: rtlctl report --json RAW makes the report)\n");
		return;
	}
	/* Neither the program's SIGCHLD handler nor SIG_IGN's automatic
	 * reaping may take rtlctl's exit status from us. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	rtl_next()->sigaction(SIGCHLD, &dfl, &old);
	/* vfork: the child only execs, and the ending program's mappings
	 * (thousands, with many regions) are not copied for it. */
	pid = vfork();
	if (pid == 0)
		child(raw, report);
	rc = pid > 0 ? wait_for(pid) : -1;
	rtl_next()->sigaction(SIGCHLD, &old, NULL);
	if (rc == RTL_EXIT_NOT_WRITTEN)
		return; /* rtlctl said why, and where the raw record stays */
	if (rc != 0) {
		say("rtl: the report was not made; the raw record is ", raw,
		    " (see: rtlctl report RAW)\n");
		return;
	}
	if (!keep)
		unlink(raw);
}
