/* The Appel-Li sequences (paper Section 4.1) for each mechanism: VM (page
 * protection), RT (rtl regions, basic and update) and MultiView (an alias
 * mapping per object). Every mechanism offers the same three figures, each
 * an operation (bench_op) over a context of its own:
 *   trap   one trap and return, resolved without a protection change
 *          (VM: the floor, a handler that only rewrites a register);
 *   prot1  reference a protected object; the handler unprotects it and
 *          protects the next one (one operation = one object);
 *   protN  protect N objects, reference each; each trap unprotects the one
 *          that faulted (one call = the N objects, unit N).
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
void vm_trap_begin(void *ctx);
void vm_trap(void *ctx);
void *vm_seq_new(size_t size, int nobj);
void vm_prot1_begin(void *ctx);
void vm_prot1(void *ctx);
void vm_protn_begin(void *ctx);
void vm_protn(void *ctx);

/* MultiView: objects in a memfd, each seen through an alias mapping of its
 * own pages (guard page between aliases), protected with mprotect; a
 * privileged read-write mapping of the whole memfd beside them. */
void *mv_trap_new(void);
void mv_trap_begin(void *ctx);
void mv_trap(void *ctx);
void *mv_seq_new(size_t size, int nobj);
void mv_prot1_begin(void *ctx);
void mv_prot1(void *ctx);
void mv_protn_begin(void *ctx);
void mv_protn(void *ctx);

/* RT: rtl regions with a bound pointer each. Basic protects to PROT_NONE and
 * traps on reads; update protects read-write regions to PROT_READ (the
 * transition that made the paper copy the region and mprotect its read-only
 * copy twice) and traps on writes. rt_trap times a protect plus the trap;
 * rt_protect one protect (a pair, low then read-write: unit 2), to be
 * subtracted. The begin functions set the regions' handlers. */
void *rt_trap_new(int update);
void rt_trap(void *ctx);
void rt_protect(void *ctx);
void *rt_seq_new(size_t size, int nobj, int update);
void rt_prot1_begin(void *ctx);
void rt_prot1(void *ctx);
void rt_protn_begin(void *ctx);
void rt_protn(void *ctx);

/* Install h as the SIGSEGV action (SA_SIGINFO | SA_NODEFER | SA_ONSTACK,
 * the flags rtl uses), saving the one in place; segv_end puts it back. */
void segv_install(void (*h)(int, siginfo_t *, void *));
void segv_end(void *ctx);

#endif
