/* The Appel-Li sequences (paper Section 4.1) for each mechanism: VM (page
 * protection), RT (rtl regions, basic and update) and MultiView (an alias
 * mapping per object). Every mechanism offers the same three figures, each
 * a bench_fn over a context of its own:
 *   trap   one trap and return, resolved without a protection change
 *          (VM: the floor, a handler that only rewrites a register);
 *   prot1  reference a protected object; the handler unprotects it and
 *          protects the next one (one operation = one object);
 *   protN  protect N objects, reference each; each trap unprotects the one
 *          that faulted (one operation = one object; batches of N).
 * An object of size S is referenced at every page it spans (one access per
 * 4 KiB), so that VM takes S/4096 traps where a region takes one. */
#ifndef RTL_BENCH_APPEL_LI_H
#define RTL_BENCH_APPEL_LI_H

#include <signal.h>
#include <stddef.h>

#define PAGE 4096ul

/* Accesses made to one object of size bytes: one per page it spans. */
static inline long touches(size_t size)
{
	return size < PAGE ? 1 : (long)(size / PAGE);
}

/* VM: anonymous pages, mprotect, SIGSEGV. trap is the floor. */
void *vm_trap_new(void);
double vm_trap(void *ctx, long n);
void *vm_seq_new(size_t size, int nobj);
double vm_prot1(void *ctx, long n);
double vm_protn(void *ctx, long n);

/* MultiView: objects in a memfd, each seen through an alias mapping of its
 * own pages (guard page between aliases), protected with mprotect; a
 * privileged read-write mapping of the whole memfd beside them. */
void *mv_trap_new(void);
double mv_trap(void *ctx, long n);
void *mv_seq_new(size_t size, int nobj);
double mv_prot1(void *ctx, long n);
double mv_protn(void *ctx, long n);

/* RT: rtl regions with a bound pointer each. Basic protects to PROT_NONE and
 * traps on reads; update protects read-write regions to PROT_READ (the
 * transition that made the paper copy the region and mprotect its read-only
 * copy twice) and traps on writes. rt_trap times a protect plus the trap;
 * rt_protect times one protect (pairs low/read-write), to be subtracted. */
void *rt_trap_new(int update);
double rt_trap(void *ctx, long n);
double rt_protect(void *ctx, long n);
void *rt_seq_new(size_t size, int nobj, int update);
double rt_prot1(void *ctx, long n);
double rt_protn(void *ctx, long n);

/* Installs h as the SIGSEGV action (SA_SIGINFO | SA_NODEFER | SA_ONSTACK,
 * the flags rtl uses) and saves the previous one in *old. */
void segv_install(void (*h)(int, siginfo_t *, void *), struct sigaction *old);
void segv_restore(const struct sigaction *old);

#endif
