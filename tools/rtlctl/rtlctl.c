/* rtlctl's entry point: dispatch to a command; help, version and usage for
 * everything else (help.c has what each command says). */
#include <string.h>

#include "tools/rtlctl/rtlctl.h"

static int is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "help");
}

int main(int argc, char **argv)
{
	const struct rtlctl_command *c;

	if (argc < 2) {
		usage_of(NULL, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("rtlctl %s\n", RTL_VERSION);
		return 0;
	}
	if (is_help(argv[1]) && argc == 2) {
		help_all(stdout);
		return 0;
	}
	if (is_help(argv[1])) { /* rtlctl help CMD */
		if (argc == 3 && help_of(argv[2], stdout) == 0)
			return 0;
		if (argc == 3)
			fprintf(stderr, "rtlctl help: unknown command '%s'\n", argv[2]);
		else
			fprintf(stderr, "rtlctl help: one command at a time\n");
		fprintf(stderr, "usage: rtlctl help [CMD]\n");
		return EXIT_USAGE;
	}
	c = command_find(argv[1]);
	if (c) {
		opterr = 0; /* each command says what was wrong: option_error */
		return c->fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "rtlctl: unknown command '%s'\n", argv[1]);
	usage_of(NULL, stderr);
	return EXIT_USAGE;
}
