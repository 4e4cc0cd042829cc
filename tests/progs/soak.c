/* Soak: threads define, protect, trap on, diff and free regions of random
 * sizes, forking now and then, and check every byte against a shadow copy.
 * Any mismatch is printed and makes the exit status 1.
 *
 * usage: soak [-t THREADS] [-n ITERATIONS] [-s SECONDS] [-S SEED]
 * (iterations per thread; -s runs for a duration instead) */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rtl/region.h>

#define SLOTS 48
#define MAX_SIZE (64 << 10)

struct slot {
	unsigned char *r;      /* bound pointer */
	unsigned char *shadow; /* what r must hold */
	unsigned char *base;   /* shadow at the last checkpoint */
	size_t size;
	int tracked;
};

struct worker {
	int id;
	uint64_t rng;
	struct slot s[SLOTS];
	long iterations;
	pthread_t tid;
};

static _Atomic long mismatches, traps, forks, diffs, ops;
static volatile int stop;
static double deadline;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t next(uint64_t *x) /* xorshift64* */
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ull;
}

static size_t pick_size(uint64_t *rng)
{
	/* Log-uniform: as many tiny regions as big ones. */
	int bits = (int)(next(rng) % 17);
	return 1 + (size_t)(next(rng) % ((size_t)1 << bits)) % MAX_SIZE;
}

static void grant(rtl_trap_t *t)
{
	atomic_fetch_add_explicit(&traps, 1, memory_order_relaxed);
	region_protect(t->addr, t->write ? PROT_READ | PROT_WRITE : PROT_READ);
}

/* Count and print a mismatch; -1, for the checks that stop at one. */
static int mismatch(struct worker *w, int k, const char *what, size_t at)
{
	atomic_fetch_add(&mismatches, 1);
	fprintf(stderr, "soak: thread %d slot %d (%zu bytes): %s at offset %zu\n",
	        w->id, k, w->s[k].size, what, at);
	return -1;
}

static void verify(struct worker *w, int k, const char *when)
{
	struct slot *s = &w->s[k];
	const volatile unsigned char *r = s->r;
	for (size_t i = 0; i < s->size; i++)
		if (r[i] != s->shadow[i]) {
			mismatch(w, k, when, i);
			return;
		}
}

static void make(struct worker *w, int k)
{
	struct slot *s = &w->s[k];

	s->size = pick_size(&w->rng);
	s->r = region_alloc(s->size, &s->r);
	s->shadow = malloc(s->size);
	s->base = malloc(s->size);
	if (!s->r || !s->shadow || !s->base) {
		fprintf(stderr, "soak: out of memory (%s)\n", strerror(errno));
		exit(2);
	}
	for (size_t i = 0; i < s->size; i++)
		s->r[i] = s->shadow[i] = (unsigned char)next(&w->rng);
	s->tracked = next(&w->rng) % 3 == 0;
	if (s->tracked) {
		region_track(s->r, 1);
		memcpy(s->base, s->shadow, s->size);
	}
}

static void drop(struct worker *w, int k)
{
	struct slot *s = &w->s[k];
	verify(w, k, "before free");
	if (region_free(s->r) < 0)
		mismatch(w, k, "region_free failed", 0);
	free(s->shadow);
	free(s->base);
	s->r = NULL;
}

static void scribble(struct worker *w, int k)
{
	struct slot *s = &w->s[k];
	volatile unsigned char *r = s->r;
	int n = 1 + (int)(next(&w->rng) % 8);

	for (int i = 0; i < n; i++) {
		size_t at = next(&w->rng) % s->size;
		size_t len = 1 + next(&w->rng) % (s->size - at < 64 ? s->size - at : 64);
		unsigned char v = (unsigned char)next(&w->rng);
		for (size_t j = 0; j < len; j++)
			r[at + j] = s->shadow[at + j] = v;
	}
}

/* The diff since the last checkpoint must be exactly the bytes that
 * differ from the shadow's snapshot, and must rebuild the region from it. */
static int check_diff(struct worker *w, int k)
{
	struct slot *s = &w->s[k];
	rtl_run_t runs[256];
	ssize_t n = region_diff(s->r, runs, 256), len;
	unsigned char *copy, *enc;
	size_t at = 0;

	atomic_fetch_add(&diffs, 1);
	if (n < 0)
		return 0; /* more runs than we asked for: fine, skip */
	for (ssize_t i = 0; i < n; i++) {
		for (; at < runs[i].offset; at++)
			if (s->base[at] != s->shadow[at])
				return mismatch(w, k, "changed byte outside the diff", at);
		for (size_t j = 0; j < runs[i].len; j++, at++)
			if (s->base[at] == s->shadow[at])
				return mismatch(w, k, "unchanged byte inside a diff run", at);
	}
	for (; at < s->size; at++)
		if (s->base[at] != s->shadow[at])
			return mismatch(w, k, "changed byte after the diff", at);
	/* Encode, apply to a copy of the checkpoint, compare. */
	len = region_diff_encode(s->r, NULL, 0);
	enc = malloc(len > 0 ? (size_t)len : 1);
	copy = region_alloc(s->size, &copy);
	if (!enc || !copy || len < 0 || region_diff_encode(s->r, enc, (size_t)len) != len)
		return mismatch(w, k, "diff encode failed", 0);
	memcpy(copy, s->base, s->size);
	if (region_diff_apply(copy, enc, (size_t)len) < 0)
		mismatch(w, k, "diff apply refused its own encoding", 0);
	else if (memcmp(copy, s->shadow, s->size))
		mismatch(w, k, "diff applied to the checkpoint differs", 0);
	region_free(copy);
	free(enc);
	region_checkpoint(s->r);
	memcpy(s->base, s->shadow, s->size);
	return 0;
}

