/* rtl-threads: rtl with threads (bench/README.md, "Threads"). 1, 2 and 4
 * threads, each on 64 regions of its own:
 *   trap     region_protect(p, PROT_NONE), then a read through p: the
 *            region's handler grants it back (the RT-basic trap);
 *   protect  the same two region_protect calls, no access;
 *   signal   the floor the trap is held against: a read of a PROT_NONE
 *            page whose SIGSEGV handler only points the register at a
 *            readable byte (appel_li's floor), without rtl. How it
 *            scales is what the kernel's signal delivery allows a trap.
 * Each round runs every (workload, threads) pair for the same wall time,
 * one after another, so that all of them see the same machine; printed and
 * written: median and p10-p90 over the rounds of the total throughput, and
 * its ratio to one thread's (the ideal is the thread count, up to the
 * number of CPUs). Usage: rtl-threads [--quick] [--json FILE]. */
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <rtl/region.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench/arch.h"

#define NREG 64
#define MAXT 4

static const int counts[] = { 1, 2, 4 };
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))
static const char *const workloads[] = { "trap", "protect", "signal" };
#define NWORK 3
enum { TRAP,
       PROTECT,
       SIGNAL };

struct worker {
	pthread_t tid;
	int work;
	long ops;
	char *p[NREG]; /* bound pointers, one per region of this thread */
	char *none;    /* signal: a PROT_NONE page of this thread's */
	char *rw;      /* and the readable byte its handler points at */
} __attribute__((aligned(64)));

static struct worker workers[MAXT];
static pthread_barrier_t start;
static atomic_int stop;

static void grant(rtl_trap_t *t)
{
	region_protect(t->addr, PROT_READ | PROT_WRITE);
}

/* The floor's handler: the faulting read goes to this thread's byte. */
static __thread char *floor_to;

static void floor_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si;
	arch_set_pointer(uc, floor_to);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	long n = 0;

	floor_to = w->rw;
	pthread_barrier_wait(&start);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (int i = 0; i < NREG; i++) {
			if (w->work == SIGNAL) {
				arch_read_byte(*(char *volatile *)&w->none);
				continue;
			}
			region_protect(w->p[i], PROT_NONE);
			if (w->work == TRAP)
				arch_read_byte(*(char *volatile *)&w->p[i]);
			else
				region_protect(w->p[i], PROT_READ | PROT_WRITE);
		}
		n += NREG;
	}
	w->ops = n;
	return NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Total operations per second of nt threads doing work for ms. */
static double measure(int work, int nt, double ms)
{
	struct timespec pause = { (time_t)(ms / 1000), (long)(ms * 1e6) % 1000000000 };
	struct sigaction sa, rtls;
	double t0, ops = 0;

	if (work == SIGNAL) { /* rtl's handler aside while the floor runs */
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = floor_handler;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGSEGV, &sa, &rtls);
	}
	atomic_store(&stop, 0);
	pthread_barrier_init(&start, NULL, (unsigned)nt + 1);
	for (int i = 0; i < nt; i++) {
		workers[i].work = work;
		if (pthread_create(&workers[i].tid, NULL, run, &workers[i]))
			abort();
	}
	pthread_barrier_wait(&start);
	t0 = now();
	nanosleep(&pause, NULL);
	atomic_store(&stop, 1);
	for (int i = 0; i < nt; i++) {
		pthread_join(workers[i].tid, NULL);
		ops += (double)workers[i].ops;
	}
	pthread_barrier_destroy(&start);
	if (work == SIGNAL)
		sigaction(SIGSEGV, &rtls, NULL);
	return ops / (now() - t0);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double rank(const double *sorted, int n, double q)
{
	return sorted[(int)(q * (n - 1) + 0.5)];
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [--quick] [--json FILE]\n", prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *json = NULL;
	int rounds = 7, opt;
	double ms = 300, v[NWORK][NCOUNTS][16];
	json_t *root = json_object();
	double load[3] = { 0 };

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'q': rounds = 2, ms = 20; break;
		case 'j': json = optarg; break;
		case 'h': usage(stdout, argv[0]); return 0;
		default: usage(stderr, argv[0]); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr, argv[0]);
		return 2;
	}
	getloadavg(load, 3);
	for (int t = 0; t < MAXT; t++) {
		workers[t].none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		workers[t].rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (workers[t].none == MAP_FAILED || workers[t].rw == MAP_FAILED) {
			perror("rtl-threads: mmap");
			return 1;
		}
		workers[t].rw[0] = 1;
	}
	for (int t = 0; t < MAXT; t++)
		for (int i = 0; i < NREG; i++) {
			if (!region_alloc(64, &workers[t].p[i])) {
				perror("rtl-threads: region_alloc");
				return 1;
			}
			region_handler(workers[t].p[i], grant);
		}
	for (int r = 0; r < rounds; r++)
		for (int w = 0; w < NWORK; w++)
			for (int c = 0; c < NCOUNTS; c++)
				v[w][c][r] = measure(w, counts[c], ms);

	printf("\nThreads, each on its own %d regions of 64 B: total Mops/s, median "
	       "(p10-p90) of %d rounds of %.0f ms\n",
	       NREG, rounds, ms);
	printf("%-8s %7s %24s %12s %16s\n", "", "threads", "total Mops/s",
	       "total / 1", "per thread / 1");
	json_object_set_new(root, "machine",
	                    json_pack("{s:i, s:[f,f,f]}", "cpus",
	                              (int)sysconf(_SC_NPROCESSORS_ONLN), "loadavg",
	                              load[0], load[1], load[2]));
	for (int w = 0; w < NWORK; w++) {
		json_t *jw = json_object();
		double one = 0;

		for (int c = 0; c < NCOUNTS; c++) {
			double med, p10, p90;
			char key[8];

			qsort(v[w][c], (size_t)rounds, sizeof(double), by_value);
			med = rank(v[w][c], rounds, 0.5);
			p10 = rank(v[w][c], rounds, 0.1);
			p90 = rank(v[w][c], rounds, 0.9);
			if (c == 0)
				one = med;
			printf("%-8s %7d %9.2f (%5.2f-%5.2f) %12.2f %16.2f\n", workloads[w],
			       counts[c], med / 1e6, p10 / 1e6, p90 / 1e6, med / one,
			       med / one / counts[c]);
			snprintf(key, sizeof(key), "%d", counts[c]);
			json_object_set_new(
			        jw, key,
			        json_pack("{s:{s:f,s:f,s:f}, s:f, s:f}", "total_ops_per_s",
			                  "median", med, "p10", p10, "p90", p90,
			                  "total_over_1", med / one, "per_thread_over_1",
			                  med / one / counts[c]));
		}
		json_object_set_new(root, workloads[w], jw);
	}
	if (json && json_dump_file(root, json, JSON_INDENT(2)) < 0) {
		fprintf(stderr, "rtl-threads: cannot write %s\n", json);
		return 1;
	}
	json_decref(root);
	return 0;
}
