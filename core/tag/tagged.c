/* The tag arena: granules handed out to regions, their records, and the
 * table that finds a region from any of its granules.
 *
 * Free blocks are kept in lists by size, each block's own first granule
 * holding the link (free granules carry tag 0, which an untagged pointer
 * carries too): exact sizes up to SMALL granules, first fit in classes by
 * power of two above, the rest split off. Blocks are not merged again: a
 * program's sizes come back, and a free block is split to fit. Not for
 * the trap path (a mutex), except rtl_tag_find and rtl_tag_protect. */
#include "core/tag/tagged.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/region/views.h"
#include "core/tag/fault.h"
#include "core/util/page.h"

#ifndef PROT_MTE
#define PROT_MTE 0x20
#endif

#define GSHIFT 4 /* 16-byte granules */
#define DEFAULT_SIZE ((size_t)256 << 20)
#define RECS_MAX ((uint32_t)1 << 20)
#define SMALL 32 /* exact-size lists up to 512 bytes */
#define CLASSES 40

struct rtl_tag_arena rtl_tag_arena;

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int start_errno;

static _Atomic uint32_t *owner;        /* per granule: record index + 1, or 0 */
static struct rtl_tag_region *recs;    /* type-stable: never unmapped */
static uint32_t recs_used, spare;      /* spare: index + 1 of a free record */
static size_t bump;                    /* granules handed out at least once */
static uint64_t small_free[SMALL + 1]; /* granule index + 1 of the first */
static uint64_t class_free[CLASSES];
static unsigned next_tag;

/* A free block's first granule. */
struct free_block {
	uint64_t next; /* granule index + 1, or 0 */
	uint64_t count;
};

static struct free_block *block_at(uint64_t g)
{
	return (struct free_block *)(rtl_tag_arena.base + (g << GSHIFT));
}

static unsigned class_of(uint64_t n)
{
	return 63u - (unsigned)__builtin_clzll(n);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&store_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&store_lock);
}

static void start(void)
{
	size_t size = DEFAULT_SIZE;
	const char *env = secure_getenv("RTL_TAG_ARENA_SIZE");
	void *m, *t, *r;

	if (env && *env &&
	    (rtl_parse_size(env, &size) < 0 || size < (1u << 20) || size > ((size_t)1 << 40))) {
		start_errno = EINVAL;
		return;
	}
	size = (size + rtl_page_size() - 1) & ~(rtl_page_size() - 1);
	m = mmap(NULL, size, PROT_READ | PROT_WRITE | PROT_MTE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	t = mmap(NULL, (size >> GSHIFT) * sizeof(*owner), PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	r = mmap(NULL, RECS_MAX * sizeof(*recs), PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED || t == MAP_FAILED || r == MAP_FAILED) {
		start_errno = errno;
		if (m != MAP_FAILED)
			munmap(m, size);
		if (t != MAP_FAILED)
			munmap(t, (size >> GSHIFT) * sizeof(*owner));
		if (r != MAP_FAILED)
			munmap(r, RECS_MAX * sizeof(*recs));
		return;
	}
	owner = t;
	recs = r;
	pthread_atfork(fork_prepare, fork_parent, fork_parent);
	rtl_tag_arena.size = size;
	atomic_thread_fence(memory_order_release);
	rtl_tag_arena.base = (uintptr_t)m;
}

void rtl_tag_forked(void)
{
	/* Under store_lock (fork_prepare): no record is being made. Only
	 * held locks are written: the records' pages stay shared. */
	for (uint32_t i = 0; i < recs_used; i++)
		if (atomic_load_explicit(&recs[i].lock.owner, memory_order_relaxed))
			rtl_lock_reset(&recs[i].lock);
}

int rtl_tag_find(uintptr_t a, struct rtl_tag_found *f)
{
	uintptr_t u = rtl_mte_untag(a), d = u - rtl_tag_arena.base;

	if (d >= rtl_tag_arena.size)
		return -1;
	for (int tries = 0; tries < 64; tries++) {
		uint32_t i = atomic_load_explicit(&owner[d >> GSHIFT], memory_order_acquire);
		struct rtl_tag_region *r;
		uint32_t g1, g2;
		uintptr_t lo;
		size_t span;

		if (!i)
			return -1;
		r = &recs[i - 1];
		g1 = atomic_load_explicit(&r->gen, memory_order_acquire);
		lo = r->lo;
		span = r->span;
		atomic_thread_fence(memory_order_acquire);
		g2 = atomic_load_explicit(&r->gen, memory_order_relaxed);
		if (g1 != g2 || (g1 & 1) || u - lo >= span)
			continue; /* changing under us, or a stale entry */
		f->r = r;
		f->gen = g1;
		return 0;
	}
	return -1;
}

/* n granules from the lists or the untouched end: the first granule's
 * index, or -1. Under store_lock. */
static int64_t take_granules(uint64_t n)
{
	uint64_t g, *link;

	if (n <= SMALL && small_free[n]) {
		g = small_free[n] - 1;
		small_free[n] = block_at(g)->next;
		return (int64_t)g;
	}
	for (unsigned c = class_of(n); c < CLASSES; c++) {
		for (link = &class_free[c]; *link; link = &block_at(*link - 1)->next) {
			struct free_block *b;
			uint64_t rest;

			g = *link - 1;
			b = block_at(g);
			if (b->count < n)
				continue;
			*link = b->next;
			rest = b->count - n;
			if (rest) { /* the tail goes back, in its own list */
				uint64_t t = g + n;
				uint64_t *head = rest <= SMALL ? &small_free[rest]
				                               : &class_free[class_of(rest)];

				block_at(t)->count = rest;
				block_at(t)->next = *head;
				*head = t + 1;
			}
			return (int64_t)g;
		}
	}
	if (n > (rtl_tag_arena.size >> GSHIFT) - bump)
		return -1;
	g = bump;
	bump += n;
	return (int64_t)g;
}

/* Give n granules at g back (their tags are 0 already). */
static void give_granules(uint64_t g, uint64_t n)
{
	uint64_t *head = n <= SMALL ? &small_free[n] : &class_free[class_of(n)];

	block_at(g)->count = n;
	block_at(g)->next = *head;
	*head = g + 1;
}

static struct rtl_tag_region *new_record(void)
{
	struct rtl_tag_region *r;

	if (spare) {
		r = &recs[spare - 1];
		spare = r->next_free;
		return r;
	}
	if (recs_used == RECS_MAX)
		return NULL;
	return &recs[recs_used++];
}

static void set_owner(uint64_t g, uint64_t n, uint32_t v)
{
	for (uint64_t i = 0; i < n; i++)
		atomic_store_explicit(&owner[g + i], v, memory_order_release);
}

void *rtl_tag_alloc(size_t size)
{
	struct rtl_tag_region *r;
	uint64_t n;
	int64_t g;
	unsigned tag;

	pthread_once(&once, start);
	if (!rtl_tag_arena.base) {
		errno = start_errno ? start_errno : ENOMEM;
		return NULL;
	}
	if (size == 0 || size > rtl_tag_arena.size) {
		errno = size ? ENOMEM : EINVAL;
		return NULL;
	}
	n = (size + RTL_MTE_GRANULE - 1) >> GSHIFT;
	pthread_mutex_lock(&store_lock);
	r = new_record();
	g = r ? take_granules(n) : -1;
	if (g < 0) {
		if (r) {
			r->next_free = spare;
			spare = (uint32_t)(r - recs) + 1;
		}
		pthread_mutex_unlock(&store_lock);
		errno = ENOMEM;
		return NULL;
	}
	/* Tags in turn: neighbours rarely share one, so that running off a
	 * block's end into the next is caught too (docs/mechanisms.md). */
	tag = next_tag++ % RTL_MTE_TAGS + 1;
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_relaxed); /* odd */
	atomic_thread_fence(memory_order_release);
	r->tag = (uint8_t)tag;
	r->lo = rtl_tag_arena.base + ((uint64_t)g << GSHIFT);
	r->span = n << GSHIFT;
	r->size = size;
	atomic_store(&r->prot, PROT_READ | PROT_WRITE);
	atomic_store(&r->handler, NULL);
	atomic_store(&r->data, NULL);
	atomic_store(&r->traps, 0);
	rtl_lock_reset(&r->lock);
	/* Zero and tag in one pass (STZG): the link a free block held too. */
	rtl_mte_set_tags(rtl_tag_base(r), r->span, 1);
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_release); /* even */
	set_owner((uint64_t)g, n, (uint32_t)(r - recs) + 1);
	pthread_mutex_unlock(&store_lock);
	return (void *)rtl_tag_base(r);
}

