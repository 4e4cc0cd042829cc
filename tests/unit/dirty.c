/* DIRTY and diffs: twins per checkpoint, exact diffs on random writes, the
 * dirty list with reset, encode/apply round trips, how tracking meets
 * protection and handlers, and every errno. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"
#include "test.h"

#define EXPECT_ERR(call, e)                                                    \
	do {                                                                   \
		errno = 0;                                                     \
		CHECK_EQ((long long)(call), -1);                               \
		CHECK_EQ(errno, e);                                            \
	} while (0)

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)rng;
}

/* The runs where a and b differ, byte by byte: the reference for scan. */
static size_t reference_runs(const unsigned char *a, const unsigned char *b,
                             size_t n, rtl_run_t *out)
{
	size_t runs = 0;
	for (size_t i = 0; i < n;) {
		if (a[i] == b[i]) {
			i++;
			continue;
		}
		size_t s = i;
		while (i < n && a[i] != b[i])
			i++;
		out[runs++] = (rtl_run_t){ s, i - s };
	}
	return runs;
}

/* A few random writes, through volatile stores: the first one traps. Some
 * store the value already there (not a modification). */
static void random_writes(unsigned char *x, size_t n, int count)
{
	for (int k = 0; k < count; k++) {
		size_t off = rnd() % n, len = 1 + rnd() % 24;
		for (size_t i = off; i < off + len && i < n; i++)
			poke(x + i, (rnd() & 3) ? (unsigned char)rnd() : peek(x + i));
	}
}

static void check_diff_exact(unsigned char *x, const unsigned char *snap,
                             size_t n)
{
	static rtl_run_t want[8192], got[8192];
	size_t w = reference_runs(x, snap, n, want);
	ssize_t g = region_diff(x, got, 8192);

	CHECK_EQ(g, (ssize_t)w);
	CHECK_EQ(region_diff(x, NULL, 0), g);
	for (size_t i = 0; i < w; i++) {
		CHECK_EQ(got[i].offset, want[i].offset);
		CHECK_EQ(got[i].len, want[i].len);
	}
}

TEST(diff_exact_on_random_writes)
{
	static const size_t sizes[] = { 1, 7, 8, 9, 63, 64, 100, 4097, 20000 };
	static unsigned char snap[20000];

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		unsigned char *x = region_alloc(n, &x);
		CHECK(x != NULL);
		for (size_t i = 0; i < n; i++)
			x[i] = (unsigned char)rnd();
		CHECK_EQ(region_track(x, 1), 0);
		for (int epoch = 0; epoch < 20; epoch++) {
			memcpy(snap, x, n);
			random_writes(x, n, 1 + epoch % 7);
			check_diff_exact(x, snap, n);
			CHECK_EQ(region_checkpoint(x), 0);
			CHECK_EQ(region_diff(x, NULL, 0), 0);
		}
		CHECK_EQ(region_free(x), 0);
	}
}

/* Whole words changed, runs crossing words, every other byte. */
TEST(diff_runs_word_patterns)
{
	unsigned char *x = region_alloc(64, &x);
	rtl_run_t r[64];

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	memset(x + 3, 0xff, 21); /* one run crossing three word boundaries */
	CHECK_EQ(region_diff(x, r, 64), 1);
	CHECK_EQ(r[0].offset, 3);
	CHECK_EQ(r[0].len, 21);
	CHECK_EQ(region_checkpoint(x), 0);
	for (int i = 32; i < 64; i += 2)
		poke(x + i, 1);
	CHECK_EQ(region_diff(x, r, 64), 16);
	for (int i = 0; i < 16; i++) {
		CHECK_EQ(r[i].offset, 32 + 2 * i);
		CHECK_EQ(r[i].len, 1);
	}
}

/* Tracking lowers a writable region, so the first write traps; with no
 * handler rtl grants it, and the next writes do not trap. */
