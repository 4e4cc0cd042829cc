/* rtlctl: configure, run and report on programs under rtl's preload. One
 * file per command; this header is what they share. */
#ifndef RTLCTL_H
#define RTLCTL_H

#include <getopt.h>
#include <stdio.h>

#ifndef RTL_VERSION
#define RTL_VERSION "unknown"
#endif

/* Exit codes besides the program's own: 1 invalid input (policy, report),
 * 2 usage, 3 compare's runs differ, 126/127 the program could not be run. */
enum {
	EXIT_INVALID = 1,
	EXIT_USAGE = 2,
	EXIT_DIFFER = 3,
};
/* report --html, compare --html: the page could not be written (no d3,
 * or OUT), as report -o when OUT could not be written. */
#define RTL_EXIT_HTML 3

int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_selftest(int argc, char **argv);

/* A command and what its help says (help.c). */
struct rtlctl_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;    /* the usage line after the name */
	const char *what;    /* one line, lower case, no full stop */
	const char *options; /* one option a line, indented */
	const char *env;     /* the environment it reads, or NULL */
};

/* The command called name, or NULL. */
const struct rtlctl_command *command_find(const char *name);

/* "usage: rtlctl CMD ..." for a command (every command for NULL), to out. */
void usage_of(const char *cmd, FILE *out);

/* The usage line, every option and the environment of cmd, to out; -1 if
 * there is no such command. */
int help_of(const char *cmd, FILE *out);

/* The list of commands, for rtlctl --help. */
void help_all(FILE *out);

/* "rtlctl CMD: MESSAGE" and the usage line on stderr; EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* usage_error for what getopt_long returned (opterr = 0, the option
 * string starting with ':'): an unknown option or a missing argument. */
int option_error(const char *cmd, int opt, char **argv);

/* Print a short summary of a report (after `run`); -1 if unreadable. */
int report_summary(const char *path, FILE *out);

#endif
