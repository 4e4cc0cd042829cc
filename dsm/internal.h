/* dsm internals shared by its files: the unit table, the lazy release
 * consistency state, the two mechanisms (pages, regions) behind one
 * interface, the network layer. Not installed; nothing here is API. */
#ifndef DSM_INTERNAL_H
#define DSM_INTERNAL_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "dsm/dsm.h"

enum { DSM_NONE = 0,
       DSM_READ = 1,
       DSM_RW = 2 };

/* An encoded diff (the RTLD format of docs/dirty.md, for pages and regions). */
struct diff {
	uint32_t len;
	uint8_t bytes[];
};

/* A write notice: unit modified by proc in its interval idx. */
struct notice {
	uint32_t proc, idx;
	struct diff *diff; /* NULL until made (own) or fetched */
	uint8_t applied;   /* in the local copy (own notices: always) */
};

struct unit;

/* A unit of coherence as the protocol sees it; pages and regions differ only
 * here. protect and twin_take run in the trap handler: async-signal-safe. */
struct mech {
	const char *name;
	/* Lowering from the service thread relies on the registration contract
	 * (registers may hold copies): check with a hash that nothing wrote. */
	int check_stale;
	void (*protect)(struct unit *u, int prot);
	void (*twin_take)(struct unit *u);
	/* Current contents against the twin, RTLD-encoded; cap 0: size only. */
	ssize_t (*encode)(struct unit *u, void *buf, size_t cap);
	void (*twin_drop)(struct unit *u);
	/* Validate completely, then write: -1 with EINVAL if malformed. */
	int (*apply)(struct unit *u, const void *buf, size_t len);
	/* Where the current contents can be read without a trap. */
	const void *(*contents)(struct unit *u);
	/* On written bits, a valid unit is writable: hold(u, 1) makes it
	 * trap on writes while its diff is made and its twin dropped,
	 * hold(u, 0) gives it its protocol state's protection back. NULL
	 * where a valid unit traps its first write anyway. */
	void (*hold)(struct unit *u, int on);
};

extern const struct mech dsm_mech_page, dsm_mech_region, dsm_mech_annotated,
        dsm_mech_region_wb;

/* WB: the units the kernel's written bits found written since the last
 * release become write notices of this interval, as write traps would
 * have (rt.c). Application thread, outside handlers. */
void rt_wb_harvest(void);

struct unit {
	uint32_t id;
	const struct mech *mech;
	void *addr; /* page: in the application view; region: for rtl calls only
		     */
	void *sys;  /* page: in the system view (RW); region: its RO view */
	size_t size;
	_Atomic int lock;     /* handler vs service thread: the fields below */
	int prot;             /* DSM_NONE / DSM_READ / DSM_RW */
	int twinned;          /* local modifications not yet in a diff */
	uint32_t own_pending; /* own notice whose diff is still to make */
	int check;            /* region lowered by the service thread: hash */
	uint64_t hash;
	int in_dirty;      /* main thread only */
	struct notice *nt; /* under dsm.lock; since the last collection */
	uint32_t nnt, cap;
	/* Garbage collection (gc.c), under dsm.lock: */
	int discarded; /* our copy is stale and its notices are gone: a miss
			* first fetches the copy of the last collection */
	int holder;    /* ... from this rank */
	uint8_t *snap; /* holder: the contents at the last collection */
};

struct interval {
	uint32_t *vt; /* nprocs entries */
	uint32_t n;
	uint32_t *units;
};

struct proc {
	struct interval *iv; /* iv[i - base - 1] is interval i */
	uint32_t n, cap;
	uint32_t base; /* intervals up to this one were collected */
};

struct lockst {
	int mgr_last; /* manager: the last requester */
	int token;    /* this rank may grant it */
	int held;     /* the application holds it */
	int pending;  /* a request waits for our release */
	int pend_rank;
	uint32_t *pend_vt;
};

struct stat_ctr {
	_Atomic uint64_t traps, read_misses, write_misses, write_traps,
	        messages, bytes, diff_requests, diffs_created, diffs_applied,
	        diff_bytes, acquires, remote_acquires, barriers, intervals,
	        notices, miss_ns, gc_runs, gc_freed, barrier_messages,
	        barrier_bytes, twin_bytes, written_units;
};

/* What the application thread is doing (told to peers that ping us). */
enum { DOING_COMPUTE,
       DOING_BARRIER,
       DOING_LOCK,
       DOING_MISS,
       DOING_FINISH };

#define UNIT_CHUNK 4096
#define UNIT_CHUNKS 4096

