/* The reports one `rtlctl run` left: the program's (under the name asked
 * for, or the next free one: report_file.h) and its descendants', which
 * carry the program's pid as run.root_pid (RTL_REPORT_PID). rtlctl run
 * lists them all when the program ends. */
#ifndef RTL_RUN_REPORTS_H
#define RTL_RUN_REPORTS_H

#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* The glob that matches the reports of tmpl (the policy's template, or
 * -o's name) written by any process: %e and %p as "*", the pid a
 * descendant adds before the extension as "*", glob's own characters
 * escaped. -1 if it does not fit in len. */
int run_reports_glob(const char *tmpl, char *out, size_t len);

/* The summary and every report: the program's (pid; report is its name
 * expanded from the template) then its descendants' written since
 * started, at most a screenful named one by one. */
void run_reports_list(const char *tmpl, const char *report, pid_t pid,
                      time_t started, FILE *out);

#endif
