/* rtlctl compare: one program run without rtl, under the page mechanism
 * and under region mechanisms, with the same policy otherwise and the
 * same input; its outputs checked identical and the runs' reports set
 * side by side (docs/compare.md). Shared by cmd_compare.c (the command),
 * compare_run.c (the runs and their outputs), compare_table.c (the
 * comparison and its table) and compare_plot.c. */
#ifndef RTLCTL_COMPARE_H
#define RTLCTL_COMPARE_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/policy.h"

#define COMPARE_RUNS 8       /* none, page and up to six region runs */
#define COMPARE_NONE (-1)    /* without rtl: the reference */
#define COMPARE_POLICY (-2)  /* the policy's own mechanisms */
#define COMPARE_WRITTEN (-3) /* auto, dirty rules on the kernel's written
                                bits (their write actions but dirty
                                dropped: nothing else makes them trap) */

struct compare_run {
	char name[16]; /* "none", "page", "auto", ...; "policy" */
	int mechanism; /* RTL_MECH_*, COMPARE_NONE or COMPARE_POLICY */
	char policy[PATH_MAX];
	char report[PATH_MAX];  /* the run's report, made out of run_dir's records */
	char run_dir[PATH_MAX]; /* its processes' raw records (RTL_RUN_DIR) */
	pid_t pid;              /* the program's */
	int status;             /* as waitpid gives it */
	uint64_t wall_ns;       /* fork to wait */
	json_t *r;              /* its report, once read */
};

struct compare {
	const char *dir;    /* where everything goes */
	const char *config; /* the policy file, or NULL: the built-in one */
	char **argv;        /* the program and its arguments */
	char **outputs;     /* files the program writes, NULL-terminated */
	int has_stdin;      /* dir/stdin holds the input every run gets */
	struct compare_run runs[COMPARE_RUNS];
	int nruns;
	int identical;
	char difference[1024]; /* what differs first, when not identical */
};

/* Whether some rule of p tracks writes (on_write has dirty). */
int compare_tracks(const struct rtl_policy *p);

/* compare_run.c: write each run's policy (dir/policy.NAME.ini) and check
 * it; 0, or -1 after "rtlctl compare: ..." on stderr. */
int compare_policies(struct compare *c);
/* Run each in turn, outputs into dir/NAME.{stdout,stderr} and
 * dir/outputs/NAME/; 0, or -1 if a run could not be started. */
int compare_run_all(struct compare *c, const char *preload);
/* Whether every run's exit status and outputs are the reference's
 * (identical, difference). */
void compare_outputs(struct compare *c);

/* compare_table.c: read the reports (a line on stderr for each missing),
 * the comparison as JSON (compare.json), and its table. */
void compare_read_reports(struct compare *c);
json_t *compare_build(const struct compare *c);
void compare_print(json_t *cmp, FILE *out);

/* compare_plot.c: traps per site, page beside each region run, as
 * dir/compare.png and dir/compare.svg. 0, or -1 after a line on stderr. */
int compare_plot(json_t *cmp, const char *dir);

#endif
