/* Writing a report file (report_save.h). The report
 * holds the program's argv (a --password= argument with it), so it is
 * made 0600, and, like the raw record, under a temporary name first:
 * a full disk leaves nothing, a planted name is never followed. */
#include "tools/report/report_save.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

int report_save_as(json_t *r, const char *out, char *got, size_t len)
{
	char tmp[NAME_MAX_LEN];
	int fd = rtl_file_temp(out, tmp, sizeof(tmp));

	if (fd < 0)
		return -1;
	if (dump(r, fd) < 0 || rtl_file_publish(tmp, out, got, len) < 0) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

int report_save(json_t *r, const char *out, const char *raw)
{
	char got[NAME_MAX_LEN];

	return report_save_as(r, out, got, sizeof(got)) < 0
	               ? not_written(out, raw, errno)
	               : 0;
}
