/* The benchmark harness: figures timed in batches, interleaved in rounds so
 * that a change of load on the machine hits every figure alike; min and
 * median per figure; CPU pinning; JSON output (jansson). Never linked into
 * librtl. */
#ifndef RTL_BENCH_H
#define RTL_BENCH_H

#include <jansson.h>
#include <stddef.h>

struct bench_opts {
	int rounds;       /* samples per figure */
	double sample_ms; /* target length of one sample */
	int quick;        /* smoke test: tiny counts, timings meaningless */
	int cpu;          /* pin to this CPU; -1: the one we start on; -2: no */
	const char *json; /* write results here */
};

/* Parse --rounds N, --sample-ms X, --quick, --cpu N|none, --json FILE.
 * Prints usage and returns -1 on bad arguments. */
int bench_args(int argc, char **argv, struct bench_opts *o);

/* Pin the process to one CPU (see opts.cpu); returns the CPU or -1. */
int bench_pin(int cpu);

double bench_now_ns(void);

/* One figure: fn performs n operations (n a multiple of unit) and returns
 * the nanoseconds they took. The harness chooses the batch size. */
typedef double (*bench_fn)(void *ctx, long n);

struct figure {
	const char *name;
	bench_fn fn;
	void *ctx;
	long unit; /* batches are multiples of this */
	/* Filled by bench_run. */
	long batch;
	long reps; /* operations timed, warm-up excluded */
	double min, median; /* ns per operation */
	double *samples;
	int nsamples;
};

/* Calibrate every figure, warm it up, then run o->rounds rounds, each
 * taking one sample of every figure in turn. */
void bench_run(struct figure *figs, int n, const struct bench_opts *o);

/* The figure called name, or NULL. */
struct figure *bench_find(struct figure *figs, int n, const char *name);

/* {"min_ns", "median_ns", "reps", "batch"} for one figure. */
json_t *bench_figure_json(const struct figure *f);

/* Machine and run description: CPU model, kernel, load average, pinning,
 * rounds, sample length. */
json_t *bench_machine_json(const struct bench_opts *o, int pinned_cpu);

/* Write root to o->json (if set); -1 on error. Steals the reference. */
int bench_write_json(const struct bench_opts *o, json_t *root);

/* A number for JSON: null when not finite or not positive. */
json_t *bench_num(double v);

#endif
