/* What `rtlctl check` says of the policy, said by the preload when rtlctl
 * did not start the program (`LD_PRELOAD=... RTL_CONFIG=FILE prog`: no
 * RTL_RTLCTL, which rtlctl run and compare set), as
 * "rtl: FILE:LINE: warning: ..." on stderr, once per run: the first
 * process says it and marks the environment with RTL_WARNED=FILE, which
 * the programs it starts inherit and which keeps them quiet about the same
 * file (docs/report.md, "Policy warnings"). A process forked without exec
 * runs no constructor: it says nothing again by construction. */
#include "preload/engine/warn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char **environ;

#define MARK "RTL_WARNED="

static void say(const char *file, const struct rtl_policy_warning *w)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "rtl: %s:%d: warning: %s\n", file,
	                 w->line, w->text);
	size_t len = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n
	                                                  : sizeof(line) - 1;

	for (size_t done = 0; done < len;) {
		ssize_t k = write(STDERR_FILENO, line + done, len - done);
		if (k <= 0)
			break;
		done += (size_t)k;
	}
}

/* environ with MARK config in place of any MARK entry, in memory of its
 * own: edited directly, never through setenv, which a program may define
 * over libc's (bash does, over its shell variables, not set up yet). The
 * old array stays as it was: what was read from it stays valid. */
static void mark(const char *config)
{
	size_t n = 0, k = 0, len = sizeof(MARK) + strlen(config);
	char **env, *entry;

	while (environ && environ[n])
		n++;
	env = mmap(NULL, (n + 2) * sizeof(*env) + len, PROT_READ | PROT_WRITE,
	           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (env == MAP_FAILED)
		return;
	entry = (char *)(env + n + 2);
	memcpy(entry, MARK, sizeof(MARK) - 1);
	memcpy(entry + sizeof(MARK) - 1, config, len - sizeof(MARK) + 1);
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], MARK, sizeof(MARK) - 1))
			env[k++] = environ[i];
	env[k++] = entry;
	env[k] = NULL;
	environ = env;
}

void rtl_engine_warn(const struct rtl_policy *p, const char *config)
{
	static struct rtl_policy_warning w[RTL_POLICY_WARNINGS_MAX];
	const char *rtlctl = secure_getenv("RTL_RTLCTL");
	const char *said = secure_getenv("RTL_WARNED");
	int n;

	if ((rtlctl && *rtlctl) || (said && !strcmp(said, config)))
		return;
	n = rtl_policy_warnings(p, w, RTL_POLICY_WARNINGS_MAX);
	for (int i = 0; i < n; i++)
		say(p->source, &w[i]);
	if (n)
		mark(config);
}
