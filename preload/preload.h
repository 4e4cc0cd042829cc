/* The preload's internal interface between its files: the next allocator,
 * the re-entrancy guard, the arenas and the selected heap. Nothing declared
 * here is exported from librtlpreload.so (see librtlpreload.map). */
#ifndef RTL_PRELOAD_H
#define RTL_PRELOAD_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define RTL_TLS __thread __attribute__((tls_model("initial-exec")))

struct rtl_choice;
struct rtl_rec;

/* ---- re-entrancy guard ----
 * Set while this thread runs the preload's own code (policy loading, rtl's
 * start, jemalloc, region calls): any allocation it makes, or that libc or
 * jemalloc make on its behalf, goes straight to the next allocator. */
extern RTL_TLS int rtl_preload_busy;

/* ---- the next allocator (next.c) ---- */
struct rtl_next {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
	int (*mprotect)(void *, size_t, int);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
};

/* The functions that follow the preload in the lookup order (glibc's), or
 * NULL while this thread is resolving them (dlsym allocates): the caller
 * then uses the bootstrap allocator. Aborts if they cannot be found. */
const struct rtl_next *rtl_next(void);

/* A small static bump allocator for the calls made while resolving. Its
 * memory is never reused; free ignores it. */
void *rtl_boot_alloc(size_t size, size_t align);
int rtl_boot_owns(const void *p);
size_t rtl_boot_size(const void *p);

/* ---- arenas: jemalloc over the RW view (arena.c) ---- */

/* Reserve the views' range for the arenas and create them. 0, or -1 with
 * errno. Called once, from the constructor, after rtl has started. */
int rtl_arena_init(void);

/* Memory from the arenas, in the RW view: at least size bytes aligned to
 * align (a power of two >= 64), zeroed if asked. NULL if exhausted. */
void *rtl_arena_alloc(size_t size, size_t align, int zero);
void rtl_arena_free(void *rw);
/* Whether rw lies in the arenas' range (not a region of the program's own
 * region_alloc, say). */
int rtl_arena_owns(const void *rw);
size_t rtl_arena_usable(const void *rw);
/* What an allocation of size bytes at align would really get. */
size_t rtl_arena_good_size(size_t size, size_t align);
/* Whether the allocation at rw has whole pages of its own, shared with no
 * other allocation: a large size class, or whole pages at a page
 * boundary. */
int rtl_arena_owns_pages(const void *rw);

/* Extents the hooks handed jemalloc, for the report and the tests. */
extern _Atomic uint64_t rtl_arena_extents;

/* ---- the selected heap: arena memory with a record each (heap.c) ---- */

/* Start: rtl's views known, arenas ready, at most max_regions live. */
int rtl_heap_init(uint64_t max_regions);

/* Whether p lies in rtl's views or the aliases (then only the heap may
 * free it). */
int rtl_heap_owns(const void *p);

/* A new selected object of size bytes aligned to align, as c says (its
 * mechanism and protection), from site (a stats slot): the pointer to hand
 * out, and its first byte in the RW view in *rw. NULL with errno if rtl
 * cannot take it (counted; the caller falls back to the next allocator). */
void *rtl_heap_alloc(size_t size, size_t align, int zero,
                     const struct rtl_choice *c, uint32_t site, void **rw);

/* A live object the heap made, found by the pointer it handed out. */
struct rtl_obj {
	void *rw;           /* first byte in the RW view */
	size_t size;
	struct rtl_rec *rec;
};
int rtl_heap_find(const void *p, struct rtl_obj *o); /* -1: not one */

/* End it and give its memory back. -1 if it was not live (a double free
 * racing). */
int rtl_heap_free(const struct rtl_obj *o);
/* data (a record) is no longer protected in place: the budget's count. */
void rtl_heap_left_in_place(void *data);

/* Resize in place when its memory already holds size bytes and it stays
 * with c: the new pointer, or NULL to do it by copying. */
void *rtl_heap_resize(const struct rtl_obj *o, size_t size,
                      const struct rtl_choice *c);

/* Counters for the report (relaxed atomics). */
struct rtl_heap_stats {
	_Atomic uint64_t selected; /* regions made */
	_Atomic uint64_t bytes;    /* bytes asked for by them */
	_Atomic uint64_t live;     /* regions not yet freed */
};
extern struct rtl_heap_stats rtl_heap_stats;

/* ---- mprotect tracking (mprotect.c) ---- */

/* The fault filter handed to the core: whether addr lies in a range of the
 * views that the program mprotect'ed itself. Signal-safe. */
int rtl_mprotect_claims(void *addr, int write);

/* Around fork (pthread_atfork, from init.c). */
void rtl_mprotect_fork_prepare(void);
void rtl_mprotect_fork_done(void);

/* ---- signals (signals.c) ---- */

/* From now on, SIGSEGV actions go through rtl (the core has the real
 * sigaction). */
void rtl_signals_ready(void);

#endif