int rtl_tag_free(struct rtl_tag_found *f)
{
	struct rtl_tag_region *r = f->r;
	uint64_t g, n;

	pthread_mutex_lock(&store_lock);
	if (rtl_lock_acquire(&r->lock) < 0) {
		pthread_mutex_unlock(&store_lock);
		return -1;
	}
	if (!rtl_tag_still(f)) {
		rtl_lock_release(&r->lock);
		pthread_mutex_unlock(&store_lock);
		errno = ENOENT;
		return -1;
	}
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_acq_rel); /* odd */
	g = (r->lo - rtl_tag_arena.base) >> GSHIFT;
	n = r->span >> GSHIFT;
	set_owner(g, n, 0);
	/* Tag 0: a pointer to the freed region faults from now on. */
	rtl_mte_set_tags(r->lo, r->span, 0);
	give_granules(g, n);
	atomic_store(&r->prot, PROT_NONE);
	atomic_fetch_add_explicit(&r->gen, 1, memory_order_release); /* even */
	rtl_lock_release(&r->lock);
	r->next_free = spare;
	spare = (uint32_t)(r - recs) + 1;
	pthread_mutex_unlock(&store_lock);
	return 0;
}

int rtl_tag_protect(struct rtl_tag_found *f, int prot)
{
	struct rtl_tag_region *r = f->r;

	if (prot != PROT_NONE && prot != (PROT_READ | PROT_WRITE)) {
		errno = prot == PROT_READ ? ENOTSUP : EINVAL;
		return -1;
	}
	/* Signal-handler code: a spin lock held only around tag stores,
	 * which never fault, so the interrupted code cannot hold it. */
	if (rtl_lock_acquire(&r->lock) < 0)
		return -1;
	if (!rtl_tag_still(f)) {
		rtl_lock_release(&r->lock);
		errno = ENOENT;
		return -1;
	}
	if (prot == PROT_NONE) {
		atomic_store_explicit(&r->prot, prot, memory_order_release);
		rtl_mte_set_tags(r->lo, r->span, 0);
	} else {
		rtl_mte_set_tags(rtl_tag_base(r), r->span, 0);
		atomic_store_explicit(&r->prot, prot, memory_order_release);
		rtl_tag_granted(r);
	}
	rtl_lock_release(&r->lock);
	return 0;
}
