/* Garbage collection of consistency information, at a barrier, as
 * TreadMarks does (Keleher et al., 3.6): validate, then discard. Without it
 * every interval, write notice and diff is kept for the whole run, and each
 * miss scans all of a unit's notices.
 *
 * A rank whose intervals, notices and diffs exceed DSM_GC_BYTES asks for a
 * collection in its barrier arrival; the departures order it everywhere.
 * After that barrier every rank knows every interval, hence the same notices
 * for every unit, and:
 *  1. each rank validates the units it wrote since the last collection
 *     (fetches and applies every diff it lacks);
 *  2. a barrier round: nobody will ask for an old diff again;
 *  3. each rank drops every interval, notice and diff. A unit written since
 *     the last collection keeps a copy at its holder, the lowest rank that
 *     wrote it (valid after step 1); a rank whose copy is stale marks it
 *     discarded, and its next miss on it fetches that copy first, then the
 *     diffs of later notices. Copysets in TreadMarks; one holder here.
 * A rank may leave step 3 and miss before the holder has made its copy: a
 * copy request names the collection it follows, and the holder keeps it
 * until it has finished that collection.
 * Runs in the application thread, at a barrier, never in a trap handler. */
#include <stdlib.h>
#include <string.h>

#include "dsm/wire.h"

/* Copy requests that came before we finished their collection (dsm.lock). */
static struct deferred {
	int src;
	uint32_t uid;
} * deferred;
static uint32_t ndeferred, deferred_cap;

void gc_init(void)
{
	const char *s = getenv("DSM_GC_BYTES");
	char *end;
	double v;

	dsm.gc_bytes = (uint64_t)64 << 20;
	if (!s || !*s)
		return;
	if (!strcmp(s, "off")) {
		dsm.gc_bytes = UINT64_MAX;
		return;
	}
	v = strtod(s, &end);
	if (*end == 'K' || *end == 'k')
		v *= 1024, end++;
	else if (*end == 'M' || *end == 'm')
		v *= 1 << 20, end++;
	else if (*end == 'G' || *end == 'g')
		v *= 1 << 30, end++;
	if (*end || v < 0 || v > 1e15)
		dsm_die("DSM_GC_BYTES=%s is not a size (like 64M) or off", s);
	dsm.gc_bytes = (uint64_t)v;
}

int gc_wanted(void)
{
	return dsm.cons_bytes > dsm.gc_bytes;
}

static int wrote_it(const struct unit *u)
{
	for (uint32_t i = 0; i < u->nnt; i++)
		if (u->nt[i].proc == (uint32_t)dsm.rank)
			return 1;
	return 0;
}

static int missing_diffs(const struct unit *u)
{
	for (uint32_t i = 0; i < u->nnt; i++)
		if (!u->nt[i].applied)
			return 1;
	return 0;
}

/* Step 1: our copy of every unit we wrote becomes complete. */
static void validate(void)
{
	for (uint32_t id = 0; id < dsm.nunits; id++) {
		struct unit *u = dsm_unit(id);
		int need;
		pthread_mutex_lock(&dsm.lock);
		need = wrote_it(u) && missing_diffs(u);
		pthread_mutex_unlock(&dsm.lock);
		if (!need)
			continue;
		fetch_unit(u);
		unit_lock(u);
		u->prot = DSM_READ;
		u->mech->protect(u, DSM_READ);
		unit_unlock(u);
	}
}

/* Our own changes not yet in a diff: nobody will ask for that diff now
 * (the others validated from it, or take the holder's copy); the next
 * write starts a new twin. */
static void end_twin(struct unit *u)
{
	unit_lock(u);
	if (u->twinned) {
		if (u->prot == DSM_RW) {
			u->mech->protect(u, DSM_READ);
			u->prot = DSM_READ;
		}
		u->mech->twin_drop(u);
		u->twinned = 0;
		u->own_pending = 0;
	}
	unit_unlock(u);
}

static void keep_copy(struct unit *u)
{
	if (!u->snap) {
		u->snap = malloc(u->size);
		if (!u->snap)
			dsm_die("out of memory for the copy of unit %u", u->id);
		dsm.snap_bytes += u->size;
	}
	memcpy(u->snap, u->mech->contents(u), u->size);
}

static void drop_copy(struct unit *u)
{
	if (!u->snap)
		return;
	free(u->snap);
	u->snap = NULL;
	dsm.snap_bytes -= u->size;
}

