/* The DSM's interface for one process and no DSM (bench/dsm/seq/): shared
 * memory is malloc'd, synchronisation does nothing. The applications built
 * on it (rtl-seq-sor, ...) are the sequential versions `make bench` runs
 * under rtlctl compare beside the DSM's own page and region trap counts:
 * every shared object is a malloc block from shared_alloc, which a policy
 * selects with `site = *shared_alloc` (bench/compare_dsm.py). */
#include <stdlib.h>
#include <string.h>

#include "dsm/dsm.h"

int dsm_init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int dsm_finish(void)
{
	return 0;
}

int dsm_rank(void)
{
	return 0;
}

int dsm_nprocs(void)
{
	return 1;
}

/* One function for every shared object: the site the policy names (the
 * check after calloc keeps the call from being a tail jump, whose return
 * address would be the caller's). Zero filled, as the DSM's are. */
__attribute__((noinline)) static void *shared_alloc(size_t size)
{
	void *p = calloc(1, size ? size : 1);

	if (!p)
		abort();
	return p;
}

void *dsm_malloc(size_t size)
{
	return shared_alloc(size);
}

void *dsm_region_alloc(size_t size, void *bptr)
{
	void *p = shared_alloc(size);

	if (bptr)
		*(void **)bptr = p;
	return p;
}

void *dsm_region_alloc_wb(size_t size, void *bptr)
{
	return dsm_region_alloc(size, bptr);
}

void *dsm_an_alloc(size_t size)
{
	return shared_alloc(size);
}

void dsm_read_access(const void *region)
{
	(void)region;
}

void dsm_write_access(void *region)
{
	(void)region;
}

int dsm_lock_acquire(int lock)
{
	(void)lock;
	return 0;
}

int dsm_lock_release(int lock)
{
	(void)lock;
	return 0;
}

int dsm_barrier(void)
{
	return 0;
}

void dsm_stats(struct dsm_stats *out)
{
	memset(out, 0, sizeof(*out));
}

void dsm_stats_reset(void)
{
}

int dsm_stats_gather(struct dsm_stats *all)
{
	dsm_stats(all);
	return 0;
}
