/* The benchmark harness: TSC timing of each call, calibration, interleaved
 * rounds, min and median, pinning, JSON. See bench.h. */
#include "bench/arch.h"
#include "bench/bench.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <time.h>

static void usage(const char *prog, FILE *out)
{
	fprintf(out,
	        "usage: %s [--rounds N] [--sample-ms X] [--quick] "
	        "[--burst-ms X] [--calls N] [--cpu N|none] [--json FILE] "
	        "[--only PREFIX,...]\n",
	        prog);
}

static int bad(const char *prog, const char *opt, const char *v)
{
	fprintf(stderr, "%s: %s: '%s' is not a number in range\n", prog, opt, v);
	usage(prog, stderr);
	return -1;
}

/* v as a whole number or a positive-or-zero real: all of it, or -1. */
static int to_long(const char *v, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(v, &end, 10);
	return *v && !*end && !errno ? 0 : -1;
}

static int to_double(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return *v && !*end && !errno ? 0 : -1;
}

int bench_args(int argc, char **argv, struct bench_opts *o)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "sample-ms", required_argument, NULL, 's' },
		{ "burst-ms", required_argument, NULL, 'b' },
		{ "calls", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'j' },
		{ "only", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prog = argv[0];
	long v;
	int c;

	o->rounds = 31;
	o->sample_ms = 10;
	o->quick = 0;
	o->cpu = -1;
	o->json = NULL;
	o->only = NULL;
	o->burst_ms = 0.2;
	o->calls = 0;
	opterr = 0; /* our message, then the usage line */
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (to_long(optarg, &v) < 0 || v < 1 || v > 100000)
				return bad(prog, "--rounds", optarg);
			o->rounds = (int)v;
			break;
		case 's':
			if (to_double(optarg, &o->sample_ms) < 0 || !(o->sample_ms > 0))
				return bad(prog, "--sample-ms", optarg);
			break;
		case 'b':
			if (to_double(optarg, &o->burst_ms) < 0 || !(o->burst_ms > 0))
				return bad(prog, "--burst-ms", optarg);
			break;
		case 'n':
			if (to_long(optarg, &o->calls) < 0 || o->calls < 0)
				return bad(prog, "--calls", optarg);
			break;
		case 'q': o->quick = 1; break;
		case 'c':
			if (!strcmp(optarg, "none"))
				o->cpu = -2;
			else if (to_long(optarg, &v) < 0 || v < 0 || v > 4095)
				return bad(prog, "--cpu", optarg);
			else
				o->cpu = (int)v;
			break;
		case 'j': o->json = optarg; break;
		case 'o': o->only = optarg; break;
		case 'h': usage(prog, stdout); return 1;
		case ':':
			fprintf(stderr, "%s: option '%s' needs an argument\n", prog,
			        argv[optind - 1]);
			usage(prog, stderr);
			return -1;
		default:
			fprintf(stderr, "%s: unknown option '%s'\n", prog, argv[optind - 1]);
			usage(prog, stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected '%s'\n", prog, argv[optind]);
		usage(prog, stderr);
		return -1;
	}
	if (o->quick) {
		o->rounds = 3;
		o->sample_ms = 0.05;
	}
	return 0;
}

int bench_pin(int cpu)
{
	cpu_set_t set;

	if (cpu == -2)
		return -1;
	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return -1;
	return cpu;
}

/* ---- timing ---- */

static double ns_per_tick; /* TSC period, calibrated against the clock */
static uint64_t overhead;  /* ticks of timing an empty call */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline uint64_t ticks(void)
{
	return arch_ticks();
}

static void nothing(void *ctx)
{
	(void)ctx;
}

static void calibrate_clock(void)
{
	double t0 = now_ns(), t1;
	uint64_t k0 = ticks(), k1;
	bench_op op = nothing;

	while ((t1 = now_ns()) - t0 < 20e6)
		;
	k1 = ticks();
	ns_per_tick = (t1 - t0) / (double)(k1 - k0);
	overhead = UINT64_MAX;
	for (int i = 0; i < 10000; i++) {
		uint64_t a = ticks();
		op(NULL);
		a = ticks() - a;
		if (a < overhead)
			overhead = a;
	}
}

/* Time one call of f->op: ns per operation. */
static double time_call(const struct figure *f)
{
	uint64_t a = ticks(), b;
	f->op(f->ctx);
	b = ticks() - a;
	b = b > overhead ? b - overhead : 0;
	return (double)b * ns_per_tick / (double)f->unit;
}

/* A burst: calls of one figure back to back, between its begin and end.
 * The first call of a burst of several warms the caches and is not kept. */
static void burst(struct figure *f, long calls, int keep)
{
	if (f->begin)
		f->begin(f->ctx);
	for (long i = 0; i < calls; i++) {
		double t = time_call(f);
		if (keep && (i > 0 || calls == 1))
			f->t[f->nt++] = (float)t;
	}
	if (f->end)
		f->end(f->ctx);
}

/* Calls per round (about sample_ns of them) and per burst (about
 * burst_ns: short enough that every figure sees the same state of the
 * machine, long enough to amortise begin and end and warm the caches). */
