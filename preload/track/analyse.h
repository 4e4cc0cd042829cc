/* Where the raw record goes (analyse.c), and rtlctl run on it for a report
 * to stderr: the traced program never builds the report itself. */
#ifndef RTL_ANALYSE_H
#define RTL_ANALYSE_H

#include <stddef.h>

/* Find rtlctl: $RTL_RTLCTL (rtlctl run sets it to itself), else beside
 * the preload in a build tree, else in the install's bindir relative to
 * the preload's folder. Not from a signal handler. */
void rtl_analyse_init(void);

/* Whether this process is part of an `rtlctl run` (RTL_RUN_DIR): its
 * record goes to the run's folder, and rtlctl makes the report. */
int rtl_analyse_in_run(void);

/* Where the raw record of the report at path goes: under rtlctl run its
 * folder's NAME.PID.raw (NAME: the program's), else $RTL_RAW if set, else path
 * with .json replaced by (or .raw added) .raw, or $TMPDIR/rtl-report.PID.raw
 * for the report "-" (stderr); the file itself is made beside that name
 * (report_file.h). Async-signal-safe. */
void rtl_analyse_raw_path(const char *report, const char *name, char *raw,
                          size_t len);

/* Run rtlctl on the raw record (report "-": to stderr) and wait for it, a
 * minute at most; then remove the raw record unless keep. If rtlctl cannot
 * be run, the raw record stays and stderr says how to turn it into the
 * report. Async-signal-safe (vfork, execve, waitpid). */
void rtl_analyse(const char *raw, const char *report, int keep);

/* The one line that says no report was written, and why: "rtl: no report
 * written to REPORT: WHAT PATH: REASON". Async-signal-safe. */
void rtl_analyse_failed(const char *report, const char *what, const char *path,
                        int err);

#endif
