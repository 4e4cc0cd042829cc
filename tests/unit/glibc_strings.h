/* The harness of the glibc string tests (strings.c): two regions and two
 * ordinary buffers with the same page offsets, filled alike; each call runs
 * on ordinary memory, then on regions whose view makes it trap, and the
 * results and the memory after must agree. Sizes: 0..512, then powers of
 * two to 1 MiB; alignments 0..63 taken in turn (each size once, each
 * alignment many times) so that the run stays short. */
#ifndef RTL_TEST_GLIBC_STRINGS_H
#define RTL_TEST_GLIBC_STRINGS_H

#include <stdlib.h>
#include <string.h>

#include "core/region/views.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

#define MAXN ((size_t)1 << 20)
#define ROOM (MAXN + 256)
#define NSIZES (513 + 11)

struct bufs {
	char *r[2]; /* bound pointers of two regions */
	char *o[2]; /* reference: the call on ordinary memory */
	char *p[2]; /* plain operands beside a region operand */
};

/* How an operand is given: a region protected so, or plain memory. */
enum {
	PLAIN = -2,
};

static inline size_t size_at(int k)
{
	return k <= 512 ? (size_t)k : (size_t)1024 << (k - 513);
}

/* Read a bound pointer as it is now: a trap may have moved it, and the
 * compiler may keep the old value across a call it believes pure (strlen,
 * memchr ...): see docs/decoder.md. */
static inline char *now(char **bp)
{
	return *(char *volatile *)bp;
}

static inline void bufs_init(struct bufs *b)
{
	for (int i = 0; i < 2; i++) {
		b->r[i] = region_alloc(ROOM, &b->r[i]);
		/* aligned_alloc wants a multiple of the alignment. */
		b->o[i] = aligned_alloc(4096, (ROOM + 4095) & ~(size_t)4095);
		b->p[i] = aligned_alloc(4096, (ROOM + 4095) & ~(size_t)4095);
		CHECK(b->r[i] && b->o[i] && b->p[i]);
		CHECK_EQ((uintptr_t)b->r[i] % 4096, 0);
	}
	region_handler(NULL, grant_handler);
}

static __thread uint64_t rng_state = 1;

static inline uint32_t rng(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

/* Fill buffer i (all three alike) over [0, len) with bytes 1..254 (255
 * never occurs: a byte to search for in vain); the region is left RW. */
static inline void bufs_fill(struct bufs *b, int i, size_t len)
{
	region_protect(b->r[i], RW);
	for (size_t k = 0; k < len; k++)
		b->o[i][k] = (char)(1 + rng() % 254);
	memcpy(now(&b->r[i]), b->o[i], len);
	memcpy(b->p[i], b->o[i], len);
}

/* Set byte k of buffer i to v in all three. */
static inline void bufs_set(struct bufs *b, int i, size_t k, char v)
{
	region_protect(b->r[i], RW);
	b->o[i][k] = b->p[i][k] = now(&b->r[i])[k] = v;
}

/* Copy n bytes from src into buffer i at off, in all three. */
static inline void bufs_copy(struct bufs *b, int i, size_t off, const char *src,
                             size_t n)
{
	region_protect(b->r[i], RW);
	memmove(b->o[i] + off, src, n);
	memcpy(b->p[i] + off, b->o[i] + off, n);
	memcpy(now(&b->r[i]) + off, b->o[i] + off, n);
}

/* The operand for buffer i at off: the plain copy, or the region
 * protected as prot, through the view that makes it trap. */
static inline char *bufs_arg(struct bufs *b, int i, int prot, size_t off)
{
	if (prot == PLAIN)
		return b->p[i] + off;
	region_protect(b->r[i], prot);
	return now(&b->r[i]) + off;
}

/* After the call: buffer i (region or plain, as given) equals the
 * reference over [0, len). */
static inline int bufs_same(struct bufs *b, int i, int prot, size_t len)
{
	if (prot == PLAIN)
		return memcmp(b->p[i], b->o[i], len) == 0;
	region_protect(b->r[i], PROT_READ);
	return memcmp(now(&b->r[i]), b->o[i], len) == 0;
}

/* A view-independent image of an address (region addresses map to the
 * NONE view) so that returned pointers can be compared. */
static inline uintptr_t unview(const void *p)
{
	return rtl_view_move((uintptr_t)p, RTL_VIEW_NONE);
}

/* Offset of a returned pointer from where its buffer started, or -1. */
static inline long off_of(const void *ret, const void *start)
{
	return ret ? (long)(unview(ret) - unview(start)) : -1;
}

#endif