TEST(track_lowers_then_rtl_grants)
{
	char *x = region_alloc(100, &x);
	char *before = x;
	uint64_t traps;

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	CHECK(x != before); /* moved to the read-only view */
	CHECK_EQ(region_diff(x, NULL, 0), 0);
	traps = stats().traps;
	peek(x);
	CHECK_EQ(stats().traps, traps);
	poke(x + 5, 1);
	CHECK_EQ(stats().traps, traps + 1);
	CHECK(x == before); /* granted: back in the writable view */
	poke(x + 6, 1);
	CHECK_EQ(stats().traps, traps + 1);
	CHECK_EQ(region_diff(x, NULL, 0), 1);
	CHECK_EQ(region_track(x, 1), 0); /* idempotent: changes nothing */
	CHECK_EQ(region_diff(x, NULL, 0), 1);
}

/* The twin and the dirty mark exist before the handler runs; the handler
 * decides the protection. */
static _Atomic int seen_dirty = -1, seen_prot = -1;
static void look_then_grant(rtl_trap_t *t)
{
	seen_dirty = (int)region_dirty(NULL, 0, 0);
	seen_prot = t->prot;
	region_protect(t->addr, RW);
}

TEST(twin_before_handler)
{
	char *x = region_alloc(50, &x);
	rtl_run_t r[4];

	CHECK(x != NULL);
	CHECK_EQ(region_handler(x, look_then_grant), 0);
	CHECK_EQ(region_track(x, 1), 0);
	poke(x + 10, 42);
	CHECK_EQ(seen_dirty, 1);
	CHECK_EQ(seen_prot, PROT_READ);
	CHECK_EQ(region_diff(x, r, 4), 1);
	CHECK_EQ(r[0].offset, 10);
}

/* A handler that does not grant the write: the process dies as for any
 * region; the region is unchanged. */
static void refuse(rtl_trap_t *t)
{
	(void)t;
}

static void write_refused(void)
{
	char *x = region_alloc(50, &x);
	region_handler(x, refuse);
	region_track(x, 1);
	poke(x, 1);
}

TEST(handler_refusing_write_dies)
{
	char err[4096];
	int st = test_run_captured(write_refused, err, sizeof(err));
	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "not granted") != NULL);
}

/* Twins per checkpoint: each epoch's diff holds that epoch's writes only,
 * and the checkpoint re-arms the trap. */
TEST(twin_per_checkpoint)
{
	char *x = region_alloc(256, &x);
	rtl_run_t r[4];
	uint64_t traps;

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	poke(x + 1, 1);
	CHECK_EQ(region_diff(x, r, 4), 1);
	CHECK_EQ(r[0].offset, 1);
	CHECK_EQ(region_checkpoint(x), 0);
	CHECK_EQ(region_diff(x, r, 4), 0);
	CHECK_EQ(region_dirty(NULL, 0, 0), 0);
	traps = stats().traps;
	poke(x + 200, 2);
	CHECK_EQ(stats().traps, traps + 1);
	CHECK_EQ(region_diff(x, r, 4), 1);
	CHECK_EQ(r[0].offset, 200);
	CHECK_EQ(r[0].len, 1);
	/* A write of the same value traps and marks, but changes nothing. */
	CHECK_EQ(region_checkpoint(x), 0);
	poke(x + 200, 2);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
	CHECK_EQ(region_diff(x, r, 4), 0);
	/* A checkpoint of a region at PROT_NONE leaves it there. */
	CHECK_EQ(region_protect(x, PROT_NONE), 0);
	CHECK_EQ(region_checkpoint(x), 0);
	CHECK_EQ(region_protect(x, PROT_READ), 0);
	CHECK_EQ(peek(x + 200), 2);
}

