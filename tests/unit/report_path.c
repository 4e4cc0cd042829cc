/* The report's file name (policy/report_path.h): %e and %p expanded, and a
 * process other than the owner naming its report with its pid before the
 * extension, so that c.json's children write c.PID.json. */
#include "policy/report_path.h"

#include "tests/unit/test.h"

static const struct {
	const char *tmpl, *prog;
	long pid, owner;
	const char *want;
} cases[] = {
	{ "rtl-report.%e.%p.json", "ls", 42, 0, "rtl-report.ls.42.json" },
	{ "c.json", "bash", 42, 42, "c.json" },    /* the owner itself */
	{ "c.json", "true", 43, 42, "c.43.json" }, /* a child: before .json */
	{ "/tmp/out/c.json", "true", 43, 42, "/tmp/out/c.43.json" },
	{ "c", "true", 43, 42, "c.43" },         /* no extension */
	{ "a.d/c", "true", 43, 42, "a.d/c.43" }, /* a dot in a folder name */
	{ ".rtl", "true", 43, 42, ".rtl.43" },   /* a leading dot */
	{ "dir/.rtl", "true", 43, 42, "dir/.rtl.43" },
	{ "c.tar.gz", "true", 43, 42, "c.tar.43.gz" },    /* the last dot */
	{ "%e.%p.json", "true", 43, 42, "true.43.json" }, /* %p: nothing added */
	{ "c.json", "true", 43, 0, "c.json" },            /* no owner */
};

TEST(names_from_the_table)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[256];
		size_t n = rtl_report_path(cases[i].tmpl, cases[i].prog, cases[i].pid,
		                           cases[i].owner, out, sizeof(out));
		if (strcmp(out, cases[i].want) || n != strlen(out)) {
			printf("# %s (pid %ld, owner %ld): got '%s' (%zu), want '%s'\n",
			       cases[i].tmpl, cases[i].pid, cases[i].owner, out, n,
			       cases[i].want);
			exit(1);
		}
	}
}

/* A buffer too short: always terminated, never overrun; the pid kept
 * before the extension's end is. */
TEST(short_buffers_are_cut_and_terminated)
{
	char out[16];

	for (size_t len = 1; len <= sizeof(out); len++) {
		memset(out, 'X', sizeof(out));
		size_t n = rtl_report_path("report.json", "p", 123456, 1, out, len);
		CHECK(n < len);
		CHECK(out[n] == '\0');
		for (size_t i = len; i < sizeof(out); i++)
			CHECK(out[i] == 'X');
	}
	rtl_report_path("report.json", "p", 123456, 1, out, 16);
	CHECK(!strcmp(out, "report.123456.j"));
}
