/* rtl-dirty: three ways to see a program's writes, side by side in one
 * process (bench/README.md, "Write tracking"):
 *   page_trap     a page of an anonymous mapping, read-only; the first
 *                 write's SIGSEGV handler mprotects it writable and returns
 *                 (page-protection dirty bits: Boehm GC's, TreadMarks');
 *   region_trap   a tracked region of 4 KiB on traps (RTL_TRACK_TRAPS): the
 *                 first write after a checkpoint traps, rtl takes the twin,
 *                 the region's handler grants;
 *   written_bits  the same region on the kernel's written bits
 *                 (RTL_TRACK_WRITTEN): the first write after a checkpoint is
 *                 a fault the kernel resolves, no signal.
 * Figures: a first write's cost (a round times one write to each of K
 * armed pages); 1 and 2 threads making first writes to pages of their own
 * (total throughput, and 2 over 1; beside them a control, 2 threads
 * computing about as long per step with no fault, which says how much a
 * second core the machine had for this run); region_dirty over 10^5 tracked page
 * regions of which 1 % were written (per tracked page, the compares of the
 * written ones included). Medians (p10-p90) over the rounds.
 * Usage: rtl-dirty [--quick] [--json FILE]. */
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <rtl/region.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define K 1024 /* pages per thread and round */
#define PAGE 4096
#define MAXR 31

enum { PAGE_TRAP,
       REGION_TRAP,
       WRITTEN_BITS,
       NWAYS };
static const char *const ways[NWAYS] = { "page_trap", "region_trap", "written_bits" };
#define CONTROL NWAYS /* the threads' control: no fault */

struct side {            /* one thread's pages, each way */
	char *map;       /* page_trap: K pages of an anonymous mapping */
	char *reg[2][K]; /* region_trap, written_bits: bound pointers */
	char *big;       /* written_bits, threads: one region of K pages */
	int in_threads;  /* writing in the threads' rounds */
	pthread_t tid;
	int way;
	unsigned char v;
	double ns;              /* seconds spent writing, by itself */
	volatile uint64_t sink; /* the control's result */
	long writes;            /* first writes made */
} __attribute__((aligned(64)));

static struct side sides[2];
static pthread_barrier_t start, done;
static atomic_int stop;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void grant(rtl_trap_t *t)
{
	region_protect(t->addr, PROT_READ | PROT_WRITE);
}

/* page_trap's handler: the page writable, the write goes on. */
static void page_handler(int sig, siginfo_t *si, void *uc)
{
	uintptr_t p = (uintptr_t)si->si_addr & ~(uintptr_t)(PAGE - 1);

	(void)sig, (void)uc;
	syscall(SYS_mprotect, (void *)p, PAGE, PROT_READ | PROT_WRITE);
}

/* Every page of s ready for its first write in the way's sense. */
static void arm(struct side *s, int way)
{
	if (way == CONTROL)
		return;
	if (way == PAGE_TRAP) {
		mprotect(s->map, (size_t)K * PAGE, PROT_READ);
		return;
	}
	if (way == WRITTEN_BITS && s->in_threads) {
		region_checkpoint(s->big);
		return;
	}
	for (int i = 0; i < K; i++)
		region_checkpoint(s->reg[way - 1][i]);
}

/* One write to each armed page. */
static void write_all(struct side *s, int way)
{
	s->v++;
	if (way == CONTROL) { /* about a microsecond a step, no fault */
		uint64_t x = s->v;

		for (int i = 0; i < K * 400; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		s->sink = x;
		return;
	}
	for (int i = 0; i < K; i++) {
		char *p = way == PAGE_TRAP ? s->map + (size_t)i * PAGE
		          : way == WRITTEN_BITS && s->in_threads
		                  ? s->big + (size_t)i * PAGE
		                  : __atomic_load_n(&s->reg[way - 1][i], __ATOMIC_RELAXED);
		*(volatile unsigned char *)(p + 64) = s->v;
	}
}

static void *writer(void *arg)
{
	struct side *s = arg;

	for (;;) {
		pthread_barrier_wait(&start);
		if (s->way == -1)
			return NULL;
		s->writes = 0;
		s->ns = 0;
		if (s->way == -2) { /* not in this round */
			pthread_barrier_wait(&done);
			continue;
		}
		while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
			double t0;

			arm(s, s->way);
			t0 = now();
			write_all(s, s->way);
			s->ns += now() - t0;
			s->writes += K;
		}
		pthread_barrier_wait(&done);
	}
}

static void page_handler_on(struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = page_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, old); /* rtl's handler aside meanwhile */
}

