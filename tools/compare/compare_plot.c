/* rtlctl compare's plot: per site, the traps and the bytes made accessible
 * of every rtl run side by side (page beside each region run), on a log
 * scale when they differ by orders of magnitude; with a policy that tracks
 * writes, a third panel: what each write barrier would rescan or ship for
 * the run (Hosking & Moss's granularities). PNG and SVG. */
#include <stdlib.h>
#include <string.h>

#include "tools/compare/compare.h"
#include "tools/util/gnuplot.h"

#define MAX_SITES 10

static double value(json_t *row, const char *run, const char *key)
{
	json_t *v = json_object_get(json_object_get(json_object_get(row, "runs"), run), key);
	return json_is_integer(v) ? (double)json_integer_value(v) : 0;
}

enum scale { SCALE_LINEAR,
	     SCALE_LOG,
	     SCALE_EMPTY };

/* $KEY: a line per site, its label then the figure of each run. How to
 * scale it: log when the figures span more than two orders of magnitude;
 * all zero (a policy without `count` has no per-site traps) gets a fixed
 * range, or gnuplot warns that the range is empty. */
static enum scale put_block(json_t *cmp, json_t *names, const char *key, FILE *gp)
{
	json_t *row, *name;
	size_t i, j;
	double lo = 0, hi = 0;
	char buf[GNUPLOT_LABEL];

	fprintf(gp, "$%s << EOD\n", key);
	json_array_foreach(json_object_get(cmp, "sites"), i, row)
	{
		if (i == MAX_SITES)
			break;
		fprintf(gp, "\"%s\"", gnuplot_label(json_string_value(json_object_get(row, "site")), buf));
		json_array_foreach(names, j, name)
		{
			double v = value(row, json_string_value(name), key);

			fprintf(gp, " %.0f", v);
			if (v > 0 && (lo == 0 || v < lo))
				lo = v;
			if (v > hi)
				hi = v;
		}
		fprintf(gp, "\n");
	}
	fprintf(gp, "EOD\n");
	if (hi == 0)
		return SCALE_EMPTY;
	return lo > 0 && hi / lo > 100 ? SCALE_LOG : SCALE_LINEAR;
}

/* The run's bytes to rescan or ship, per scheme, from compare.json's
 * totals: $rescan, a line per scheme, the figure of each run (or NaN);
 * whether there is any. */
static const char *const schemes[][2] = {
	{ "blocks", "dirty_object_bytes" },
	{ "cards 128", "dirty_card128_bytes" },
	{ "cards 512", "dirty_card512_bytes" },
	{ "cards 4K", "dirty_card4096_bytes" },
	{ "pages 4K", "dirty_page_bytes" },
	{ "found written", "dirty_written_bytes" },
	{ "diffs", "dirty_diff_bytes" },
};

static int put_rescan(json_t *cmp, json_t *names, FILE *gp)
{
	json_t *by = json_object_get(json_object_get(cmp, "totals"), "runs"), *name;
	size_t i;
	int any = 0;

	fprintf(gp, "$rescan << EOD\n");
	for (size_t k = 0; k < sizeof(schemes) / sizeof(*schemes); k++) {
		fprintf(gp, "\"%s\"", schemes[k][0]);
		json_array_foreach(names, i, name)
		{
			json_t *v = json_object_get(json_object_get(by, json_string_value(name)),
			                            schemes[k][1]);

			if (json_is_integer(v) && json_integer_value(v) > 0) {
				fprintf(gp, " %lld", (long long)json_integer_value(v));
				any |= k == 0;
			} else {
				fprintf(gp, " NaN");
			}
		}
		fprintf(gp, "\n");
	}
	fprintf(gp, "EOD\n");
	return any;
}

static void panel(json_t *names, const char *key, const char *title, enum scale scale,
                  FILE *gp)
{
	json_t *name;
	size_t i;
	char buf[GNUPLOT_LABEL];

	static const char *const ranges[] = {
		[SCALE_LINEAR] = "unset logscale y\nset yrange [0:*]",
		[SCALE_LOG] = "set logscale y\nset yrange [0.8:*]",
		[SCALE_EMPTY] = "unset logscale y\nset yrange [0:1]",
	};

	fprintf(gp, "set title '%s%s'\n%s\nplot ", title,
	        scale == SCALE_LOG ? " (log scale)" : scale == SCALE_EMPTY ? " (none)"
	                                                                   : "",
	        ranges[scale]);
	json_array_foreach(names, i, name)
	        fprintf(gp, "%s$%s using %zu:xtic(1) title '%s'", i ? ", " : "", key, i + 2,
	                gnuplot_label(json_string_value(name), buf));
	fprintf(gp, "\n");
}

static void script(json_t *names, const char *out, enum scale traps, enum scale bytes,
                   int rescan, FILE *gp)
{
	static const char from[] = "size 1000,760";
	const char *t = gnuplot_terminal(out), *size = strstr(t, from);
	char term[160];

	/* Three panels: taller, so that the sites' two keep their height. */
	if (rescan && size)
		snprintf(term, sizeof(term), "%.*ssize 1000,1140%s", (int)(size - t), t,
		         size + sizeof(from) - 1);
	else
		snprintf(term, sizeof(term), "%s", t);
	fprintf(gp, "set terminal %s\nset output ", term);
	gnuplot_quoted(out, gp);
	fprintf(gp, "\nset grid ytics\nset style data histogram\n"
	            "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\n"
	            "set xtics rotate by -25 left\nset key right top\nset offsets 0, 0, graph 0.08, 0\n"
	            "set multiplot layout %d,1 title 'rtlctl compare: page protection beside regions, per site'\n",
	        rescan ? 3 : 2);
	panel(names, "traps", "traps", traps, gp);
	panel(names, "granted_bytes", "bytes made accessible by grants", bytes, gp);
	if (rescan) {
		fprintf(gp, "set xtics rotate by 0 center\nset key outside right top\n");
		panel(names, "rescan", "the run: bytes a collector or checkpointer rescans or ships",
		      SCALE_LOG, gp);
	}
	fprintf(gp, "unset multiplot\n");
}

int compare_plot(json_t *cmp, const char *dir)
{
	static const char who[] = "rtlctl compare: the plot";
	static const char *const kinds[] = { "png", "svg" };
	json_t *names = json_array(), *run;
	size_t i;
	int rc = 0;

	json_array_foreach(json_object_get(cmp, "runs"), i, run) if (i > 0) json_array_append(names, json_object_get(run, "name"));
	if (!json_array_size(json_object_get(cmp, "sites"))) {
		fprintf(stderr, "%s: nothing to draw (no sites)\n", who);
		json_decref(names);
		return -1;
	}
	for (size_t k = 0; k < 2 && rc == 0; k++) {
		char out[PATH_MAX];
		pid_t pid;
		FILE *gp;
		enum scale traps, bytes;

		snprintf(out, sizeof(out), "%s/compare.%s", dir, kinds[k]);
		if (strchr(out, '\n') || !(gp = gnuplot_start(who, &pid))) {
			rc = -1;
			break;
		}
		traps = put_block(cmp, names, "traps", gp);
		bytes = put_block(cmp, names, "granted_bytes", gp);
		script(names, out, traps, bytes, put_rescan(cmp, names, gp), gp);
		rc = gnuplot_finish(gp, pid, who);
	}
	json_decref(names);
	return rc;
}