TEST(dirty_list_with_reset)
{
	char *x[10];
	void *b[10];

	for (int i = 0; i < 10; i++) {
		x[i] = region_alloc(40 + i, &x[i]);
		CHECK(x[i] != NULL);
		CHECK_EQ(region_track(x[i], 1), 0);
	}
	CHECK_EQ(region_dirty(b, 10, 0), 0);
	poke(x[7], 1);
	poke(x[2], 1);
	poke(x[5], 1);
	poke(x[5] + 1, 1); /* no second mark */
	CHECK_EQ(region_dirty(NULL, 0, 0), 3);
	CHECK_EQ(region_dirty(b, 10, 0), 3); /* in the order tracking began */
	CHECK(b[0] == x[2] && b[1] == x[5] && b[2] == x[7]);
	/* max below the count: the total is returned, only the filled-in
	 * marks are reset. */
	b[1] = NULL;
	CHECK_EQ(region_dirty(b, 1, 1), 3);
	CHECK(b[0] == x[2] && b[1] == NULL);
	CHECK_EQ(region_dirty(b, 10, 1), 2);
	CHECK(b[0] == x[5] && b[1] == x[7]);
	CHECK_EQ(region_dirty(b, 10, 1), 0);
	/* Still writable after a reset: no trap, no new mark; the diff still
	 * sees everything since the checkpoint. */
	poke(x[5] + 2, 1);
	CHECK_EQ(region_dirty(NULL, 0, 0), 0);
	CHECK_EQ(region_diff(x[5], NULL, 0), 1);
	/* The checkpoint re-arms it. */
	CHECK_EQ(region_checkpoint(x[5]), 0);
	poke(x[5] + 3, 1);
	CHECK_EQ(region_dirty(b, 10, 1), 1);
	CHECK(b[0] == x[5]);
	/* Bases are in the view of the current protection. */
	poke(x[9], 1);
	CHECK_EQ(region_protect(x[9], PROT_NONE), 0);
	CHECK_EQ(region_dirty(b, 10, 0), 1);
	CHECK(b[0] == x[9]);
}

/* Raising a tracked region to RW outside a trap takes the twin then, so
 * writes that will not trap are still in the diff. */
TEST(protect_rw_takes_twin)
{
	char *x = region_alloc(30, &x);
	rtl_run_t r[2];
	uint64_t traps;

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	CHECK_EQ(region_protect(x, RW), 0);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
	traps = stats().traps;
	poke(x + 29, 9);
	CHECK_EQ(stats().traps, traps);
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(r[0].offset, 29);
}

/* A MAP2 region with a pointer in the writable view: the checkpoint takes
 * the twin at once, so writes through that pointer are in the diff. */
TEST(map2_region_twin_taken_at_checkpoint)
{
	char *x = region_alloc(64, &x);
	char *w = x;
	rtl_run_t r[2];

	CHECK(x != NULL);
	CHECK_EQ(region_protect(x, PROT_READ), 0);
	CHECK_EQ(region_protect_ptr(&w, RW), 0);
	CHECK_EQ(region_track(x, 1), 0);
	poke(w + 40, 1); /* no trap */
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(r[0].offset, 40);
	CHECK_EQ(region_checkpoint(x), 0);
	CHECK_EQ(region_diff(x, r, 2), 0);
	poke(w + 41, 1);
	CHECK_EQ(region_diff(x, r, 2), 1);
	CHECK_EQ(r[0].offset, 41);
}

TEST(encode_apply_round_trip)
{
	size_t n = 5000;
	unsigned char *a = region_alloc(n, &a), *b = region_alloc(n, &b);
	static unsigned char buf[65536];

	CHECK(a && b);
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] = (unsigned char)rnd();
	CHECK_EQ(region_track(a, 1), 0);
	for (int epoch = 0; epoch < 30; epoch++) {
		ssize_t need, len;
		random_writes(a, n, 1 + epoch % 11);
		need = region_diff_encode(a, NULL, 0);
		CHECK(need >= 10);
		len = region_diff_encode(a, buf, sizeof(buf));
		CHECK_EQ(len, need);
		CHECK_EQ(region_diff_apply(b, buf, (size_t)len), 0);
		CHECK(memcmp(a, b, n) == 0);
		CHECK_EQ(region_checkpoint(a), 0);
	}
	/* No twin: the empty diff (header and end mark) applies as a no-op. */
	CHECK_EQ(region_diff_encode(a, buf, sizeof(buf)), 10);
	CHECK_EQ(region_diff_apply(b, buf, 10), 0);
	CHECK(memcmp(a, b, n) == 0);
}

