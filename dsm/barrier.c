/* Barriers on a tree of ranks (fanout DSM_BARRIER_FANOUT, default 2; a
 * fanout of nprocs - 1 is TreadMarks' barrier managed by rank 0). A rank
 * waits for its children's arrivals and takes in the intervals they carry,
 * then arrives at its parent with every interval the parent may lack (all
 * since the last barrier); departures come down the tree, each with the
 * intervals the child lacks (its arrival said what it knows). Everybody
 * leaves knowing every interval. The service thread only keeps arrivals;
 * the application thread takes them in (invalidation belongs to
 * synchronisation points). Arrivals also carry each rank's allocation count
 * and hash, so that ranks that allocated differently are told so instead of
 * corrupting memory, and whether the rank wants garbage collected (gc.c),
 * which the departures then order everywhere. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsm/wire.h"

static int parent_of(int r)
{
	return (r - 1) / dsm.fanout;
}

static int first_child(int r)
{
	return r * dsm.fanout + 1;
}

static int nchildren(int r)
{
	int c = first_child(r);

	if (c >= dsm.nprocs)
		return 0;
	return dsm.nprocs - c < dsm.fanout ? dsm.nprocs - c : dsm.fanout;
}

void barrier_init(void)
{
	double f = 2;
	const char *s = getenv("DSM_BARRIER_FANOUT");
	char *end;

	if (s && *s) {
		f = strtod(s, &end);
		if (*end || f < 1 || f > 1e6)
			dsm_die("DSM_BARRIER_FANOUT=%s is not a number of at "
			        "least 1",
			        s);
	}
	dsm.fanout = (int)f;
	dsm.bar_vt = calloc((size_t)dsm.nprocs, sizeof(*dsm.bar_vt));
	dsm.child_vt = calloc((size_t)dsm.fanout * (size_t)dsm.nprocs,
	                      sizeof(*dsm.child_vt));
	dsm.arrivals = calloc((size_t)dsm.nprocs, sizeof(*dsm.arrivals));
	if (!dsm.bar_vt || !dsm.child_vt || !dsm.arrivals)
		dsm_die("out of memory at start");
}

/* Service thread: keep one child's arrival. */
void barrier_on_arrival(struct msg *m)
{
	if (m->src == 0 || parent_of(m->src) != dsm.rank)
		dsm_die("barrier arrival from rank %d, which is not a child of "
		        "this rank in the barrier tree",
		        m->src);
	pthread_mutex_lock(&dsm.lock);
	if (dsm.arrivals[m->src].buf)
		dsm_die("rank %d arrived twice at barrier %u", m->src,
		        dsm.epoch);
	dsm.arrivals[m->src] = *m;
	dsm.narrivals++;
	pthread_cond_signal(&dsm.arrived);
	pthread_mutex_unlock(&dsm.lock);
}

/* dsm.lock held. Wait for every child, checking that those not yet here
 * are alive (a child waits for its own children). */
static void wait_children(void)
{
	struct alive_wait aw = { 0 };
	char what[64];
	int want = nchildren(dsm.rank);

	snprintf(what, sizeof(what), "the arrival at barrier %u", dsm.epoch);
	while (dsm.narrivals < want) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 20000000; /* 20 ms between liveness checks */
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		if (pthread_cond_timedwait(&dsm.arrived, &dsm.lock, &until) !=
		    ETIMEDOUT)
			continue;
		for (int c = first_child(dsm.rank);
		     c < first_child(dsm.rank) + want; c++)
			if (!dsm.arrivals[c].buf) {
				pthread_mutex_unlock(&dsm.lock);
				alive_check(c, what, &aw);
				pthread_mutex_lock(&dsm.lock);
			}
	}
}

/* dsm.lock held: take in every child's arrival; returns the OR of their
 * garbage-collection wishes. */
static int take_arrivals(void)
{
	int gc = 0;

	for (int i = 0; i < nchildren(dsm.rank); i++) {
		int c = first_child(dsm.rank) + i;
		struct msg *m = &dsm.arrivals[c];
		struct rbuf r;
		uint32_t round, epoch, nalloc, flags;
		uint64_t hash;
		r_init(&r, m);
		round = r_u32(&r);
		epoch = r_u32(&r);
		nalloc = r_u32(&r);
		hash = r_u64(&r);
		flags = r_u32(&r);
		if (!r.err && (epoch != dsm.epoch || round != dsm.round))
			dsm_die("rank %d is at barrier %u, rank %d at barrier "
			        "%u: ranks must call dsm_barrier the same "
			        "number of times",
			        c, epoch, dsm.rank, dsm.epoch);
		if (!r.err && (nalloc != dsm.nalloc || hash != dsm.allochash))
			dsm_die("rank %d made %u allocations, rank %d %u%s: "
			        "dsm_malloc and dsm_region_alloc are "
			        "collective (same sizes, same order)",
			        c, nalloc, dsm.rank, dsm.nalloc,
			        nalloc == dsm.nalloc
			                ? " of other sizes or kinds"
			                : "");
		gc |= flags & 1;
		lrc_incorporate(&r, m, "barrier arrival", dsm.bar_vt,
		                dsm.child_vt + (size_t)i * dsm.nprocs);
		free(m->buf);
		m->buf = NULL;
	}
	dsm.narrivals = 0;
	return gc;
}

