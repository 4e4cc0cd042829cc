/* Writing a report file and finding it again (report_save.h). The report
 * holds the program's argv (a --password= argument with it), so it is
 * made 0600, and, like the raw record, under a temporary name first:
 * a full disk leaves nothing, a planted name is never followed. */
#include "tools/report/report_save.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"
#include "policy/report_file.h"
#include "preload/track/format.h"

#define NAME_MAX_LEN (RTL_POLICY_PATH_MAX + 128)

static int not_written(const char *out, const char *raw, int err)
{
	fprintf(stderr, "rtl: no report written to %s: %s", out, strerror(err));
	if (raw)
		fprintf(stderr, " (the raw record stays: rtlctl report %s)", raw);
	fputc('\n', stderr);
	return RTL_EXIT_NOT_WRITTEN;
}

/* Write r to fd and close it: 0, or -1 with errno. */
static int dump(json_t *r, int fd)
{
	FILE *f = fdopen(fd, "w");
	int e;

	if (!f) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	errno = EIO; /* what a failed write leaves if stdio keeps no errno */
	if (json_dumpf(r, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) < 0 ||
	    fflush(f) == EOF || ferror(f)) {
		e = errno;
		fclose(f);
		errno = e;
		return -1;
	}
	return fclose(f) == EOF ? -1 : 0;
}

int report_save(json_t *r, const char *out, const char *raw)
{
	char tmp[NAME_MAX_LEN], got[NAME_MAX_LEN];
	int fd = rtl_file_temp(out, tmp, sizeof(tmp));

	if (fd < 0)
		return not_written(out, raw, errno);
	if (dump(r, fd) < 0 || rtl_file_publish(tmp, out, got, sizeof(got)) < 0) {
		int e = errno;
		unlink(tmp);
		return not_written(out, raw, e);
	}
	return 0;
}

/* Whether the file at name is a report of process pid, written since. */
static int is_report_of(const char *name, long pid, time_t since)
{
	int fd = open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	json_t *r, *v;
	struct stat st;
	int yes = 0;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime >= since &&
	    (r = json_loadfd(fd, 0, NULL))) {
		v = json_object_get(json_object_get(r, "run"), "pid");
		yes = json_is_integer(v) && json_integer_value(v) == pid;
		json_decref(r);
	}
	close(fd);
	return yes;
}

int report_find(const char *path, long pid, time_t since, char *found, size_t len)
{
	struct stat st;

	for (unsigned k = 0; k < RTL_FILE_TRIES; k++) {
		if (rtl_file_name(path, k, found, len) < 0)
			return -1;
		if (is_report_of(found, pid, since))
			return 0;
		if (lstat(found, &st) < 0 && errno == ENOENT)
			return -1; /* names are taken in order: none further */
	}
	return -1;
}