/* The format, byte by byte, as docs/dirty.md describes it. */
TEST(encode_format_bytes)
{
	unsigned char *a = region_alloc(300, &a);
	unsigned char buf[64];
	static const unsigned char want[] = {
		'R', 'T', 'L', 'D', 1, 0, /* magic, version, flags */
		0xac, 0x02,               /* size 300 */
		2, 1, 0xaa,               /* gap 2, length 1 */
		0xa5, 0x01, 2, 0xbb, 0xcc, /* gap 165, length 2 */
		0, 0,                     /* the end */
	};

	CHECK(a != NULL);
	CHECK_EQ(region_track(a, 1), 0);
	poke(a + 2, 0xaa);
	poke(a + 168, 0xbb);
	poke(a + 169, 0xcc);
	CHECK_EQ(region_diff_encode(a, buf, sizeof(buf)), sizeof(want));
	CHECK(memcmp(buf, want, sizeof(want)) == 0);
}

/* Applying to a region with a twin patches the twin too: the applied bytes
 * are not local modifications (the DSM's remote diffs). */
TEST(apply_patches_twin)
{
	unsigned char *a = region_alloc(100, &a), *b = region_alloc(100, &b);
	unsigned char buf[256];
	rtl_run_t r[4];
	ssize_t len;

	CHECK(a && b);
	CHECK_EQ(region_track(a, 1), 0);
	CHECK_EQ(region_track(b, 1), 0);
	poke(a + 10, 1);
	len = region_diff_encode(a, buf, sizeof(buf));
	CHECK(len > 9);
	poke(b + 50, 2); /* b's own write: b now has a twin */
	CHECK_EQ(region_diff_apply(b, buf, (size_t)len), 0);
	CHECK_EQ(peek(b + 10), 1);
	CHECK_EQ(region_diff(b, r, 4), 1);
	CHECK_EQ(r[0].offset, 50);
	/* Applying writes whatever the protection: no trap, no mark. */
	CHECK_EQ(region_checkpoint(b), 0);
	CHECK_EQ(region_protect(b, PROT_NONE), 0);
	poke(a + 11, 3);
	len = region_diff_encode(a, buf, sizeof(buf));
	CHECK_EQ(region_diff_apply(b, buf, (size_t)len), 0);
	CHECK_EQ(region_protect(b, PROT_READ), 0);
	CHECK_EQ(peek(b + 11), 3);
	CHECK_EQ(region_dirty(NULL, 0, 0), 1); /* a only */
}

/* A diff functions inside a handler (the DSM serves diffs from one). */
static unsigned char *ha, *hb;
static _Atomic int h_ok;
static void serve_diff(rtl_trap_t *t)
{
	unsigned char buf[128];
	ssize_t len = region_diff_encode(ha, buf, sizeof(buf));
	h_ok = len > 9 && region_diff_apply(hb, buf, (size_t)len) == 0 &&
	       region_checkpoint(ha) == 0;
	region_protect(t->addr, RW);
}

TEST(diff_calls_in_handler)
{
	char *h = region_alloc(8, &h);
	ha = region_alloc(64, &ha);
	hb = region_alloc(64, &hb);

	CHECK(h && ha && hb);
	CHECK_EQ(region_track(ha, 1), 0);
	poke(ha + 3, 7);
	region_handler(h, serve_diff);
	region_protect(h, PROT_NONE);
	poke(h, 1);
	CHECK(h_ok);
	CHECK_EQ(peek(hb + 3), 7);
	CHECK_EQ(region_diff(ha, NULL, 0), 0);
}

/* Every prefix of a valid diff, every corrupted header byte, bad varints,
 * runs outside the region and trailing bytes: EINVAL, region untouched. */
