/* Reading what a run left (load.c): a JSON report, or raw records, one per
 * process, made into one report. Every command that reads a run comes
 * here. */
#ifndef RTLCTL_LOAD_H
#define RTLCTL_LOAD_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

/* A file's bytes: mapped when it is a regular file (only the pages read
 * are in memory), else read whole. */
struct rtl_file {
	char *data;
	size_t size;
	int mapped;
};
/* 0, or -1 with the reason ("PATH: ...") in why. */
int rtl_file_map(struct rtl_file *m, const char *path, char *why, size_t len);
void rtl_file_unmap(struct rtl_file *m);

/* A report asked for by the name the policy gave it (NAME.json) that a
 * process left as its raw record (NAME.raw) instead: that record's path
 * (free it), or NULL if path is not such a name. */
char *rtl_raw_instead(const char *path);

/* The report in the file at path (a JSON report, checked, or a raw record,
 * made into one); NULL with the reason ("PATH: ...") in why. *is_raw
 * says which it was. */
json_t *rtl_load_report(const char *path, int *is_raw, char *why, size_t len);

/* The n files as one report (rtl_report_merge when n > 1, root_pid the
 * program's, or 0 if not known); NULL with the reason in why. *is_raw:
 * all of them were raw records. */
json_t *rtl_load_reports(char *const *paths, size_t n, long root_pid,
                         int *is_raw, char *why, size_t len);

/* The raw records a run left in dir (NAME.PID.raw, NAME.PID.raw.N),
 * their paths in *paths (the caller frees each and the array): how many,
 * or -1 with errno. */
ssize_t rtl_run_records(const char *dir, char ***paths);

/* One report of every record in dir (rtl_load_reports); NULL with the
 * reason in why, also when there is none. */
json_t *rtl_load_run(const char *dir, long root_pid, char *why, size_t len);

#endif
