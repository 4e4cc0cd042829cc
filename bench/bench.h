/* The benchmark harness. A figure is an operation timed call by call with
 * the TSC; the figures take turns in short bursts (about 0.2 ms) so that a
 * change of load on the machine hits every figure alike; each figure
 * reports the minimum and the median over all its calls (a call cut by
 * preemption only moves the tail). CPU pinning; JSON output (jansson).
 * Never linked into librtl. */
#ifndef RTL_BENCH_H
#define RTL_BENCH_H

#include <jansson.h>
#include <stddef.h>

struct bench_opts {
	int rounds;       /* rounds; each samples every figure once */
	double sample_ms; /* time each figure runs in a round */
	double burst_ms;  /* figures take turns in bursts this long */
	long calls;       /* if > 0: calls per round, one burst (profiling) */
	int quick;        /* smoke test: tiny counts, timings meaningless */
	int cpu;          /* pin to this CPU; -1: the one we start on; -2: no */
	const char *json; /* write results here */
	const char *only; /* run only figures whose name starts with one of
			     these comma-separated prefixes */
};

/* Parse --rounds N, --sample-ms X, --burst-ms X (default 0.2), --calls N,
 * --quick, --cpu N|none, --json FILE, --only PREFIX[,PREFIX...], --help
 * (getopt_long: --opt=value too). 0 to run; 1 after --help printed the
 * usage (exit 0); -1 after a message and the usage on stderr (exit 2):
 * an unknown option, a missing value, a number that is not one. */
int bench_args(int argc, char **argv, struct bench_opts *o);

/* Pin the process to one CPU (see opts.cpu); returns the CPU or -1. */
int bench_pin(int cpu);

typedef void (*bench_op)(void *ctx);

struct figure {
	const char *name;
	bench_op op;    /* performs unit operations; timed */
	bench_op begin; /* optional, before each burst: not timed */
	bench_op end;   /* optional, after each burst: not timed */
	void *ctx;
	long unit; /* operations per call of op */
	/* Filled by bench_run. */
	long calls;                   /* calls per round */
	long burst;                   /* calls per burst */
	long reps;                    /* operations timed, warm-up excluded */
	double min, p10, median, p90; /* ns per operation, over calls */
	float *t;                     /* ns per operation of each call */
	long nt;
};

/* Keep the figures o->only selects (moving them to the front), calibrate
 * each, warm it up, then run o->rounds rounds; in a round every figure
 * makes about o->sample_ms of calls, in bursts taken in turn. Returns how
 * many figures ran. */
int bench_run(struct figure *figs, int n, const struct bench_opts *o);

/* The figure called name, or NULL. */
struct figure *bench_find(struct figure *figs, int n, const char *name);

/* {"min_ns", "p10_ns", "median_ns", "p90_ns", "reps", "unit"} for one
 * figure. */
json_t *bench_figure_json(const struct figure *f);

/* Machine and run description: CPU model, kernel, load average, pinning,
 * rounds, sample length, TSC frequency. */
json_t *bench_machine_json(const struct bench_opts *o, int pinned_cpu);

/* The result document both programs write: {"machine": ..., "figures":
 * {name: figure, ...}}. */
json_t *bench_results_json(const struct figure *figs, int n,
                           const struct bench_opts *o, int pinned_cpu);

/* Write root to o->json (if set); -1 on error. Steals the reference. */
int bench_write_json(const struct bench_opts *o, json_t *root);

/* A number for JSON: null when not finite or not positive. */
json_t *bench_num(double v);

#endif
