/* rtl-pieces: what the parts of a trap and a protection change cost.
 * region_protect with 1, 8 and 64 bound pointers; region lookup among 10^3
 * to 10^6 regions (independent lookups, and dependent ones beside a plain
 * memory chase over 1 to 128 MiB); a trap whose decode hits the cache
 * against one that misses it (many distinct instruction addresses). */
#include <rtl/region.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench/bench.h"

#define MAXFIG 32
#define MAXREGIONS 1000000
#define NADDR (1u << 20) /* lookup addresses, read in order */

static struct figure figs[MAXFIG];
static int nfigs;
static volatile uintptr_t sink;

static void add(const char *name, bench_op op, void *ctx, long unit)
{
	figs[nfigs++] = (struct figure){
		.name = strdup(name), .op = op, .ctx = ctx, .unit = unit
	};
}

#define BATCH 256 /* operations per timed call, for the cheap ones */

/* ---- region_protect with P bound pointers ---- */

static void *protect_new(int nptr)
{
	char **v = calloc(nptr, sizeof(char *));

	if (!region_alloc(4096, &v[0]))
		abort();
	for (int j = 1; j < nptr; j++)
		if (region_bptr(&v[0], &v[j]) < 0)
			abort();
	return v;
}

static void protect_run(void *ctx)
{
	char **v = ctx;

	for (long i = 0; i < BATCH / 2; i++) {
		region_protect(v[0], PROT_NONE);
		region_protect(v[0], PROT_READ | PROT_WRITE);
	}
}

/* ---- lookup ---- */

struct lookup {
	char **addr; /* NADDR random interior addresses */
	size_t k;
};

static char **regions;

static uint64_t rng = 88172645463325252ull;
static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void *lookup_new(long nregions)
{
	struct lookup *l = calloc(1, sizeof(*l));

	l->addr = malloc(sizeof(char *) * NADDR);
	for (size_t i = 0; i < NADDR; i++)
		l->addr[i] = regions[xorshift() % (uint64_t)nregions] + 17;
	return l;
}

/* Independent lookups: the CPU may overlap their cache misses. */
static void lookup_run(void *ctx)
{
	struct lookup *l = ctx;
	uintptr_t acc = 0;

	for (long i = 0; i < BATCH; i++) {
		struct region_info r;
		region_find(l->addr[l->k], &r);
		acc += (uintptr_t)r.base + r.size;
		l->k = (l->k + 1) & (NADDR - 1);
	}
	sink = acc;
}

/* Dependent lookups: the next one waits for this one's answer (its size,
 * always 64, shifted to nothing), so misses cannot overlap: latency. */
static void lookup_dep_run(void *ctx)
{
	struct lookup *l = ctx;
	size_t k = l->k;

	for (long i = 0; i < BATCH; i++) {
		struct region_info r = { .size = 0 };
		region_find(l->addr[k], &r);
		k = (k + 1 + (r.size >> 40)) & (NADDR - 1);
	}
	l->k = k;
	sink = k;
}

/* The memory's own latency: a dependent chase through a random cycle of
 * cache lines, in memory advised for huge pages as the region records are.
 * 16 MiB is what the region map's subtables take for a million 64 B
 * regions, 128 MiB what their records take. */
static const unsigned chase_mib[] = { 1, 8, 16, 128 };
#define NCHASE (sizeof(chase_mib) / sizeof(chase_mib[0]))
struct chase {
	uint64_t *next;
	uint64_t at;
};

