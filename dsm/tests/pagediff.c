/* The page diff codec against rtl's region diffs (TAP): same bytes for the
 * same change, round trips, and the same verdict as region_diff_apply on
 * every prefix and on thousands of mutated diffs, with the destination
 * untouched whenever a diff is refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtl/region.h>

#include "dsm/pagediff.h"

#define PAGE 4096

static int failed, count;

static void ok(int cond, const char *what)
{
	count++;
	if (!cond)
		failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", count, what);
}

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)rng;
}

static void random_change(unsigned char *cur, const unsigned char *twin)
{
	memcpy(cur, twin, PAGE);
	for (int k = (int)(rnd() % 40); k >= 0; k--) {
		int at = (int)(rnd() % PAGE), len = (int)(rnd() % 64) + 1;
		for (int i = at; i < at + len && i < PAGE; i++)
			cur[i] = (unsigned char)rnd();
	}
}

int main(void)
{
	static unsigned char twin[PAGE], cur[PAGE], out[PAGE], ref[PAGE];
	static unsigned char mine[3 * PAGE], theirs[3 * PAGE], bad[3 * PAGE];
	unsigned char *volatile reg = NULL;
	int same = 1, roundtrip = 1, agree = 1, untouched = 1, prefixes = 1;
	ssize_t n = 0, m;

	reg = region_alloc(PAGE, (void *)&reg);
	if (!reg || region_track(reg, 1) < 0)
		return 1;
	for (int t = 0; t < 200; t++) {
		for (int i = 0; i < PAGE; i++)
			twin[i] = (unsigned char)(rnd() %
			                          3); /* many equal bytes */
		random_change(cur, twin);
		/* The region: twin contents, checkpoint, then the change. */
		region_protect(reg, PROT_READ | PROT_WRITE);
		memcpy((void *)reg, twin, PAGE);
		region_checkpoint(reg);
		region_protect(reg, PROT_READ | PROT_WRITE); /* twin := twin */
		memcpy((void *)reg, cur, PAGE);
		n = pagediff_encode(cur, twin, PAGE, mine, sizeof(mine));
		m = region_diff_encode(reg, theirs, sizeof(theirs));
		if (n != m || n < 0 || memcmp(mine, theirs, (size_t)n))
			same = 0;
		if (pagediff_encode(cur, twin, PAGE, NULL, 0) != n)
			same = 0;
		memcpy(out, twin, PAGE);
		if (pagediff_apply(out, PAGE, mine, (size_t)n) < 0 ||
		    memcmp(out, cur, PAGE))
			roundtrip = 0;
	}
	ok(same,
	   "encodes byte for byte as region_diff_encode (200 random pages)");
	ok(roundtrip, "apply(encode(cur, twin)) on twin gives cur");
	ok(pagediff_encode(cur, twin, PAGE, mine, 5) < 0 && errno == ENOSPC,
	   "too small a buffer: ENOSPC");

	/* Every proper prefix of the last diff is refused. */
	for (ssize_t len = 0; len < n; len++) {
		memcpy(out, twin, PAGE);
		if (pagediff_apply(out, PAGE, mine, (size_t)len) == 0 ||
		    errno != EINVAL || memcmp(out, twin, PAGE))
			prefixes = 0;
	}
	ok(prefixes,
	   "every truncated diff refused with EINVAL, page untouched");
	ok(pagediff_check(mine, (size_t)n, PAGE + 1) < 0,
	   "a diff for another size is refused");

	/* Mutations: the same verdict and result as region_diff_apply. */
	for (int t = 0; t < 20000; t++) {
		size_t len = (size_t)n;
		int a, b;
		memcpy(bad, mine, (size_t)n);
		switch (rnd() % 4) {
		case 0:
			bad[rnd() % len] ^= (unsigned char)(1u << (rnd() % 8));
			break;
		case 1:
			bad[rnd() % len] = (unsigned char)rnd();
			break;
		case 2:
			len = rnd() % (len + 1);
			break;
		default:
			bad[rnd() % 16] = (unsigned char)rnd();
			bad[rnd() % len] = (unsigned char)rnd();
		}
		memcpy(out, twin, PAGE);
		a = pagediff_apply(out, PAGE, bad, len);
		region_protect(reg, PROT_READ | PROT_WRITE);
		memcpy((void *)reg, twin, PAGE);
		b = region_diff_apply(reg, bad, len);
		memcpy(ref, (void *)reg, PAGE);
		if ((a == 0) != (b == 0) || memcmp(out, ref, PAGE))
			agree = 0;
		if (a < 0 && memcmp(out, twin, PAGE))
			untouched = 0;
	}
	ok(agree,
	   "20000 mutated diffs: same verdict and result as region_diff_apply");
	ok(untouched, "a refused diff leaves the page untouched");
	printf("1..%d\n", count);
	return failed != 0;
}
