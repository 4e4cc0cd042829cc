/* Annotated regions (the paper's AN version): shared memory that never
 * traps. The program says, before each series of accesses to a region after
 * a synchronisation, whether it will read it or write it
 * (dsm_read_access / dsm_write_access, the paper's readaccess and
 * writeaccess), and the annotation does what a trap would: fetch the diffs
 * of an invalid region, twin a region before its first write. Comparing AN
 * with RT shows what region traps cost (docs/dsm.md); the protocol is the
 * same lazy release consistency.
 *
 * Each region is a mapping of its own: a header page (the unit id, a
 * magic) and the data, then as many bytes for the twin, which the kernel
 * fills only when used. Never called from a signal handler. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dsm/internal.h"
#include "dsm/pagediff.h"

#define AN_MAGIC 0x4e41534du /* "MSAN" */
#define HEADER 64

struct an_header {
	uint32_t magic, id;
};

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

static uint8_t *twin_of(struct unit *u)
{
	return (uint8_t *)u->addr + page_round(HEADER + u->size) - HEADER;
}

void *dsm_an_alloc(size_t size)
{
	size_t span;
	uint8_t *m;
	struct an_header *h;
	struct unit *u;

	if (!size) {
		errno = EINVAL;
		return NULL;
	}
	span = page_round(HEADER + size);
	m = mmap(NULL, 2 * span, PROT_READ | PROT_WRITE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	u = dsm_unit_new(&dsm_mech_annotated, m + HEADER, m + HEADER, size);
	if (!u) {
		munmap(m, 2 * span);
		return NULL;
	}
	h = (struct an_header *)m;
	h->magic = AN_MAGIC;
	h->id = u->id;
	dsm_alloc_note(3, size);
	return m + HEADER;
}

static struct unit *unit_of(const void *p)
{
	const struct an_header *h =
	        (const struct an_header *)((const uint8_t *)p - HEADER);

	if (!p || h->magic != AN_MAGIC || h->id >= dsm.nunits ||
	    dsm_unit(h->id)->addr != p)
		dsm_die("dsm_read_access/dsm_write_access on %p, which is not "
		        "the start of a region from dsm_an_alloc",
		        p);
	return dsm_unit(h->id);
}

void dsm_read_access(const void *region)
{
	struct unit *u = unit_of(region);

	if (u->prot == DSM_NONE)
		dsm_access(u, 0);
}

void dsm_write_access(void *region)
{
	struct unit *u = unit_of(region);

	if (u->prot != DSM_RW)
		dsm_access(u, 1);
}

/* ---- the mechanism: protection is only the protocol's state ---- */

static void an_protect(struct unit *u, int prot)
{
	(void)u;
	(void)prot;
}

static void an_twin_take(struct unit *u)
{
	memcpy(twin_of(u), u->addr, u->size);
}

static ssize_t an_encode(struct unit *u, void *buf, size_t cap)
{
	return pagediff_encode(u->addr, twin_of(u), u->size, buf, cap);
}

static void an_twin_drop(struct unit *u)
{
	(void)u; /* the twin's pages are reused at the next write */
}

static int an_apply(struct unit *u, const void *buf, size_t len)
{
	return pagediff_apply(u->addr, u->size, buf, len);
}

static const void *an_contents(struct unit *u)
{
	return u->addr;
}

const struct mech dsm_mech_annotated = {
	.name = "annotated",
	/* Making a diff for another rank does not stop our writes: one made
	 * without a new dsm_write_access would be lost. Check, as for
	 * regions. */
	.check_stale = 1,
	.protect = an_protect,
	.twin_take = an_twin_take,
	.encode = an_encode,
	.twin_drop = an_twin_drop,
	.apply = an_apply,
	.contents = an_contents,
};