TEST(apply_rejects_malformed)
{
	unsigned char *a = region_alloc(200, &a), *b = region_alloc(200, &b);
	unsigned char buf[512], bad[512], before[200];
	ssize_t len;

	CHECK(a && b);
	CHECK_EQ(region_track(a, 1), 0);
	for (int i = 20; i < 25; i++)
		poke(a + i, 0x11);
	for (int i = 150; i < 200; i++)
		poke(a + i, 0x22);
	len = region_diff_encode(a, buf, sizeof(buf));
	CHECK(len > 10);
	memcpy(before, b, 200);
	/* Each prefix ends right before an inaccessible page: a read past
	 * len would kill the test. */
	unsigned char *pg = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
	                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(pg != MAP_FAILED);
	CHECK_EQ(mprotect(pg + 4096, 4096, PROT_NONE), 0);
	for (ssize_t k = 0; k < len; k++) {
		memcpy(pg + 4096 - k, buf, (size_t)k);
		EXPECT_ERR(region_diff_apply(b, pg + 4096 - k, (size_t)k), EINVAL);
	}
	memcpy(pg + 4096 - len, buf, (size_t)len);
	CHECK_EQ(region_diff_apply(b, pg + 4096 - len, (size_t)len), 0);
	CHECK(memcmp(a, b, 200) == 0);
	memcpy(b, before, 200);
	/* The header (magic, version, flags, size 200 in two bytes) and the
	 * end mark. */
	static const int fixed[] = { 0, 1, 2, 3, 4, 5, 6, 7, -2, -1 };
	for (size_t j = 0; j < sizeof(fixed) / sizeof(fixed[0]); j++) {
		int i = fixed[j] < 0 ? (int)len + fixed[j] : fixed[j];
		for (int bit = 0; bit < 8; bit++) {
			memcpy(bad, buf, (size_t)len);
			bad[i] ^= (unsigned char)(1 << bit);
			EXPECT_ERR(region_diff_apply(b, bad, (size_t)len), EINVAL);
		}
	}
	memcpy(bad, buf, (size_t)len);
	bad[len] = 0;
	EXPECT_ERR(region_diff_apply(b, bad, (size_t)len + 1), EINVAL);
	CHECK(memcmp(b, before, 200) == 0);

	/* Hand-made bodies after a valid header for 200 bytes. */
	static const struct {
		unsigned char body[16];
		size_t n;
	} cases[] = {
		{ { 5, 0 }, 2 },                          /* end mark with a gap */
		{ { 0, 0, 0 }, 3 },                       /* bytes after the end */
		{ { 0, 1, 7 }, 3 },                       /* no end mark */
		{ { 0xc8, 0x01, 1, 1, 0, 0 }, 6 },        /* starts past the end */
		{ { 0xc7, 0x01, 2, 1, 2, 0, 0 }, 7 },     /* ends past the end */
		{ { 0, 200, 1 }, 3 },                     /* length > region */
		{ { 0x80, 0x00, 1, 9, 0, 0 }, 6 },        /* overlong varint */
		{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1,
		    1, 0, 0 },
		  14 },                                   /* more than 64 bits */
		{ { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 1,
		    5, 0, 0 },
		  14 },                /* 2^64: would wrap to 0 if not caught */
		{ { 0x80, 0x80, 0x80 }, 3 },              /* truncated varint */
		{ { 0, 5, 1, 2 }, 4 },                    /* data truncated */
		{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 2,
		    0, 0, 0, 0 },
		  15 },                                   /* gap wraps around */
		{ { 0, 100, 0x80, 0x80 }, 4 },            /* runs past the buffer */
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		memcpy(bad, buf, 8);
		memcpy(bad + 8, cases[c].body, cases[c].n);
		EXPECT_ERR(region_diff_apply(b, bad, 8 + cases[c].n), EINVAL);
	}
	/* The same header with a valid body is accepted (the cases above
	 * fail for their own reason). */
	memcpy(bad + 8, (const unsigned char[]){ 3, 2, 9, 9, 0, 0 }, 6);
	CHECK_EQ(region_diff_apply(b, bad, 14), 0);
	CHECK_EQ(peek(b + 3) + peek(b + 4), 18);
	memcpy(b, before, 200);
	CHECK(memcmp(b, before, 200) == 0);
	/* A size mismatch. */
	unsigned char *c3 = region_alloc(201, &c3);
	CHECK(c3 != NULL);
	EXPECT_ERR(region_diff_apply(c3, buf, (size_t)len), EINVAL);
	CHECK_EQ(region_diff_apply(b, buf, (size_t)len), 0);
	CHECK(memcmp(a, b, 200) == 0);
}