/* Step 3 for one unit (dsm.lock held). Units nobody wrote since the last
 * collection stay as they are, discarded or not. */
static void discard(struct unit *u)
{
	uint32_t holder = UINT32_MAX;
	int stale = missing_diffs(u);

	if (!u->nnt)
		return;
	for (uint32_t i = 0; i < u->nnt; i++) {
		if (u->nt[i].proc < holder)
			holder = u->nt[i].proc;
		free(u->nt[i].diff);
	}
	free(u->nt);
	u->nt = NULL;
	u->nnt = u->cap = 0;
	end_twin(u);
	if (holder == (uint32_t)dsm.rank)
		keep_copy(u);
	else
		drop_copy(u);
	u->discarded = stale;
	u->holder = (int)holder;
}

static void drop_intervals(void)
{
	for (int p = 0; p < dsm.nprocs; p++) {
		struct proc *pr = &dsm.procs[p];
		for (uint32_t i = 0; i < pr->n; i++) {
			free(pr->iv[i].vt);
			free(pr->iv[i].units);
		}
		free(pr->iv);
		pr->iv = NULL;
		pr->n = pr->cap = 0;
		pr->base = dsm.vt[p];
	}
}

/* dsm.lock held; the reply is sent after it is released. */
static void put_copy(struct wbuf *w, int src, uint32_t uid)
{
	struct unit *u = dsm_unit(uid);

	if (!u->snap)
		dsm_die("rank %d asked for the copy of unit %u, which this "
		        "rank does not hold",
		        src, uid);
	w_init(w, T_COPY_REP);
	w_u32(w, uid);
	w_u32(w, (uint32_t)u->size);
	w_bytes(w, u->snap, u->size);
}

/* Service thread: a rank that discarded a unit wants our copy of it. */
void gc_on_copy_request(struct rbuf *r, const struct msg *m)
{
	uint32_t uid = r_unit(r), gen = r_u32(r);
	struct wbuf w;

	r_end(r, m, "copy request");
	pthread_mutex_lock(&dsm.lock);
	if (gen > dsm.gc_gen + 1)
		dsm_die("rank %d is at collection %u, this rank at %u", m->src,
		        gen, dsm.gc_gen);
	if (gen > dsm.gc_gen) {
		if (ndeferred == deferred_cap) {
			deferred_cap = deferred_cap ? 2 * deferred_cap : 16;
			deferred = realloc(deferred,
			                   deferred_cap * sizeof(*deferred));
			if (!deferred)
				dsm_die("out of memory");
		}
		deferred[ndeferred].src = m->src;
		deferred[ndeferred++].uid = uid;
		pthread_mutex_unlock(&dsm.lock);
		return;
	}
	put_copy(&w, m->src, uid);
	pthread_mutex_unlock(&dsm.lock);
	net_send(m->src, dsm.rep, T_COPY_REP, &w, "unit copy");
	w_free(&w);
}

/* The end of a collection (dsm.lock held, released on return): answer the
 * copy requests that waited for it. */
static void answer_deferred(void)
{
	uint32_t n = ndeferred;
	struct deferred *d = deferred;
	struct wbuf *w = malloc((n ? n : 1) * sizeof(*w));

	if (!w)
		dsm_die("out of memory");
	for (uint32_t i = 0; i < n; i++)
		put_copy(&w[i], d[i].src, d[i].uid);
	deferred = NULL;
	ndeferred = deferred_cap = 0;
	pthread_mutex_unlock(&dsm.lock);
	for (uint32_t i = 0; i < n; i++) {
		net_send(d[i].src, dsm.rep, T_COPY_REP, &w[i], "unit copy");
		w_free(&w[i]);
	}
	free(w);
	free(d);
}

void gc_collect(void)
{
	validate();
	pthread_mutex_lock(&dsm.lock);
	barrier_round(0); /* unlocks */
	pthread_mutex_lock(&dsm.lock);
	for (uint32_t id = 0; id < dsm.nunits; id++)
		discard(dsm_unit(id));
	drop_intervals();
	STAT(gc_runs, 1);
	STAT(gc_freed, dsm.cons_bytes);
	dsm.cons_bytes = 0;
	dsm.gc_gen++;
	answer_deferred(); /* unlocks */
}
