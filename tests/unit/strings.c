/* glibc's string functions (the AVX2 variants on this machine) over regions
 * that trap, against the same calls on ordinary memory (strings.h): memcpy,
 * memmove (both overlaps), memset, memcmp, strlen, strnlen, strcpy, strcmp,
 * strchr, memchr. Then: traps in the middle of glibc's loops (two regions
 * that revoke each other), small strings ending at page ends beside
 * trapping neighbours, and four threads at once. */
#include <pthread.h>

#include "tests/unit/glibc_strings.h"

struct call {
	int k;
	size_t n, sa, da; /* size, source and destination alignment */
	int p0, p1;       /* how the operands are given */
};

typedef void (*check_fn)(struct bufs *b, const struct call *c);

/* Operand modes in turn: region source and plain destination, plain and
 * region, both regions, and a source already readable. w: how a region
 * destination starts (PROT_READ if written, PROT_NONE if read). */
static void modes(int k, int w, int *p0, int *p1)
{
	static const int m[4][2] = { { PROT_NONE, PLAIN }, { PLAIN, -1 }, { PROT_NONE, -1 }, { PROT_READ, PROT_NONE } };
	*p0 = m[k % 4][0];
	*p1 = m[k % 4][1] == -1 ? (k / 4 % 2 ? PROT_NONE : w) : m[k % 4][1];
}

static __thread const struct call *current;
static void say_current(void);

/* On a failed check (exit), say which call it was. */
static void say_current(void)
{
	const struct call *c = current;
	if (c)
		printf("# in call k=%d n=%zu sa=%zu da=%zu p0=%d p1=%d\n", c->k,
		       c->n, c->sa, c->da, c->p0, c->p1);
}

static void say_current_at_exit(void)
{
	static _Atomic int once;
	if (!once++)
		atexit(say_current);
}

static void each_size(struct bufs *b, check_fn fn, int w, int step, int first)
{
	say_current_at_exit();
	for (int k = first; k < NSIZES; k += step) {
		struct call c = { k, size_at(k), (size_t)k % 64,
			          (size_t)(k * 37 + 11) % 64, 0, 0 };
		modes(k, w, &c.p0, &c.p1);
		current = &c;
		fn(b, &c);
	}
	current = NULL;
}

/* ---- the functions ---- */

static void t_memcpy(struct bufs *b, const struct call *c)
{
	size_t len = c->n + 128;
	char *d, *s, *ret;

	bufs_fill(b, 0, len);
	bufs_fill(b, 1, len);
	memcpy(b->o[1] + c->da, b->o[0] + c->sa, c->n);
	s = bufs_arg(b, 0, c->p0, c->sa);
	d = bufs_arg(b, 1, c->p1, c->da);
	ret = memcpy(d, s, c->n);
	CHECK_EQ(off_of(ret, d), 0);
	CHECK(bufs_same(b, 1, c->p1, len));
	CHECK(bufs_same(b, 0, c->p0, len));
}

/* Both overlaps in one buffer: k even, destination above the source. */
static void t_memmove(struct bufs *b, const struct call *c)
{
	size_t len = c->n + 256, shift = 1 + (size_t)c->k % 97;
	size_t s_off = 100 + c->sa, d_off = c->k % 2 ? s_off - shift : s_off + shift;
	int prot = c->k % 3 == 0 ? PROT_READ : PROT_NONE;
	char *ret, *d;

	if (c->k % 5 == 4)
		prot = PLAIN;
	bufs_fill(b, 0, len);
	memmove(b->o[0] + d_off, b->o[0] + s_off, c->n);
	d = bufs_arg(b, 0, prot, d_off);
	ret = memmove(d, d - d_off + s_off, c->n);
	CHECK_EQ(off_of(ret, d), 0);
	CHECK(bufs_same(b, 0, prot, len));
}

static void t_memset(struct bufs *b, const struct call *c)
{
	size_t len = c->n + 128;
	int prot = c->k % 2 ? PROT_NONE : PROT_READ;
	char *d, *ret;

	bufs_fill(b, 0, len);
	memset(b->o[0] + c->da, c->k & 0xff, c->n);
	d = bufs_arg(b, 0, prot, c->da);
	ret = memset(d, c->k & 0xff, c->n);
	CHECK_EQ(off_of(ret, d), 0);
	CHECK(bufs_same(b, 0, prot, len));
}

/* Equal, or different at one place chosen at random. */
static size_t differ(struct bufs *b, const struct call *c, size_t n)
{
	size_t at = rng() % (n + 1);
	if (at < n)
		bufs_set(b, 1, c->da + at, (char)(b->o[0][c->sa + at] ^ 0x80));
	return at;
}

