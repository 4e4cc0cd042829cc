/* rtlctl selftest: run rtl's checks (rtl-selftest) once per glibc string
 * variant this CPU can run, so a user trying rtl on a new machine learns
 * in seconds whether its trap path is right there. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/rtlctl/rtlctl.h"

#ifndef RTL_BIN_TO_LIBEXEC
#define RTL_BIN_TO_LIBEXEC "../libexec/rtl"
#endif

#define MAX_VARIANTS 8

/* $RTL_SELFTEST, else beside rtlctl in a build tree, else installed
 * relative to rtlctl (a moved install still finds it). */
static int find_selftest(char *out, size_t len)
{
	static const char *const rel[] = { "selftest/rtl-selftest",
		                           RTL_BIN_TO_LIBEXEC "/rtl-selftest" };
	const char *env = getenv("RTL_SELFTEST");
	char self[PATH_MAX], *dir;
	ssize_t n;

	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, X_OK);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	dir = dirname(self); /* once: it cuts self */
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(out, len, "%s/%s", dir, rel[i]);
		if (access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

struct variant {
	char name[32];
	char tunables[200];
};

/* Ask rtl-selftest which variants the CPU can run. */
static int list_variants(const char *prog, struct variant *v, int max)
{
	char cmd[PATH_MAX + 32], line[256];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "'%s' --list-variants", prog);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n < max && fgets(line, sizeof(line), p)) {
		char *tab = strchr(line, '\t');
		line[strcspn(line, "\n")] = '\0';
		if (!tab)
			continue;
		*tab = '\0';
		snprintf(v[n].name, sizeof(v[n].name), "%.31s", line);
		snprintf(v[n].tunables, sizeof(v[n].tunables), "%.199s", tab + 1);
		n++;
	}
	return pclose(p) == 0 ? n : -1;
}

/* Run rtl-selftest with glibc made to pick variant v; its exit status. */
static int run_variant(const char *prog, const struct variant *v, char **checks,
                       int nchecks)
{
	const char *old = getenv("GLIBC_TUNABLES");
	char tun[512];
	int status;
	pid_t pid;

	if (*v->tunables) {
		if (old && *old)
			snprintf(tun, sizeof(tun), "%s:%s", old, v->tunables);
		else
			snprintf(tun, sizeof(tun), "%s", v->tunables);
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char *args[64];
		int k = 0;

		if (*v->tunables)
			setenv("GLIBC_TUNABLES", tun, 1);
		args[k++] = (char *)prog;
		for (int i = 0; i < nchecks && k < 63; i++)
			args[k++] = checks[i];
		args[k] = NULL;
		execv(prog, args);
		fprintf(stderr, "rtlctl selftest: cannot run %s: %s\n", prog,
		        strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int cmd_selftest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "variant", required_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct variant v[MAX_VARIANTS];
	const char *only = NULL;
	char prog[PATH_MAX];
	int c, n, ran = 0, bad = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":v:h", opts, NULL)) != -1) {
		switch (c) {
		case 'v': only = optarg; break;
		case 'h': help_of("selftest", stdout); return 0;
		default: return option_error("selftest", c, argv);
		}
	}
	if (find_selftest(prog, sizeof(prog)) < 0) {
		fprintf(stderr, "rtlctl selftest: cannot find rtl-selftest (tried %s; set RTL_SELFTEST)\n",
		        prog);
		return EXIT_INVALID;
	}
	n = list_variants(prog, v, MAX_VARIANTS);
	if (n <= 0) {
		fprintf(stderr, "rtlctl selftest: %s --list-variants failed\n", prog);
		return EXIT_INVALID;
	}
	for (int i = 0; i < n; i++) {
		int st;
		if (only && strcmp(only, v[i].name) != 0)
			continue;
		printf("== glibc variant %s%s%s\n", v[i].name,
		       *v[i].tunables ? ", GLIBC_TUNABLES=" : " (glibc's own choice)",
		       v[i].tunables);
		st = run_variant(prog, &v[i], argv + optind, argc - optind);
		ran++;
		if (st != 0)
			bad++;
	}
	if (!ran) {
		fprintf(stderr, "rtlctl selftest: this CPU has no variant '%s'\n", only);
		return EXIT_USAGE;
	}
	printf("selftest: %d of %d glibc variants passed\n", ran - bad, ran);
	return bad ? 1 : 0;
}