/* dsm.lock held on entry, released on return: arrive at the parent, wait
 * for the departure and take it in. Returns the departure's order to
 * collect garbage. */
static int arrive(int gc)
{
	int parent = parent_of(dsm.rank);
	struct wbuf w;
	struct msg m;
	struct rbuf r;
	uint32_t flags;

	w_init(&w, T_ARRIVE);
	w_u32(&w, dsm.round);
	w_u32(&w, dsm.epoch);
	w_u32(&w, dsm.nalloc);
	w_u64(&w, dsm.allochash);
	w_u32(&w, (uint32_t)gc);
	lrc_put_intervals(&w, dsm.bar_vt);
	pthread_mutex_unlock(&dsm.lock);
	STAT(barrier_messages, 1);
	STAT(barrier_bytes, w.n);
	net_send(parent, dsm.req, T_ARRIVE, &w, "barrier arrival");
	w_free(&w);
	net_recv(dsm.rep, parent, T_DEPART, &m, "barrier departure");
	r_init(&r, &m);
	if (r_u32(&r) != dsm.round)
		r_fail(&r, "departure from another barrier");
	flags = r_u32(&r);
	pthread_mutex_lock(&dsm.lock);
	/* The parent wrote for what our arrival said we know. */
	lrc_incorporate(&r, &m, "barrier departure", dsm.vt, NULL);
	free(m.buf);
	return flags & 1;
}

/* dsm.lock held on entry, released on return. */
static void depart(int gc)
{
	int n = nchildren(dsm.rank);
	struct wbuf out[n > 0 ? n : 1];

	for (int i = 0; i < n; i++) {
		w_init(&out[i], T_DEPART);
		w_u32(&out[i], dsm.round);
		w_u32(&out[i], (uint32_t)gc);
		lrc_put_intervals(&out[i],
		                  dsm.child_vt + (size_t)i * dsm.nprocs);
	}
	memcpy(dsm.bar_vt, dsm.vt, (size_t)dsm.nprocs * sizeof(*dsm.vt));
	pthread_mutex_unlock(&dsm.lock);
	for (int i = 0; i < n; i++) {
		STAT(barrier_messages, 1);
		STAT(barrier_bytes, out[i].n);
		net_send(first_child(dsm.rank) + i, dsm.rep, T_DEPART, &out[i],
		         "barrier departure");
		w_free(&out[i]);
	}
}

/* One round of the tree with dsm.lock held (released on return); gc: this
 * rank wants garbage collected. Returns whether every rank now collects. */
int barrier_round(int gc)
{
	dsm.round++;
	if (dsm.nprocs == 1) {
		pthread_mutex_unlock(&dsm.lock);
		return gc;
	}
	wait_children();
	gc |= take_arrivals();
	if (dsm.rank != 0)
		gc = arrive(gc);
	depart(gc);
	return gc;
}

/* DSM_INJECT (tests): exit-at-barrier:N:R, rank R dies entering barrier N;
 * stop-at-barrier:N:R, it stops (SIGSTOP: no thread answers);
 * slow-at-barrier:N:R:S, it computes S seconds longer before arriving. */
static void maybe_inject(void)
{
	const char *x;
	unsigned n, r, s;

	x = dsm_inject("exit-at-barrier");
	if (x && sscanf(x, "exit-at-barrier:%u:%u", &n, &r) == 2 &&
	    n == dsm.epoch && r == (unsigned)dsm.rank) {
		fprintf(stderr,
		        "dsm: rank %d: exiting at barrier %u (DSM_INJECT)\n",
		        dsm.rank, n);
		_exit(7);
	}
	x = dsm_inject("stop-at-barrier");
	if (x && sscanf(x, "stop-at-barrier:%u:%u", &n, &r) == 2 &&
	    n == dsm.epoch && r == (unsigned)dsm.rank) {
		fprintf(stderr,
		        "dsm: rank %d: stopping at barrier %u (DSM_INJECT)\n",
		        dsm.rank, n);
		raise(SIGSTOP);
	}
	x = dsm_inject("slow-at-barrier");
	if (x && sscanf(x, "slow-at-barrier:%u:%u:%u", &n, &r, &s) == 3 &&
	    n == dsm.epoch && r == (unsigned)dsm.rank) {
		fprintf(stderr,
		        "dsm: rank %d: computing %u s more before barrier %u "
		        "(DSM_INJECT)\n",
		        dsm.rank, s, n);
		sleep(s);
	}
}

int dsm_barrier(void)
{
	int gc;

	STAT(barriers, 1);
	dsm.epoch++;
	maybe_inject();
	atomic_store(&dsm.doing, DOING_BARRIER);
	pthread_mutex_lock(&dsm.lock);
	lrc_check_contract();
	lrc_close_interval();
	gc = barrier_round(gc_wanted());
	if (gc)
		gc_collect();
	atomic_store(&dsm.doing, DOING_COMPUTE);
	return 0;
}
