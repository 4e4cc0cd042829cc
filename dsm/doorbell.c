/* Doorbells: a DSM thread that waits for a message blocks in the kernel, and
 * whoever sends it one also rings its doorbell, a small UDP datagram to a
 * socket of its own (TreadMarks woke its handler with SIGIO on UDP; this is
 * the same without the signal). Open MPI has no blocking receive: a thread
 * waiting in MPI polls, so an idle DSM thread either takes CPU from the
 * application or sleeps, and a request arriving while it sleeps waits. The
 * MPI message stays the message; the datagram only wakes its reader, and a
 * lost one costs one backstop timeout of the waiter (net.c).
 *
 * Each rank has one socket per receiving thread (service, application,
 * fetch). dsm_init exchanges the addresses and checks that every doorbell
 * rings; if one does not (UDP filtered between hosts), doorbells are off on
 * every rank and the threads poll instead (docs/dsm-mpi.md, "Doorbells"). */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dsm/wire.h"

#define MAX_ADDRS 8

/* What a rank tells the others: its IPv4 addresses and its ports. */
struct db_card {
	uint32_t naddr;
	uint32_t addr[MAX_ADDRS], mask[MAX_ADDRS]; /* network byte order */
	uint16_t port[DB_THREADS];
};

static struct {
	int on;
	int fd[DB_THREADS];
	struct db_card mine;
	struct sockaddr_in *peer; /* [rank * DB_THREADS + thread] */
	int *reachable;           /* [rank]: an address was found */
} db = { .fd = { -1, -1, -1 } };

static void own_addresses(struct db_card *c)
{
	struct ifaddrs *ifa, *i;

	if (getifaddrs(&ifa) < 0)
		return;
	for (i = ifa; i && c->naddr < MAX_ADDRS; i = i->ifa_next) {
		struct sockaddr_in *a = (void *)i->ifa_addr,
		                   *m = (void *)i->ifa_netmask;
		if (!a || a->sin_family != AF_INET || !m ||
		    ntohl(a->sin_addr.s_addr) >> 24 == 127)
			continue;
		c->addr[c->naddr] = a->sin_addr.s_addr;
		c->mask[c->naddr] = m->sin_addr.s_addr;
		c->naddr++;
	}
	freeifaddrs(ifa);
}

static int is_mine(uint32_t a)
{
	for (uint32_t k = 0; k < db.mine.naddr; k++)
		if (db.mine.addr[k] == a)
			return 1;
	return 0;
}

static int on_my_links(uint32_t a)
{
	for (uint32_t k = 0; k < db.mine.naddr; k++)
		if ((a & db.mine.mask[k]) ==
		    (db.mine.addr[k] & db.mine.mask[k]))
			return 1;
	return 0;
}

/* Where to ring a peer: loopback if it has exactly our addresses (same
 * host), else its first address on one of our links that is not ours
 * (hosts may share private subnets such as a container bridge's), else its
 * first address that is not ours. 0 if none. */
static uint32_t address_of(const struct db_card *c)
{
	int same = c->naddr == db.mine.naddr;

	for (uint32_t k = 0; k < c->naddr && same; k++)
		same = is_mine(c->addr[k]);
	if (same)
		return htonl(INADDR_LOOPBACK);
	for (uint32_t k = 0; k < c->naddr; k++)
		if (!is_mine(c->addr[k]) && on_my_links(c->addr[k]))
			return c->addr[k];
	for (uint32_t k = 0; k < c->naddr; k++)
		if (!is_mine(c->addr[k]))
			return c->addr[k];
	return 0;
}

