/* --plot (report_plot.h): the report's numbers as gnuplot datablocks and a
 * script on gnuplot's standard input; gnuplot writes the file. Labels come
 * from a report anyone may write: they are reduced to characters that mean
 * nothing to gnuplot, and enhanced text is off. */
#include "tools/report/report_plot.h"

#include "tools/report/report_read.h"
#include "tools/util/gnuplot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SITES 15 /* bars that stay readable */

int report_plot_kind_known(const char *out)
{
	return gnuplot_terminal(out) != NULL;
}

/* The top sites as $sites: "label" traps bytes. Returns how many. */
static size_t put_sites(json_t *r, FILE *gp)
{
	size_t n, i, k = 0;
	json_t **sorted = report_by_traps(r, "sites", &n);
	char buf[GNUPLOT_LABEL];

	fprintf(gp, "$sites << EOD\n");
	for (i = 0; i < n && k < MAX_SITES; i++, k++)
		fprintf(gp, "\"%s\" %lld %lld\n", gnuplot_label(report_str(sorted[i], "site", "?"), buf),
		        (long long)report_traps(sorted[i]), (long long)report_num(sorted[i], "bytes"));
	fprintf(gp, "EOD\n");
	free(sorted);
	return k;
}

/* One datablock per rule, $rule0 ...: time (ms) and traps so far; the
 * plot command's terms into plot. Returns how many rules had events. */
static int put_events(json_t *r, FILE *gp, char *plot, size_t len)
{
	json_t *rules = json_object_get(r, "rules"), *rule, *e;
	size_t i, k, used = 0;
	int drawn = 0;
	char buf[GNUPLOT_LABEL];

	plot[0] = '\0';
	json_array_foreach(rules, i, rule)
	{
		const char *name = report_str(rule, "name", "?");
		long long count = 0;

		fprintf(gp, "$rule%zu << EOD\n0 0\n", i);
		json_array_foreach(json_object_get(r, "events"), k, e)
		{
			if (strcmp(report_str(e, "rule", "?"), name))
				continue;
			fprintf(gp, "%.6f %lld\n", (double)report_num(e, "t_ns") / 1e6, ++count);
		}
		fprintf(gp, "EOD\n");
		if (!count)
			continue;
		used += (size_t)snprintf(plot + used, used < len ? len - used : 0,
		                         "%s$rule%zu using 1:2 with steps lw 2 title '%s'",
		                         drawn ? ", " : "", i, gnuplot_label(name, buf));
		drawn++;
	}
	return used < len ? drawn : 0;
}

static void script(json_t *r, const char *out, size_t nsites, int nrules,
                   const char *plot, FILE *gp)
{
	json_t *run = json_object_get(r, "run");
	char buf[GNUPLOT_LABEL];

	fprintf(gp, "set terminal %s\nset output ", gnuplot_terminal(out));
	gnuplot_quoted(out, gp);
	/* Headroom above the highest line or bar. */
	fprintf(gp, "\nset grid\nset offsets 0, 0, graph 0.08, 0\nset multiplot layout %d,1 title 'rtl: %s (pid %lld)'\n",
	        (nrules > 0) + (nsites > 0), gnuplot_label(report_str(run, "program", "?"), buf),
	        (long long)report_num(run, "pid"));
	if (nrules) {
		fprintf(gp, "set title 'traps over time by rule'\n"
		            "set xlabel 'time since the preload started (ms)'\n"
		            "set ylabel 'traps so far'\nset key left top\n"
		            "plot %s\n",
		        plot);
	}
	if (nsites) {
		fprintf(gp, "set title 'traps and bytes by site (the %zu with the most traps)'\n"
		            "unset xlabel\nset ylabel 'traps'\nset y2label 'bytes'\n"
		            "set ytics nomirror\nset y2tics\nset yrange [0:*]\nset y2range [0:*]\n"
		            "set xtics rotate by -25 left\nset xrange [-0.6:%zu.6]\n"
		            "set boxwidth 0.4\nset style fill solid 0.7\nset key right top\n"
		            "plot $sites using ($0-0.2):2:xtic(1) with boxes title 'traps', "
		            "$sites using ($0+0.2):3 with boxes axes x1y2 title 'bytes'\n",
		        nsites, nsites - 1);
	}
	fprintf(gp, "unset multiplot\n");
}

int report_plot(json_t *r, const char *out)
{
	static const char who[] = "rtlctl report: --plot";
	char plot[8192];
	size_t nsites;
	int nrules;
	pid_t pid;
	FILE *gp;

	if (strchr(out, '\n')) {
		fprintf(stderr, "%s: a file name with a newline\n", who);
		return -1;
	}
	if (!(gp = gnuplot_start(who, &pid)))
		return -1;
	nsites = put_sites(r, gp);
	nrules = put_events(r, gp, plot, sizeof(plot));
	if (nsites || nrules)
		script(r, out, nsites, nrules, plot, gp);
	if (gnuplot_finish(gp, pid, who) < 0)
		return -1;
	if (!nsites && !nrules) {
		fprintf(stderr, "%s: nothing to draw (no sites, no events)\n", who);
		return -1;
	}
	return 0;
}
