/* Lazy release consistency (TreadMarks, Sections 2-3): intervals, vector
 * timestamps, write notices, lazy diff creation, and incorporating what a
 * releaser or the barrier manager sends. Everything here runs with dsm.lock
 * held, in normal thread context: never from a trap handler. Invalidation
 * happens only in the application thread at a synchronisation point. */
#include <stdlib.h>
#include <string.h>

#include "dsm/wire.h"

void lrc_init(void)
{
	dsm.vt = calloc((size_t)dsm.nprocs, sizeof(*dsm.vt));
	dsm.procs = calloc((size_t)dsm.nprocs, sizeof(*dsm.procs));
	if (!dsm.vt || !dsm.procs)
		dsm_die("out of memory at start");
}

void lrc_account(int64_t bytes)
{
	dsm.cons_bytes += (uint64_t)bytes;
	if (dsm.cons_bytes > dsm.cons_peak)
		dsm.cons_peak = dsm.cons_bytes;
}

struct interval *lrc_interval(uint32_t proc, uint32_t idx)
{
	struct proc *pr = &dsm.procs[proc];

	if (idx <= pr->base || idx > pr->base + pr->n)
		dsm_die("protocol error: interval %u of rank %u is not here "
		        "(collected up to %u)",
		        idx, proc, pr->base);
	return &pr->iv[idx - pr->base - 1];
}

uint64_t lrc_hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

struct notice *lrc_notice(struct unit *u, uint32_t proc, uint32_t idx)
{
	for (uint32_t i = u->nnt; i-- > 0;)
		if (u->nt[i].proc == proc && u->nt[i].idx == idx)
			return &u->nt[i];
	return NULL;
}

static struct notice *add_notice(struct unit *u, uint32_t proc, uint32_t idx,
                                 int applied)
{
	struct notice *n;

	if (u->nnt == u->cap) {
		u->cap = u->cap ? 2 * u->cap : 4;
		u->nt = realloc(u->nt, u->cap * sizeof(*u->nt));
		if (!u->nt)
			dsm_die("out of memory for write notices");
	}
	n = &u->nt[u->nnt++];
	lrc_account((int64_t)sizeof(*n));
	n->proc = proc;
	n->idx = idx;
	n->diff = NULL;
	n->applied = (uint8_t)applied;
	return n;
}

static struct interval *add_interval(uint32_t p, const uint32_t *vt, uint32_t n,
                                     const uint32_t *units)
{
	struct proc *pr = &dsm.procs[p];
	struct interval *iv;

	if (pr->n == pr->cap) {
		pr->cap = pr->cap ? 2 * pr->cap : 16;
		pr->iv = realloc(pr->iv, pr->cap * sizeof(*pr->iv));
		if (!pr->iv)
			dsm_die("out of memory for intervals");
	}
	iv = &pr->iv[pr->n++];
	iv->vt = malloc((size_t)dsm.nprocs * sizeof(*vt));
	iv->units = malloc((n ? n : 1) * sizeof(*units));
	if (!iv->vt || !iv->units)
		dsm_die("out of memory for intervals");
	memcpy(iv->vt, vt, (size_t)dsm.nprocs * sizeof(*vt));
	lrc_account((int64_t)(sizeof(*iv) + (size_t)dsm.nprocs * 4 + n * 4));
	if (n)
		memcpy(iv->units, units, n * sizeof(*units));
	iv->n = n;
	return iv;
}

/* End the current interval if it wrote anything: one write notice per unit
 * twinned in it. The units stay writable (lazy diffs): the diff is made when
 * someone asks for it or a notice from another writer arrives. */
void lrc_close_interval(void)
{
	uint32_t idx;

	rt_wb_harvest(); /* units written without a trap (WB) */
	if (!dsm.ndirty)
		return;
	idx = ++dsm.vt[dsm.rank];
	add_interval((uint32_t)dsm.rank, dsm.vt, dsm.ndirty, dsm.dirty);
	for (uint32_t i = 0; i < dsm.ndirty; i++) {
		struct unit *u = dsm_unit(dsm.dirty[i]);
		add_notice(u, (uint32_t)dsm.rank, idx, 1);
		unit_lock(u);
		u->own_pending = idx;
		unit_unlock(u);
		u->in_dirty = 0;
	}
	dsm.ndirty = 0;
	STAT(intervals, 1);
}

