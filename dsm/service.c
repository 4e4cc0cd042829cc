/* The service thread: answers other ranks' requests while the application
 * computes, as TreadMarks' SIGIO handler did: diff requests (making our
 * diffs lazily), lock requests (as manager and as holder), barrier arrivals
 * (from our children in the barrier tree), copies of collected units,
 * heartbeats. It never waits for the application thread while holding a lock,
 * and never invalidates anything: that happens only at synchronisation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dsm/wire.h"

/* DSM_INJECT (tests): bad-diff, truncate-diff, bad-message corrupt our diff
 * replies, to test that receivers reject them; slow-reply:R:MS makes rank
 * R's replies MS milliseconds late (tests/bats/dsm.bats). */
static void inject(struct wbuf *w, size_t diff_at, uint32_t diff_len)
{
	const char *slow = dsm_inject("slow-reply");
	unsigned r, ms;

	if (slow && sscanf(slow, "slow-reply:%u:%u", &r, &ms) == 2 &&
	    r == (unsigned)dsm.rank) {
		struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };
		nanosleep(&t, NULL);
	}
	if (!diff_len)
		return;
	if (dsm_inject("bad-diff"))
		w->p[diff_at + 4] = 9; /* the format version */
	else if (dsm_inject("truncate-diff")) {
		/* One byte less, the length field says so: a diff without its
		 * end mark, in a well-formed message. */
		uint32_t n = diff_len - 1;
		memmove(w->p + diff_at + n, w->p + diff_at + diff_len,
		        w->n - diff_at - diff_len);
		w->n--;
		for (int i = 0; i < 4; i++)
			w->p[diff_at - 4 + i] = (uint8_t)(n >> (8 * i));
	} else if (dsm_inject("bad-message"))
		w->n -= 3;
}

void service_diff_request(struct rbuf *r, const struct msg *m)
{
	uint32_t uid = r_unit(r), n = r_count(r, 8), *want;
	struct unit *u;
	struct wbuf w;
	size_t first_at = 0;
	uint32_t first_len = 0;

	want = malloc((n ? n : 1) * 2 * sizeof(*want));
	if (!want)
		dsm_die("out of memory");
	for (uint32_t i = 0; i < n; i++) {
		want[2 * i] = r_rank(r);
		want[2 * i + 1] = r_u32(r);
	}
	r_end(r, m, "diff request");
	u = dsm_unit(uid);
	w_init(&w, T_DIFF_REP);
	w_u32(&w, uid);
	w_u32(&w, n);
	pthread_mutex_lock(&dsm.lock);
	for (uint32_t i = 0; i < n; i++) {
		struct notice *nt = lrc_notice(u, want[2 * i], want[2 * i + 1]);
		if (!nt)
			dsm_die("rank %d asked for the diff of unit %u, "
			        "interval %u of rank "
			        "%u, which this rank does not know",
			        m->src, uid, want[2 * i + 1], want[2 * i]);
		if (!nt->diff && nt->proc == (uint32_t)dsm.rank)
			lrc_own_diff(u, 1);
		if (!nt->diff)
			dsm_die("rank %d asked for a diff of unit %u (interval "
			        "%u of rank "
			        "%u) that this rank does not have",
			        m->src, uid, nt->idx, nt->proc);
		w_u32(&w, nt->proc);
		w_u32(&w, nt->idx);
		w_u32(&w, nt->diff->len);
		if (!first_len) {
			first_at = w.n;
			first_len = nt->diff->len;
		}
		w_bytes(&w, nt->diff->bytes, nt->diff->len);
	}
	pthread_mutex_unlock(&dsm.lock);
	inject(&w, first_at, first_len);
	net_send(m->src, dsm.rep, T_DIFF_REP, &w, "diff reply");
	w_free(&w);
	free(want);
}

void *service_main(void *arg)
{
	unsigned spins = 0;
	struct msg m;
	struct rbuf r;

	(void)arg;
	net_thread_start();
	for (;;) {
		if (!net_poll(&m)) {
			net_wait(DB_SERVICE, &spins);
			continue;
		}
		spins = 0;
		alive_heard(m.src);
		r_init(&r, &m);
		switch (m.tag) {
		case T_STOP:
			if (m.src != dsm.rank)
				dsm_die("stop request from rank %d", m.src);
			r_end(&r, &m, "stop");
			free(m.buf);
			return NULL;
		case T_DIFF_REQ:
			service_diff_request(&r, &m);
			break;
		case T_LOCK_REQ:
			lock_on_request(&r, &m);
			break;
		case T_COPY_REQ:
			gc_on_copy_request(&r, &m);
			break;
		case T_PING:
			alive_on_ping(&r, &m);
			break;
		case T_PONG:
			alive_on_pong(&r, &m);
			break;
		case T_ARRIVE:
			barrier_on_arrival(&m); /* keeps m.buf */
			continue;
		default:
			dsm_die("unexpected message (tag %d) from rank %d",
			        m.tag, m.src);
		}
		free(m.buf);
	}
}
