/* rtl — region-granularity memory protection and trap handling.
 *
 * The public API of the Region Trap Library (Brecht & Sandhu, USENIX 1999) for
 * Linux on x86-64 and aarch64. Every call may be made from any thread. Bad input returns -1
 * (or NULL) with errno set and changes nothing. See docs/guide.md. */
#ifndef RTL_REGION_H
#define RTL_REGION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h> /* PROT_NONE, PROT_READ, PROT_WRITE */
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef RTL_API
#define RTL_API __attribute__((visibility("default")))
#endif

/* What a region handler is told about one trap. */
typedef struct rtl_trap {
	void *addr;    /* faulting address, as the program used it */
	void *base;    /* start of the region, in the same view as addr */
	size_t size;   /* region size */
	size_t offset; /* addr - base */
	int write;     /* non-zero for a write access */
	int prot;      /* the region's protection when it trapped */
	void *data;    /* the region's user data (region_set_data) */
} rtl_trap_t;

typedef void (*region_handler_t)(rtl_trap_t *trap);

/* A "pointer variable" argument (bptr, pptr) is the address of a pointer of
 * any type: pass &x for char *x. rtl rewrites that variable on every
 * protection change of the region it points into. */

/* Allocate a zero-filled region of size bytes, readable and writable. If bptr
 * is not NULL, *bptr is set to the region and registered as a bound pointer. */
RTL_API void *region_alloc(size_t size, void *bptr);

/* Make [addr, addr + size) a region. Memory outside rtl's views is copied into
 * a new region (the original is left to its owner) and the new address is
 * returned; bptr, if given and pointing into the old range, is moved to it. */
RTL_API void *region_define(void *addr, size_t size, void *bptr);

/* End the region that contains addr. Its bound pointers are unregistered. */
RTL_API int region_free(void *addr);

/* Register bptr2 as a bound pointer of the region that *bptr points into. */
RTL_API int region_bptr(void *bptr, void *bptr2);

/* Register an unbounded pointer: it may point into any region at any time. */
RTL_API int region_ptr(void *pptr);

/* Forget a pointer registered by region_alloc/define, region_bptr or
 * region_ptr. */
RTL_API int region_ptr_free(void *pptr);

/* Set the trap handler of the region containing addr; addr NULL sets the
 * default handler for regions without one. h NULL removes it. */
RTL_API int region_handler(void *addr, region_handler_t h);

/* Set the protection of the region containing addr: PROT_NONE, PROT_READ or
 * PROT_READ|PROT_WRITE. No system call: registered pointers are rewritten. */
RTL_API int region_protect(void *addr, int prot);

/* MAP2: move only the pointer variable pptr to the view of prot. */
RTL_API int region_protect_ptr(void *pptr, int prot);

/* Attach user data, handed to the handler in rtl_trap_t.data. */
RTL_API int region_set_data(void *addr, void *data);

/* ---- DIRTY and diffs (docs/dirty.md) ----
 *
 * A tracked region keeps a twin, the region as it was at its last checkpoint;
 * region_diff compares the region with it. rtl sees a region's writes in one
 * of two ways (region_tracking says which, region_dirty_backend which one the
 * process has):
 *   traps         TreadMarks-style: tracking lowers a writable region to
 *                 PROT_READ, the first write trap after a checkpoint copies
 *                 the region before any handler runs; with no handler, rtl
 *                 itself grants the write (back to PROT_READ|PROT_WRITE);
 *   written bits  the kernel records the first write to each page with no
 *                 signal (userfaultfd write-protection, Linux 6.7): the
 *                 protection stays as it is, the twin is copied at the
 *                 checkpoint, and region_dirty asks the kernel which pages
 *                 were written, then compares only their regions. */

/* One run of modified bytes: [offset, offset + len) of the region. */
typedef struct rtl_run {
	size_t offset;
	size_t len;
} rtl_run_t;

/* region_track's on: off, or how the region's writes are to be seen.
 *   RTL_TRACK_ON       written bits where the kernel has them and no handler
 *                      (the region's own or the default) would see a write;
 *                      else traps
 *   RTL_TRACK_TRAPS    traps: a handler sees each epoch's first write
 *   RTL_TRACK_WRITTEN  written bits where the kernel has them, a handler or
 *                      not (it sees only the traps the region's protection
 *                      makes); else traps */
#define RTL_TRACK_OFF 0
#define RTL_TRACK_ON 1
#define RTL_TRACK_TRAPS 2
#define RTL_TRACK_WRITTEN 3

/* Switch dirty/diff tracking of the region containing addr on (on is one of
 * RTL_TRACK_ON, _TRAPS, _WRITTEN) or off (RTL_TRACK_OFF). On: the twin
 * storage is allocated now and the region has no modification yet; on traps
 * PROT_READ|PROT_WRITE becomes PROT_READ. Again on a tracked region: changes
 * nothing, or switches it to the other way. Not from a region handler.
 * EINVAL for any other value of on. */
