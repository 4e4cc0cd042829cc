/* rtlctl's entry point: dispatch to a command, usage for everything else. */
#include <string.h>

#include "rtlctl.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *args;
	const char *what;
} commands[] = {
	{ "run", cmd_run, "[-c FILE] [-o REPORT] -- PROG ARGS...",
	  "run PROG under rtl with a policy (the built-in one without -c)" },
	{ "check", cmd_check, "FILE", "validate a policy file" },
	{ "show", cmd_show, "FILE", "print the effective policy, defaults filled in" },
	{ "report", cmd_report, "FILE [--json [-o OUT]]", "tables from a run's report or raw record; -o writes the JSON" },
	{ "init", cmd_init, "[FILE]", "write a commented default policy (stdout without FILE)" },
	{ "selftest", cmd_selftest, "[--variant NAME] [CHECK...]",
	  "check rtl's trap path on this CPU, per glibc string variant" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

void usage_of(const char *cmd, FILE *out)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!cmd || strcmp(cmd, commands[i].name) == 0)
			fprintf(out, "usage: rtlctl %s %s\n", commands[i].name,
			        commands[i].args);
}

static void help(FILE *out)
{
	fprintf(out, "rtlctl: region trapping for unmodified programs\n\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  rtlctl %-8s %-40s %s\n", commands[i].name,
		        commands[i].args, commands[i].what);
	fprintf(out, "\nEach command takes --help. See docs/policy.md.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage_of(NULL, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		help(stdout);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "rtlctl: unknown command '%s'\n", argv[1]);
	usage_of(NULL, stderr);
	return EXIT_USAGE;
}
