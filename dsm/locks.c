/* Locks as in TreadMarks 3.3: a statically assigned manager (lock % nprocs)
 * remembers the last requester and forwards each request to it; the holder
 * grants at its release, sending the intervals the acquirer has not seen.
 * A lock released here and acquired again here costs no message.
 * The acquire and release run in the application thread; requests are
 * served by the service thread. Messages are sent with dsm.lock released. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsm/wire.h"

static int bad_lock(int l)
{
	if (l < 0 || l >= DSM_MAX_LOCKS) {
		errno = EINVAL;
		return 1;
	}
	return 0;
}

static void put_request(struct wbuf *w, uint32_t l, uint32_t requester,
                        const uint32_t *vt)
{
	w_init(w, T_LOCK_REQ);
	w_u32(w, l);
	w_u32(w, requester);
	w_vt(w, vt);
}

/* The holder's side (dsm.lock held): grant now if we hold the token and the
 * application does not hold the lock, else remember the request. Returns 1
 * and fills w if a grant is to be sent. */
static int holder(uint32_t l, int requester, const uint32_t *vt, struct wbuf *w)
{
	struct lockst *L = &dsm.locks[l];

	if (L->token && !L->held) {
		w_init(w, T_GRANT);
		w_u32(w, l);
		lrc_put_intervals(w, vt);
		L->token = 0;
		return 1;
	}
	if (L->pending)
		dsm_die("protocol error: two requests waiting for lock %u", l);
	L->pending = 1;
	L->pend_rank = requester;
	if (!L->pend_vt && !(L->pend_vt = malloc((size_t)dsm.nprocs * 4)))
		dsm_die("out of memory");
	memcpy(L->pend_vt, vt, (size_t)dsm.nprocs * 4);
	return 0;
}

/* Service thread: a request, either sent to us as manager by the requester,
 * or forwarded to us as the last requester by the manager. */
void lock_on_request(struct rbuf *r, const struct msg *m)
{
	uint32_t l = r_u32(r), requester = r_rank(r);
	uint32_t *vt = malloc((size_t)dsm.nprocs * 4);
	struct wbuf w;
	int send = 0, dest = (int)requester, tag = T_GRANT;

	if (!vt)
		dsm_die("out of memory");
	if (!r->err && l >= DSM_MAX_LOCKS)
		r_fail(r, "lock out of range");
	r_vt(r, vt);
	if (!r->err && requester == (uint32_t)dsm.rank)
		r_fail(r, "a request of our own sent back to us");
	r_end(r, m, "lock request");
	pthread_mutex_lock(&dsm.lock);
	if ((int)(l % (uint32_t)dsm.nprocs) == dsm.rank &&
	    (uint32_t)m->src == requester) {
		struct lockst *L = &dsm.locks[l];
		int last = L->mgr_last;
		L->mgr_last = (int)requester;
		if (last == (int)requester)
			dsm_die("protocol error: rank %u asked again for lock "
			        "%u, which it "
			        "was the last to get",
			        requester, l);
		if (last == dsm.rank) {
			send = holder(l, (int)requester, vt, &w);
		} else {
			put_request(&w, l, requester, vt);
			dest = last;
			tag = T_LOCK_REQ;
			send = 1;
		}
	} else {
		send = holder(l, (int)requester, vt, &w);
	}
	pthread_mutex_unlock(&dsm.lock);
	if (send) {
		net_send(dest, tag == T_GRANT ? dsm.rep : dsm.req, tag, &w,
		         tag == T_GRANT ? "lock grant" : "lock forward");
		w_free(&w);
	}
	free(vt);
}

int dsm_lock_acquire(int lock)
{
	struct lockst *L;
	struct wbuf w;
	struct msg m;
	struct rbuf r;
	int mgr, dest;
	uint32_t l = (uint32_t)lock;

	if (bad_lock(lock))
		return -1;
	L = &dsm.locks[l];
	STAT(acquires, 1);
	pthread_mutex_lock(&dsm.lock);
	if (L->held) {
		pthread_mutex_unlock(&dsm.lock);
		errno = EDEADLK;
		return -1;
	}
	lrc_check_contract();
	lrc_close_interval();
	if (L->token) {
		L->held = 1;
		pthread_mutex_unlock(&dsm.lock);
		return 0;
	}
	STAT(remote_acquires, 1);
	mgr = lock % dsm.nprocs;
	put_request(&w, l, (uint32_t)dsm.rank, dsm.vt);
	dest = mgr;
	if (mgr == dsm.rank) { /* we manage it: forward straight to the last
				  requester */
		dest = L->mgr_last;
		L->mgr_last = dsm.rank;
		if (dest == dsm.rank)
			dsm_die("protocol error: lock %u managed here without "
			        "its token",
			        l);
	}
	pthread_mutex_unlock(&dsm.lock);
	net_send(dest, dsm.req, T_LOCK_REQ, &w, "lock request");
	w_free(&w);
	atomic_store(&dsm.doing, DOING_LOCK);
	net_recv(dsm.rep, MPI_ANY_SOURCE, T_GRANT, &m, "lock grant");
	atomic_store(&dsm.doing, DOING_COMPUTE);
	r_init(&r, &m);
	if (r_u32(&r) != l)
		r_fail(&r, "grant for another lock");
	pthread_mutex_lock(&dsm.lock);
	/* Written for the vector time of our request, which is still ours. */
	lrc_incorporate(&r, &m, "lock grant", dsm.vt, NULL);
	L->token = 1;
	L->held = 1;
	pthread_mutex_unlock(&dsm.lock);
	free(m.buf);
	return 0;
}

int dsm_lock_release(int lock)
{
	struct lockst *L;
	struct wbuf w;
	int dest = -1;

	if (bad_lock(lock))
		return -1;
	L = &dsm.locks[lock];
	pthread_mutex_lock(&dsm.lock);
	if (!L->held) {
		pthread_mutex_unlock(&dsm.lock);
		errno = EPERM;
		return -1;
	}
	lrc_check_contract();
	lrc_close_interval();
	L->held = 0;
	if (L->pending) {
		L->pending = 0;
		dest = L->pend_rank;
		holder((uint32_t)lock, dest, L->pend_vt, &w);
	}
	pthread_mutex_unlock(&dsm.lock);
	if (dest >= 0) {
		net_send(dest, dsm.rep, T_GRANT, &w, "lock grant");
		w_free(&w);
	}
	return 0;
}
