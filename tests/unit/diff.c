/* The diff encoding: region_diff_encode and region_diff_apply round trips,
 * the format byte by byte, twins patched by apply, calls from a handler,
 * and apply against malformed input: every prefix, every header bit, hand-
 * made bodies, and random mutations checked against a reference decoder. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "tests/unit/dirty_helpers.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

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
		'R', 'T', 'L', 'D', 1, 0,  /* magic, version, flags */
		0xac, 0x02,                /* size 300 */
		2, 1, 0xaa,                /* gap 2, length 1 */
		0xa5, 0x01, 2, 0xbb, 0xcc, /* gap 165, length 2 */
		0, 0,                      /* the end */
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

/* The diff calls work inside a handler (a DSM serves diffs from one). */
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
		{ { 5, 0 }, 2 },                      /* end mark with a gap */
		{ { 0, 0, 0 }, 3 },                   /* bytes after the end */
		{ { 0, 1, 7 }, 3 },                   /* no end mark */
		{ { 0xc8, 0x01, 1, 1, 0, 0 }, 6 },    /* starts past the end */
		{ { 0xc7, 0x01, 2, 1, 2, 0, 0 }, 7 }, /* ends past the end */
		{ { 0, 200, 1 }, 3 },                 /* length > region */
		{ { 0x80, 0x00, 1, 9, 0, 0 }, 6 },    /* overlong varint */
		{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1,
		    1, 0, 0 },
		  14 }, /* more than 64 bits */
		{ { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02, 1,
		    5, 0, 0 },
		  14 },                      /* 2^64: would wrap to 0 if not caught */
		{ { 0x80, 0x80, 0x80 }, 3 }, /* truncated varint */
		{ { 0, 5, 1, 2 }, 4 },       /* data truncated */
		{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 2,
		    0, 0, 0, 0 },
		  15 },                        /* gap wraps around */
		{ { 0, 100, 0x80, 0x80 }, 4 }, /* runs past the buffer */
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

/* ---- apply against an independent reference decoder ---- */

/* The format of docs/dirty.md, decoded the plain way. 0 and out updated,
 * or -1. */
static int ref_varint(const unsigned char *b, size_t len, size_t *i,
                      uint64_t *v)
{
	int n = 0;
	*v = 0;
	for (;;) {
		if (*i >= len || n == 10)
			return -1;
		unsigned char c = b[(*i)++];
		if (n == 9 && c > 1)
			return -1;
		*v |= (uint64_t)(c & 0x7f) << (7 * n);
		n++;
		if (!(c & 0x80))
			return n > 1 && c == 0 ? -1 : 0;
	}
}

static int ref_apply(const unsigned char *b, size_t len, uint64_t size,
                     unsigned char *out)
{
	size_t i = 6;
	uint64_t sz, pos = 0, gap, n;

	if (len < 6 || memcmp(b, "RTLD", 4) || b[4] != 1 || b[5] != 0)
		return -1;
	if (ref_varint(b, len, &i, &sz) || sz != size)
		return -1;
	for (;;) {
		if (ref_varint(b, len, &i, &gap) || ref_varint(b, len, &i, &n))
			return -1;
		if (n == 0)
			return gap == 0 && i == len ? 0 : -1;
		if (gap > size || pos + gap > size || n > size - pos - gap ||
		    n > len - i)
			return -1;
		memcpy(out + pos + gap, b + i, n);
		pos += gap + n;
		i += n;
	}
}

/* Mutated valid diffs (bit flips, byte changes, cuts, insertions, random
 * tails): apply accepts exactly what the reference accepts, with the same
 * result, and leaves the region untouched when it refuses. */
