/* rtlctl report: read a run's report (docs/policy.md, "Report"), or make it
 * from the run's raw records (the preload's, "Raw record": one per
 * process, made into one report), and print it as tables, or as checked,
 * indented JSON (-o: into a file), or draw it as one HTML page (--html),
 * or write its traps and timeline as a Chrome trace (--trace);
 * --diff sets two side by side (docs/report.md). A malformed report or
 * record is an error with the reason, never a crash. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "tools/interpret/load.h"
#include "tools/report/report_diff.h"
#include "tools/report/report_export.h"
#include "tools/report/report_html.h"
#include "tools/report/report_names.h"
#include "tools/report/report_plot.h"
#include "tools/report/report_print.h"
#include "tools/report/report_read.h"
#include "tools/report/report_save.h"
#include "tools/report/report_trace.h"
#include "tools/rtlctl/rtlctl.h"

/* One report out of the files given: the one, or all of them merged (the
 * processes of a run). NULL with a message on stderr. */
static json_t *load(char *const *paths, int n, int *is_raw)
{
	char why[512];
	json_t *r = rtl_load_reports(paths, (size_t)n, 0, is_raw, why, sizeof(why));

	if (!r)
		fprintf(stderr, "rtlctl report: %s\n", why);
	return r;
}

/* One file's report. */
static json_t *load_report(const char *path, int *is_raw)
{
	char *paths[] = { (char *)path };

	return load(paths, 1, is_raw);
}

int report_summary(const char *path, FILE *out)
{
	int is_raw;
	json_t *r = load_report(path, &is_raw);

	if (!r)
		return -1;
	report_print_summary(r, out);
	json_decref(r);
	return 0;
}

/* The page's title: "rtl report: PROGRAM". */
static void title_of(json_t *r, const char *what, char *out, size_t len)
{
	const char *prog = report_str(json_object_get(r, "run"), "program", "?");

	snprintf(out, len, "%s: %s", what, prog);
}

/* The page of one report, with its collapsed stacks for the flame graph. */
static int write_html(json_t *r, const char *out)
{
	json_t *data = json_object(), *folded = json_array();
	size_t n;
	struct report_stack *s = report_folded(r, 1, &n);
	char title[512];
	int rc;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(folded, json_pack("[s, I]", s[i].stack, s[i].count));
	report_folded_free(s, n);
	json_object_set_new(data, "report", report_html_trim(r));
	json_object_set_new(data, "folded", folded);
	title_of(r, "rtl report", title, sizeof(title));
	rc = report_html(out, "report", data, title, "report");
	json_decref(data);
	return rc < 0 ? RTL_EXIT_HTML : 0;
}

/* rtlctl report --diff [--json | --html OUT] A B. */
static int diff(const char *a_file, const char *b_file, int as_json, const char *html,
                int full_names)
{
	int raw;
	json_t *a = load_report(a_file, &raw), *b = a ? load_report(b_file, &raw) : NULL;
	json_t *d;
	int rc = 0;

	if (!a || !b) {
		json_decref(a);
		return EXIT_INVALID;
	}
	if (!as_json && !full_names) {
		report_shorten_names(a);
		report_shorten_names(b);
	}
	d = report_diff(a, b, a_file, b_file);
	if (as_json) {
		json_dumpf(d, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else if (html) {
		json_t *data = json_pack("{s:O, s:o, s:o}", "diff", d, "a", report_html_trim(a),
		                         "b", report_html_trim(b));
		char title[512];

		title_of(a, "rtl report --diff", title, sizeof(title));
		rc = report_html(html, "diff", data, title, "report") < 0 ? RTL_EXIT_HTML : 0;
		json_decref(data);
	} else {
		report_diff_print(d, stdout);
	}
	json_decref(d);
	json_decref(a);
	json_decref(b);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "csv", required_argument, NULL, 'C' },
		{ "folded", no_argument, NULL, 'F' },
		{ "plot", required_argument, NULL, 'P' },
		{ "html", required_argument, NULL, 'H' },
		{ "trace", required_argument, NULL, 'T' },
		{ "diff", no_argument, NULL, 'D' },
		{ "full-names", no_argument, NULL, 'N' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *csv = NULL, *plot = NULL, *html = NULL, *trace = NULL;
	int folded = 0, two = 0, full_names = 0;
	int as_json = 0, rc = 0, is_raw, c;
	json_t *r;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': as_json = 1; break;
		case 'C': csv = optarg; break;
		case 'F': folded = 1; break;
		case 'P': plot = optarg; break;
		case 'H': html = optarg; break;
		case 'T': trace = optarg; break;
		case 'D': two = 1; break;
		case 'N': full_names = 1; break;
		case 'o': out = optarg; break;
		case 'h': help_of("report", stdout); return 0;
		default: return option_error("report", c, argv);
		}
	}
	if (two) {
		if (argc - optind != 2)
			return usage_error("report", "--diff takes two reports, A and B (%d given)",
			                   argc - optind);
		if (csv || folded || plot || out || trace || (as_json && html))
			return usage_error("report", "--diff prints tables, --json or --html OUT");
		return diff(argv[optind], argv[optind + 1], as_json, html, full_names);
	}
	if (optind == argc)
		return usage_error("report", "no report given");
	if (csv && !report_csv_known(csv))
		return usage_error("report", "--csv takes sites or rules, not '%s'", csv);
	if (plot && !report_plot_kind_known(plot))
		return usage_error("report", "--plot writes FILE.png or FILE.svg, not '%s'", plot);
	if (!!csv + folded + !!plot + !!html + !!trace + (as_json || out) > 1)
		return usage_error("report",
		                   "one of --json, --csv, --folded, --plot, --html and --trace at a time");
	r = load(argv + optind, argc - optind, &is_raw);
	if (!r)
		return EXIT_INVALID;
	/* People read the tables and the page: short names there. */
	if (!full_names && !csv && !folded && !plot && !trace && !as_json && !out)
		report_shorten_names(r);
	if (out && !strcmp(out, "-")) {
		json_dumpf(r, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else if (out) {
		/* The report as the traced program's end leaves it. */
		rc = report_save(r, out, is_raw && argc - optind == 1 ? argv[optind] : NULL);
	} else if (as_json) {
		json_dumpf(r, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else if (csv) {
		report_print_csv(r, csv, stdout);
	} else if (plot) {
		rc = report_plot(r, plot) < 0 ? EXIT_INVALID : 0;
	} else if (html) {
		rc = write_html(r, html);
	} else if (trace) {
		rc = report_trace(r, trace, is_raw ? argv + optind : NULL,
		                  is_raw ? (size_t)(argc - optind) : 0) < 0
		             ? EXIT_INVALID
		             : 0;
	} else if (folded) {
		if (!report_print_folded(r, stdout))
			fprintf(stderr, "rtlctl report: %s: no trap backtraces (the backtrace "
			                "action of on_read/on_write records them)\n",
			        argv[optind]);
	} else {
		report_print_tables(r, stdout);
	}
	json_decref(r);
	return rc;
}
