/* Telling a rank that stopped from one that computes. A thread that waits
 * for a peer pings it every heartbeat period (DSM_TIMEOUT / 5, between
 * 0.05 and 2 s) once it has heard nothing from it for that long; the peer's
 * service thread answers with what its application thread is doing. Only a
 * peer silent for DSM_TIMEOUT while being pinged ends the run, named as
 * stopped; a peer that answers is waited for as long as it computes (one
 * line says so after DSM_TIMEOUT). Any message from a peer counts as a
 * heartbeat. Called by waiting threads and the service thread, never from a
 * signal handler. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dsm/wire.h"

static _Atomic int64_t *heard_ns;  /* [rank]: last message from it */
static _Atomic int64_t *pinged_ns; /* [rank]: last ping we sent it */
static _Atomic int *peer_doing;    /* [rank]: its last answer */
static double period;

static const char *const doing_name[] = {
	[DOING_COMPUTE] = "computing",
	[DOING_BARRIER] = "waiting in a barrier",
	[DOING_LOCK] = "waiting for a lock",
	[DOING_MISS] = "waiting for a diff",
	[DOING_FINISH] = "finishing",
};

static int64_t now_ns(void)
{
	return (int64_t)(net_now() * 1e9);
}

void alive_init(void)
{
	size_t n = (size_t)dsm.nprocs;

	heard_ns = calloc(n, sizeof(*heard_ns));
	pinged_ns = calloc(n, sizeof(*pinged_ns));
	peer_doing = calloc(n, sizeof(*peer_doing));
	if (!heard_ns || !pinged_ns || !peer_doing)
		dsm_die("out of memory at start");
	for (size_t r = 0; r < n; r++)
		heard_ns[r] = now_ns();
	period = dsm.timeout / 5;
	if (period < 0.05)
		period = 0.05;
	if (period > 2)
		period = 2;
}

void alive_heard(int rank)
{
	if (rank >= 0 && rank < dsm.nprocs)
		atomic_store_explicit(&heard_ns[rank], now_ns(),
		                      memory_order_relaxed);
}

/* Service thread: a ping from m->src, or the answer to one of ours. */
void alive_on_ping(struct rbuf *r, const struct msg *m)
{
	struct wbuf w;

	r_end(r, m, "ping");
	w_init(&w, T_PONG);
	w_u32(&w, (uint32_t)atomic_load(&dsm.doing));
	net_send(m->src, dsm.req, T_PONG, &w, "pong");
	w_free(&w);
}

void alive_on_pong(struct rbuf *r, const struct msg *m)
{
	uint32_t doing = r_u32(r);

	if (!r->err && doing >= sizeof(doing_name) / sizeof(doing_name[0]))
		r_fail(r, "unknown state");
	r_end(r, m, "pong");
	atomic_store(&peer_doing[m->src], (int)doing);
}

static void ping(int rank, int64_t now)
{
	struct wbuf w;
	int64_t last = atomic_load(&pinged_ns[rank]);

	if (now - last < (int64_t)(period * 1e9) ||
	    !atomic_compare_exchange_strong(&pinged_ns[rank], &last, now))
		return; /* another thread pinged it just now */
	w_init(&w, T_PING);
	net_send(rank, dsm.req, T_PING, &w, "ping");
	w_free(&w);
}

/* One peer: ping it if quiet; end the run if silent past DSM_TIMEOUT.
 * Silence counts from the later of its last message and the start of this
 * wait: a peer we had no reason to hear from while we computed (it pinged
 * somebody else) is not dead for that. */
static void check_one(int rank, const char *what, int64_t since, int64_t now)
{
	int64_t heard =
	        atomic_load_explicit(&heard_ns[rank], memory_order_relaxed);
	int64_t quiet = now - (heard > since ? heard : since);

	if ((double)quiet < period * 1e9)
		return;
	if ((double)quiet > dsm.timeout * 1e9)
		dsm_die("rank %d stopped responding: no heartbeat for %.0f s "
		        "while this rank waited for %s (DSM_TIMEOUT=%g)",
		        rank, (double)quiet * 1e-9, what, dsm.timeout);
	ping(rank, now);
}

void alive_check(int peer, const char *what, struct alive_wait *aw)
{
	int64_t now = now_ns();

	if (!aw->since)
		aw->since = now;
	if (peer >= 0 && peer != dsm.rank) {
		check_one(peer, what, aw->since, now);
	} else if (peer < 0) {
		for (int r = 0; r < dsm.nprocs; r++)
			if (r != dsm.rank)
				check_one(r, what, aw->since, now);
	}
	if (!aw->noted && (double)(now - aw->since) > dsm.timeout * 1e9) {
		char line[256];
		int n, doing = atomic_load(&peer_doing[peer < 0 ? 0 : peer]);
		aw->noted = 1;
		if (peer >= 0 && peer != dsm.rank)
			n = snprintf(line, sizeof(line),
			             "dsm: rank %d: waited %.0f s for %s from "
			             "rank %d, which is alive (%s); waiting "
			             "on\n",
			             dsm.rank, dsm.timeout, what, peer,
			             doing_name[doing]);
		else
			n = snprintf(line, sizeof(line),
			             "dsm: rank %d: waited %.0f s for %s; "
			             "every rank is alive; waiting on\n",
			             dsm.rank, dsm.timeout, what);
		if (write(2, line, (size_t)n) < 0)
			return;
	}
}