/* One round of K first writes by this thread: ns per write. */
static double first_writes(int way)
{
	struct sigaction old;
	double t0, t;

	if (way == PAGE_TRAP)
		page_handler_on(&old);
	arm(&sides[0], way);
	t0 = now();
	write_all(&sides[0], way);
	t = now() - t0;
	if (way == PAGE_TRAP)
		sigaction(SIGSEGV, &old, NULL);
	return t * 1e9 / K;
}

/* nt threads, each arming its pages and writing them, over and over, for
 * ms: the total of each thread's writes over its time writing (the arming
 * is not counted; both threads write for most of the same time). */
static double throughput(int way, int nt, double ms)
{
	struct timespec pause = { (time_t)(ms / 1000), (long)(ms * 1e6) % 1000000000 };
	struct sigaction old;
	double total = 0;

	if (way == PAGE_TRAP)
		page_handler_on(&old);
	atomic_store(&stop, 0);
	for (int i = 0; i < 2; i++)
		sides[i].way = i < nt ? way : -2;
	pthread_barrier_wait(&start);
	nanosleep(&pause, NULL);
	atomic_store(&stop, 1);
	pthread_barrier_wait(&done);
	for (int i = 0; i < nt; i++)
		total += (double)sides[i].writes / sides[i].ns;
	if (way == PAGE_TRAP)
		sigaction(SIGSEGV, &old, NULL);
	return total;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static json_t *stats_of(double *v, int n, double *median)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	*median = v[n / 2];
	return json_pack("{s:f, s:f, s:f}", "median", v[n / 2], "p10",
	                 v[(int)(0.1 * (n - 1) + 0.5)], "p90", v[(int)(0.9 * (n - 1) + 0.5)]);
}

static int setup_side(struct side *s, int wbits)
{
	s->map = mmap(NULL, (size_t)K * PAGE, PROT_READ | PROT_WRITE,
	              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->map == MAP_FAILED)
		return -1;
	memset(s->map, 1, (size_t)K * PAGE); /* populated: the trap alone */
	if (!region_alloc((size_t)K * PAGE, &s->big))
		return -1;
	memset(s->big, 1, (size_t)K * PAGE);
	if (region_track(s->big, wbits ? RTL_TRACK_WRITTEN : RTL_TRACK_TRAPS) < 0)
		return -1;
	for (int w = 0; w < 2; w++)
		for (int i = 0; i < K; i++) {
			char **p = &s->reg[w][i];

			if (!region_alloc(PAGE, p) || region_handler(*p, grant) < 0)
				return -1;
			memset(*p, 1, PAGE);
			if (region_track(*p, w == 0 || !wbits ? RTL_TRACK_TRAPS
			                                      : RTL_TRACK_WRITTEN) < 0)
				return -1;
		}
	return 0;
}

/* region_dirty over n tracked page regions, n/100 written before each
 * call: ns per tracked page, per round. */