/* Make the diff of our pending notice for u: write-protect first (so no
 * write can slip between the compare and the twin's end), encode against the
 * twin, drop the twin. async: called by the service thread while the
 * application runs; for regions that relies on the registration contract, so
 * remember a hash and check at the next trap or synchronisation that nothing
 * wrote through an unregistered pointer. */
struct diff *lrc_own_diff(struct unit *u, int async)
{
	struct notice *nt;
	struct diff *d = NULL;
	ssize_t need, got = -1;

	unit_lock(u);
	if (!u->twinned || !u->own_pending)
		dsm_die("protocol error: no pending diff for unit %u", u->id);
	nt = lrc_notice(u, (uint32_t)dsm.rank, u->own_pending);
	if (!nt)
		dsm_die("protocol error: no notice for own interval %u of unit "
		        "%u",
		        u->own_pending, u->id);
	if (u->prot == DSM_RW) {
		u->mech->protect(u, DSM_READ);
		u->prot = DSM_READ;
	}
	if (u->mech->hold)
		u->mech->hold(u, 1);
	while (got < 0) {
		need = u->mech->encode(u, NULL, 0);
		if (need < 0 || need > UINT32_MAX)
			dsm_die("cannot size the diff of unit %u", u->id);
		d = realloc(d, sizeof(*d) + (size_t)need);
		if (!d)
			dsm_die("out of memory for a %zd-byte diff", need);
		got = u->mech->encode(u, d->bytes, (size_t)need);
	}
	d->len = (uint32_t)got;
	nt->diff = d;
	lrc_account((int64_t)(sizeof(*d) + d->len));
	u->mech->twin_drop(u);
	u->twinned = 0;
	u->own_pending = 0;
	if (u->mech->hold)
		u->mech->hold(u, 0);
	if (async && u->mech->check_stale) {
		u->hash = lrc_hash(u->mech->contents(u), u->size);
		u->check = 1;
		if (dsm.nchecks == dsm.checks_cap) {
			dsm.checks_cap =
			        dsm.checks_cap ? 2 * dsm.checks_cap : 64;
			dsm.checks =
			        realloc(dsm.checks,
			                dsm.checks_cap * sizeof(*dsm.checks));
			if (!dsm.checks)
				dsm_die("out of memory");
		}
		dsm.checks[dsm.nchecks++] = u->id;
	}
	unit_unlock(u);
	STAT(diffs_created, 1);
	return d;
}

static void stale_write(struct unit *u)
{
	if (u->mech == &dsm_mech_annotated)
		dsm_die("annotated region %u (%zu bytes) was written after the "
		        "DSM made its diff for another rank, without a new "
		        "dsm_write_access; those writes would be lost. "
		        "Annotate after every acquire and barrier "
		        "(docs/dsm.md)",
		        u->id, u->size);
	dsm_die("region %u (%zu bytes) was written through an unregistered "
	        "pointer after the DSM write-protected it to serve another "
	        "rank; those writes would be lost. Read region pointers again "
	        "from registered variables after each acquire and barrier, and "
	        "do not share one region between a writer and a reader between "
	        "two synchronisations (docs/dsm.md)",
	        u->id, u->size);
}

/* At a synchronisation point: regions lowered by the service thread since
 * the last one must still hold what was sent. */
void lrc_check_contract(void)
{
	for (uint32_t i = 0; i < dsm.nchecks; i++) {
		struct unit *u = dsm_unit(dsm.checks[i]);
		unit_lock(u);
		if (u->check &&
		    lrc_hash(u->mech->contents(u), u->size) != u->hash)
			stale_write(u);
		u->check = 0;
		unit_unlock(u);
	}
	dsm.nchecks = 0;
}

/* Every interval we know that a rank knowing `known` does not: our vector
 * time, the count, then each as proc, idx, vt, n, units; vector times as
 * their differences from `known` (the reader passes it to incorporate). */
void lrc_put_intervals(struct wbuf *w, const uint32_t *known)
{
	uint32_t count = 0;

	w_vt_delta(w, dsm.vt, known);
	for (int p = 0; p < dsm.nprocs; p++)
		if (dsm.vt[p] > known[p])
			count += dsm.vt[p] - known[p];
	w_u32(w, count);
	for (int p = 0; p < dsm.nprocs; p++)
		for (uint32_t i = known[p] + 1; i <= dsm.vt[p]; i++) {
			struct interval *iv = lrc_interval((uint32_t)p, i);
			w_u32(w, (uint32_t)p);
			w_u32(w, i);
			w_vt_delta(w, iv->vt, known);
			w_u32(w, iv->n);
			for (uint32_t k = 0; k < iv->n; k++)
				w_u32(w, iv->units[k]);
		}
}