TEST(errno_cases)
{
	char *x = region_alloc(100, &x), *u = region_alloc(10, &u);
	static char not_region[16];
	unsigned char buf[256];
	rtl_run_t r[2];

	CHECK(x && u);
	EXPECT_ERR(region_track(NULL, 1), EINVAL);
	EXPECT_ERR(region_track(not_region, 1), ENOENT);
	EXPECT_ERR(region_diff(NULL, r, 2), EINVAL);
	EXPECT_ERR(region_diff(not_region, r, 2), ENOENT);
	EXPECT_ERR(region_diff(u, r, 2), EINVAL); /* not tracked */
	EXPECT_ERR(region_diff_encode(u, buf, sizeof(buf)), EINVAL);
	EXPECT_ERR(region_diff_encode(not_region, buf, sizeof(buf)), ENOENT);
	EXPECT_ERR(region_checkpoint(u), EINVAL);
	EXPECT_ERR(region_checkpoint(not_region), ENOENT);
	EXPECT_ERR(region_checkpoint(NULL), EINVAL);
	EXPECT_ERR(region_diff_apply(not_region, buf, 9), ENOENT);
	EXPECT_ERR(region_diff_apply(x, NULL, 9), EINVAL);
	EXPECT_ERR(region_diff_apply(NULL, buf, 9), EINVAL);

	CHECK_EQ(region_track(x, 1), 0);
	EXPECT_ERR(region_diff(x, NULL, 2), EINVAL);
	for (int i = 0; i < 10; i += 2)
		poke(x + i, 1);
	/* Too small: ENOSPC, the first max runs filled in; max 0 counts. */
	r[1].offset = 12345;
	EXPECT_ERR(region_diff(x, r, 1), ENOSPC);
	CHECK_EQ(r[0].offset, 0);
	CHECK_EQ(r[1].offset, 12345);
	CHECK_EQ(region_diff(x, NULL, 0), 5);
	/* Encode: cap 0 gives the size needed; anything less is ENOSPC. */
	ssize_t need = region_diff_encode(x, NULL, 0);
	CHECK_EQ(need, 7 + 5 * 3 + 2); /* header, five 1-byte runs, end */
	EXPECT_ERR(region_diff_encode(x, buf, (size_t)need - 1), ENOSPC);
	EXPECT_ERR(region_diff_encode(x, buf, 8), ENOSPC);
	EXPECT_ERR(region_diff_encode(x, NULL, 100), EINVAL);
	CHECK_EQ(region_diff_encode(x, buf, (size_t)need), need);

	/* Tracking off: the region is an ordinary one again. */
	CHECK_EQ(region_track(x, 0), 0);
	CHECK_EQ(region_track(x, 0), 0);
	EXPECT_ERR(region_diff(x, r, 2), EINVAL);
	CHECK_EQ(region_dirty(NULL, 0, 0), 0);
	CHECK_EQ(region_diff_apply(x, buf, (size_t)need), 0); /* untracked ok */
}

/* Freeing a tracked region forgets it; its record's reuse is untracked. */
TEST(free_forgets_tracking)
{
	for (int round = 0; round < 100; round++) {
		char *x = region_alloc(64, &x);
		CHECK(x != NULL);
		CHECK_EQ(region_diff(x, NULL, 0) == -1 && errno == EINVAL, 1);
		CHECK_EQ(region_track(x, 1), 0);
		poke(x, 1);
		CHECK_EQ(region_dirty(NULL, 0, 0), 1);
		CHECK_EQ(region_free(x), 0);
		CHECK_EQ(region_dirty(NULL, 0, 0), 0);
	}
}

/* A forked child has its own twins and marks. */
TEST(fork_keeps_tracking)
{
	char *x = region_alloc(64, &x);
	pid_t pid;
	int st;

	CHECK(x != NULL);
	CHECK_EQ(region_track(x, 1), 0);
	poke(x + 1, 1);
	pid = fork();
	if (pid == 0) {
		rtl_run_t r[4];
		int ok = region_diff(x, r, 4) == 1 && r[0].offset == 1;
		poke(x + 9, 1);
		ok = ok && region_diff(x, r, 4) == 2;
		ok = ok && region_checkpoint(x) == 0;
		_exit(ok ? 0 : 1);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK_EQ(region_diff(x, NULL, 0), 1); /* the child's epoch is its own */
	CHECK_EQ(region_dirty(NULL, 0, 0), 1);
}