RTL_API int region_track(void *addr, int on);

/* Tracked regions written since their mark was last reset. Fills up to max
 * bases (each the region's start in the view of its current protection) and
 * returns the total count; reset clears the marks of the regions it filled
 * in, so calling again reports the rest. bases may be NULL with max 0. On
 * written bits a region is marked once a page of it was written and its
 * bytes differ from its twin. Not from a region handler. */
RTL_API size_t region_dirty(void **bases, size_t max, int reset);

/* The modified byte runs of a tracked region against its twin, in order,
 * each maximal. Returns the number of runs; with max 0, only counts them.
 * If they do not fit: -1 with ENOSPC (the first max are filled in). */
RTL_API ssize_t region_diff(void *addr, rtl_run_t *runs, size_t max);

/* The diff of a tracked region as a self-contained, portable buffer (format
 * in docs/dirty.md). Returns its length; with cap 0, returns the length
 * needed and writes nothing. If it does not fit in cap: -1 with ENOSPC. */
RTL_API ssize_t region_diff_encode(void *addr, void *buf, size_t cap);

/* Apply an encoded diff to the region containing addr, which must have the
 * size the diff was made from. The whole buffer is checked first: on any
 * malformed, truncated or mismatched input, -1 with EINVAL and the region is
 * untouched. Writes whatever the region's protection; if the region has a
 * twin, it is patched too (applied changes are not local modifications). */
RTL_API int region_diff_apply(void *addr, const void *buf, size_t len);

/* Start a new epoch: twin := contents now, the dirty mark is cleared. On
 * traps lazily (the twin is dropped and the next write trap takes a new one)
 * and a writable region becomes PROT_READ so that its next write traps; on
 * written bits the region's pages are armed again, then the twin copied. */
RTL_API int region_checkpoint(void *addr);

/* How writes are seen: region_tracking and region_dirty_backend's answers. */
#define RTL_DIRTY_TRAPS 1
#define RTL_DIRTY_WRITTEN_BITS 2

/* How the region containing addr is tracked: 0 (not tracked),
 * RTL_DIRTY_TRAPS or RTL_DIRTY_WRITTEN_BITS; -1 with errno (EINVAL, ENOENT). */
RTL_API int region_tracking(const void *addr);

/* Whether this process has the kernel's written bits (RTL_DIRTY_WRITTEN_BITS)
 * or tracks by traps only (RTL_DIRTY_TRAPS), asking the kernel the first
 * time; *why (if why is not NULL) gets a sentence saying why, e.g. that
 * userfaultfd(2) is not implemented, or that the environment variable
 * RTL_DIRTY=traps chose traps. -1 with errno if rtl cannot start. */
RTL_API int region_dirty_backend(const char **why);

/* ---- Diffs of plain buffers (docs/dirty.md) ----
 *
 * The encoding of region_diff_encode for memory that is not a region (a
 * DSM's pages, a buffer received from elsewhere). No malloc, no locks: a
 * region handler may call them. */

/* Encode cur against twin (size bytes each) into buf. Returns the length;
 * cap 0 returns the length needed and writes nothing. -1 with ENOSPC if it
 * does not fit in cap, EINVAL for NULL buffers. */
RTL_API ssize_t region_buf_diff_encode(const void *cur, const void *twin,
                                       size_t size, void *buf, size_t cap);

/* 0 if buf (len bytes) is a well-formed diff of a size-byte unit, else -1
 * with EINVAL. Never reads outside [buf, buf + len). */
RTL_API int region_buf_diff_check(const void *buf, size_t len, size_t size);

/* Check buf, then write its runs into dst (size bytes). Malformed input:
 * -1 with EINVAL, dst untouched. */
RTL_API int region_buf_diff_apply(void *dst, size_t size, const void *buf,
                                  size_t len);

/* ---- Lookup, views, protection in place (docs/guide.md) ---- */

/* Start rtl now instead of at the first call that needs it (its views,
 * decoder and trap handler), so that the cost is not paid later. 0, or -1
 * with errno if rtl cannot start. */
RTL_API int region_init(void);

/* The region holding addr, through any view. */
struct region_info {
	void *base;    /* its first byte, in the view addr lies in */
	size_t size;   /* bytes, as allocated or defined */
	size_t offset; /* addr - base */
	int prot;      /* what an access through addr's view gets */
	void *data;    /* its user data (region_set_data) */
};

/* Fill *out for the region whose span holds addr (its size rounded up to
 * rtl's granule of 64 bytes). Lock-free and async-signal-safe. 0, or -1
 * with errno ENOENT (no region there) or EINVAL (out NULL). */
RTL_API int region_find(const void *addr, struct region_info *out);