static void calibrate(struct figure *f, double sample_ns, double burst_ns,
                      int quick)
{
	double t = 0;

	f->calls = f->burst = 1;
	if (quick)
		return;
	if (f->begin)
		f->begin(f->ctx);
	for (int i = 0; i < 8; i++) { /* the first calls may be cold */
		double c = time_call(f) * (double)f->unit;
		if (i >= 3 && (t == 0 || c < t))
			t = c;
	}
	if (f->end)
		f->end(f->ctx);
	if (t > 0 && sample_ns / t > 1)
		f->calls = (long)(sample_ns / t);
	if (t > 0 && burst_ns / t > 1)
		f->burst = (long)(burst_ns / t);
	if (f->burst > f->calls)
		f->burst = f->calls;
}

/* One round: bursts of every figure in turn until each has made its calls. */
static void round_robin(struct figure *figs, int n)
{
	long *done = calloc(n, sizeof(long));
	int busy = 1;

	while (busy) {
		busy = 0;
		for (int i = 0; i < n; i++) {
			struct figure *f = &figs[i];
			long k = f->calls - done[i];
			if (k <= 0)
				continue;
			k = k < f->burst ? k : f->burst;
			burst(f, k, 1);
			done[i] += k;
			busy = 1;
		}
	}
	free(done);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

static void summarise(struct figure *f)
{
	float *s = malloc(sizeof(float) * f->nt);
	long n = f->nt;

	memcpy(s, f->t, sizeof(float) * n);
	qsort(s, n, sizeof(float), cmp_float);
	f->min = s[0];
	f->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	f->p10 = s[n / 10];
	f->p90 = s[n * 9 / 10];
	f->reps = n * f->unit;
	free(s);
}

/* Does name start with one of the comma-separated prefixes in only? */
static int selected(const char *name, const char *only)
{
	while (only && *only) {
		size_t len = strcspn(only, ",");
		if (len && !strncmp(name, only, len))
			return 1;
		only += len + (only[len] == ',');
	}
	return !only;
}

/* Drop the figures --only excludes; returns how many are left. */
static int select_figures(struct figure *figs, int n, const char *only)
{
	int kept = 0;

	for (int i = 0; i < n; i++)
		if (selected(figs[i].name, only))
			figs[kept++] = figs[i];
	return kept;
}

int bench_run(struct figure *figs, int n, const struct bench_opts *o)
{
	double sample_ns = o->sample_ms * 1e6;

	n = select_figures(figs, n, o->only);
	calibrate_clock();
	for (int i = 0; i < n; i++) {
		struct figure *f = &figs[i];
		calibrate(f, sample_ns, o->burst_ms * 1e6, o->quick);
		if (o->calls > 0)
			f->calls = f->burst = o->calls;
		burst(f, f->burst, 0); /* warm-up */
		f->t = malloc(sizeof(float) * f->calls * o->rounds);
		f->nt = 0;
	}
	for (int r = 0; r < o->rounds; r++)
		round_robin(figs, n);
	for (int i = 0; i < n; i++)
		summarise(&figs[i]);
	return n;
}

struct figure *bench_find(struct figure *figs, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(figs[i].name, name))
			return &figs[i];
	return NULL;
}

/* ---- JSON ---- */

json_t *bench_num(double v)
{
	return isfinite(v) && v > 0 ? json_real(v) : json_null();
}

json_t *bench_figure_json(const struct figure *f)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:I, s:I}", "min_ns",
	                 bench_num(f->min), "p10_ns", bench_num(f->p10),
	                 "median_ns", bench_num(f->median), "p90_ns",
	                 bench_num(f->p90), "reps", (json_int_t)f->reps, "unit",
	                 (json_int_t)f->unit);
}

static char *cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');
		if (!strncmp(line, "model name", 10) && c) {
			snprintf(buf, len, "%s", c + 2);
			buf[strcspn(buf, "\n")] = 0;
			break;
		}
	}
	fclose(f);
	return buf;
}

json_t *bench_machine_json(const struct bench_opts *o, int pinned_cpu)
{
	struct utsname u;
	char model[128];
	double load[3] = { 0, 0, 0 };

	uname(&u);
	getloadavg(load, 3);
	return json_pack("{s:s, s:s, s:i, s:[f,f,f], s:i, s:i, s:f, s:b, s:f}",
	                 "cpu", cpu_model(model, sizeof(model)), "kernel",
	                 u.release, "cpus", (int)sysconf(_SC_NPROCESSORS_ONLN),
	                 "loadavg", load[0], load[1], load[2], "pinned_cpu",
	                 pinned_cpu, "rounds", o->rounds, "sample_ms",
	                 o->sample_ms, "quick", o->quick, "tsc_ghz",
	                 ns_per_tick > 0 ? 1 / ns_per_tick : 0.0);
}

int bench_write_json(const struct bench_opts *o, json_t *root)
{
	int rc = 0;

	if (o->json &&
	    json_dump_file(root, o->json,
	                   JSON_INDENT(2) | JSON_REAL_PRECISION(6)) < 0) {
		fprintf(stderr, "cannot write %s\n", o->json);
		rc = -1;
	}
	json_decref(root);
	return rc;
}

json_t *bench_results_json(const struct figure *figs, int n,
                           const struct bench_opts *o, int pinned_cpu)
{
	json_t *root = json_object(), *fj = json_object();

	json_object_set_new(root, "machine", bench_machine_json(o, pinned_cpu));
	for (int i = 0; i < n; i++)
		json_object_set_new(fj, figs[i].name, bench_figure_json(&figs[i]));
	json_object_set_new(root, "figures", fj);
	return root;
}
