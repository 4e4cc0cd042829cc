/* rtlctl compare: what regions save over pages for this program. Runs it
 * without rtl, under mechanism = page and under the region mechanism the
 * policy uses (or those --with names), with the same input each time;
 * checks that the outputs are identical; prints the comparison and writes
 * it (compare.json, compare.png, compare.svg) with every run's files into
 * one folder, and with --html one page that sets the runs side by side. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "policy/policy.h"
#include "tools/compare/compare.h"
#include "tools/report/report_html.h"
#include "tools/rtlctl/preload_find.h"
#include "tools/rtlctl/rtlctl.h"

enum {
	OPT_OUTPUTS = 256,
	OPT_HTML,
};

/* The region runs --with names (comma list), after page; -1 after a usage
 * error. */
static int parse_with(struct compare *c, char *list)
{
	for (char *save = NULL, *w = strtok_r(list, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		int m = -1;

		if (!strcmp(w, "policy"))
			m = COMPARE_POLICY;
		if (!strcmp(w, "written"))
			m = COMPARE_WRITTEN;
		for (int k = 0; k < RTL_MECH_COUNT && m == -1; k++)
			if (k != RTL_MECH_PAGE && !strcmp(w, rtl_policy_mechanism_str(k)))
				m = k;
		if (m == -1)
			return usage_error("compare",
			                   "--with: '%s' is not auto, alias, swizzle, tag, policy or written",
			                   w),
			       -1;
		for (int i = 0; i < c->nruns; i++)
			if (!strcmp(c->runs[i].name, w))
				return usage_error("compare", "--with: '%s' twice", w), -1;
		if (c->nruns == COMPARE_RUNS)
			return usage_error("compare", "--with: at most %d mechanisms",
			                   COMPARE_RUNS - 2),
			       -1;
		c->runs[c->nruns].mechanism = m;
		snprintf(c->runs[c->nruns++].name, sizeof(c->runs[0].name), "%s", w);
	}
	return 0;
}

/* Without --with: the region mechanism every rule uses, or the policy as
 * it is when its rules differ. */
static void default_region_run(struct compare *c, const struct rtl_policy *p)
{
	struct compare_run *run = &c->runs[c->nruns++];
	int m = p->nrules ? p->rules[0].mechanism : p->mechanism;

	for (int k = 1; k < p->nrules; k++)
		if (p->rules[k].mechanism != m)
			m = COMPARE_POLICY;
	if (m == RTL_MECH_PAGE)
		m = COMPARE_POLICY; /* page against itself: say so by its name */
	run->mechanism = m;
	snprintf(run->name, sizeof(run->name), "%s",
	         m == COMPARE_POLICY ? "policy" : rtl_policy_mechanism_str(m));
}

/* The folder: made new (or an empty one given), absolute. */
static int make_dir(const char *want, const char *prog, char *out, size_t len)
{
	char name[PATH_MAX], copy[PATH_MAX];

	if (want) {
		snprintf(name, sizeof(name), "%s", want);
	} else {
		snprintf(copy, sizeof(copy), "%s", prog);
		snprintf(name, sizeof(name), "rtl-compare.%s.%d", basename(copy), (int)getpid());
	}
	if (mkdir(name, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "rtlctl compare: %s: %s\n", name, strerror(errno));
		return -1;
	}
	if (!realpath(name, out) || strlen(out) >= len - 64) {
		fprintf(stderr, "rtlctl compare: %s: %s\n", name, strerror(errno));
		return -1;
	}
	if (rmdir(out) == 0 && mkdir(out, 0700) == 0)
		return 0; /* it was empty */
	fprintf(stderr, "rtlctl compare: %s: exists and is not empty\n", name);
	return -1;
}

/* Standard input, when it is not a terminal, saved once for every run. */
static int save_stdin(struct compare *c)
{
	char path[PATH_MAX], buf[65536];
	ssize_t n;
	int fd;

	if (isatty(0))
		return 0;
	snprintf(path, sizeof(path), "%s/stdin", c->dir);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return -1;
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			break;
	c->has_stdin = 1;
	return close(fd);
}

static char **split(char *list)
{
	size_t n = 1;
	char **v;

	for (char *p = list; *p; p++)
		n += *p == ',';
	if (!(v = calloc(n + 1, sizeof(*v))))
		return NULL;
	n = 0;
	for (char *save = NULL, *w = strtok_r(list, ",", &save); w;
	     w = strtok_r(NULL, ",", &save))
		v[n++] = w;
	return v;
}

static int write_json(json_t *cmp, const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/compare.json", dir);
	if (json_dump_file(cmp, path, JSON_INDENT(2) | JSON_SORT_KEYS) < 0) {
		fprintf(stderr, "rtlctl compare: %s: cannot write\n", path);
		return -1;
	}
	return 0;
}

/* The page (docs/report.md, "A comparison"): the comparison and each rtl
 * run's report. */
static int write_html(const struct compare *c, json_t *cmp, const char *out)
{
	json_t *runs = json_object(), *data;
	char title[512];
	int rc;

	for (int i = 0; i < c->nruns; i++)
		if (c->runs[i].r)
			json_object_set_new(runs, c->runs[i].name, report_html_trim(c->runs[i].r));
	data = json_pack("{s:O, s:o}", "compare", cmp, "runs", runs);
	snprintf(title, sizeof(title), "rtlctl compare: %s", c->argv[0]);
	rc = report_html(out, "compare", data, title, "compare");
	json_decref(data);
	return rc;
}

/* The reference run could not start the program: its own message. */
static int not_started(const struct compare *c)
{
	int st = c->runs[0].status;
	char path[PATH_MAX], line[PATH_MAX + 64] = "";
	FILE *f;

	if (!WIFEXITED(st) || (WEXITSTATUS(st) != 126 && WEXITSTATUS(st) != 127))
		return 0;
	snprintf(path, sizeof(path), "%s/none.stderr", c->dir);
	if (!(f = fopen(path, "re")))
		return 0;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "rtlctl compare: ", 16))
		line[0] = '\0';
	fclose(f);
	if (line[0])
		fputs(line, stderr);
	return line[0] ? WEXITSTATUS(st) : 0;
}