/* The same byte as addr (an address in a region, through any view) through
 * the view of protection prot: a second pointer to the region with prot's
 * rights (MAP2 without registering it; region_protect never moves it).
 * NULL with EINVAL if addr is not in rtl's memory or prot is not one of the
 * three protections. */
RTL_API void *region_view(const void *addr, int prot);

/* Protect the region starting at addr in place from now on: addr's view
 * (PROT_READ or PROT_NONE) becomes its home, its bound pointers move there,
 * pointers into it are never moved again (not by region_protect, not by a
 * trap), and its protection, prot now, is set on the home view's pages with
 * mprotect. For code whose copies of a pointer rtl cannot reach
 * (docs/internals.md, "In-place regions"). The region must be the only one
 * on the pages it touches, now and while it lives. 0, or -1 with errno:
 * EINVAL (not a region's start, bad prot, the writable view, already in
 * place, MAP2), EBUSY (another region shares a page, or may: a region_alloc
 * block under a page), ENOMEM (the kernel's mapping limit). */
RTL_API int region_protect_in_place(void *addr, int prot);

/* ---- Regions of 16 bytes: memory tags (aarch64 MTE; docs/mechanisms.md) ----
 *
 * Where the CPU and kernel have Arm's memory tagging, a region can keep its
 * protection in the 4-bit tags of its 16-byte granules instead of in the
 * views: its pointer carries a tag that never changes, and protecting it
 * gives its granules another, so that every access through the pointer
 * faults at granule grain. No pointer moves, no system call, no copy;
 * neighbours on one page trap only on their own granules. Tags give
 * PROT_NONE and PROT_READ|PROT_WRITE. Threads check tags from librtl's
 * load on (one running before a dlopen of it: see docs/guide.md). */

/* Where a region keeps its protection: region_mechanism's and
 * region_tag_backend's answers. */
#define RTL_ON_VIEWS 1 /* the views: pointers move between them */
#define RTL_ON_TAGS 2  /* memory tags per 16-byte granule */

/* Allocate a zero-filled, readable and writable region of size bytes on
 * memory tags where this process has them (region_tag_backend), else on
 * the views exactly as region_alloc does. read_only: non-zero if the
 * region will ever be given PROT_READ alone, which tags cannot express:
 * then it goes on the views. *bptr, if given, is set; a tag region's
 * pointers never move, so nothing is registered. region_mechanism says
 * where it went. NULL with errno (EINVAL for size 0, ENOMEM). */
RTL_API void *region_alloc_tagged(size_t size, void *bptr, int read_only);

/* Where the region holding addr keeps its protection: RTL_ON_VIEWS or
 * RTL_ON_TAGS; -1 with errno (EINVAL for NULL, ENOENT). On a tag region,
 * region_protect takes PROT_NONE and PROT_READ|PROT_WRITE (ENOTSUP for
 * PROT_READ); region_protect_ptr, region_view, region_track and
 * region_protect_in_place, which need the views, fail with EINVAL or
 * ENOTSUP; the other calls work as on any region. */
RTL_API int region_mechanism(const void *addr);

/* Whether region_alloc_tagged can place regions on tags here:
 * RTL_ON_TAGS, or RTL_ON_VIEWS with *why (if why is not NULL) saying
 * why not (no MTE in the CPU or kernel, x86-64, RTL_TAG=off). Asking
 * turns tag checks on for the calling thread. -1 with errno if rtl cannot
 * start. */
RTL_API int region_tag_backend(const char **why);

/* ---- Statistics ---- */

struct region_stats {
	uint64_t traps;         /* faults in rtl's views */
	uint64_t handler_calls; /* region handlers run */
	uint64_t stale_traps;   /* resolved by swizzling alone */
	uint64_t protects;      /* successful region_protect calls */
	uint64_t regions;       /* live regions */
	uint64_t foreign;       /* SIGSEGVs passed to the previous handler */
	uint64_t decode_hits;   /* decode cache */
	uint64_t decode_misses;
	uint64_t trap_ns;           /* time in rtl's SIGSEGV handler on faults
	                             * in the views (outermost traps), while
	                             * region_time_traps is on */
	uint64_t syscall_buffers;   /* buffers in the views that a wrapped call
	                             * resolved before the kernel saw them */
	uint64_t in_place_protects; /* protection changes of regions protected
	                             * in place (mprotect) */
	uint64_t in_place_failed;   /* ... refused by the kernel: the region
	                             * went back to moving pointers */
};

/* Counters since start (starts rtl). 0, or -1 with errno. */
RTL_API int region_stats(struct region_stats *out);

/* Measure the time spent in traps (trap_ns): two clock reads per trap,
 * about a tenth of a trap's own work, so off unless asked for. */
RTL_API void region_time_traps(int on);

#ifdef __cplusplus
}
#endif

#endif /* RTL_REGION_H */
