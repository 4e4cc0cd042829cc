/* Listing the reports of one `rtlctl run` (run_reports.h): the program's
 * by its name, its descendants' by the template's glob, each read to check
 * that it is a report of this run (run.root_pid) written since it began. */
#include "tools/rtlctl/run_reports.h"

#include <glob.h>
#include <jansson.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/report/report_save.h"
#include "tools/rtlctl/rtlctl.h"
#include "tools/util/text.h"

#define MAX_LISTED 20

/* Append s (n bytes) to out at *k; -1 if it does not fit. */
static int add(char *out, size_t len, size_t *k, const char *s, size_t n)
{
	if (*k + n >= len)
		return -1;
	memcpy(out + *k, s, n);
	*k += n;
	out[*k] = '\0';
	return 0;
}

int run_reports_glob(const char *tmpl, char *out, size_t len)
{
	size_t k = 0, base = 0, dot = 0;
	int has_p = strstr(tmpl, "%p") != NULL;

	if (!len)
		return -1;
	out[0] = '\0';
	for (const char *s = tmpl; *s; s++) {
		if (s[0] == '%' && (s[1] == 'e' || s[1] == 'p')) {
			if (add(out, len, &k, "*", 1) < 0)
				return -1;
			s++;
			continue;
		}
		if (*s == '/') {
			base = k + 1;
			dot = 0;
		} else if (*s == '.' && k > base) {
			dot = k; /* the last one not leading its name */
		}
		if (strchr("*?[\\", *s) && add(out, len, &k, "\\", 1) < 0)
			return -1;
		if (add(out, len, &k, s, 1) < 0)
			return -1;
	}
	if (has_p)
		return 0;
	/* A descendant's pid goes before the extension (report_path.h). */
	if (!dot)
		return add(out, len, &k, ".*", 2);
	if (k + 2 >= len)
		return -1;
	memmove(out + dot + 2, out + dot, k - dot + 1);
	memcpy(out + dot, ".*", 2);
	return 0;
}

/* The program name and pid of a report of this run's descendants written
 * since started, or 0. */
static long descendant_report(const char *path, pid_t root, time_t started,
                              char *prog, size_t len)
{
	struct stat st;
	json_t *r, *run;
	const char *name;
	long pid = 0;

	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_mtime < started)
		return 0;
	r = json_load_file(path, 0, NULL);
	run = json_object_get(r, "run");
	if (json_integer_value(json_object_get(run, "root_pid")) == root &&
	    json_integer_value(json_object_get(run, "pid")) != root) {
		pid = (long)json_integer_value(json_object_get(run, "pid"));
		name = json_string_value(json_object_get(run, "program"));
		rtl_shown(name ? name : "?", prog, len);
	}
	json_decref(r);
	return pid;
}

static void list_descendants(const char *tmpl, pid_t pid, time_t started,
                             FILE *out)
{
	char pattern[PATH_MAX * 2], prog[256], shown[PATH_MAX + 64];
	glob_t g;
	size_t listed = 0, more = 0;

	if (run_reports_glob(tmpl, pattern, sizeof(pattern)) < 0 ||
	    glob(pattern, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		long child = descendant_report(g.gl_pathv[i], pid, started, prog,
		                               sizeof(prog));
		if (!child)
			continue;
		if (listed++ == MAX_LISTED) {
			more++;
			listed--;
			continue;
		}
		fprintf(out, "rtl: report: %s (%s, pid %ld)\n",
		        rtl_shown(g.gl_pathv[i], shown, sizeof(shown)), prog, child);
	}
	if (more)
		fprintf(out, "rtl: and %zu more reports of the program's children\n", more);
	globfree(&g);
}

void run_reports_list(const char *tmpl, const char *report, pid_t pid,
                      time_t started, FILE *out)
{
	char found[PATH_MAX + 32];

	if (report_find(report, (long)pid, started, found, sizeof(found)) == 0) {
		report_summary(found, out);
		if (strcmp(found, report))
			fprintf(out, "rtl: report: %s (%s was taken; see: rtlctl report %s)\n",
			        found, report, found);
		else
			fprintf(out, "rtl: report: %s (see: rtlctl report %s)\n", found, found);
	}
	/* None of the program's own: whoever failed to write it has said why. */
	list_descendants(tmpl, pid, started, out);
}