TEST(apply_matches_reference_on_mutations)
{
	enum {
		SIZE = 300,
		ROUNDS = 20000,
	};
	unsigned char *a = region_alloc(SIZE, &a), *b = region_alloc(SIZE, &b);
	static unsigned char valid[2048], buf[2048], want[SIZE], before[SIZE];
	int accepted = 0;

	CHECK(a && b);
	CHECK_EQ(region_track(a, 1), 0);
	for (int round = 0; round < ROUNDS; round++) {
		ssize_t vlen;
		size_t len;

		if (round % 200 == 0) { /* a new valid diff now and then */
			CHECK_EQ(region_checkpoint(a), 0);
			random_writes(a, SIZE, 1 + (int)(rnd() % 8));
			vlen = region_diff_encode(a, valid, sizeof(valid));
			CHECK(vlen > 0);
		}
		vlen = region_diff_encode(a, valid, sizeof(valid));
		memcpy(buf, valid, (size_t)vlen);
		len = (size_t)vlen;
		switch (rnd() % 5) {
		case 0: buf[rnd() % len] ^= (unsigned char)(1u << (rnd() % 8)); break;
		case 1: buf[rnd() % len] = (unsigned char)rnd(); break;
		case 2: len = rnd() % len; break;
		case 3: {
			size_t at = rnd() % (len + 1), k = 1 + rnd() % 3;
			memmove(buf + at + k, buf + at, len - at);
			for (size_t j = 0; j < k; j++)
				buf[at + j] = (unsigned char)rnd();
			len += k;
			break;
		}
		case 4:
			for (size_t j = 6 + rnd() % 4; j < len; j++)
				buf[j] = (rnd() & 1) ? (unsigned char)rnd() : 0;
			break;
		}
		memcpy(before, b, SIZE);
		memcpy(want, b, SIZE);
		int ref = ref_apply(buf, len, SIZE, want);
		errno = 0;
		int got = region_diff_apply(b, buf, len);
		CHECK_EQ(got, ref);
		if (got < 0) {
			CHECK_EQ(errno, EINVAL);
			CHECK(memcmp(b, before, SIZE) == 0);
		} else {
			CHECK(memcmp(b, want, SIZE) == 0);
			accepted++;
		}
	}
	CHECK(accepted > ROUNDS / 20); /* the mutations reached the copy */
	CHECK(accepted < ROUNDS);
}

TEST(encode_errno_and_sizes)
{
	char *x = region_alloc(100, &x), *u = region_alloc(10, &u);
	static char not_region[16];
	unsigned char buf[256];

	CHECK(x && u);
	EXPECT_ERR(region_diff_encode(u, buf, sizeof(buf)), EINVAL); /* untracked */
	EXPECT_ERR(region_diff_encode(not_region, buf, sizeof(buf)), ENOENT);
	EXPECT_ERR(region_diff_encode(NULL, buf, sizeof(buf)), EINVAL);
	EXPECT_ERR(region_diff_apply(not_region, buf, 9), ENOENT);
	EXPECT_ERR(region_diff_apply(x, NULL, 9), EINVAL);
	EXPECT_ERR(region_diff_apply(NULL, buf, 9), EINVAL);

	CHECK_EQ(region_track(x, 1), 0);
	for (int i = 0; i < 10; i += 2)
		poke(x + i, 1);
	/* cap 0 gives the size needed; anything less is ENOSPC. */
	ssize_t need = region_diff_encode(x, NULL, 0);
	CHECK_EQ(need, 7 + 5 * 3 + 2); /* header, five 1-byte runs, end */
	EXPECT_ERR(region_diff_encode(x, buf, (size_t)need - 1), ENOSPC);
	EXPECT_ERR(region_diff_encode(x, buf, 8), ENOSPC);
	EXPECT_ERR(region_diff_encode(x, NULL, 100), EINVAL);
	CHECK_EQ(region_diff_encode(x, buf, (size_t)need), need);
	/* Apply works on untracked regions too. */
	CHECK_EQ(region_track(x, 0), 0);
	CHECK_EQ(region_diff_apply(x, buf, (size_t)need), 0);
}
