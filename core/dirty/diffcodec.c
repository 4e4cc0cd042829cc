/* The diff codec on plain buffers (format in docs/dirty.md, "The diff
 * encoding, byte by byte"): finding the runs where two buffers differ,
 * encoding them, checking and applying an encoded diff. Shared by the region
 * calls of diff.c and, through region_buf_diff_*, the DSM's page diffs. No
 * malloc, no locks: callable from a signal handler. An encoded diff is
 * untrusted input: nothing is written before all of it is checked, and
 * nothing is read past its end. */
#include "core/dirty/diffcodec.h"

#include <errno.h>
#include <string.h>

#include <rtl/region.h>

#define VERSION 1
#define FIXED 6   /* magic, version, flags; the unit's size follows */
#define TRAILER 2 /* the end mark: gap 0, length 0 */
static const unsigned char magic[4] = { 'R', 'T', 'L', 'D' };

/* ---- comparing ---- */

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* Whether no byte of x is zero: all eight bytes differed. */
static inline int all_bytes_set(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, highs = ones << 7;
	return ((x - ones) & ~x & highs) == 0;
}

/* Call fn for every maximal run of bytes where cur and old differ, in order:
 * equal words are skipped eight bytes at a time, the edges of a run are
 * found byte by byte. Stops early if fn returns non-zero. Returns the number
 * of runs. */
size_t rtl_diff_scan(const unsigned char *cur, const unsigned char *old,
                     size_t n, run_fn fn, void *ctx)
{
	size_t i = 0, runs = 0;

	while (i < n) {
		size_t start;

		while (i + 8 <= n && load64(cur + i) == load64(old + i))
			i += 8;
		while (i < n && cur[i] == old[i])
			i++; /* at most 7 bytes, or the tail */
		if (i == n)
			break;
		start = i;
		while (i + 8 <= n && all_bytes_set(load64(cur + i) ^ load64(old + i)))
			i += 8;
		while (i < n && cur[i] != old[i])
			i++;
		runs++;
		if (fn && fn(ctx, start, i - start))
			break;
	}
	return runs;
}

/* ---- encoding: little-endian fixed fields, LEB128 varints ---- */

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* Decode a minimal LEB128 varint of at most 64 bits from [*p, end); -1 if
 * truncated, overlong or too big. */
static int get_varint(const unsigned char **p, const unsigned char *end,
                      uint64_t *out)
{
	const unsigned char *q = *p;
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		unsigned char b;
		if (q == end)
			return -1;
		b = *q++;
		if (shift == 63 && b > 1)
			return -1; /* more than 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (b == 0 && shift > 0)
				return -1; /* overlong: a needless zero group */
			*p = q;
			*out = v;
			return 0;
		}
	}
	return -1;
}

struct encoder {
	const unsigned char *cur;
	unsigned char *p, *end; /* p NULL: only measure */
	size_t need;            /* bytes of runs */
	size_t prev_end;
	int full;
};

static int encode_run(void *ctx, size_t off, size_t len)
{
	struct encoder *e = ctx;
	size_t gap = off - e->prev_end;
	size_t n = varint_len(gap) + varint_len(len) + len;

	e->need += n;
	e->prev_end = off + len;
	if (!e->p)
		return 0;
	if ((size_t)(e->end - e->p) < n) {
		e->full = 1;
		return 1;
	}
	e->p = put_varint(e->p, gap);
	e->p = put_varint(e->p, len);
	memcpy(e->p, e->cur + off, len);
	e->p += len;
	return 0;
}

static unsigned char *put_header(unsigned char *p, uint64_t size)
{
	memcpy(p, magic, 4);
	p[4] = VERSION;
	p[5] = 0; /* flags */
	return put_varint(p + FIXED, size);
}

ssize_t rtl_diff_encode(const unsigned char *cur, const unsigned char *twin,
                        size_t size, void *buf, size_t cap)
{
	struct encoder e = { 0 };
	size_t head = FIXED + varint_len(size);

	if ((cap && !buf) || cap > UINTPTR_MAX - (uintptr_t)buf) {
		errno = EINVAL;
		return -1;
	}
	e.cur = cur;
	if (cap >= head + TRAILER) {
		e.p = put_header(buf, size);
		e.end = (unsigned char *)buf + cap - TRAILER;
	} else if (cap) {
		e.full = 1;
	}
	if (twin && !e.full)
		rtl_diff_scan(cur, twin, size, encode_run, &e);
	if (e.p && !e.full) {
		e.p[0] = 0; /* the end mark */
		e.p[1] = 0;
	}
	if (e.full) {
		errno = ENOSPC;
		return -1;
	}
	return (ssize_t)(head + e.need + TRAILER);
}

/* Walk an encoded diff for a region of size bytes: check everything, and if
 * dst is not NULL copy each run into dst (and into twin if not NULL). 0, or
 * -1 at the first thing wrong. Never reads outside [buf, buf + len) nor
 * writes outside [dst, dst + size). */
int rtl_diff_walk(const unsigned char *buf, size_t len, uint64_t size,
                  unsigned char *dst, unsigned char *twin)
{
	const unsigned char *p, *end;
	uint64_t pos = 0, got;

	/* A length past the end of the address space is no buffer's. */
	if (len > UINTPTR_MAX - (uintptr_t)buf)
		return -1;
	p = buf + FIXED;
	end = buf + len;
	if (len < FIXED + 1 + TRAILER || memcmp(buf, magic, 4) != 0 ||
	    buf[4] != VERSION || buf[5] != 0)
		return -1;
	if (get_varint(&p, end, &got) < 0 || got != size)
		return -1;
	for (;;) {
		uint64_t gap, n;

		if (get_varint(&p, end, &gap) < 0 || get_varint(&p, end, &n) < 0)
			return -1;
		if (n == 0) /* the end mark, and nothing after it */
			return gap == 0 && p == end ? 0 : -1;
		if (gap > size - pos || n > size - pos - gap ||
		    n > (uint64_t)(end - p))
			return -1;
		pos += gap;
		if (dst) {
			memcpy(dst + pos, p, n);
			if (twin)
				memcpy(twin + pos, p, n);
		}
		pos += n;
		p += n;
	}
}

/* ---- on plain buffers: region_buf_diff_* (the DSM's pages) ---- */

ssize_t region_buf_diff_encode(const void *cur, const void *twin, size_t size,
                               void *buf, size_t cap)
{
	if (!cur || !twin || size > UINTPTR_MAX - (uintptr_t)cur ||
	    size > UINTPTR_MAX - (uintptr_t)twin) {
		errno = EINVAL;
		return -1;
	}
	return rtl_diff_encode(cur, twin, size, buf, cap);
}

int region_buf_diff_check(const void *buf, size_t len, size_t size)
{
	if (!buf || rtl_diff_walk(buf, len, size, NULL, NULL) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int region_buf_diff_apply(void *dst, size_t size, const void *buf, size_t len)
{
	if (!dst || size > UINTPTR_MAX - (uintptr_t)dst ||
	    region_buf_diff_check(buf, len, size) < 0) {
		errno = EINVAL;
		return -1;
	}
	return rtl_diff_walk(buf, len, size, dst, NULL);
}
