/* The report of one `rtlctl run` (run_report.c): every process of the run
 * leaves its raw record in a folder of the run's own (RTL_RUN_DIR), and
 * when the program has ended rtlctl makes one report of them all: the
 * records are analysed once, here, never in the traced processes. */
#ifndef RTL_RUN_REPORT_H
#define RTL_RUN_REPORT_H

#include <stddef.h>
#include <stdio.h>

/* A new folder for the run's records (mode 0700: beside RTL_RAW's file
 * if set, else in $TMPDIR, else /dev/shm, else /tmp), its path into dir:
 * 0, or -1 with errno. */
int run_dir_make(char *dir, size_t len);

/* The run's report out of the records in dir (root_pid: the program's):
 * written to report (or the
 * next free name; "-": as JSON to stderr), its summary and its name on
 * out; the folder and the records removed. 0, or RTL_EXIT_NOT_WRITTEN
 * after a line on out that says why (the records then stay). */
int run_report_make(const char *dir, const char *report, long root_pid, FILE *out);

#endif
