/* The DSM's use of MPI: sends and receives that poll with back-off instead of
 * spinning (ranks are oversubscribed on small machines), give up with a clear
 * message when a peer stays silent past DSM_TIMEOUT, and count what goes to
 * other ranks. Never called from a signal handler. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "wire.h"

#define LARGE 16384 /* beyond Open MPI's eager limits for shared memory */

double net_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Spin briefly (a reply is often already on its way), then yield, then
 * sleep 1 us, 2 us, ... up to DSM_POLL_MAX_US. */
void net_backoff(unsigned *spins)
{
	unsigned s = (*spins)++;
	struct timespec ts = {0, 0};
	long ns;

	if (s < 32) {
		dsm_relax();
		return;
	}
	if (s < 48) {
		sched_yield();
		return;
	}
	s -= 48;
	ns = s >= 20 ? dsm.poll_max_ns : 1000L << s;
	if (ns > dsm.poll_max_ns)
		ns = dsm.poll_max_ns;
	ts.tv_nsec = ns;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void peer_silent(const char *what, int peer)
{
	if (peer == MPI_ANY_SOURCE)
		dsm_die("no %s from any rank after %.0f s: a rank died or is "
			"stuck "
			"(DSM_TIMEOUT)",
			what, dsm.timeout);
	dsm_die("no %s from rank %d after %.0f s: the rank died or is stuck "
		"(DSM_TIMEOUT)",
		what, peer, dsm.timeout);
}

void net_send(int dest, MPI_Comm c, int tag, struct wbuf *w, const char *what)
{
	MPI_Request rq;
	unsigned spins = 0;
	double t0 = 0;
	int done = 0;

	if (w->n > INT_MAX)
		dsm_die("%s message of %zu bytes is too large", what, w->n);
	dsm_check_mpi(MPI_Isend(w->p, (int)w->n, MPI_BYTE, dest, tag, c, &rq),
		      "MPI_Isend");
	if (dest != dsm.rank) {
		STAT(messages, 1);
		STAT(bytes, w->n);
	}
	for (;;) {
		dsm_check_mpi(MPI_Test(&rq, &done, MPI_STATUS_IGNORE),
			      "MPI_Test");
		if (done)
			return;
		if (spins == 48)
			t0 = net_now();
		else if (spins > 48 && (spins & 15) == 0 &&
			 net_now() - t0 > dsm.timeout)
			peer_silent(what, dest);
		/* A large message moves in fragments that need this side's
		 * progress: yield, never sleep, until it is through. */
		if (w->n > LARGE && spins >= 48) {
			spins++;
			sched_yield();
		} else {
			net_backoff(&spins);
		}
	}
}

static void take(MPI_Message *mm, MPI_Status *st, struct msg *m)
{
	int count;

	dsm_check_mpi(MPI_Get_count(st, MPI_BYTE, &count), "MPI_Get_count");
	m->buf = malloc(count > 0 ? (size_t)count : 1);
	if (!m->buf)
		dsm_die("out of memory for a %d-byte message", count);
	dsm_check_mpi(MPI_Mrecv(m->buf, count, MPI_BYTE, mm, st), "MPI_Mrecv");
	m->src = st->MPI_SOURCE;
	m->tag = st->MPI_TAG;
	m->len = (size_t)count;
}

void net_recv(MPI_Comm c, int src, int tag, struct msg *m, const char *what)
{
	MPI_Message mm;
	MPI_Status st;
	unsigned spins = 0;
	double t0 = 0;
	int flag;

	for (;;) {
		dsm_check_mpi(MPI_Improbe(src, tag, c, &flag, &mm, &st),
			      "MPI_Improbe");
		if (flag)
			break;
		if (spins == 48)
			t0 = net_now();
		else if (spins > 48 && (spins & 15) == 0 &&
			 net_now() - t0 > dsm.timeout)
			peer_silent(what, src);
		net_backoff(&spins);
	}
	take(&mm, &st, m);
}

int net_poll(struct msg *m)
{
	MPI_Message mm;
	MPI_Status st;
	int flag;

	dsm_check_mpi(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, dsm.req, &flag,
				  &mm, &st),
		      "MPI_Improbe");
	if (!flag)
		return 0;
	take(&mm, &st, m);
	return 1;
}
