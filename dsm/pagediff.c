/* Diffs of pages in the encoding rtl uses for regions (docs/dirty.md, "The
 * diff encoding, byte by byte"), so that both units of coherence travel in
 * one format. Written from that page; checked against region_diff_apply by
 * dsm/tests/pagediff.c. A diff is checked completely before one byte is
 * written. No malloc, no locks: callable from any thread. */
#include "pagediff.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

static const uint8_t magic[4] = {'R', 'T', 'L', 'D'};
#define FIXED	6 /* magic, version, flags */
#define TRAILER 2 /* the end mark */

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Minimal unsigned LEB128 within 64 bits, inside [*p, end). */
static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	const uint8_t *q = *p;

	for (unsigned shift = 0; q < end; shift += 7) {
		uint8_t b = *q++;
		if (shift == 63 && b > 1)
			return -1; /* beyond 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (b == 0 && shift)
				return -1; /* not minimal */
			*p = q;
			*out = v;
			return 0;
		}
		if (shift == 63)
			return -1;
	}
	return -1;
}

/* Length of the run of differing bytes starting at i (cur[i] != twin[i]). */
static size_t run_len(const uint8_t *cur, const uint8_t *twin, size_t i,
		      size_t size)
{
	size_t j = i + 1;

	while (j < size && cur[j] != twin[j])
		j++;
	return j - i;
}

ssize_t pagediff_encode(const void *curv, const void *twinv, size_t size,
			void *bufv, size_t cap)
{
	const uint8_t *cur = curv, *twin = twinv;
	uint8_t *buf = bufv, *p = NULL, *end = NULL;
	size_t need = FIXED + varint_len(size) + TRAILER, prev = 0, i = 0;

	if (cap) {
		if (cap < need) {
			errno = ENOSPC;
			return -1;
		}
		memcpy(buf, magic, 4);
		buf[4] = 1;
		buf[5] = 0;
		p = put_varint(buf + FIXED, size);
		end = buf + cap - TRAILER;
	}
	while (i < size) {
		size_t n, item;
		/* Skip equal words, then equal bytes. */
		while (i + 8 <= size && !memcmp(cur + i, twin + i, 8))
			i += 8;
		while (i < size && cur[i] == twin[i])
			i++;
		if (i == size)
			break;
		n = run_len(cur, twin, i, size);
		item = varint_len(i - prev) + varint_len(n) + n;
		need += item;
		if (p) {
			if ((size_t)(end - p) < item) {
				errno = ENOSPC;
				return -1;
			}
			p = put_varint(p, i - prev);
			p = put_varint(p, n);
			memcpy(p, cur + i, n);
			p += n;
		}
		i += n;
		prev = i;
	}
	if (p) {
		p[0] = 0;
		p[1] = 0;
	}
	return (ssize_t)need;
}

/* Check (dst NULL) or apply. 0, or -1 at the first thing wrong. */
static int walk(const uint8_t *buf, size_t len, uint64_t size, uint8_t *dst)
{
	const uint8_t *p = buf + FIXED, *end = buf + len;
	uint64_t pos = 0, got, gap, n;

	if (len < FIXED + 1 + TRAILER || memcmp(buf, magic, 4) || buf[4] != 1 ||
	    buf[5])
		return -1;
	if (get_varint(&p, end, &got) < 0 || got != size)
		return -1;
	for (;;) {
		if (get_varint(&p, end, &gap) < 0 ||
		    get_varint(&p, end, &n) < 0)
			return -1;
		if (n == 0)
			return gap == 0 && p == end ? 0 : -1;
		if (gap > size - pos || n > size - pos - gap ||
		    n > (uint64_t)(end - p))
			return -1;
		pos += gap;
		if (dst)
			memcpy(dst + pos, p, n);
		pos += n;
		p += n;
	}
}

int pagediff_check(const void *buf, size_t len, size_t size)
{
	if (!buf || walk(buf, len, size, NULL) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int pagediff_apply(void *dst, size_t size, const void *buf, size_t len)
{
	if (pagediff_check(buf, len, size) < 0)
		return -1;
	return walk(buf, len, size, dst);
}
