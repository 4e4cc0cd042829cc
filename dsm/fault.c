/* Traps on shared units, for both mechanisms: write traps (twin, notice) and
 * access misses (fetch the missing diffs, apply them in vector-time order).
 *
 * dsm_fault runs inside a signal handler in the application thread (our
 * SIGSEGV handler for pages, rtl's region handler for regions): no malloc,
 * no stdio, no mutex. It takes only unit spin locks, which other threads hold
 * briefly and never while waiting for this thread, and hands a miss to the
 * fetch thread, waiting on a futex. The fetch thread does the MPI and the
 * bookkeeping in normal thread context. */
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dsm/pagediff.h"
#include "dsm/wire.h"

static _Atomic uint32_t req_seq, done_seq, req_unit;
static _Atomic int stopping;

static void futex_wait(_Atomic uint32_t *a, uint32_t v)
{
	syscall(SYS_futex, a, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *a)
{
	syscall(SYS_futex, a, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Signal-safe: hand unit u to the fetch thread and wait until it is done. */
static void miss(struct unit *u)
{
	uint32_t s = atomic_load(&req_seq) + 1;
	int64_t t0 = now_ns();
	int doing = atomic_exchange(&dsm.doing, DOING_MISS);

	atomic_store(&req_unit, u->id);
	atomic_store(&req_seq, s);
	futex_wake(&req_seq);
	while (atomic_load(&done_seq) != s)
		futex_wait(&done_seq, s - 1);
	atomic_store(&dsm.doing, doing);
	STAT(miss_ns, (uint64_t)(now_ns() - t0));
}

static void stale_write_sig(void)
{
	static const char m[] =
	        "dsm: a region was written through an unregistered "
	        "pointer after the DSM write-protected it to serve "
	        "another rank; those writes would be lost "
	        "(docs/dsm.md, \"Rules for programs\")\n";
	ssize_t rc = write(2, m, sizeof(m) - 1);
	(void)rc;
	MPI_Abort(MPI_COMM_WORLD, 3);
	_exit(3);
}

void dsm_fault(struct unit *u, int write)
{
	STAT(traps, 1);
	dsm_access(u, write);
}

void dsm_access(struct unit *u, int write)
{
	int prot;

	unit_lock(u);
	prot = u->prot;
	unit_unlock(u);
	if (prot == DSM_NONE) {
		if (write)
			STAT(write_misses, 1);
		else
			STAT(read_misses, 1);
		miss(u);
		if (!write) {
			unit_lock(u);
			u->prot = DSM_READ;
			u->mech->protect(u, DSM_READ);
			unit_unlock(u);
			return;
		}
	} else if (!write) {
		return; /* already readable: a race with a raise; retry */
	}
	unit_lock(u);
	if (u->check) {
		/* The region was lowered by the service thread; it must hold
		 * exactly what was sent (rtl twinned it before calling us). */
		if (lrc_hash(u->mech->contents(u), u->size) != u->hash)
			stale_write_sig();
		u->check = 0;
	}
	if (!u->twinned) {
		u->mech->twin_take(u);
		u->twinned = 1;
		STAT(twin_bytes, u->size);
		if (prot != DSM_NONE)
			STAT(write_traps, 1);
		if (!u->in_dirty) {
			u->in_dirty = 1;
			/* sized at allocation: no malloc here */
			dsm.dirty[dsm.ndirty++] = u->id;
		}
	}
	u->prot = DSM_RW;
	u->mech->protect(u, DSM_RW);
	unit_unlock(u);
}

/* ---- the fetch thread ---- */

static uint64_t vt_sum(const uint32_t *vt)
{
	uint64_t s = 0;

	for (int i = 0; i < dsm.nprocs; i++)
		s += vt[i];
	return s;
}

static const uint32_t *vt_of(uint32_t proc, uint32_t idx)
{
	return lrc_interval(proc, idx)->vt;
}

/* a happened before or is b */
static int vt_le(const uint32_t *a, const uint32_t *b)
{
	for (int i = 0; i < dsm.nprocs; i++)
		if (a[i] > b[i])
			return 0;
	return 1;
}

struct want {
	uint32_t proc, idx;
	int target; /* the rank asked for it */
};

/* Which ranks to ask (TreadMarks 3.5): for each writer its latest missing
 * interval; ask only writers whose latest is not dominated by another's, each
 * for every missing diff its latest interval dominates (it has them all). */
static int plan(struct unit *u, struct want **out, int *targets)
{
	uint32_t *last = calloc((size_t)dsm.nprocs, sizeof(*last));
	struct want *w = malloc((u->nnt ? u->nnt : 1) * sizeof(*w));
	int n = 0;

	if (!last || !w)
		dsm_die("out of memory");
	for (uint32_t i = 0; i < u->nnt; i++) {
		struct notice *nt = &u->nt[i];
		if (nt->diff || nt->applied)
			continue;
		if (nt->idx > last[nt->proc])
			last[nt->proc] = nt->idx;
		w[n].proc = nt->proc;
		w[n].idx = nt->idx;
		w[n].target = -1;
		n++;
	}
	for (int q = 0; q < dsm.nprocs; q++) {
		targets[q] = 0;
		if (!last[q])
			continue;
		targets[q] = 1;
		/* Two intervals never have the same vector time. */
		for (int o = 0; o < dsm.nprocs; o++)
			if (o != q && last[o] &&
			    vt_le(vt_of((uint32_t)q, last[q]),
			          vt_of((uint32_t)o, last[o])))
				targets[q] = 0;
	}
	for (int i = 0; i < n; i++)
		for (int q = 0; q < dsm.nprocs && w[i].target < 0; q++)
			if (targets[q] && vt_le(vt_of(w[i].proc, w[i].idx),
			                        vt_of((uint32_t)q, last[q])))
				w[i].target = q;
	for (int i = 0; i < n; i++)
		if (w[i].target < 0)
			dsm_die("protocol error: no rank to ask for a diff of "
			        "unit %u",
			        u->id);
	free(last);
	*out = w;
	return n;
}

static int by_vt(const void *a, const void *b)
{
	const struct notice *x = *(struct notice *const *)a,
	                    *y = *(struct notice *const *)b;
	uint64_t sx = vt_sum(vt_of(x->proc, x->idx)),
	         sy = vt_sum(vt_of(y->proc, y->idx));

	if (sx != sy)
		return sx < sy ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Read one diff reply from q for the wants assigned to it, in order. */
static void take_reply(struct unit *u, struct want *w, int n, struct msg *m)
{
	struct rbuf r;
	uint32_t count, k = 0;

	r_init(&r, m);
	if (r_u32(&r) != u->id)
		r_fail(&r, "reply for another unit");
	count = r_count(&r, 12);
	for (int i = 0; i < n && !r.err; i++) {
		struct notice *nt;
		struct diff *d;
		const uint8_t *b;
		uint32_t len;
		if (w[i].target != m->src)
			continue;
		if (k++ >= count) {
			r_fail(&r, "fewer diffs than asked for");
			break;
		}
		if (r_u32(&r) != w[i].proc || r_u32(&r) != w[i].idx) {
			r_fail(&r, "a diff that was not asked for");
			break;
		}
		len = r_u32(&r);
		b = r_bytes(&r, len);
		if (!b)
			break;
		d = malloc(sizeof(*d) + len);
		if (!d)
			dsm_die("out of memory for a diff");
		d->len = len;
		memcpy(d->bytes, b, len);
		nt = lrc_notice(u, w[i].proc, w[i].idx);
		if (nt->diff)
			lrc_account(-(int64_t)(sizeof(*d) + nt->diff->len));
		free(nt->diff);
		nt->diff = d;
		lrc_account((int64_t)(sizeof(*d) + len));
	}
	if (!r.err && k != count)
		r_fail(&r, "more diffs than asked for");
	r_end(&r, m, "diff reply");
}

/* A discarded unit (gc.c): the copy of the last collection replaces ours
 * (dsm.lock held). Made into a diff against what we hold, so that both
 * mechanisms install it with their own checked apply. */
static void install_copy(struct unit *u, const struct msg *m)
{
	struct rbuf r;
	const uint8_t *copy;
	ssize_t need;
	uint8_t *d;

	r_init(&r, m);
	if (r_u32(&r) != u->id)
		r_fail(&r, "copy of another unit");
	if (r_u32(&r) != u->size)
		r_fail(&r, "copy of another size");
	copy = r_bytes(&r, u->size);
	r_end(&r, m, "unit copy");
	need = pagediff_encode(copy, u->mech->contents(u), u->size, NULL, 0);
	if (need < 0 || !(d = malloc((size_t)need)))
		dsm_die("cannot encode the copy of unit %u", u->id);
	if (pagediff_encode(copy, u->mech->contents(u), u->size, d,
	                    (size_t)need) != need ||
	    u->mech->apply(u, d, (size_t)need) < 0)
		dsm_die("cannot install the copy of unit %u", u->id);
	free(d);
	u->discarded = 0;
}

static void fetch(struct unit *u)
{
	struct want *w;
	int *targets = malloc((size_t)dsm.nprocs * sizeof(int)), ntargets = 0,
	    n, holder = -1;
	uint32_t gen = 0;
	struct notice **todo;
	uint32_t ntodo = 0;

	if (!targets)
		dsm_die("out of memory");
	pthread_mutex_lock(&dsm.lock);
	n = plan(u, &w, targets);
	if (u->discarded)
		holder = u->holder;
	gen = dsm.gc_gen;
	pthread_mutex_unlock(&dsm.lock);
	if (holder >= 0) {
		struct wbuf b;
		w_init(&b, T_COPY_REQ);
		w_u32(&b, u->id);
		w_u32(&b, gen); /* the holder must have finished it */
		net_send(holder, dsm.req, T_COPY_REQ, &b, "copy request");
		STAT(diff_requests, 1);
		w_free(&b);
	}
	for (int q = 0; q < dsm.nprocs; q++) {
		struct wbuf b;
		uint32_t cnt = 0;
		if (!targets[q])
			continue;
		for (int i = 0; i < n; i++)
			cnt += w[i].target == q;
		w_init(&b, T_DIFF_REQ);
		w_u32(&b, u->id);
		w_u32(&b, cnt);
		for (int i = 0; i < n; i++)
			if (w[i].target == q) {
				w_u32(&b, w[i].proc);
				w_u32(&b, w[i].idx);
			}
		net_send(q, dsm.req, T_DIFF_REQ, &b, "diff request");
		STAT(diff_requests, 1);
		w_free(&b);
		ntargets++;
	}
	if (holder >= 0) {
		struct msg m;
		net_recv(dsm.rep, holder, T_COPY_REP, &m, "unit copy");
		pthread_mutex_lock(&dsm.lock);
		install_copy(u, &m);
		pthread_mutex_unlock(&dsm.lock);
		free(m.buf);
	}
	for (int k = 0; k < ntargets; k++) {
		struct msg m;
		net_recv(dsm.rep, MPI_ANY_SOURCE, T_DIFF_REP, &m, "diff reply");
		if (!targets[m.src])
			dsm_die("diff reply from rank %d, which was not asked",
			        m.src);
		targets[m.src] = 0;
		pthread_mutex_lock(&dsm.lock);
		take_reply(u, w, n, &m);
		pthread_mutex_unlock(&dsm.lock);
		free(m.buf);
	}
	/* Apply every diff not yet in our copy, in an order that extends
	 * happened-before (a smaller vector time has a smaller sum). */
	pthread_mutex_lock(&dsm.lock);
	todo = malloc((u->nnt ? u->nnt : 1) * sizeof(*todo));
	if (!todo)
		dsm_die("out of memory");
	for (uint32_t i = 0; i < u->nnt; i++)
		if (!u->nt[i].applied)
			todo[ntodo++] = &u->nt[i];
	qsort(todo, ntodo, sizeof(*todo), by_vt);
	for (uint32_t i = 0; i < ntodo; i++) {
		struct notice *nt = todo[i];
		if (!nt->diff)
			dsm_die("protocol error: diff %u:%u of unit %u never "
			        "came",
			        nt->proc, nt->idx, u->id);
		if (u->mech->apply(u, nt->diff->bytes, nt->diff->len) < 0)
			dsm_die("malformed diff (%u bytes) of unit %u, "
			        "interval %u of rank "
			        "%u: rejected, not applied",
			        nt->diff->len, u->id, nt->idx, nt->proc);
		nt->applied = 1;
		STAT(diffs_applied, 1);
		STAT(diff_bytes, nt->diff->len);
	}
	pthread_mutex_unlock(&dsm.lock);
	free(todo);
	free(w);
	free(targets);
}

void fetch_unit(struct unit *u)
{
	fetch(u);
}

void *fetch_main(void *arg)
{
	uint32_t seen = 0;

	(void)arg;
	net_thread_start();
	for (;;) {
		while (atomic_load(&req_seq) == seen && !atomic_load(&stopping))
			futex_wait(&req_seq, seen);
		if (atomic_load(&stopping))
			return NULL;
		seen = atomic_load(&req_seq);
		fetch(dsm_unit(atomic_load(&req_unit)));
		atomic_store(&done_seq, seen);
		futex_wake(&done_seq);
	}
}

void fetch_stop(void)
{
	atomic_store(&stopping, 1);
	atomic_fetch_add(&req_seq, 0);
	futex_wake(&req_seq);
}
