/* The unit table: every page of the shared heap that holds data, and every
 * shared region, gets an id in allocation order, the same on every rank
 * (allocation is collective). Chunks never move once made, so the service
 * and fetch threads may hold unit pointers while the application allocates.
 * Called in the application thread, never from a trap handler. */
#include <errno.h>
#include <stdlib.h>

#include "dsm/internal.h"

struct unit *dsm_unit_new(const struct mech *m, void *addr, void *sys,
                          size_t size)
{
	struct unit *u;
	uint32_t id;

	pthread_mutex_lock(&dsm.lock);
	id = dsm.nunits;
	if (id >= (uint32_t)UNIT_CHUNK * UNIT_CHUNKS)
		goto nomem;
	if (!dsm.chunks[id / UNIT_CHUNK] &&
	    !(dsm.chunks[id / UNIT_CHUNK] =
	              calloc(UNIT_CHUNK, sizeof(struct unit))))
		goto nomem;
	if (id >= dsm.dirty_cap) {
		/* The trap handler appends to this list without allocating. */
		uint32_t cap = dsm.dirty_cap ? 2 * dsm.dirty_cap : 1024;
		uint32_t *d = realloc(dsm.dirty, cap * sizeof(*d));
		if (!d)
			goto nomem;
		dsm.dirty = d;
		dsm.dirty_cap = cap;
	}
	u = dsm_unit(id);
	u->id = id;
	u->mech = m;
	u->addr = addr;
	u->sys = sys;
	u->size = size;
	u->prot = DSM_READ;
	dsm.nunits = id + 1;
	pthread_mutex_unlock(&dsm.lock);
	return u;
nomem:
	pthread_mutex_unlock(&dsm.lock);
	errno = ENOMEM;
	return NULL;
}

/* Remember what was allocated, to tell at the next barrier whether every
 * rank allocated the same. */
void dsm_alloc_note(int kind, size_t size)
{
	uint64_t h = dsm.allochash ^ ((uint64_t)kind << 56 ^ size);

	dsm.allochash = (h * 0x100000001b3ull) ^ (h >> 31);
	dsm.nalloc++;
}

void *dsm_malloc(size_t size)
{
	void *p;

	if (!size) {
		errno = EINVAL;
		return NULL;
	}
	p = dsm_vm_alloc(size);
	if (p)
		dsm_alloc_note(1, size);
	return p;
}
