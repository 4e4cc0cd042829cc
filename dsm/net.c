/* The DSM's use of MPI: sends that ring the receiving thread's doorbell,
 * receives that wait without spinning (ranks are oversubscribed on small
 * machines, and a thread that spins or yields takes the core from the one it
 * waits for), a clear message when a peer stays silent past DSM_TIMEOUT,
 * and counters of what goes to other ranks. Never called from a signal
 * handler. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dsm/wire.h"

#define LARGE 16384           /* beyond Open MPI's eager limits for shared memory */
#define SPINS 32              /* polls before the first sleep */
#define SLEEPS 9              /* without doorbells: sleeps of 1, 2, 4 ... 256 us */
#define BACKSTOP_NS 20000000L /* a lost doorbell costs at most this */
#define HELPER_NICE (-10)

double net_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void net_thread_start(void)
{
	/* The default 50 us slack would make short sleeps 50 times too long. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	/* Under EEVDF a thread that wakes up preempts the running one only if
	 * it has not run ahead of its share. Ours run in short bursts on the
	 * core of an application thread that may spin for seconds, and about
	 * 1 % of their wake-ups waited for the next tick (4 ms). A heavier
	 * weight keeps them eligible: p99 of a miss 3 ms -> 0.1 ms with the
	 * holder spinning (dsm-latency). They block almost all the time, so
	 * the weight takes nothing from anyone. Needs CAP_SYS_NICE or
	 * RLIMIT_NICE; without it nothing changes. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), HELPER_NICE);
}

/* No sched_yield anywhere: under EEVDF a yielding thread goes behind the
 * application thread that shares its core, for a whole tick (4 ms) if that
 * one spins in MPI or computes (measured with dsm-latency). */
void net_wait(int thread, unsigned *spins)
{
	unsigned s = (*spins)++;
	long ns;

	if (s < SPINS) {
		dsm_relax();
		return;
	}
	s -= SPINS;
	if (db_enabled()) {
		/* Block until rung, a little longer each time: a message may
		 * be a little behind its doorbell, and a lost doorbell costs
		 * one backstop. Rung: look again at once. */
		ns = s < 11 ? 16000L << s : BACKSTOP_NS;
		if (db_wait(thread, ns < BACKSTOP_NS ? ns : BACKSTOP_NS))
			*spins = 0;
		return;
	}
	ns = s < SLEEPS ? 1000L << s : dsm.poll_max_ns;
	sleep_ns(ns < dsm.poll_max_ns ? ns : dsm.poll_max_ns);
}

/* The thread that receives messages with tag. */
static int receiver(int tag)
{
	if (tag == T_DIFF_REP || tag == T_COPY_REP)
		return DB_FETCH;
	if (tag == T_GRANT || tag == T_DEPART)
		return DB_APP;
	return DB_SERVICE;
}

void net_send(int dest, MPI_Comm c, int tag, struct wbuf *w, const char *what)
{
	MPI_Request rq;
	struct alive_wait aw = { 0 };
	unsigned spins = 0;
	int done = 0;

	if (w->n > INT_MAX)
		dsm_die("%s message of %zu bytes is too large", what, w->n);
	dsm_check_mpi(MPI_Isend(w->p, (int)w->n, MPI_BYTE, dest, tag, c, &rq),
	              "MPI_Isend");
	db_ring(dest, receiver(tag));
	if (dest != dsm.rank) {
		STAT(messages, 1);
		STAT(bytes, w->n);
	}
	for (;;) {
		dsm_check_mpi(MPI_Test(&rq, &done, MPI_STATUS_IGNORE),
		              "MPI_Test");
		if (done)
			return;
		if (spins++ < SPINS) {
			dsm_relax();
			continue;
		}
		if ((spins & 15) == 0)
			alive_check(dest, what, &aw);
		/* A large message moves in fragments that need this side's
		 * progress: keep coming back soon. A small one waits for the
		 * receiver's buffer. */
		sleep_ns(w->n > LARGE ? 1000 : 20000);
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
	alive_heard(m->src);
}

void net_recv(MPI_Comm c, int src, int tag, struct msg *m, const char *what)
{
	MPI_Message mm;
	MPI_Status st;
	struct alive_wait aw = { 0 };
	unsigned spins = 0;
	int flag;

	for (;;) {
		dsm_check_mpi(MPI_Improbe(src, tag, c, &flag, &mm, &st),
		              "MPI_Improbe");
		if (flag)
			break;
		net_wait(receiver(tag), &spins);
		if (spins > SPINS)
			alive_check(src == MPI_ANY_SOURCE ? -1 : src, what,
			            &aw);
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
