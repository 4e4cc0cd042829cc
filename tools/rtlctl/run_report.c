/* The report of one `rtlctl run` (run_report.h). A process that outlives
 * the program, or ends without a record (_exit, SIGKILL), is not in it;
 * the report's "processes" lists those that are. */
#include "tools/rtlctl/run_report.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/report_file.h"
#include "preload/track/format.h"
#include "tools/interpret/load.h"
#include "tools/report/report_print.h"
#include "tools/report/report_read.h"
#include "tools/report/report_save.h"
#include "tools/rtlctl/rtlctl.h"
#include "tools/util/text.h"

/* Where the records wait: beside RTL_RAW's file, which they are renamed
 * to (a rename cannot cross file systems); else $TMPDIR; else /dev/shm, a
 * tmpfs: creating a file there costs a few microseconds where a disk file
 * system's new inode costs a hundred or more, once per process; else /tmp. */
static const char *run_dir_parent(char *buf, size_t len)
{
	const char *raw = getenv("RTL_RAW"), *tmp = getenv("TMPDIR");
	struct stat st;

	if (raw && *raw) {
		const char *slash = strrchr(raw, '/');

		if (!slash)
			return ".";
		if (slash == raw)
			return "/";
		if ((size_t)(slash - raw) < len) {
			memcpy(buf, raw, (size_t)(slash - raw));
			buf[slash - raw] = '\0';
			return buf;
		}
	}
	if (tmp && tmp[0] == '/')
		return tmp;
	if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
	    access("/dev/shm", W_OK | X_OK) == 0)
		return "/dev/shm";
	return "/tmp";
}

int run_dir_make(char *dir, size_t len)
{
	char buf[PATH_MAX];
	const char *parent = run_dir_parent(buf, sizeof(buf));

	if (snprintf(dir, len, "%s/rtl-run.XXXXXX", parent) >= (int)len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(dir) ? 0 : -1;
}

/* The records gone, or, with RTL_RAW, kept under that name (the next
 * free FILE.N for each after the first: report_file.h). */
static void remove_all(const char *dir, char **paths, size_t n)
{
	const char *keep = getenv("RTL_RAW");
	char got[PATH_MAX + 32];

	for (size_t i = 0; i < n; i++)
		if (!keep || !*keep || rtl_file_publish(paths[i], keep, got, sizeof(got)) < 0)
			unlink(paths[i]);
	rmdir(dir); /* not if a record came in meanwhile: it stays */
}

int run_report_make(const char *dir, const char *report, long root_pid, FILE *out)
{
	char **paths, why[512], shown[PATH_MAX + 64];
	ssize_t n = rtl_run_records(dir, &paths);
	int is_raw, rc = 0;
	json_t *r;

	if (n <= 0) {
		/* No process wrote one: each that failed has said why. */
		rmdir(dir);
		free(paths);
		return 0;
	}
	r = rtl_load_reports(paths, (size_t)n, root_pid, &is_raw, why, sizeof(why));
	if (!r) {
		fprintf(out, "rtl: no report: %s (the raw records stay in %s)\n",
		        rtl_shown(why, shown, sizeof(shown)), dir);
		rc = RTL_EXIT_NOT_WRITTEN;
	} else if (!strcmp(report, "-")) {
		json_dumpf(r, stderr, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		fputc('\n', stderr);
	} else {
		char got[PATH_MAX + 32];

		if (report_save_as(r, report, got, sizeof(got)) < 0) {
			fprintf(out, "rtl: no report written to %s: %s (the raw records "
			             "stay in %s: rtlctl report %s/*.raw)\n",
			        report, strerror(errno), dir, dir);
			rc = RTL_EXIT_NOT_WRITTEN;
		} else {
			report_print_summary(r, out);
			if (json_array_size(json_object_get(r, "processes")) > 1)
				fprintf(out, "rtl: %zu processes\n",
				        json_array_size(json_object_get(r, "processes")));
			if (strcmp(got, report))
				fprintf(out, "rtl: report: %s (%s was taken; see: rtlctl report %s)\n",
				        got, report, got);
			else
				fprintf(out, "rtl: report: %s (see: rtlctl report %s)\n", got, got);
		}
	}
	if (rc == 0)
		remove_all(dir, paths, (size_t)n);
	for (ssize_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	json_decref(r);
	return rc;
}