static int open_sockets(void)
{
	for (int t = 0; t < DB_THREADS; t++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t n = sizeof(a);
		db.fd[t] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		                  0);
		if (db.fd[t] < 0 ||
		    bind(db.fd[t], (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    getsockname(db.fd[t], (struct sockaddr *)&a, &n) < 0)
			return -1;
		db.mine.port[t] = a.sin_port;
	}
	return 0;
}

static void close_sockets(void)
{
	for (int t = 0; t < DB_THREADS; t++) {
		if (db.fd[t] >= 0)
			close(db.fd[t]);
		db.fd[t] = -1;
	}
}

void db_ring(int rank, int thread)
{
	uint32_t me = (uint32_t)dsm.rank;
	struct sockaddr_in *a;

	if (!db.on || !db.reachable[rank])
		return;
	a = &db.peer[rank * DB_THREADS + thread];
	/* Failure (a full socket buffer) only delays the waiter. */
	(void)sendto(db.fd[thread], &me, sizeof(me), MSG_DONTWAIT,
	             (struct sockaddr *)a, sizeof(*a));
}

/* Read every datagram waiting; their senders into seen[] if not NULL. */
static int drain(int thread, char *seen)
{
	uint32_t from;
	int n = 0;

	while (recv(db.fd[thread], &from, sizeof(from), MSG_DONTWAIT) ==
	       (ssize_t)sizeof(from)) {
		if (seen && from < (uint32_t)dsm.nprocs)
			seen[from] = 1;
		n++;
	}
	return n;
}

static int readable(int thread, long timeout_ns)
{
	struct pollfd p = { .fd = db.fd[thread], .events = POLLIN };
	struct timespec ts = { timeout_ns / 1000000000L,
		               timeout_ns % 1000000000L };

	return ppoll(&p, 1, &ts, NULL) > 0;
}

int db_wait(int thread, long timeout_ns)
{
	return readable(thread, timeout_ns) && drain(thread, NULL) > 0;
}

int db_enabled(void)
{
	return db.on;
}

/* Every rank rings every other rank's three doorbells; each waits up to a
 * second for all of them. On when every rank heard every ring. */
static int self_test(void)
{
	char *seen = calloc((size_t)dsm.nprocs * DB_THREADS, 1);
	int ok = 1, all = 0;
	double until = net_now() + 1.0;

	if (!seen)
		dsm_die("out of memory");
	for (int r = 0; r < dsm.nprocs; r++)
		if (r != dsm.rank)
			for (int t = 0; t < DB_THREADS; t++)
				db_ring(r, t);
	for (int t = 0; t < DB_THREADS; t++) {
		char *s = seen + (size_t)t * (size_t)dsm.nprocs;
		int heard;
		do {
			drain(t, s);
			heard = 0;
			for (int r = 0; r < dsm.nprocs; r++)
				heard += r != dsm.rank && s[r];
			if (heard < dsm.nprocs - 1)
				readable(t, 1000000);
		} while (heard < dsm.nprocs - 1 && net_now() < until);
		if (heard < dsm.nprocs - 1)
			ok = 0;
	}
	free(seen);
	dsm_check_mpi(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN,
	                            MPI_COMM_WORLD),
	              "MPI_Allreduce");
	return all;
}

void db_init(const char *setting)
{
	struct db_card *cards;
	int ok;

	if (setting && !strcmp(setting, "0"))
		return;
	ok = open_sockets() == 0;
	own_addresses(&db.mine);
	cards = calloc((size_t)dsm.nprocs, sizeof(*cards));
	db.peer = calloc((size_t)dsm.nprocs * DB_THREADS, sizeof(*db.peer));
	db.reachable = calloc((size_t)dsm.nprocs, sizeof(*db.reachable));
	if (!cards || !db.peer || !db.reachable)
		dsm_die("out of memory at start");
	dsm_check_mpi(MPI_Allgather(&db.mine, sizeof(db.mine), MPI_BYTE, cards,
	                            sizeof(*cards), MPI_BYTE, MPI_COMM_WORLD),
	              "MPI_Allgather");
	for (int r = 0; r < dsm.nprocs; r++) {
		uint32_t a = address_of(&cards[r]);
		db.reachable[r] = ok && a != 0;
		for (int t = 0; t < DB_THREADS; t++) {
			struct sockaddr_in *s = &db.peer[r * DB_THREADS + t];
			s->sin_family = AF_INET;
			s->sin_addr.s_addr = a;
			s->sin_port = cards[r].port[t];
		}
	}
	free(cards);
	db.on = 1;
	if (!self_test()) {
		db.on = 0;
		close_sockets();
		if (dsm.rank == 0)
			fprintf(stderr,
			        "dsm: doorbells (UDP between ranks) do not get "
			        "through; waiting threads poll every %ld us "
			        "instead (DSM_POLL_MAX_US; docs/dsm-mpi.md)\n",
			        dsm.poll_max_ns / 1000);
	}
}

void db_fini(void)
{
	db.on = 0;
	close_sockets();
}