int cmd_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "with", required_argument, NULL, 'w' },
		{ "outputs", required_argument, NULL, OPT_OUTPUTS },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct compare c;
	static struct rtl_policy policy;
	struct rtl_policy_errors errs;
	char preload[PATH_MAX], config[PATH_MAX], dir[PATH_MAX], why[512];
	char *with = NULL, *outputs = NULL, *none[1] = { NULL };
	const char *dir_arg = NULL, *html = NULL;
	json_t *cmp;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+:c:o:w:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': c.config = optarg; break;
		case 'o': dir_arg = optarg; break;
		case 'w': with = optarg; break;
		case OPT_OUTPUTS: outputs = optarg; break;
		case OPT_HTML: html = optarg; break;
		case 'h': help_of("compare", stdout); return 0;
		default: return option_error("compare", opt, argv);
		}
	}
	if (optind >= argc)
		return usage_error("compare", "no program given");
	c.argv = argv + optind;
	c.runs[0] = (struct compare_run){ .name = "none", .mechanism = COMPARE_NONE };
	c.runs[1] = (struct compare_run){ .name = "page", .mechanism = RTL_MECH_PAGE };
	c.nruns = 2;
	if (c.config) {
		if (rtl_policy_load(c.config, &policy, &errs) < 0) {
			fputs(errs.text, stderr);
			return EXIT_INVALID;
		}
		if (!realpath(c.config, config)) {
			fprintf(stderr, "rtlctl compare: %s: %s\n", c.config, strerror(errno));
			return EXIT_INVALID;
		}
		c.config = config;
	} else {
		rtl_policy_load_builtin(&policy);
	}
	if (!policy.nrules) {
		fprintf(stderr, "rtlctl compare: the policy has no rule: nothing to compare\n");
		return EXIT_INVALID;
	}
	if (with ? parse_with(&c, with) < 0 : (default_region_run(&c, &policy), 0))
		return EXIT_USAGE;
	/* A policy that tracks writes: the same blocks on the kernel's
	 * written bits too (docs/compare.md, "Write barriers"). */
	if (!with && compare_tracks(&policy)) {
		c.runs[c.nruns].mechanism = COMPARE_WRITTEN;
		snprintf(c.runs[c.nruns++].name, sizeof(c.runs[0].name), "written");
	}
	c.outputs = outputs ? split(outputs) : none;
	if (!c.outputs)
		return EXIT_INVALID;
	if (preload_find(preload, sizeof(preload)) < 0 ||
	    preload_check(preload, why, sizeof(why)) < 0) {
		fprintf(stderr, "rtlctl compare: cannot use the preload %s (set RTL_PRELOAD)\n",
		        preload);
		return 127;
	}
	if (make_dir(dir_arg, c.argv[0], dir, sizeof(dir)) < 0)
		return EXIT_INVALID;
	c.dir = dir;
	if (compare_policies(&c) < 0 || save_stdin(&c) < 0 ||
	    compare_run_all(&c, preload) < 0)
		return EXIT_INVALID;
	if ((rc = not_started(&c)))
		return rc;
	compare_outputs(&c);
	compare_read_reports(&c);
	cmp = compare_build(&c);
	compare_print(cmp, stdout);
	rc = write_json(cmp, dir);
	if (compare_plot(cmp, dir) < 0)
		fprintf(stderr, "rtlctl compare: no plot\n");
	fprintf(stdout, "\nin %s: compare.json, compare.png, compare.svg, each run's "
	                "policy, report and outputs\n",
	        dir);
	if (html && write_html(&c, cmp, html) == 0)
		fprintf(stdout, "page: %s\n", html);
	else if (html)
		rc = -1; /* said why */
	json_decref(cmp);
	if (rc < 0)
		return EXIT_INVALID;
	return c.identical ? 0 : EXIT_DIFFER;
}
