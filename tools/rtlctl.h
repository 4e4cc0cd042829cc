/* rtlctl: configure, run and report on programs under rtl's preload. One
 * file per command; this header is what they share. */
#ifndef RTLCTL_H
#define RTLCTL_H

#include <stdio.h>

/* Exit codes besides the program's own: 1 invalid input (policy, report),
 * 2 usage, 126/127 the program could not be run. */
enum {
	EXIT_INVALID = 1,
	EXIT_USAGE = 2,
};

int cmd_run(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_selftest(int argc, char **argv);

/* "usage: rtlctl CMD ..." for a command, to out. */
void usage_of(const char *cmd, FILE *out);

/* Print a short summary of a report (after `run`); -1 if unreadable. */
int report_summary(const char *path, FILE *out);

#endif
