/* rtlctl report: read a run's report (docs/policy.md, "Report"), or make it
 * from the run's raw record (the preload's, "Raw record"), and print it as
 * tables, or as checked, indented JSON (-o: into a file, as the preload
 * has rtlctl do when a traced program ends). A malformed report or record
 * is an error with the reason, never a crash. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "tools/interpret/raw_read.h"
#include "tools/report/report_export.h"
#include "tools/report/report_plot.h"
#include "tools/report/report_print.h"
#include "tools/report/report_read.h"
#include "tools/report/report_save.h"
#include "tools/rtlctl/rtlctl.h"

/* The whole file; NULL with a message on stderr. */
static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		fprintf(stderr, "rtlctl report: %s: cannot open: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			char *grown = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (!grown) {
				free(buf);
				fclose(f);
				fprintf(stderr, "rtlctl report: %s: out of memory\n", path);
				return NULL;
			}
			buf = grown;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*size = n;
	return buf;
}

/* Load and check a report, or make it from a raw record; NULL with a
 * message on stderr. */
static json_t *load_report(const char *path, int *is_raw)
{
	char why[256];
	size_t size = 0;
	char *data = slurp(path, &size);
	json_t *r;

	if (!data)
		return NULL;
	*is_raw = rtl_raw_is(data, size);
	if (*is_raw)
		r = rtl_raw_report(data, size, path, why, sizeof(why));
	else
		r = rtl_report_parse(data, size, path, why, sizeof(why));
	free(data);
	if (!r)
		fprintf(stderr, "rtlctl report: %s\n", why);
	return r;
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
	const char *file, *out = NULL, *csv = NULL, *plot = NULL;
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
	if (argc - optind > 1)
		return usage_error("report", "one report at a time ('%s' is one too many)",
		                   argv[optind + 1]);
	file = argv[optind];
	if (csv && !report_csv_known(csv))
		return usage_error("report", "--csv takes sites or rules, not '%s'", csv);
	if (plot && !report_plot_kind_known(plot))
		return usage_error("report", "--plot writes FILE.png or FILE.svg, not '%s'", plot);
	if (!!csv + folded + !!plot + (as_json || out) > 1)
		return usage_error("report", "one of --json, --csv, --folded and --plot at a time");
	r = load_report(file, &is_raw);
	if (!r)
		return EXIT_INVALID;
	if (out && !strcmp(out, "-")) {
		json_dumpf(r, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else if (out) {
		/* The report as the traced program's end leaves it. */
		rc = report_save(r, out, is_raw ? file : NULL);
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
			        file);
	} else {
		report_print_tables(r, stdout);
	}
	json_decref(r);
	return rc;
}
