/* gnuplot as a child reading its script on a pipe (gnuplot.c), for
 * rtlctl report --plot and rtlctl compare. Labels come from files anyone
 * may write: gnuplot_label keeps only characters that mean nothing to
 * gnuplot, and the terminals have enhanced text off. */
#ifndef RTLCTL_GNUPLOT_H
#define RTLCTL_GNUPLOT_H

#include <stdio.h>
#include <sys/types.h>

#define GNUPLOT_LABEL 64

/* The terminal for a file named out (.png, .svg), or NULL. */
const char *gnuplot_terminal(const char *out);

/* gnuplot started, its script to be written to the stream returned; NULL
 * after a line on stderr starting with who. */
FILE *gnuplot_start(const char *who, pid_t *pid);

/* Close the script and wait: 0, or -1 after a line on stderr starting
 * with who (gnuplot missing or failing). */
int gnuplot_finish(FILE *gp, pid_t pid, const char *who);

/* s with every character but letters, digits and !._+-:/ as '_', cut to
 * fit buf (GNUPLOT_LABEL bytes). */
const char *gnuplot_label(const char *s, char *buf);

/* s as gnuplot's single-quoted string. */
void gnuplot_quoted(const char *s, FILE *gp);

#endif
