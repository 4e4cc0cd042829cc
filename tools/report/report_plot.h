/* rtlctl report --plot: a report drawn by gnuplot (gnuplot-nox), as PNG or
 * SVG by the file's extension: traps over time by rule when the run
 * recorded events (events = traps), and traps and bytes by site. */
#ifndef RTL_REPORT_PLOT_H
#define RTL_REPORT_PLOT_H

#include <jansson.h>

/* Whether out names a kind of file --plot writes (.png, .svg). */
int report_plot_kind_known(const char *out);

/* Draw r into out; 0, or -1 after a line on stderr (prefixed with
 * "rtlctl report: ") that says why: nothing to draw, gnuplot missing or
 * failing. */
int report_plot(json_t *r, const char *out);

#endif
