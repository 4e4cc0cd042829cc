/* rtl's own metadata memory, taken straight from mmap.
 *
 * The core never calls malloc: under the preload, malloc is ours, and the trap
 * path must not depend on it. Pools hand out fixed-size objects that stay
 * mapped forever (type-stable), so a lock-free reader holding a stale pointer
 * reads an object of the right type, never an unmapped page. */
#ifndef RTL_META_H
#define RTL_META_H

#include <pthread.h>
#include <stddef.h>

struct rtl_pool {
	size_t objsize;
	void *free;      /* intrusive free list */
	char *chunk;     /* current chunk being carved */
	size_t left;     /* bytes left in it */
	unsigned chunks; /* taken so far */
	char *last;      /* the newest chunk; each begins with the one before */
	pthread_mutex_t mu;
};

#define RTL_POOL_INIT(size)                                        \
	{                                                          \
		.objsize = (size), .mu = PTHREAD_MUTEX_INITIALIZER \
	}

void *rtl_pool_get(struct rtl_pool *p); /* zeroed object, or NULL (ENOMEM) */
void rtl_pool_put(struct rtl_pool *p, void *obj);

/* Call fn on every object the pool ever handed out, free or not (a forked
 * child's walk over the region records). No other thread may use the pool
 * meanwhile. */
void rtl_pool_each(struct rtl_pool *p, void (*fn)(void *obj));

/* Variable-size metadata (hash tables). Zeroed; NULL with ENOMEM. */
void *rtl_meta_alloc(size_t size);
void rtl_meta_free(void *ptr, size_t size);

/* Pages straight from mmap, zeroed; NULL with ENOMEM. */
void *rtl_pages_alloc(size_t size);

#endif
