/* The mapping budget: what the preload may add to the process's mappings
 * before vm.max_map_count; a quarter of the limit stays for the program.
 * Past it, alias objects are no longer selected, auto's blocks that can
 * trap are left to the system allocator and swizzle's blocks of whole
 * pages become ordinary swizzle regions. RTL_MAX_MAP_COUNT may lower the
 * limit (for tests), never raise it.
 *
 * An object that can trap costs at most two mappings (a page whose
 * protection differs from both its neighbours' splits one in three), but
 * most cost far fewer: a slot's pages merge with their neighbours of the
 * same protection, and 10^5 blocks written as they are made hold a few
 * hundred. So the budget counts two for each object made since it last
 * read /proc/self/maps, and reads it again (at most once per RECOUNT
 * objects: a read costs a line per mapping) when that reaches the limit.
 * Counted, not estimated, a rule's blocks are refused only when the
 * process really nears the limit. */
#include "preload/place/maps.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define RECOUNT 256

_Atomic uint64_t rtl_alias_live, rtl_in_place_live;
static long max_maps, maps_at_start, limit; /* limit: what rtl may fill */
static _Atomic long counted;                /* mappings at the last count */
static _Atomic uint64_t made_at_count;      /* objects made by then */
static _Atomic uint64_t made;               /* objects made that can trap */
static _Atomic uint64_t live_at_hit;        /* live objects when one found no room */
static _Atomic int alias_hit, in_place_hit;
/* Held over a read of /proc/self/maps, and across fork: a child must not
 * inherit it held by a thread that did not come along. Its holder takes
 * no other lock, so its place among the fork handlers does not matter. */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void count_lock_take(void)
{
	pthread_mutex_lock(&count_lock);
}

static void count_lock_give(void)
{
	pthread_mutex_unlock(&count_lock);
}

static long read_long(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static long count_maps(void)
{
	char buf[4096];
	long lines = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	close(fd);
	return lines;
}

void rtl_maps_init(void)
{
	const char *env = secure_getenv("RTL_MAX_MAP_COUNT");
	long lim;

	max_maps = read_long("/proc/sys/vm/max_map_count");
	if (max_maps <= 0)
		max_maps = 65530;
	if (env && (lim = strtol(env, NULL, 10)) > 0 && lim < max_maps)
		max_maps = lim;
	limit = max_maps * 3 / 4;
	pthread_atfork(count_lock_take, count_lock_give, count_lock_give);
	/* Counted at the first object that can trap (room): a process that
	 * never makes one never reads its maps. */
	atomic_store(&counted, limit);
}

uint64_t rtl_maps_budget(void)
{
	/* What rtl may add, in objects at their worst: for sizing tables. */
	long lim = limit - maps_at_start;

	return lim > 0 ? (uint64_t)lim / 2 : 0;
}

/* The mappings the process may hold now, at worst: the last count and
 * two for each object made since. */
static long worst(void)
{
	return atomic_load_explicit(&counted, memory_order_relaxed) +
	       2 * (long)(atomic_load_explicit(&made, memory_order_relaxed) -
	                  atomic_load_explicit(&made_at_count, memory_order_relaxed));
}

/* Whether one more object fits: the cheap bound first, else, under the
 * lock, /proc/self/maps counted again (unless fewer than RECOUNT objects
 * were made since the last count: a count costs a line per mapping) and
 * the bound taken from it. Not in a signal handler (a file read). */
static int room(_Atomic int *hit)
{
	long fresh = -1;
	int ok;

	if (worst() < limit) {
		atomic_fetch_add_explicit(&made, 1, memory_order_relaxed);
		return 1;
	}
	pthread_mutex_lock(&count_lock);
	if (!maps_at_start) /* the first count */
		atomic_store_explicit(&made_at_count, atomic_load(&made) - RECOUNT,
		                      memory_order_relaxed);
	if (atomic_load_explicit(&made, memory_order_relaxed) -
	            atomic_load_explicit(&made_at_count, memory_order_relaxed) >=
	    RECOUNT) {
		atomic_store_explicit(&made_at_count, atomic_load(&made), memory_order_relaxed);
		fresh = count_maps();
		if (!maps_at_start)
			maps_at_start = fresh;
		atomic_store_explicit(&counted, fresh, memory_order_relaxed);
	}
	/* A count this thread just made decides for it: other threads may
	 * have added to the bound meanwhile (they do not wait for the lock
	 * while it holds), but not to the mappings counted. */
	ok = fresh >= 0 ? fresh + 2 < limit : worst() < limit;
	if (ok)
		atomic_fetch_add_explicit(&made, 1, memory_order_relaxed);
	pthread_mutex_unlock(&count_lock);
	if (!ok && !atomic_exchange_explicit(hit, 1, memory_order_relaxed))
		atomic_store_explicit(&live_at_hit,
		                      atomic_load(&rtl_alias_live) +
		                              atomic_load(&rtl_in_place_live),
		                      memory_order_relaxed);
	return ok;
}

int rtl_alias_room(void)
{
	return room(&alias_hit);
}

int rtl_in_place_room(void)
{
	return room(&in_place_hit);
}

void rtl_maps_state(struct rtl_maps_state *out)
{
	out->alias_hit = atomic_load(&alias_hit);
	out->in_place_hit = atomic_load(&in_place_hit);
	out->budget = atomic_load(&live_at_hit);
	out->max_maps = max_maps;
	out->maps_at_start = maps_at_start;
}
