/* The reports of many processes of one run made into one (merge.c):
 * totals, rules, sites and stacks added up, the lists kept as one
 * process's are, and a row per process in "processes" (docs/report-fields.md,
 * "Processes"). */
#ifndef RTLCTL_MERGE_H
#define RTLCTL_MERGE_H

#include <jansson.h>
#include <stddef.h>

/* One report for the n given (checked ones: report_read.c), new; the run
 * and policy are the root process's: root_pid's if it is among them (a
 * note says when it is not), else the one whose parent is none of the
 * others. NULL if n is 0 or memory runs out. */
json_t *rtl_report_merge(json_t **reports, size_t n, long root_pid);

/* "processes" of a report of one process: its row alone. */
json_t *rtl_report_processes(json_t *r);

#endif
