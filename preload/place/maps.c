/* The mapping budget: what the preload may add to the process's mappings
 * before vm.max_map_count. An alias object is a mapping and may split the
 * alias reservation once more; a block protected in place may split a view
 * mapping into three. Either costs two, and both share one budget: a
 * quarter of the limit stays for the program. Past it, alias objects are
 * no longer selected and blocks of whole pages become ordinary swizzle
 * regions. RTL_MAX_MAP_COUNT may lower the limit (for tests), never raise
 * it. */
#include "preload/place/maps.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

_Atomic uint64_t rtl_alias_live, rtl_in_place_live;
static uint64_t budget; /* most live objects of the two */
static long max_maps, maps_at_start;
static _Atomic int alias_hit, in_place_hit;

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
	maps_at_start = count_maps();
	lim = max_maps * 3 / 4 - maps_at_start;
	budget = lim > 0 ? (uint64_t)lim / 2 : 0;
}

uint64_t rtl_maps_budget(void)
{
	return budget;
}

static int room(_Atomic int *hit)
{
	if (atomic_load_explicit(&rtl_alias_live, memory_order_relaxed) +
	            atomic_load_explicit(&rtl_in_place_live, memory_order_relaxed) <
	    budget)
		return 1;
	atomic_store_explicit(hit, 1, memory_order_relaxed);
	return 0;
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
	out->budget = budget;
	out->max_maps = max_maps;
	out->maps_at_start = maps_at_start;
}
