/* rtlctl report: read a run's report (docs/policy.md, "Report"), or make it
 * from the run's raw records (the preload's, "Raw record": one per
 * process, made into one report), and print it as tables, or as checked,
 * indented JSON (-o: into a file). A malformed report or record is an
 * error with the reason, never a crash. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "tools/interpret/load.h"
#include "tools/report/report_export.h"
#include "tools/report/report_plot.h"
#include "tools/report/report_print.h"
#include "tools/report/report_read.h"
#include "tools/report/report_save.h"
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

int report_summary(const char *path, FILE *out)
{
	int is_raw;
	char *paths[] = { (char *)path };
	json_t *r = load(paths, 1, &is_raw);

	if (!r)
		return -1;
	report_print_summary(r, out);
	json_decref(r);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "csv", required_argument, NULL, 'C' },
		{ "folded", no_argument, NULL, 'F' },
		{ "plot", required_argument, NULL, 'P' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *csv = NULL, *plot = NULL;
	int folded = 0;
	int as_json = 0, rc = 0, is_raw, c;
	json_t *r;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': as_json = 1; break;
		case 'C': csv = optarg; break;
		case 'F': folded = 1; break;
		case 'P': plot = optarg; break;
		case 'o': out = optarg; break;
		case 'h': help_of("report", stdout); return 0;
		default: return option_error("report", c, argv);
		}
	}
	if (optind == argc)
		return usage_error("report", "no report given");
	if (csv && !report_csv_known(csv))
		return usage_error("report", "--csv takes sites or rules, not '%s'", csv);
	if (plot && !report_plot_kind_known(plot))
		return usage_error("report", "--plot writes FILE.png or FILE.svg, not '%s'", plot);
	if (!!csv + folded + !!plot + (as_json || out) > 1)
		return usage_error("report", "one of --json, --csv, --folded and --plot at a time");
	r = load(argv + optind, argc - optind, &is_raw);
	if (!r)
		return EXIT_INVALID;
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
