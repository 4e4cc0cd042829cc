/* Starting a program under rtl's preload: its environment, and its life
 * tied to rtlctl's. In the child, between fork and exec. */
#include "tools/rtlctl/launch.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "policy/policy.h"

void launch_env(const char *preload, const char *config, const char *report)
{
	const char *old = getenv("LD_PRELOAD");
	char *both, self[PATH_MAX], pid[24];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (old && *old && asprintf(&both, "%s:%s", preload, old) > 0)
		setenv("LD_PRELOAD", both, 1);
	else
		setenv("LD_PRELOAD", preload, 1);
	setenv("RTL_CONFIG", config ? config : RTL_CONFIG_BUILTIN, 1);
	/* A report to stderr (report = -): the preload has this rtlctl print
	 * it as the process ends. */
	if (n > 0) {
		self[n] = '\0';
		setenv("RTL_RTLCTL", self, 1);
	}
	if (report)
		setenv("RTL_REPORT", report, 1);
	/* Every process of the run leaves its raw record in the run's folder
	 * (RTL_RUN_DIR, cmd_run.c) and names the program as its root, which
	 * is how the report tells the program from its children. */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("RTL_REPORT_PID", pid, 1);
}

void launch_tie(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		raise(SIGKILL); /* rtlctl died before prctl: nobody to wait for us */
}
