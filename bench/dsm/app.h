/* What the DSM applications share: the -m vm|rt|an|wb switch (the one line
 * that differs between the paper's VM and RT versions: dsm_malloc or
 * dsm_region_alloc; AN, annotated regions, also needs the annotations
 * an_read / an_write), the timed section, and the one-line JSON result that
 * bench/dsm/run.py reads. */
#ifndef DSM_APP_H
#define DSM_APP_H

#include <stddef.h>

#include "dsm/dsm.h"

struct app {
	int rt;      /* regions (RT) rather than pages (VM) */
	int an;      /* annotated regions (AN) */
	int wb;      /* regions on the kernel's written bits (WB; rt is set too) */
	int private; /* the sequential reference runs: no annotations */
	int rank, nprocs;
	double t0, elapsed;
	double t_stop; /* when the timed section's counters were gathered */
	struct dsm_stats
	        *all; /* rank 0: every rank's counters for the timed part */
};
extern struct app app;

/* dsm_init, then options: -m vm|rt|an|wb, and each "-x N" named in opts (e.g.
 * "rci" for -r -c -i) into vals[] (positive integers). Exits on bad usage. */
void app_init(int *argc, char ***argv, const char *name, const char *opts,
              long *vals);

/* Shared memory: dsm_malloc (VM), dsm_region_alloc with bptr (RT) or
 * dsm_an_alloc (AN). *bptr is set either way. Ends the run on failure. */
void *app_alloc(size_t size, void *bptr);

/* The timed part: a barrier, counters reset; at the end a barrier, the time,
 * and the counters gathered to rank 0. */
void app_start(void);
void app_stop(void);

/* Contiguous share [*lo, *hi) of n items for this rank. */
void app_share(long n, int rank, long *lo, long *hi);

double app_now(void);

/* The AN version's annotations, before a series of accesses to the region
 * starting at p, after every acquire and barrier: the paper's readaccess
 * and writeaccess. Nothing in the VM and RT versions, nor while the
 * sequential reference runs on private memory. */
static inline void an_read(const void *p)
{
	if (app.an && !app.private)
		dsm_read_access(p);
}

static inline void an_write(void *p)
{
	if (app.an && !app.private)
		dsm_write_access(p);
}

/* DOSA's touches (Hu et al., 4.5.5), for regions: make the first access to a
 * region go through a plain pointer to its start. A loop may address a
 * block through a pointer the compiler biased outside the region (m - J*B
 * indexed from J*B); rtl cannot tell which region such a register belongs to
 * and stops the program ("trap that no register explains"). The write touch
 * is one atomic or of zero: a single write access, no change. */
static inline void touch_read(const void *p)
{
	an_read(p);
	(void)*(const volatile char *)p;
}

static inline void touch_write(void *p)
{
	an_write(p);
	__atomic_fetch_or((char *)p, 0, __ATOMIC_RELAXED);
}

/* Rank 0: print the human line and the RESULT JSON line; every rank: wait
 * for rank 0 at a DSM barrier (serving its reads), end the DSM and exit 0
 * if ok, 1 if the result differed from the sequential run; rank 0 then
 * prints the FINISH JSON line: seconds from the timed section's end to its
 * check's end ("check") and to the DSM's end ("after"). params is a JSON
 * object body like "\"n\":640". */
void app_finish(const char *name, int ok, double seq_time, const char *params);

#endif
