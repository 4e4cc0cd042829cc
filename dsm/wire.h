/* Message framing for the DSM: every field little-endian and fixed-width, a
 * header (magic, kind, sender) on every message, and a reader that refuses to
 * read past the end: a malformed or truncated message is rejected whole. */
#ifndef DSM_WIRE_H
#define DSM_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "dsm/internal.h"

#define DSM_MAGIC 0x314d5344u /* "DSM1" */

/* MPI tags. Requests go to the service threads (dsm.req), replies to the
 * thread waiting for them (dsm.rep). */
enum {
	T_STOP = 1,
	T_DIFF_REQ,
	T_LOCK_REQ,
	T_ARRIVE,
	T_COPY_REQ,
	T_PING,
	T_PONG,
	T_DIFF_REP = 10,
	T_GRANT,
	T_DEPART,
	T_COPY_REP,
};

struct wbuf {
	uint8_t *p;
	size_t n, cap;
};

struct rbuf {
	const uint8_t *p, *end;
	const char *err; /* first problem found; reads after it return 0 */
};

/* A received message (buf is malloc'd; the receiver frees it). */
struct msg {
	int src, tag;
	uint8_t *buf;
	size_t len;
};

void w_init(struct wbuf *w, int kind);
void w_u32(struct wbuf *w, uint32_t v);
void w_u64(struct wbuf *w, uint64_t v);
void w_bytes(struct wbuf *w, const void *p, size_t n);
void w_vt(struct wbuf *w, const uint32_t *vt);
/* A vector time as its entries that differ from base (which the reader
 * knows): between barriers most intervals differ from the last barrier's
 * vector time in one entry, so an interval costs O(1) words, not O(nprocs). */
void w_vt_delta(struct wbuf *w, const uint32_t *vt, const uint32_t *base);
void w_free(struct wbuf *w);

/* Start reading m: checks the header (magic, kind = tag, sender = source). */
void r_init(struct rbuf *r, const struct msg *m);
uint32_t r_u32(struct rbuf *r);
uint64_t r_u64(struct rbuf *r);
const uint8_t *r_bytes(struct rbuf *r, size_t n);
/* A count of items of at least item bytes each that must fit in the rest. */
uint32_t r_count(struct rbuf *r, size_t item);
/* A rank (< nprocs), a unit id (< nunits). */
uint32_t r_rank(struct rbuf *r);
uint32_t r_unit(struct rbuf *r);
void r_vt(struct rbuf *r, uint32_t *vt);
void r_vt_delta(struct rbuf *r, uint32_t *vt, const uint32_t *base);
void r_fail(struct rbuf *r, const char *why);
/* The message must be fully consumed and error-free, else the run ends with
 * a message naming the sender and what was wrong. */
void r_end(struct rbuf *r, const struct msg *m, const char *what);

/* The threads of a rank that receive messages, each with its doorbell. */
enum { DB_SERVICE,
       DB_APP,
       DB_FETCH,
       DB_THREADS };

/* ---- net.c: MPI with waiting, timeouts, counters ---- */
/* Send, and ring the doorbell of the thread that receives tag at dest. */
void net_send(int dest, MPI_Comm c, int tag, struct wbuf *w, const char *what);
/* Wait for one message from src (MPI_ANY_SOURCE allowed) with tag; a
 * silence longer than dsm.timeout ends the run. */
void net_recv(MPI_Comm c, int src, int tag, struct msg *m, const char *what);
/* One look for any request on dsm.req: 1 and m filled if there was one. */
int net_poll(struct msg *m);
/* Nothing arrived for thread (DB_*): spin, then sleep a little longer each
 * time, then block on the doorbell (*spins counts calls; a ring resets it). */
void net_wait(int thread, unsigned *spins);
/* A DSM thread of our own: precise short sleeps (1 us timer slack). */
void net_thread_start(void);
double net_now(void);

/* ---- alive.c ---- */
struct alive_wait {
	int64_t since; /* when the wait began (ns) */
	int noted;     /* the "still waiting" line was printed */
};
void alive_init(void);
/* A message from rank came in. */
void alive_heard(int rank);
void alive_on_ping(struct rbuf *r, const struct msg *m);
void alive_on_pong(struct rbuf *r, const struct msg *m);
/* A thread waiting for what from peer (-1: any rank), between two looks:
 * pings the quiet ones, ends the run if one stayed silent past DSM_TIMEOUT,
 * says once that it still waits for a live one. */
void alive_check(int peer, const char *what, struct alive_wait *aw);

/* ---- doorbell.c ---- */
/* Collective, in dsm_init: sockets, addresses, a check that every doorbell
 * rings; off (polling) if setting is "0" or a check fails. */
void db_init(const char *setting);
void db_fini(void);
int db_enabled(void);
void db_ring(int rank, int thread);
/* Block until thread's doorbell rings (1) or timeout_ns passes (0). */
int db_wait(int thread, long timeout_ns);

#endif