static void *chase_new(size_t bytes)
{
	struct chase *c = calloc(1, sizeof(*c));
	size_t lines = bytes / 64, stride = 64 / sizeof(uint64_t);
	uint64_t *perm = malloc(sizeof(uint64_t) * lines);

	c->next = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	madvise(c->next, bytes, MADV_HUGEPAGE);
	for (size_t i = 0; i < lines; i++)
		perm[i] = i;
	for (size_t i = lines - 1; i > 0; i--) { /* Sattolo: one cycle */
		size_t j = xorshift() % i, t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		c->next[perm[i] * stride] = perm[(i + 1) % lines] * stride;
	free(perm);
	return c;
}

static void chase_run(void *ctx)
{
	struct chase *c = ctx;
	uint64_t at = c->at;

	for (long i = 0; i < BATCH; i++)
		at = c->next[at];
	c->at = at;
}

/* ---- decode cache: hit against miss ---- */

#define NSTUBS 65536 /* 16 per cache slot: every visit misses */

struct decode {
	char *x;              /* a region, bound pointer */
	unsigned char *stubs; /* movzbl (%rdi),%eax; ret */
	long nstubs, k;
	uint64_t traps, misses;
	struct region_stats s0;
};

static void grant(rtl_trap_t *t)
{
	region_protect(t->addr, PROT_READ | PROT_WRITE);
}

static void *decode_new(long nstubs)
{
	static const unsigned char stub[4] = { 0x0f, 0xb6, 0x07, 0xc3 };
	struct decode *d = calloc(1, sizeof(*d));

	d->nstubs = nstubs;
	d->stubs = mmap(NULL, NSTUBS * 4, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (long i = 0; i < nstubs; i++)
		memcpy(d->stubs + 4 * i, stub, 4);
	mprotect(d->stubs, NSTUBS * 4, PROT_READ | PROT_EXEC);
	if (!region_alloc(4096, &d->x))
		abort();
	region_handler(d->x, grant);
	return d;
}

static void decode_run(void *ctx)
{
	struct decode *d = ctx;
	int (*f)(char *) = (int (*)(char *))(uintptr_t)(d->stubs + 4 * d->k);

	region_protect(d->x, PROT_NONE);
	sink += (uintptr_t)f(*(char *volatile *)&d->x);
	if (++d->k == d->nstubs)
		d->k = 0;
}

/* Count the decode cache's misses over each sample. */
static void decode_begin(void *ctx)
{
	struct decode *d = ctx;
	region_stats(&d->s0);
}

static void decode_end(void *ctx)
{
	struct decode *d = ctx;
	struct region_stats s1;

	region_stats(&s1);
	d->traps += s1.traps - d->s0.traps;
	d->misses += s1.decode_misses - d->s0.decode_misses;
}

/* ---- main ---- */

static const long counts[] = { 1000, 10000, 100000, 1000000 };
#define NCOUNTS (sizeof(counts) / sizeof(counts[0]))

static struct cell {
	double min, med;
} cell_of(const char *name)
{
	struct figure *f = bench_find(figs, nfigs, name);
	return f ? (struct cell){ f->min, f->median } : (struct cell){ 0, 0 };
}

static json_t *cell_json(struct cell c)
{
	return json_pack("{s:o, s:o}", "min_ns", bench_num(c.min), "median_ns",
	                 bench_num(c.med));
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct decode *hit, *miss;
	json_t *root, *j;
	long nreg;
	char name[64];
	int cpu, rc;

	if ((rc = bench_args(argc, argv, &o)) != 0)
		return rc < 0 ? 2 : 0;
	/* Whole samples, not short bursts: a lookup burst that followed a
	 * 128 MiB chase would spend itself refilling the caches. */
	o.burst_ms = o.sample_ms;
	if (region_init() < 0) {
		perror("rtl");
		return 1;
	}
	cpu = bench_pin(o.cpu);
	nreg = MAXREGIONS; /* in --quick too: the JSON keeps its shape */

	add("protect.1", protect_run, protect_new(1), BATCH);
	add("protect.8", protect_run, protect_new(8), BATCH);
	add("protect.64", protect_run, protect_new(64), BATCH);
	regions = malloc(sizeof(char *) * nreg);
	for (long i = 0; i < nreg; i++)
		if (!(regions[i] = region_alloc(64, NULL)))
			abort();
	for (size_t c = 0; c < NCOUNTS && counts[c] <= nreg; c++) {
		void *l = lookup_new(counts[c]);
		snprintf(name, sizeof(name), "lookup.%ld", counts[c]);
		add(name, lookup_run, l, BATCH);
		snprintf(name, sizeof(name), "lookup_dep.%ld", counts[c]);
		add(name, lookup_dep_run, l, BATCH);
	}
	for (size_t c = 0; c < (o.quick ? 1 : NCHASE); c++) {
		snprintf(name, sizeof(name), "memory_chase.%u", chase_mib[c]);
		add(name, chase_run, chase_new((size_t)chase_mib[c] << 20),
		    BATCH);
	}
	hit = decode_new(1);
	miss = decode_new(NSTUBS);
	add("trap.decode_hit", decode_run, hit, 1);
	add("trap.decode_miss", decode_run, miss, 1);
	for (int i = nfigs - 2; i < nfigs; i++) {
		figs[i].begin = decode_begin;
		figs[i].end = decode_end;
	}
	nfigs = bench_run(figs, nfigs, &o);

	root = bench_results_json(figs, nfigs, &o, cpu);

	printf("\nPieces - ns per operation: median (min) of every call over "
	       "%d "
	       "rounds\n\n",
	       o.rounds);
	j = json_object();
	for (int p = 1; p <= 64; p *= 8) {
		struct cell c;
		snprintf(name, sizeof(name), "protect.%d", p);
		c = cell_of(name);
		printf("region_protect, %2d bound pointer%s   %8.1f (%.1f)\n",
		       p, p > 1 ? "s" : " ", c.med, c.min);
		snprintf(name, sizeof(name), "%d", p);
		json_object_set_new(j, name, cell_json(c));
	}
	json_object_set_new(root, "region_protect", j);

	j = json_object();
	for (size_t c = 0; c < NCOUNTS && counts[c] <= nreg; c++) {
		struct cell a, b;
		snprintf(name, sizeof(name), "lookup.%ld", counts[c]);
		a = cell_of(name);
		snprintf(name, sizeof(name), "lookup_dep.%ld", counts[c]);
		b = cell_of(name);
		printf("lookup among %7ld regions          %8.1f (%.1f)   "
		       "dependent: %.1f (%.1f)\n",
		       counts[c], a.med, a.min, b.med, b.min);
		snprintf(name, sizeof(name), "%ld", counts[c]);
		json_object_set_new(j, name,
		                    json_pack("{s:o, s:o}", "independent",
		                              cell_json(a), "dependent",
		                              cell_json(b)));
	}
	json_object_set_new(root, "lookup", j);
	j = json_object();
	for (size_t c = 0; c < NCHASE; c++) {
		struct cell m;
		snprintf(name, sizeof(name), "memory_chase.%u", chase_mib[c]);
		if (!bench_find(figs, nfigs, name))
			continue;
		m = cell_of(name);
		printf("dependent memory access, %3u MiB      %8.1f (%.1f)\n",
		       chase_mib[c], m.med, m.min);
		snprintf(name, sizeof(name), "%u", chase_mib[c]);
		json_object_set_new(j, name, cell_json(m));
	}
	json_object_set_new(root, "memory_chase_mib", j);
	{
		struct cell h = cell_of("trap.decode_hit");
		struct cell m = cell_of("trap.decode_miss");
		double fh = hit->traps ? (double)hit->misses / hit->traps : 0;
		double fm =
		        miss->traps ? (double)miss->misses / miss->traps : 0;
		printf("protect + trap, decode cache hit     %8.1f (%.1f)   "
		       "miss rate %.3f\n",
		       h.med, h.min, fh);
		printf("protect + trap, decode cache miss    %8.1f (%.1f)   "
		       "miss rate %.3f\n",
		       m.med, m.min, fm);
		printf("  a miss costs                       %8.1f (%.1f)\n",
		       m.med - h.med, m.min - h.min);
		json_object_set_new(
		        root, "decode",
		        json_pack("{s:o, s:o, s:o, s:f, s:f}", "hit",
		                  cell_json(h), "miss", cell_json(m),
		                  "miss_extra",
		                  cell_json((struct cell){ m.min - h.min,
		                                           m.med - h.med }),
		                  "hit_run_miss_rate", fh, "miss_run_miss_rate",
		                  fm));
	}
	return bench_write_json(&o, root) < 0;
}
