/* dsm — lazy release consistency distributed shared memory over MPI, with the
 * unit of coherence chosen per allocation: pages (dsm_malloc: mprotect and
 * SIGSEGV, as TreadMarks) or rtl regions (dsm_region_alloc: region traps).
 * The case study of the RTL paper's Section 5; see docs/dsm.md.
 *
 * Every call but dsm_rank/dsm_nprocs/dsm_stats is made by the application's
 * one thread. Allocation, barriers, dsm_init and dsm_finish are collective:
 * every rank makes the same calls in the same order. */
#ifndef DSM_H
#define DSM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Start MPI (MPI_THREAD_MULTIPLE) and the DSM's service threads. Sets MPI
 * defaults that keep Open MPI off rtl's trap path unless the environment
 * already sets them (docs/dsm-mpi.md). Returns 0, or -1 with a message. */
int dsm_init(int *argc, char ***argv);

/* Collective end: a barrier, the service threads stop, MPI_Finalize. */
int dsm_finish(void);

int dsm_rank(void);
int dsm_nprocs(void);

/* Shared memory kept coherent page by page (the VM version). Packed like
 * malloc (16-byte aligned), so small allocations share pages. Zero-filled.
 * Collective. NULL with errno ENOMEM when the heap (DSM_HEAP_SIZE) is full. */
void *dsm_malloc(size_t size);

/* One shared region kept coherent as a whole (the RT version): an rtl
 * region, returned and stored in *bptr, which becomes a bound pointer of it.
 * Reach the region only through registered pointers, and read them again
 * after every acquire and barrier (declare them volatile; docs/dsm.md).
 * Zero-filled. Collective. NULL with errno set on failure. */
void *dsm_region_alloc(size_t size, void *bptr);

/* The same on the kernel's written bits (the WB version, docs/dsm.md): a
 * region of a page or more that the kernel lets rtl watch takes no write
 * trap; which were written is asked of the kernel at each release and
 * barrier. Smaller ones, and all where the kernel refuses, are
 * dsm_region_alloc's. Collective. NULL with errno set on failure. */
void *dsm_region_alloc_wb(size_t size, void *bptr);

/* Annotated regions (the paper's AN version): a region that never traps.
 * Before each series of accesses to it after a synchronisation, the program
 * calls dsm_read_access or dsm_write_access with the start dsm_an_alloc
 * returned (the paper's readaccess / writeaccess); an access without one
 * may see stale data, and a write without one is lost (the DSM stops the
 * run when it notices). Collective allocation; NULL with errno. */
void *dsm_an_alloc(size_t size);
void dsm_read_access(const void *region);
void dsm_write_access(void *region);

/* Locks 0 .. DSM_MAX_LOCKS-1; lock l is managed by rank l % nprocs. An
 * acquire waits as long as the holder lives (heartbeats; DSM_TIMEOUT). */
#define DSM_MAX_LOCKS 1024
int dsm_lock_acquire(int lock);
int dsm_lock_release(int lock);

/* All ranks meet; afterwards each sees every write made before the barrier. */
int dsm_barrier(void);

/* What one rank did (counters since dsm_init or the last dsm_stats_reset). */
struct dsm_stats {
	uint64_t traps;           /* DSM traps: access misses + write traps */
	uint64_t read_misses;     /* traps on an invalid unit, read */
	uint64_t write_misses;    /* traps on an invalid unit, write */
	uint64_t write_traps;     /* first write to a valid unit: twin taken */
	uint64_t stale_traps;     /* rtl traps resolved without a handler (RT) */
	uint64_t messages;        /* MPI messages sent to other ranks */
	uint64_t bytes;           /* their payload bytes */
	uint64_t diff_requests;   /* diff request messages sent */
	uint64_t diffs_created;   /* own diffs encoded */
	uint64_t diffs_applied;   /* foreign diffs applied */
	uint64_t diff_bytes;      /* bytes of diffs applied */
	uint64_t acquires;        /* lock acquires */
	uint64_t remote_acquires; /* ... that needed messages */
	uint64_t barriers;
	uint64_t intervals;        /* own intervals with write notices */
	uint64_t notices;          /* write notices received */
	uint64_t miss_ns;          /* time in access misses, trap to resume */
	uint64_t gc_runs;          /* garbage collections (at barriers) */
	uint64_t gc_freed;         /* bytes of consistency information they freed */
	uint64_t barrier_messages; /* of those: arrivals, departures */
	uint64_t barrier_bytes;    /* ... their bytes */
	uint64_t twin_bytes;       /* copied into twins at write traps */
	uint64_t written_units;    /* WB: units the written bits found written */
	/* Not reset by dsm_stats_reset: */
	uint64_t cons_bytes; /* intervals, notices, diffs held now (bytes) */
	uint64_t cons_peak;  /* ... at most, since dsm_init */
	uint64_t snap_bytes; /* copies held for ranks that discarded units */
};

/* This rank's counters. Any thread. */
void dsm_stats(struct dsm_stats *out);

/* Zero this rank's counters (not collective). */
void dsm_stats_reset(void);

/* Collective: rank 0 receives every rank's counters into all[nprocs]
 * (ignored elsewhere). Not counted in the counters. */
int dsm_stats_gather(struct dsm_stats *all);

#ifdef __cplusplus
}
#endif

#endif
