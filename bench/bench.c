/* The benchmark harness: calibration, interleaved rounds, min and median,
 * pinning, JSON. See bench.h. */
#include "bench.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <time.h>

double bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void usage(const char *prog)
{
	fprintf(stderr,
	        "usage: %s [--rounds N] [--sample-ms X] [--quick] "
	        "[--cpu N|none] [--json FILE]\n",
	        prog);
}

int bench_args(int argc, char **argv, struct bench_opts *o)
{
	o->rounds = 31;
	o->sample_ms = 10;
	o->quick = 0;
	o->cpu = -1;
	o->json = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--quick")) {
			o->quick = 1;
			continue;
		}
		if (!v) {
			usage(argv[0]);
			return -1;
		}
		i++;
		if (!strcmp(a, "--rounds"))
			o->rounds = atoi(v);
		else if (!strcmp(a, "--sample-ms"))
			o->sample_ms = atof(v);
		else if (!strcmp(a, "--cpu"))
			o->cpu = strcmp(v, "none") ? atoi(v) : -2;
		else if (!strcmp(a, "--json"))
			o->json = v;
		else {
			usage(argv[0]);
			return -1;
		}
	}
	if (o->quick) {
		o->rounds = 3;
		o->sample_ms = 0.05;
	}
	if (o->rounds < 1 || !(o->sample_ms > 0)) {
		usage(argv[0]);
		return -1;
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

/* ---- running figures ---- */

static long round_up(long n, long unit)
{
	return n < unit ? unit : (n + unit - 1) / unit * unit;
}

/* Choose a batch whose sample lasts about sample_ns. */
static void calibrate(struct figure *f, double sample_ns, int quick)
{
	long n = f->unit;
	double t;

	if (quick) {
		f->batch = f->unit;
		return;
	}
	for (;;) {
		t = f->fn(f->ctx, n);
		if (t >= sample_ns / 8 || n >= (1L << 30))
			break;
		n *= 2;
	}
	f->batch = round_up((long)ceil(sample_ns / (t / n)), f->unit);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void summarise(struct figure *f)
{
	double *s = malloc(sizeof(double) * f->nsamples);
	int n = f->nsamples;

	memcpy(s, f->samples, sizeof(double) * n);
	qsort(s, n, sizeof(double), cmp_double);
	f->min = s[0];
	f->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
}

void bench_run(struct figure *figs, int n, const struct bench_opts *o)
{
	double sample_ns = o->sample_ms * 1e6;

	for (int i = 0; i < n; i++) {
		struct figure *f = &figs[i];
		calibrate(f, sample_ns, o->quick);
		f->fn(f->ctx, f->batch); /* warm-up */
		f->samples = calloc(o->rounds, sizeof(double));
		f->nsamples = 0;
		f->reps = 0;
	}
	for (int r = 0; r < o->rounds; r++)
		for (int i = 0; i < n; i++) {
			struct figure *f = &figs[i];
			double t = f->fn(f->ctx, f->batch);
			f->samples[f->nsamples++] = t / f->batch;
			f->reps += f->batch;
		}
	for (int i = 0; i < n; i++)
		summarise(&figs[i]);
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
	return json_pack("{s:o, s:o, s:I, s:I}", "min_ns", bench_num(f->min),
	                 "median_ns", bench_num(f->median), "reps",
	                 (json_int_t)f->reps, "batch", (json_int_t)f->batch);
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
	return json_pack("{s:s, s:s, s:i, s:[f,f,f], s:i, s:i, s:f, s:b}",
	                 "cpu", cpu_model(model, sizeof(model)), "kernel",
	                 u.release, "cpus", (int)sysconf(_SC_NPROCESSORS_ONLN),
	                 "loadavg", load[0], load[1], load[2], "pinned_cpu",
	                 pinned_cpu, "rounds", o->rounds, "sample_ms",
	                 o->sample_ms, "quick", o->quick);
}

int bench_write_json(const struct bench_opts *o, json_t *root)
{
	int rc = 0;

	if (o->json &&
	    json_dump_file(root, o->json, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) < 0) {
		fprintf(stderr, "cannot write %s\n", o->json);
		rc = -1;
	}
	json_decref(root);
	return rc;
}