static int sign(int v) { return (v > 0) - (v < 0); }

static void t_memcmp(struct bufs *b, const struct call *c)
{
	size_t len = c->n + 128;
	int ref, got;

	bufs_fill(b, 0, len);
	bufs_fill(b, 1, len);
	bufs_copy(b, 1, c->da, b->o[0] + c->sa, c->n);
	differ(b, c, c->n);
	ref = memcmp(b->o[0] + c->sa, b->o[1] + c->da, c->n);
	got = memcmp(bufs_arg(b, 0, c->p0, c->sa), bufs_arg(b, 1, c->p1, c->da),
	             c->n);
	CHECK_EQ(sign(got), sign(ref));
}

/* A string of n bytes at the source alignment. */
static void string_at(struct bufs *b, int i, size_t off, size_t n)
{
	bufs_fill(b, i, off + n + 128);
	bufs_set(b, i, off + n, 0);
}

static void t_strlen(struct bufs *b, const struct call *c)
{
	string_at(b, 0, c->sa, c->n);
	CHECK_EQ(strlen(bufs_arg(b, 0, PROT_NONE, c->sa)), c->n);
}

static void t_strnlen(struct bufs *b, const struct call *c)
{
	size_t max = c->k % 3 == 0 ? c->n / 2 : c->n + (size_t)c->k % 40;
	size_t ref;

	string_at(b, 0, c->sa, c->n);
	ref = strnlen(b->o[0] + c->sa, max);
	CHECK_EQ(strnlen(bufs_arg(b, 0, PROT_NONE, c->sa), max), ref);
}

static void t_strcpy(struct bufs *b, const struct call *c)
{
	size_t len = c->n + 128 + 64;
	char *d, *ret;

	string_at(b, 0, c->sa, c->n);
	bufs_fill(b, 1, len);
	strcpy(b->o[1] + c->da, b->o[0] + c->sa);
	d = bufs_arg(b, 1, c->p1, c->da);
	ret = strcpy(d, bufs_arg(b, 0, c->p0, c->sa));
	CHECK_EQ(off_of(ret, d), 0);
	CHECK(bufs_same(b, 1, c->p1, len));
}

static void t_strcmp(struct bufs *b, const struct call *c)
{
	int ref, got;

	string_at(b, 0, c->sa, c->n);
	string_at(b, 1, c->da, c->n);
	bufs_copy(b, 1, c->da, b->o[0] + c->sa, c->n);
	differ(b, c, c->n);
	ref = strcmp(b->o[0] + c->sa, b->o[1] + c->da);
	got = strcmp(bufs_arg(b, 0, c->p0, c->sa), bufs_arg(b, 1, c->p1, c->da));
	CHECK_EQ(sign(got), sign(ref));
}

/* Search for a byte that is there, the terminator, or one that is not. */
static int wanted(struct bufs *b, const struct call *c)
{
	if (c->k % 3 == 0)
		return 0xff;
	if (c->k % 3 == 1 || !c->n)
		return 0;
	return (unsigned char)b->o[0][c->sa + rng() % c->n];
}

static void t_strchr(struct bufs *b, const struct call *c)
{
	int ch;
	char *s;
	long ref;

	string_at(b, 0, c->sa, c->n);
	ch = wanted(b, c);
	ref = off_of(strchr(b->o[0] + c->sa, ch), b->o[0] + c->sa);
	s = bufs_arg(b, 0, PROT_NONE, c->sa);
	CHECK_EQ(off_of(strchr(s, ch), s), ref);
}

static void t_memchr(struct bufs *b, const struct call *c)
{
	int ch;
	char *s;
	long ref;

	bufs_fill(b, 0, c->sa + c->n + 128);
	ch = c->k % 3 == 1 ? 0xff : wanted(b, c);
	ref = off_of(memchr(b->o[0] + c->sa, ch, c->n), b->o[0] + c->sa);
	s = bufs_arg(b, 0, PROT_NONE, c->sa);
	CHECK_EQ(off_of(memchr(s, ch, c->n), s), ref);
}

static void run(check_fn fn, int w)
{
	struct bufs b;
	uint64_t t0;

	rng_state = 1;
	bufs_init(&b);
	t0 = stats().traps;
	each_size(&b, fn, w, 1, 0);
	printf("# %llu traps\n", (unsigned long long)(stats().traps - t0));
	CHECK(stats().traps - t0 >= NSIZES / 2); /* they did trap */
}

