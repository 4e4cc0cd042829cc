/* Barriers as in TreadMarks 3.4: rank 0 manages. Each rank arrives with the
 * intervals the manager may not know; when all are in, the manager takes them
 * in and tells each rank what it has not seen. The service thread only keeps
 * arrivals; the manager's application thread takes them in once it has
 * arrived itself (invalidation belongs to synchronisation points). Arrivals
 * also carry each rank's allocation count and hash, so that ranks that
 * allocated differently are told so instead of corrupting memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire.h"

/* Service thread, rank 0: keep one rank's arrival. */
void barrier_on_arrival(struct msg *m)
{
	if (dsm.rank != 0)
		dsm_die("barrier arrival from rank %d, but this rank does not "
			"manage "
			"barriers",
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

static void missing_ranks(void)
{
	char list[256] = "";
	size_t n = 0;

	for (int p = 1; p < dsm.nprocs && n < sizeof(list) - 12; p++)
		if (!dsm.arrivals[p].buf)
			n += (size_t)snprintf(list + n, sizeof(list) - n, " %d",
					      p);
	dsm_die("barrier %u: rank(s)%s never arrived after %.0f s: dead or "
		"stuck "
		"(DSM_TIMEOUT)",
		dsm.epoch, list, dsm.timeout);
}

static void wait_arrivals(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)dsm.timeout;
	while (dsm.narrivals < dsm.nprocs - 1)
		if (pthread_cond_timedwait(&dsm.arrived, &dsm.lock, &until) ==
			    ETIMEDOUT &&
		    dsm.narrivals < dsm.nprocs - 1)
			missing_ranks();
}

static void manager(void)
{
	size_t vtb = (size_t)dsm.nprocs * 4;
	uint32_t *their = malloc(vtb * (size_t)dsm.nprocs);
	struct wbuf *out = calloc((size_t)dsm.nprocs, sizeof(*out));

	if (!their || !out)
		dsm_die("out of memory");
	wait_arrivals();
	for (int p = 1; p < dsm.nprocs; p++) {
		struct msg *m = &dsm.arrivals[p];
		struct rbuf r;
		uint32_t epoch, nalloc;
		uint64_t hash;
		r_init(&r, m);
		epoch = r_u32(&r);
		nalloc = r_u32(&r);
		hash = r_u64(&r);
		if (!r.err && epoch != dsm.epoch)
			dsm_die("rank %d is at barrier %u, rank 0 at barrier "
				"%u: ranks "
				"must call dsm_barrier the same number of "
				"times",
				p, epoch, dsm.epoch);
		if (!r.err && (nalloc != dsm.nalloc || hash != dsm.allochash))
			dsm_die("rank %d made %u allocations, rank 0 %u%s: "
				"dsm_malloc and "
				"dsm_region_alloc are collective (same sizes, "
				"same order)",
				p, nalloc, dsm.nalloc,
				nalloc == dsm.nalloc
					? " of other sizes or kinds"
					: "");
		lrc_incorporate(&r, m, "barrier arrival",
				their + (size_t)p * dsm.nprocs);
	}
	for (int p = 1; p < dsm.nprocs; p++) {
		w_init(&out[p], T_DEPART);
		w_u32(&out[p], dsm.epoch);
		lrc_put_intervals(&out[p], their + (size_t)p * dsm.nprocs);
		free(dsm.arrivals[p].buf);
		dsm.arrivals[p].buf = NULL;
	}
	dsm.narrivals = 0;
	pthread_mutex_unlock(&dsm.lock);
	for (int p = 1; p < dsm.nprocs; p++) {
		net_send(p, dsm.rep, T_DEPART, &out[p], "barrier departure");
		w_free(&out[p]);
	}
	free(out);
	free(their);
}

static void client(void)
{
	struct wbuf w;
	struct msg m;
	struct rbuf r;

	w_init(&w, T_ARRIVE);
	w_u32(&w, dsm.epoch);
	w_u32(&w, dsm.nalloc);
	w_u64(&w, dsm.allochash);
	lrc_put_intervals(&w, dsm.mgr_vt);
	pthread_mutex_unlock(&dsm.lock);
	net_send(0, dsm.req, T_ARRIVE, &w, "barrier arrival");
	w_free(&w);
	net_recv(dsm.rep, 0, T_DEPART, &m, "barrier departure");
	r_init(&r, &m);
	if (r_u32(&r) != dsm.epoch)
		r_fail(&r, "departure from another barrier");
	pthread_mutex_lock(&dsm.lock);
	lrc_incorporate(&r, &m, "barrier departure", dsm.mgr_vt);
	pthread_mutex_unlock(&dsm.lock);
	free(m.buf);
}

/* DSM_INJECT=exit-at-barrier:N:R or hang-at-barrier:N:R: rank R dies, or
 * stops answering, entering barrier N (tests). */
static void maybe_die(void)
{
	unsigned n, r;

	if (!dsm.inject)
		return;
	if (sscanf(dsm.inject, "exit-at-barrier:%u:%u", &n, &r) == 2 &&
	    n == dsm.epoch && r == (unsigned)dsm.rank) {
		fprintf(stderr,
			"dsm: rank %d: exiting at barrier %u (DSM_INJECT)\n",
			dsm.rank, n);
		_exit(7);
	}
	if (sscanf(dsm.inject, "hang-at-barrier:%u:%u", &n, &r) == 2 &&
	    n == dsm.epoch && r == (unsigned)dsm.rank) {
		fprintf(stderr,
			"dsm: rank %d: hanging at barrier %u (DSM_INJECT)\n",
			dsm.rank, n);
		for (;;)
			pause();
	}
}

int dsm_barrier(void)
{
	STAT(barriers, 1);
	pthread_mutex_lock(&dsm.lock);
	dsm.epoch++;
	maybe_die();
	lrc_check_contract();
	lrc_close_interval();
	if (dsm.nprocs == 1) {
		pthread_mutex_unlock(&dsm.lock);
		return 0;
	}
	if (dsm.rank == 0)
		manager(); /* unlocks */
	else
		client(); /* unlocks */
	return 0;
}