static int scan_rounds(int track, size_t n, int rounds, double *out)
{
	char **x = calloc(n, sizeof(*x));
	void **b = calloc(n, sizeof(*b));
	uint64_t rng = 88172645463325252ull;

	if (!x || !b)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!region_alloc(PAGE, &x[i]))
			return -1;
		memset(x[i], 1, PAGE);
		if (region_track(x[i], track) < 0)
			return -1;
	}
	for (int r = 0; r < rounds; r++) {
		size_t got;
		double t0;

		for (size_t k = 0; k < n / 100; k++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			x[rng % n][rng % PAGE] += 1;
		}
		t0 = now();
		got = region_dirty(b, n, 1);
		out[r] = (now() - t0) * 1e9 / (double)n;
		for (size_t k = 0; k < got && k < n; k++)
			region_checkpoint(b[k]);
	}
	for (size_t i = 0; i < n; i++)
		region_free(x[i]);
	free(x);
	free(b);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *json = NULL, *why = NULL;
	int rounds = MAXR, trounds = 7, opt, wbits;
	size_t scan_n = 100000;
	double tms = 200, fw[NWAYS][MAXR], tp[NWAYS + 1][2][MAXR], med[NWAYS],
	       scaling[NWAYS + 1];
	double sv[2][MAXR], smed[2];
	json_t *root = json_object(), *first = json_object(), *ratio = json_object(),
	       *thr = json_object(), *scan = json_object();

	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'q': rounds = trounds = 3, scan_n = 10000, tms = 20; break;
		case 'j': json = optarg; break;
		case 'h': printf("usage: %s [--quick] [--json FILE]\n", argv[0]); return 0;
		default: fprintf(stderr, "usage: %s [--quick] [--json FILE]\n", argv[0]); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: %s [--quick] [--json FILE]\n", argv[0]);
		return 2;
	}
	wbits = region_dirty_backend(&why) == RTL_DIRTY_WRITTEN_BITS;
	printf("\nWrite tracking: %s (%s)\n", wbits ? "written bits" : "traps only", why);
	if (setup_side(&sides[0], wbits) < 0 || setup_side(&sides[1], wbits) < 0) {
		perror("rtl-dirty: setup");
		return 1;
	}
	pthread_barrier_init(&start, NULL, 3);
	pthread_barrier_init(&done, NULL, 3);
	for (int i = 0; i < 2; i++)
		pthread_create(&sides[i].tid, NULL, writer, &sides[i]);
	/* Every way in each round: the same machine for all. */
	for (int r = 0; r < rounds; r++)
		for (int w = 0; w < NWAYS; w++)
			fw[w][r] = first_writes(w);
	sides[0].in_threads = sides[1].in_threads = 1;
	for (int r = 0; r < trounds; r++)
		for (int w = 0; w <= CONTROL; w++)
			for (int t = 0; t < 2; t++)
				tp[w][t][r] = throughput(w, t + 1, tms);
	sides[0].way = sides[1].way = -1;
	pthread_barrier_wait(&start);
	for (int i = 0; i < 2; i++)
		pthread_join(sides[i].tid, NULL);

	printf("first writes to armed pages, one thread: ns per write, median (p10-p90) "
	       "of %d rounds of %d\n",
	       rounds, K);
	for (int w = 0; w < NWAYS; w++) {
		json_t *one = stats_of(fw[w], rounds, &med[w]);

		json_object_set_new(first, ways[w], one);
		printf("  %-13s %8.0f ns (%.0f-%.0f)", ways[w], med[w],
		       json_real_value(json_object_get(one, "p10")),
		       json_real_value(json_object_get(one, "p90")));
		if (w > 0)
			printf("   %.3f x page_trap", med[w] / med[PAGE_TRAP]);
		printf("\n");
	}
	printf("1 and 2 threads making first writes to pages of their own: total "
	       "writes/s, median of %d rounds of %.0f ms\n",
	       trounds, tms);
	for (int w = 0; w <= CONTROL; w++) {
		const char *name = w == CONTROL ? "control" : ways[w];
		double m1, m2, ratios[MAXR];
		json_t *j1, *j2, *jr;

		for (int r = 0; r < trounds; r++)
			ratios[r] = tp[w][1][r] / tp[w][0][r];
		j1 = stats_of(tp[w][0], trounds, &m1);
		j2 = stats_of(tp[w][1], trounds, &m2);
		jr = stats_of(ratios, trounds, &scaling[w]);
		printf("  %-13s 1: %6.2f M/s  2: %6.2f M/s  2 / 1: %.2f (per round)\n", name,
		       m1 / 1e6, m2 / 1e6, scaling[w]);
		json_object_set_new(thr, name,
		                    json_pack("{s:o, s:o, s:o}", "1_thread_per_s", j1,
		                              "2_threads_per_s", j2, "scaling_2", jr));
	}
	for (int w = 1; w < NWAYS; w++)
		json_object_set_new(ratio, ways[w],
		                    w == WRITTEN_BITS && !wbits ? json_null()
		                                                : json_real(med[w] / med[PAGE_TRAP]));

	for (int k = 0; k < 2; k++) {
		int track = k ? RTL_TRACK_TRAPS : RTL_TRACK_WRITTEN;

		if (scan_rounds(track, scan_n, rounds, sv[k]) < 0) {
			perror("rtl-dirty: scan");
			return 1;
		}
		json_object_set_new(scan, k ? "traps" : "written_bits", stats_of(sv[k], rounds, &smed[k]));
	}
	printf("region_dirty over %zu tracked 4 KiB regions, 1 %% written: ns per "
	       "tracked page: written bits %.1f, traps %.1f (the list alone: the "
	       "writes paid their traps)\n",
	       scan_n, smed[0], smed[1]);

	json_object_set_new(root, "backend", json_pack("{s:s, s:s}", "way", wbits ? "written_bits" : "traps", "why", why));
	json_object_set_new(root, "first_write_ns", first);
	json_object_set_new(root, "first_write_over_page_trap", ratio);
	json_object_set_new(root, "threads", thr);
	json_object_set_new(root, "region_dirty_ns_per_page", scan);
	json_object_set_new(root, "region_dirty_regions", json_integer((json_int_t)scan_n));
	if (json && json_dump_file(root, json, JSON_INDENT(2)) < 0) {
		fprintf(stderr, "rtl-dirty: cannot write %s\n", json);
		return 1;
	}
	json_decref(root);
	return 0;
}