TEST(glibc_memcpy) { run(t_memcpy, PROT_READ); }
TEST(glibc_memmove_both_overlaps) { run(t_memmove, PROT_READ); }
TEST(glibc_memset) { run(t_memset, PROT_READ); }
TEST(glibc_memcmp) { run(t_memcmp, PROT_NONE); }
TEST(glibc_strlen) { run(t_strlen, PROT_NONE); }
TEST(glibc_strnlen) { run(t_strnlen, PROT_NONE); }
TEST(glibc_strcpy) { run(t_strcpy, PROT_READ); }
TEST(glibc_strcmp) { run(t_strcmp, PROT_NONE); }
TEST(glibc_strchr) { run(t_strchr, PROT_NONE); }
TEST(glibc_memchr) { run(t_memchr, PROT_NONE); }

/* Every pair of alignments for a few sizes, two-operand functions. */
static void grid(check_fn fn, int w)
{
	static const size_t sizes[] = { 1, 31, 64, 100, 300 };
	struct bufs b;

	rng_state = 2;
	bufs_init(&b);
	say_current_at_exit();
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (int a = 0; a < 64 * 64; a++) {
			struct call c = { a, sizes[s], (size_t)a % 64,
				          (size_t)a / 64, 0, 0 };
			modes(a, w, &c.p0, &c.p1);
			current = &c;
			fn(&b, &c);
		}
	current = NULL;
}

TEST(alignment_grid_memcpy) { grid(t_memcpy, PROT_READ); }
TEST(alignment_grid_memcmp) { grid(t_memcmp, PROT_NONE); }
TEST(alignment_grid_strcpy) { grid(t_strcpy, PROT_READ); }
TEST(alignment_grid_strcmp) { grid(t_strcmp, PROT_NONE); }

/* ---- traps in the middle of glibc's loops ---- */

/* Two regions that cannot both be accessible: each trap grants one and
 * revokes the other, so glibc's loops trap at every alternation, with
 * difference registers (memcmp's s2 - s1) live across the traps. Only
 * functions that never touch both in one instruction (no rep movs) can
 * make progress this way. */
static char *pp[2];

static void ping_pong(rtl_trap_t *t)
{
	int me = (int)(intptr_t)t->data;
	region_protect(t->addr, t->write ? RW : PROT_READ);
	region_protect(now(&pp[1 - me]), PROT_NONE);
}

TEST(traps_inside_glibc_loops)
{
	static const size_t sizes[] = { 40, 100, 300, 1000, 4000, 20000, 65536 };
	char *o0 = aligned_alloc(4096, 73728), *o1 = aligned_alloc(4096, 73728);
	uint64_t t0 = stats().traps;

	for (int i = 0; i < 2; i++) {
		pp[i] = region_alloc(70000, &pp[i]);
		CHECK(pp[i] != NULL);
		region_handler(pp[i], ping_pong);
		region_set_data(pp[i], (void *)(intptr_t)i);
	}
	rng_state = 3;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s], sa = s * 5 % 64, da = s * 11 % 64;
		char *a, *b;
		int ref, got;

		for (size_t k = 0; k < n + 128; k++)
			o0[k] = o1[k] = (char)(1 + rng() % 254);
		o0[sa + n] = o1[da + n] = 0;
		memmove(o1 + da, o0 + sa, n);
		o1[da + n - 1 - s % 3] ^= 1; /* differ near the end */
		region_protect(pp[0], RW);
		memcpy(now(&pp[0]), o0, n + 128);
		region_protect(pp[1], RW);
		memcpy(now(&pp[1]), o1, n + 128);

		region_protect(pp[0], PROT_NONE);
		region_protect(pp[1], PROT_NONE);
		a = now(&pp[0]) + sa;
		b = now(&pp[1]) + da;
		ref = memcmp(o0 + sa, o1 + da, n);
		got = memcmp(a, b, n);
		CHECK_EQ(sign(got), sign(ref));
		ref = strcmp(o0 + sa, o1 + da);
		a = now(&pp[0]) + sa;
		b = now(&pp[1]) + da;
		got = strcmp(a, b);
		CHECK_EQ(sign(got), sign(ref));

		/* strcpy and memcpy from region 0 into region 1. */
		strcpy(o1 + da, o0 + sa);
		region_protect(pp[1], PROT_READ);
		strcpy(now(&pp[1]) + da, now(&pp[0]) + sa);
		region_protect(pp[1], PROT_READ);
		CHECK(memcmp(now(&pp[1]), o1, n + 128) == 0);
		if (n < 2048) { /* below the rep movsb threshold (2112 with FSRM) */
			memcpy(o1 + da, o0 + sa + 1, n);
			region_protect(pp[1], PROT_READ);
			memcpy(now(&pp[1]) + da, now(&pp[0]) + sa + 1, n);
			region_protect(pp[1], PROT_READ);
			CHECK(memcmp(now(&pp[1]), o1, n + 128) == 0);
		}
	}
	printf("# %llu traps\n", (unsigned long long)(stats().traps - t0));
	CHECK(stats().traps - t0 > 1000);
}

