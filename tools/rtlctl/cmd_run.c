/* rtlctl run: start a program with the preload and a policy, pass its exit
 * status through, and make the run's report: every process of the run
 * leaves its raw record in a folder of the run's own, and rtlctl analyses
 * them once, when the program has ended (run_report.c). The program's own
 * status is rtlctl's: a death by signal is re-raised (without a core of
 * rtlctl). */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "policy/report_path.h"
#include "tools/rtlctl/launch.h"
#include "tools/rtlctl/preload_find.h"
#include "tools/rtlctl/rtlctl.h"
#include "tools/rtlctl/run_report.h"

/* A relative report name made absolute against the folder rtlctl started
 * in: the program and its children write it wherever they have gone, and
 * rtlctl looks for it here. "-" (stderr) and "" (none) stay. */
static int absolute(const char *path, char *out, size_t len)
{
	char cwd[PATH_MAX];

	if (!path[0] || path[0] == '/' || !strcmp(path, "-") || !getcwd(cwd, sizeof(cwd)))
		return -1;
	return snprintf(out, len, "%s/%s", cwd, path) < (int)len ? 0 : -1;
}

/* ---- signals: the program is the one they are for ---- */

/* What rtlctl passes on to the program. The terminal's signals (si_code
 * SI_KERNEL) reach the program through its process group already; one a
 * process sends to rtlctl (kill, sigqueue) is sent on. */
static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1,
	                         SIGUSR2, SIGALRM, SIGWINCH, SIGCONT };
#define NFORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))
static volatile pid_t child;
static unsigned char ignored[NFORWARDED]; /* SIG_IGN when rtlctl started */

static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code <= 0 && child > 0)
		kill(child, sig);
}

/* Before fork: the handlers, with the signals blocked until the child's
 * pid is known (the original mask into orig). A signal ignored when rtlctl
 * started stays ignored (nohup), for rtlctl and the program. */
static void forward_start(sigset_t *orig)
{
	struct sigaction sa, old;
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, orig);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFORWARDED; i++) {
		sigaction(forwarded[i], NULL, &old);
		ignored[i] = old.sa_handler == SIG_IGN;
		if (!ignored[i])
			sigaction(forwarded[i], &sa, NULL);
	}
}

static void forward_to(pid_t pid, const sigset_t *orig)
{
	child = pid;
	sigprocmask(SIG_SETMASK, orig, NULL); /* those pending go on now */
}

/* In the child, before exec: the program dies with rtlctl (even of
 * SIGKILL, which rtlctl cannot pass on), and starts with rtlctl's own
 * dispositions and mask. */
static void child_start(pid_t parent, const sigset_t *orig)
{
	for (size_t i = 0; i < NFORWARDED; i++)
		if (!ignored[i])
			signal(forwarded[i], SIG_DFL);
	launch_tie(parent);
	sigprocmask(SIG_SETMASK, orig, NULL);
}

static int pass_status(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_CORE, &none); /* the program's core, not ours */
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	return EXIT_INVALID;
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-children", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct rtl_policy policy;
	struct rtl_policy_errors errs;
	char preload[PATH_MAX], config[PATH_MAX], report[PATH_MAX], prog[PATH_MAX];
	char report_abs[PATH_MAX], why[512], run_dir[PATH_MAX];
	const char *config_arg = NULL, *report_arg = NULL;
	int opt, status, no_children = 0;
	const char *tmpl;
	sigset_t orig_mask;
	pid_t pid, parent;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+:c:o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': config_arg = optarg; break;
		case 'o': report_arg = optarg; break;
		case 'n': no_children = 1; break;
		case 'h': help_of("run", stdout); return 0;
		default: return option_error("run", opt, argv);
		}
	}
	if (optind >= argc)
		return usage_error("run", "no program given");
	if (config_arg) {
		if (rtl_policy_load(config_arg, &policy, &errs) < 0) {
			fputs(errs.text, stderr);
			return EXIT_INVALID;
		}
		if (!realpath(config_arg, config)) {
			fprintf(stderr, "rtlctl run: %s: %s\n", config_arg, strerror(errno));
			return EXIT_INVALID;
		}
	} else {
		rtl_policy_load_builtin(&policy);
	}
	if (preload_find(preload, sizeof(preload)) < 0) {
		fprintf(stderr, "rtlctl run: cannot find librtlpreload.so (tried %s; set RTL_PRELOAD)\n",
		        preload);
		return 127;
	}
	if (preload_check(preload, why, sizeof(why)) < 0) {
		fprintf(stderr, "rtlctl run: %s cannot be loaded: %s\n", preload, why);
		return 127;
	}
	if (report_arg && absolute(report_arg, report_abs, sizeof(report_abs)) == 0)
		report_arg = report_abs;
	tmpl = report_arg ? report_arg : policy.report;
	run_dir[0] = '\0';
	if (tmpl[0] && run_dir_make(run_dir, sizeof(run_dir)) < 0) {
		fprintf(stderr, "rtlctl run: no folder for the run's records: %s\n",
		        strerror(errno));
		return 126;
	}
	fflush(NULL);
	parent = getpid();
	forward_start(&orig_mask);
	pid = fork();
	if (pid < 0) {
		perror("rtlctl run: fork");
		return 126;
	}
	if (pid == 0) {
		child_start(parent, &orig_mask);
		launch_env(preload, config_arg ? config : NULL, report_arg);
		if (no_children) /* the preload reads it, then drops itself */
			setenv("RTL_NO_CHILDREN", "1", 1);
		if (run_dir[0])
			setenv("RTL_RUN_DIR", run_dir, 1);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "rtlctl run: %s: %s\n", argv[optind], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	forward_to(pid, &orig_mask);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child = 0;                                        /* its pid may be someone else's from now on */
	snprintf(prog, sizeof(prog), "%s", argv[optind]); /* basename edits it */
	rtl_report_path(tmpl, basename(prog), (long)pid, 0, report, sizeof(report));
	if (run_dir[0])
		run_report_make(run_dir, report, (long)pid, stderr);
	return pass_status(status);
}