/* Fork: the child sees this thread's regions as they are, changes them,
 * and the parent sees none of it. */
static void fork_check(struct worker *w)
{
	pid_t pid;
	int st;

	atomic_fetch_add(&forks, 1);
	pid = fork();
	if (pid == 0) {
		long bad = 0;
		for (int k = 0; k < SLOTS; k++) {
			struct slot *s = &w->s[k];
			if (!s->r)
				continue;
			if (memcmp((const void *)s->r, s->shadow, s->size))
				bad++;
			memset(s->r, 0xee, s->size);
		}
		_exit(bad ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		mismatch(w, 0, "child saw other bytes than the parent at fork", 0);
	for (int k = 0; k < SLOTS; k++)
		if (w->s[k].r)
			verify(w, k, "after the child wrote");
}

/* Read through a copy taken while the region was PROT_NONE, after it went
 * back to RW: every access is a stale trap that rtl heals by itself. */
static int stale_read(struct worker *w, int k)
{
	struct slot *s = &w->s[k];
	const volatile unsigned char *copy;

	region_protect(s->r, PROT_NONE);
	copy = s->r;
	region_protect(s->r, PROT_READ | PROT_WRITE);
	for (size_t i = 0; i < s->size; i += 97)
		if (copy[i] != s->shadow[i])
			return mismatch(w, k, "stale read", i);
	return 0;
}

static void step(struct worker *w)
{
	int k = (int)(next(&w->rng) % SLOTS);
	struct slot *s = &w->s[k];
	unsigned op = (unsigned)(next(&w->rng) % 100);

	atomic_fetch_add_explicit(&ops, 1, memory_order_relaxed);
	if (!s->r) {
		make(w, k);
		return;
	}
	if (op < 10)
		drop(w, k);
	else if (op < 35)
		region_protect(s->r, (int[]){ PROT_NONE, PROT_READ,
		                              PROT_READ | PROT_WRITE }[next(&w->rng) % 3]);
	else if (op < 70)
		scribble(w, k);
	else if (op < 90)
		verify(w, k, "on read");
	else if (s->tracked)
		check_diff(w, k);
	else if (w->id == 0 && op == 99)
		fork_check(w);
	else if (op < 95)
		stale_read(w, k);
}

static void *run(void *arg)
{
	struct worker *w = arg;

	for (long i = 0; !stop && (deadline ? now() < deadline : i < w->iterations); i++)
		step(w);
	for (int k = 0; k < SLOTS; k++)
		if (w->s[k].r)
			drop(w, k);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 8, opt;
	long iterations = 2000;
	uint64_t seed = 1;
	double seconds = 0;
	static struct worker w[64];
	struct region_stats st;

	while ((opt = getopt(argc, argv, "t:n:s:S:")) != -1) {
		switch (opt) {
		case 't': threads = atoi(optarg); break;
		case 'n': iterations = atol(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'S': seed = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: soak [-t THREADS] [-n ITERATIONS] [-s SECONDS] [-S SEED]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || iterations < 1) {
		fprintf(stderr, "usage: soak [-t THREADS(1-64)] [-n ITERATIONS] [-s SECONDS] [-S SEED]\n");
		return 2;
	}
	if (seconds > 0)
		deadline = now() + seconds;
	region_handler(NULL, grant);
	for (int i = 0; i < threads; i++) {
		w[i].id = i;
		w[i].rng = seed * 0x9e3779b97f4a7c15ull + (uint64_t)i + 1;
		w[i].iterations = iterations;
		pthread_create(&w[i].tid, NULL, run, &w[i]);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(w[i].tid, NULL);
	region_stats(&st);
	printf("soak: %d threads, %ld operations, %ld traps (%llu stale), %ld diffs, "
	       "%ld forks, %ld mismatches, %llu regions left\n",
	       threads, (long)ops, (long)traps, (unsigned long long)st.stale_traps,
	       (long)diffs, (long)forks, (long)mismatches,
	       (unsigned long long)st.regions);
	return mismatches || st.regions ? 1 : 0;
}