/* ---- small strings at page ends, neighbours trapping ---- */

static _Atomic int neighbour_calls;
static void neighbour(rtl_trap_t *t)
{
	neighbour_calls++;
	region_protect(t->addr, t->write ? RW : PROT_READ);
}

/* 63-byte regions (64-byte spans), 64 to a page; the one that ends a page
 * holds strings of every length ending at its last byte. Every region is
 * NONE with a counting handler: glibc's vector reads past the string (the
 * 32-byte block holding the terminator) must stay the string's region's,
 * and the next page's first region never traps. */
TEST(small_strings_at_page_end_beside_trapping_neighbours)
{
	static char *r[192];
	char *last = NULL, *next = NULL, ref[64];
	int li = -1;

	for (int i = 0; i < 192; i++) {
		r[i] = region_alloc(63, &r[i]);
		CHECK(r[i] != NULL);
		region_handler(r[i], neighbour);
	}
	for (int i = 1; i + 1 < 192 && li < 0; i++)
		if (((uintptr_t)r[i] + 64) % 4096 == 0 && r[i + 1] == r[i] + 64 &&
		    r[i - 1] == r[i] - 64)
			li = i;
	CHECK(li > 0);
	region_handler(r[li], grant_handler);
	for (size_t len = 0; len < 63; len++) {
		size_t at = 62 - len;
		long got;

		for (int i = li - 1; i <= li + 1; i++) {
			region_protect(r[i], RW);
			memset(now(&r[i]), 'n', 63);
		}
		memset(ref, 'x', sizeof(ref));
		ref[62] = 0;
		memcpy(now(&r[li]), ref, 63);
		for (int i = li - 1; i <= li + 1; i++)
			region_protect(r[i], PROT_NONE);
		last = now(&r[li]);
		next = now(&r[li + 1]);
		CHECK_EQ(strlen(last + at), len);
		region_protect(r[li], PROT_NONE);
		CHECK_EQ(strnlen(now(&r[li]) + at, 100), len);
		region_protect(r[li], PROT_NONE);
		last = now(&r[li]) + at;
		got = off_of(strchr(last, 'y'), last);
		CHECK_EQ(got, -1);
		region_protect(r[li], PROT_NONE);
		last = now(&r[li]) + at;
		CHECK_EQ(off_of(strchr(last, 0), last), (long)len);
		region_protect(r[li], PROT_NONE);
		last = now(&r[li]) + at;
		CHECK_EQ(off_of(memchr(last, 0, len + 1), last), (long)len);
		region_protect(r[li], PROT_NONE);
		CHECK_EQ(strcmp(now(&r[li]) + at, ref + at), 0);
		region_protect(r[li], PROT_NONE);
		CHECK_EQ(memcmp(now(&r[li]) + at, ref + at, len + 1), 0);
		region_protect(r[li], PROT_NONE);
		{
			char out[64];
			CHECK(strcpy(out, now(&r[li]) + at) == out);
			CHECK_EQ(strlen(out), len);
		}
		CHECK_EQ(neighbour_calls, 0);
	}
	(void)next;
	/* The neighbours do trap for themselves. */
	peek(now(&r[li + 1]));
	peek(now(&r[li - 1]));
	CHECK_EQ(neighbour_calls, 2);
}

/* ---- four threads ---- */

static check_fn const thread_fns[] = { t_memcpy, t_memcmp, t_strlen, t_strcpy,
	                               t_memset, t_strcmp, t_strchr, t_memchr };

static void *thread_run(void *arg)
{
	int id = (int)(intptr_t)arg;
	struct bufs b;

	bufs_init(&b);
	for (size_t f = 0; f < sizeof(thread_fns) / sizeof(thread_fns[0]); f++)
		each_size(&b, thread_fns[f],
		          thread_fns[f] == t_memcmp || thread_fns[f] == t_strcmp
		                  ? PROT_NONE
		                  : PROT_READ,
		          4, id);
	return NULL;
}

/* Each thread its own regions, all trapping at once: a quarter of the
 * sizes each, every function (the random state is per thread). */
TEST(four_threads)
{
	pthread_t tid[4];
	uint64_t t0 = stats().traps;

	for (int i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&tid[i], NULL, thread_run, (void *)(intptr_t)i), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(tid[i], NULL);
	printf("# %llu traps\n", (unsigned long long)(stats().traps - t0));
	CHECK(stats().traps - t0 >= 4 * 8 * NSIZES / 8);
}