/* A notice for u from another writer: our own changes must become a diff
 * first (multiple writers), then the copy is invalid. */
static void invalidate(struct unit *u)
{
	if (u->twinned)
		lrc_own_diff(u, 0);
	unit_lock(u);
	/* Lowered by the service thread since this synchronisation began:
	 * check now, the diffs about to come change the contents. */
	if (u->check && lrc_hash(u->mech->contents(u), u->size) != u->hash)
		stale_write(u);
	u->check = 0;
	if (u->prot != DSM_NONE) {
		u->mech->protect(u, DSM_NONE);
		u->prot = DSM_NONE;
	}
	unit_unlock(u);
}

struct parsed {
	uint32_t p, idx, n;
	uint32_t *vt;         /* decoded */
	const uint8_t *units; /* raw little-endian words in the message */
};

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* Read what lrc_put_intervals wrote for a rank that told the sender it
 * knows `known`, check all of it, then take in the intervals we did not
 * know: records, notices, invalidations. The sender's vector time goes to
 * out_vt (may be NULL). Ends the message (r_end). */
void lrc_incorporate(struct rbuf *r, const struct msg *m, const char *what,
                     const uint32_t *known, uint32_t *out_vt)
{
	size_t vtb = (size_t)dsm.nprocs * 4;
	uint32_t *vt = malloc(vtb), *base = malloc(vtb), *next = malloc(vtb);
	uint32_t count, *vts;
	struct parsed *iv;

	if (!vt || !base || !next)
		dsm_die("out of memory");
	memcpy(base, known, vtb);
	r_vt_delta(r, vt, base);
	count = r_count(r, 16);
	iv = calloc(count ? count : 1, sizeof(*iv));
	vts = malloc((count ? count : 1) * vtb);
	if (!iv || !vts)
		dsm_die("out of memory");
	memcpy(next, dsm.vt, vtb);
	for (uint32_t i = 0; i < count && !r->err; i++) {
		iv[i].p = r_rank(r);
		iv[i].idx = r_u32(r);
		iv[i].vt = vts + (size_t)i * dsm.nprocs;
		r_vt_delta(r, iv[i].vt, base);
		iv[i].n = r_count(r, 4);
		iv[i].units = r_bytes(r, (size_t)iv[i].n * 4);
		if (r->err)
			break;
		for (uint32_t k = 0; k < iv[i].n; k++)
			if (le32(iv[i].units + 4 * k) >= dsm.nunits)
				r_fail(r, "notice for an unknown unit (were "
				          "allocations "
				          "made in the same order on every "
				          "rank?)");
		if (iv[i].vt[iv[i].p] != iv[i].idx || iv[i].idx == 0)
			r_fail(r,
			       "interval whose vector time does not name it");
		else if (iv[i].p == (uint32_t)dsm.rank &&
		         iv[i].idx > dsm.vt[dsm.rank])
			r_fail(r,
			       "an interval of this rank that it never made");
		else if (iv[i].idx > next[iv[i].p] + 1)
			r_fail(r, "gap in a rank's intervals");
		else if (iv[i].idx == next[iv[i].p] + 1)
			next[iv[i].p] = iv[i].idx;
	}
	for (int p = 0; p < dsm.nprocs && !r->err; p++)
		if (vt[p] > next[p])
			r_fail(r,
			       "vector time names intervals it does not carry");
	r_end(r, m, what);
	for (uint32_t i = 0; i < count; i++) {
		struct parsed *q = &iv[i];
		if (q->idx <= dsm.vt[q->p])
			continue; /* known already */
		struct interval *rec;
		uint32_t *units = malloc((q->n ? q->n : 1) * 4);
		if (!units)
			dsm_die("out of memory");
		for (uint32_t k = 0; k < q->n; k++)
			units[k] = le32(q->units + 4 * k);
		rec = add_interval(q->p, q->vt, q->n, units);
		free(units);
		dsm.vt[q->p] = q->idx;
		for (uint32_t k = 0; k < rec->n; k++) {
			struct unit *u = dsm_unit(rec->units[k]);
			add_notice(u, q->p, q->idx, 0);
			invalidate(u);
			STAT(notices, 1);
		}
	}
	if (out_vt)
		memcpy(out_vt, vt, vtb);
	free(iv);
	free(vts);
	free(vt);
	free(base);
	free(next);
}