struct dsm {
	int rank, nprocs;
	MPI_Comm req, rep;    /* requests (to service threads), replies */
	pthread_mutex_t lock; /* the protocol state below */
	uint32_t *vt;
	struct proc *procs;
	struct unit *chunks[UNIT_CHUNKS];
	uint32_t nunits;
	uint32_t *dirty, ndirty, dirty_cap; /* main thread (handler) only */
	uint32_t *checks, nchecks, checks_cap;
	uint32_t nalloc;
	uint64_t allochash;
	uint32_t epoch;       /* dsm_barrier calls */
	uint32_t round;       /* barrier tree rounds (also gc.c's) */
	int fanout;           /* of the barrier tree */
	uint32_t *bar_vt;     /* every rank knows this much (last barrier) */
	uint32_t *child_vt;   /* [fanout][nprocs]: what each child knows */
	struct msg *arrivals; /* by rank: our children's, this round */
	int narrivals;
	pthread_cond_t arrived;
	uint64_t cons_bytes, cons_peak; /* consistency information held */
	uint64_t snap_bytes;            /* gc.c's copies held for others */
	uint64_t gc_bytes;              /* collect beyond (DSM_GC_BYTES) */
	uint32_t gc_gen;                /* collections done */
	_Atomic int doing;              /* DOING_*, for pongs */
	struct lockst locks[DSM_MAX_LOCKS];
	double timeout; /* seconds: a peer silent this long is dead */
	long poll_max_ns;
	const char *inject;
	uint64_t stale_base;
	pthread_t service, fetcher;
	struct stat_ctr st;
};

extern struct dsm dsm;

#define STAT(f, n) \
	atomic_fetch_add_explicit(&dsm.st.f, (n), memory_order_relaxed)

/* ---- init.c ---- */
__attribute__((noreturn, format(printf, 1, 2))) void dsm_die(const char *fmt,
                                                             ...);
void dsm_check_mpi(int rc, const char *call);
/* DSM_INJECT (tests) is a comma-separated list of faults: the one named
 * name (its text before any ':'), or NULL. */
const char *dsm_inject(const char *name);

/* ---- units.c ---- */
static inline struct unit *dsm_unit(uint32_t id)
{
	return &dsm.chunks[id / UNIT_CHUNK][id % UNIT_CHUNK];
}
struct unit *dsm_unit_new(const struct mech *m, void *addr, void *sys,
                          size_t size);
void dsm_alloc_note(int kind, size_t size);
/* The CPU's spin-wait hint (x86-64 pause, aarch64 yield). */
static inline void dsm_relax(void)
{
#if defined(__aarch64__)
	__asm__ volatile("yield" ::
	                         : "memory");
#else
	__builtin_ia32_pause();
#endif
}
static inline void unit_lock(struct unit *u)
{
	while (atomic_exchange_explicit(&u->lock, 1, memory_order_acquire))
		while (atomic_load_explicit(&u->lock, memory_order_relaxed))
			dsm_relax();
}
static inline void unit_unlock(struct unit *u)
{
	atomic_store_explicit(&u->lock, 0, memory_order_release);
}

/* ---- vm.c / rt.c ---- */
int dsm_vm_init(void);
void *dsm_vm_alloc(size_t size);
int dsm_rt_init(void);

/* ---- lrc.c (dsm.lock held) ---- */
void lrc_init(void);
struct interval *lrc_interval(uint32_t proc, uint32_t idx);
void lrc_account(int64_t bytes); /* consistency information held */
void lrc_close_interval(void);
struct notice *lrc_notice(struct unit *u, uint32_t proc, uint32_t idx);
struct diff *lrc_own_diff(struct unit *u, int async);
void lrc_check_contract(void);
struct wbuf;
struct rbuf;
void lrc_put_intervals(struct wbuf *w, const uint32_t *known);
struct msg;
void lrc_incorporate(struct rbuf *r, const struct msg *m, const char *what,
                     const uint32_t *known, uint32_t *out_vt);
uint64_t lrc_hash(const void *p, size_t n);

/* ---- fault.c ---- */
void dsm_fault(struct unit *u, int write); /* in a trap handler */
/* What a trap does, for an annotation (an.c): miss, twin, protection. */
void dsm_access(struct unit *u, int write);
/* Fetch and apply every missing diff of u (and the copy of the last
 * collection if u was discarded), in the calling thread; dsm.lock not held.
 * Leaves the protection alone. */
void fetch_unit(struct unit *u);
void *fetch_main(void *arg);
void fetch_stop(void);

/* ---- service.c ---- */
void *service_main(void *arg);
void service_diff_request(struct rbuf *r, const struct msg *m);

/* ---- locks.c, barrier.c ---- */
void lock_on_request(struct rbuf *r, const struct msg *m);
void barrier_init(void);
void barrier_on_arrival(struct msg *m);
/* dsm.lock held, released on return: one round of the barrier tree. gc:
 * this rank wants garbage collected; returns whether all ranks collect. */
int barrier_round(int gc);

/* ---- gc.c ---- */
void gc_init(void);
int gc_wanted(void);   /* dsm.lock held */
void gc_collect(void); /* after a barrier that ordered it; collective */
void gc_on_copy_request(struct rbuf *r, const struct msg *m);

#endif
