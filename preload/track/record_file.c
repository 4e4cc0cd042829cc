/* Where a process's raw record goes (record_file.h): its path, as the
 * report's (policy/report_path.h), and its file, made new beside that name
 * (policy/report_file.h: never through a planted name) with the magic
 * written first. Async-signal-safe: the record is written from fatal
 * signal handlers too. */
#include "preload/track/record_file.h"

#include <errno.h>
#include <unistd.h>

#include "policy/policy.h"
#include "policy/report_file.h"
#include "policy/report_path.h"
#include "preload/engine/engine.h"
#include "preload/track/analyse.h"
#include "preload/track/format.h"

static long owner; /* the report's owner (RTL_REPORT_PID), read at start */

void rtl_record_owner(long pid)
{
	owner = pid;
}

void rtl_record_paths(char *report, size_t rlen, char *raw, size_t len)
{
	rtl_report_path(rtl_engine.report, program_invocation_short_name,
	                (long)getpid(), owner, report, rlen);
	rtl_analyse_raw_path(report, program_invocation_short_name, raw, len);
}

/* The magic first: fd's record starts. 0, or -1 (fd closed) with errno. */
static int start_record(int fd)
{
	if (write(fd, RTL_TRACK_MAGIC, RTL_TRACK_MAGIC_LEN) != RTL_TRACK_MAGIC_LEN) {
		int e = errno ? errno : EIO;

		close(fd);
		errno = e;
		return -1;
	}
	return 0;
}

int rtl_record_open(char *tmp, size_t len)
{
	char report[RTL_POLICY_PATH_MAX + 32], raw[RTL_POLICY_PATH_MAX + 64];
	int fd;

	rtl_record_paths(report, sizeof(report), raw, sizeof(raw));
	fd = rtl_file_temp(raw, tmp, len);
	if (fd >= 0 && start_record(fd) < 0) {
		int e = errno;

		unlink(tmp);
		errno = e;
		return -1;
	}
	return fd;
}

int rtl_record_open_unnamed(char *tmp, size_t len)
{
	char report[RTL_POLICY_PATH_MAX + 32], raw[RTL_POLICY_PATH_MAX + 64];
	int fd;

	rtl_record_paths(report, sizeof(report), raw, sizeof(raw));
	fd = rtl_file_unnamed(raw);
	if (fd < 0)
		return rtl_record_open(tmp, len);
	if (len)
		tmp[0] = '\0';
	return start_record(fd) < 0 ? -1 : fd;
}
