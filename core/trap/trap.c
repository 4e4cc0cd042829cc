/* The SIGSEGV handler: tell rtl's traps from everyone else's, run the
 * region's handler, swizzle the interrupted registers and resume.
 *
 * Everything here runs in a signal handler: no malloc, no stdio, no lock that
 * the interrupted code may hold (region spin locks are never held across an
 * access to region memory, so the faulting code cannot be holding one). */
#include "core/trap/trap.h"
#include "core/trap/trap_state.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "core/dirty/dirty.h"
#include "core/prot/prot.h"
#include "core/region/inplace.h"
#include "core/region/lookup.h"
#include "core/region/region.h"
#include "core/region/views.h"
#include "core/start/stats.h"
#include "core/tag/fault.h"
#include "core/tag/mte.h"
#include "core/trap/attribute.h"
#include "core/trap/context.h"
#include "core/trap/foreign.h"
#include "core/trap/hooks.h"
#include "core/trap/move.h"
#include "core/util/clock.h"
#include "decoder/cache.h"
#include "decoder/decoder.h"
#include "decoder/derive.h"

#define MAX_DEPTH 8 /* nested traps: a handler touching other regions */
#define TLS __thread __attribute__((tls_model("initial-exec")))

TLS struct trap *rtl_trap_now;
static TLS int depth;

/* ---- foreign faults ---- */

/* A fault on the home pages of a region protected in place (inplace.c):
 * rtl's, even when the region allows the access by now (another thread
 * granted it since; the trap path then just resumes). */
static int in_place_fault(uintptr_t addr, int view)
{
	struct rtl_found f;

	return rtl_region_find(addr, &f) == 0 && rtl_region_home(f.r) == view;
}

/* A fault in the views is rtl's unless the view's own mapping allows the
 * access (then someone else changed the mapping: the program's mprotect;
 * or a region protected in place made it stricter) or the filter claims it
 * for the program (foreign.c). The gap (views.h) is rtl's too: memory no
 * one was handed. */
static int ours(uintptr_t addr, int write)
{
	int view = rtl_view_of(addr);

	if (view < 0)
		return 0;
	if (rtl_view_allows(view, write) && !in_place_fault(addr, view) &&
	    !rtl_views_in_gap(addr))
		return 0;
	return !rtl_hooks_filter(addr, write);
}

void rtl_trap_granted_in_place(const struct rtl_region *r, int view)
{
	struct trap *t = rtl_trap_now;

	if (t && t->f.r == r && rtl_view_allows(view, t->write))
		t->granted = 1;
}

int rtl_trap_current_region(uintptr_t a, struct rtl_found *f)
{
	const struct trap *t = rtl_trap_now;
	int view;
	uint64_t off;

	/* Outside a trap (most calls): one TLS load. */
	if (!t || !t->f.r || (view = rtl_view_of(a)) < 0)
		return -1;
	off = a - rtl_view_base(view);
	if (off - t->f.r->lo >= t->f.r->span)
		return -1;
	f->r = t->f.r;
	f->gen = t->f.gen;
	f->view = view;
	f->off = off;
	return 0;
}

/* ---- region traps ---- */

static inline __attribute__((always_inline)) void call_handler(struct trap *t,
                                                               region_handler_t h)
{
	struct rtl_region *r = t->f.r;
	uintptr_t base = rtl_view_base(t->f.view) + r->lo;
	int mixed = atomic_load(&r->mixed);
	rtl_trap_t info = {
		.addr = (void *)t->inside,
		.base = (void *)base,
		.size = r->size,
		.offset = t->inside - base,
		.write = t->write,
		.prot = rtl_view_prot(mixed ? t->f.view : atomic_load(&r->view)),
		.data = atomic_load(&r->data),
	};

	atomic_fetch_add_explicit(&r->traps, 1, memory_order_relaxed);
	t->outer = rtl_trap_now;
	rtl_trap_now = t;
	h(&info);
	rtl_trap_now = t->outer;
}

/* A trap on the home pages of a region protected in place: the handler
 * changes the pages' protection; the instruction runs again as it was, no
 * register moved (inplace.c). */
static void in_place_trap(struct trap *t, region_handler_t h)
{
	struct rtl_region *r = t->f.r;

	if (rtl_view_allows(atomic_load(&r->view), t->write)) {
		/* Granted by another thread since the fault. */
		RTL_COUNT(stale_traps);
		rtl_inplace_resync(r);
		return;
	}
	if (!h) {
		rtl_trap_die(t, "unhandled region trap (no handler)");
		return;
	}
	RTL_COUNT(handler_calls);
	call_handler(t, h);
	if (rtl_region_home(r) != t->f.view) {
		/* The kernel refused the mprotect (out of mappings): r moves
		 * pointers now, like any region. */
		int cv = atomic_load(&r->view);

		if (!rtl_view_allows(cv, t->write)) {
			rtl_trap_die(t, "region trap not granted by its handler");
			return;
		}
		rtl_move_from(t, r, t->f.view, cv);
		if (!rtl_trap_resolved(t))
			rtl_trap_die_unresolved(t, 0);
		return;
	}
	/* Granted, though maybe lowered again since by another thread: the
	 * instruction then meets that protection as a new trap. */
	if (!t->granted &&
	    !rtl_view_allows(rtl_region_view_at(r, t->f.view), t->write))
		rtl_trap_die(t, "region trap not granted by its handler");
}

static region_handler_t handler_of(const struct rtl_region *r)
{
	region_handler_t h = atomic_load(&r->handler);

	return h ? h : atomic_load(&rtl_default_handler);
}

/* After the handler of a region that moves pointers: the registers to the
 * view it allows now, unless its region_protect moved them already. */
static void settle(struct trap *t, struct rtl_region *r)
{
	if (!atomic_load(&r->mixed)) {
		int cv = atomic_load(&r->view);

		if (!rtl_view_allows(cv, t->write)) {
			rtl_trap_die(t, "region trap not granted by its handler");
			return;
		}
		/* The handler's region_protect moved every register of r to
		 * cv already (rtl_trap_move_registers): nothing is left in
		 * f.view's span, by register or by form. */
		if (t->moved_r != r || t->moved_to != cv)
			rtl_move_from(t, r, t->f.view, cv);
	}
	if (!rtl_trap_resolved(t))
		rtl_trap_die_unresolved(t, atomic_load(&r->mixed));
}

static void region_trap(struct trap *t)
{
	struct rtl_region *r = t->f.r;
	region_handler_t h;
	int cv;

	if (rtl_region_home(r) == t->f.view) {
		if (t->write)
			rtl_dirty_write_trap(&t->f);
		in_place_trap(t, handler_of(r));
		return;
	}
	if (!t->have_insn && !rtl_decoder_ready()) {
		rtl_trap_die(t, "trap on a region that moves pointers, in a process "
		                "that started rtl without its decoder");
		return;
	}
	if (t->have_insn && (t->insn.flags & RTL_INSN_UNSUPPORTED)) {
		rtl_trap_die(t, "trap by an instruction rtl cannot swizzle (vector "
		                "addresses: gather or scatter)");
		return;
	}
	if (!rtl_trap_write_in_span(t)) {
		rtl_trap_die(t, "write crossing the end of the region it is checked "
		                "against (into a neighbour or free space)");
		return;
	}
	if (t->write) /* a tracked region's twin, before its handler runs */
		rtl_dirty_write_trap(&t->f);
	cv = atomic_load(&r->view);
	if (!atomic_load(&r->mixed) && rtl_view_allows(cv, t->write)) {
		/* A stale pointer: the region already allows this access. */
		RTL_COUNT(stale_traps);
		rtl_move_from(t, r, t->f.view, cv);
		if (!rtl_trap_resolved(t))
			rtl_trap_die_unresolved(t, 0);
		return;
	}
	h = handler_of(r);
	if (!h) {
		rtl_trap_die(t, "unhandled region trap (no handler)");
		return;
	}
	RTL_COUNT(handler_calls);
	call_handler(t, h);
	settle(t, r);
}

/* ---- the fast path ---- */

void rtl_trap_materialize(struct trap *t)
{
	if (!t->lazy)
		return;
	t->ambiguous = 0;
	t->dead = 0;
	t->moved_r = NULL;
	t->moved_to = -1;
	t->op = NULL;
	rtl_ctx_gprs(t->uc, t->entry_gpr);
	memcpy(t->gpr, t->entry_gpr, sizeof(t->gpr));
	/* Usually a cache hit again; after an eviction by another thread, a
	 * decode here, in the handler (signal-safe, as on a miss). fast_traps
	 * counted the hit already. */
	t->have_insn = rtl_decode_again(rtl_ctx_pc(t->uc), &t->insn) == 0;
	t->decoded = 1;
	if (t->have_insn && !(t->op = rtl_trap_operand(t)))
		t->op = rtl_trap_operand_in_span(t);
	/* Only now: a signal handler's region_protect between here and the
	 * start would have found no registers to move. */
	t->lazy = 0;
	rtl_move_pending(t);
}

/* The common trap, read and moved in the signal frame itself (no copy of
 * the registers, no copy of the decode): an instruction whose decode is
 * cached with a fast plan that holds on the frame (its one operand and the
 * address forms after it reach, once every register in the span moves,
 * what the general checks ask: derive.h); the operand's base and address
 * in the span of the region at the faulting address, through the view
 * that faulted; the region moves
 * pointers (not protected in place, not mixed), its view does not allow
 * the access yet and it has a handler. Every condition is checked before
 * anything changes: -1 sends the trap down the general path as it came.
 * The handler's region_protect of the region notes the view to move to;
 * anything else (another region, region_protect_ptr, a refusal) leaves the
 * fast path through rtl_trap_materialize, and the general path's rules
 * finish the trap. */
static __attribute__((noinline)) int fast_trap(int sig, siginfo_t *si, ucontext_t *uc)
{
	uint64_t *frame = rtl_ctx_frame(uc);
	const int8_t *slot = rtl_ctx_slots();
	const struct rtl_fast_plan *p;
	uintptr_t addr = (uintptr_t)si->si_addr;
	int view = rtl_view_of(addr), write = rtl_ctx_is_write(uc), cv, saved_errno;
	uint64_t base, ea, lo, t0 = 0;
	struct rtl_region *r;
	region_handler_t h;
	struct trap t;

	p = &t.plan;
	if (view < 0 || rtl_dcache_plan(rtl_ctx_pc(uc), &t.plan) < 0)
		return -1;
	base = frame[slot[p->op.base]];
	ea = base + (uint64_t)(int64_t)p->op.disp;
	if (p->op.index >= 0)
		ea += rtl_index_value(frame[slot[p->op.index]], p->op.ext) * p->op.scale;
	if (addr - ea >= (p->size ? p->size : 1u))
		return -1; /* not the operand's access (write_by_decoding) */
	if (RTL_CTX_DECODE_DECIDES || write < 0)
		write = p->access ? (p->access & RTL_ACC_WRITE) != 0 : write >= 0 ? write
		                                                                  : 1;
	if (rtl_view_allows(view, write) || rtl_region_find_in(addr, view, &t.f) < 0)
		return -1;
	r = t.f.r;
	lo = rtl_view_base(view) + r->lo;
	if (base - lo >= r->span || ea - lo >= r->span ||
	    (write && r->span - (ea - lo) < p->size) || /* rtl_trap_write_in_span */
	    rtl_region_home(r) == view || atomic_load(&r->mixed) ||
	    (!p->only_op && !rtl_fast_plan_holds(p, frame, slot, lo, r->span, rtl_views.base,
	                                         RTL_NVIEWS * rtl_views.size)))
		return -1;
	cv = atomic_load(&r->view);
	if (rtl_view_allows(cv, write) || !(h = handler_of(r)) || depth >= MAX_DEPTH)
		return -1;
	/* Last, so that a fault filter is asked once whichever path the
	 * trap takes: claimed, the fault is the program's (ours()). */
	saved_errno = errno;
	if (rtl_hooks_filter(addr, write)) {
		rtl_foreign_pass_on(sig, si, uc);
		errno = saved_errno;
		return 0;
	}

	if (++depth == 1 && atomic_load_explicit(&rtl_time_traps, memory_order_relaxed))
		t0 = rtl_now_ns();
	RTL_COUNT(fast_traps); /* a trap, a decode-cache hit, a handler call */
	t.addr = t.inside = addr;
	t.uc = uc;
	t.write = write;
	t.lazy = 1; /* the rest of t is filled in by rtl_trap_materialize */
	t.pending_to = -1;
	t.granted = 0;
	if (write) /* a tracked region's twin, before its handler runs */
		rtl_dirty_write_trap(&t.f);
	call_handler(&t, h);
	cv = atomic_load(&r->view);
	if (t.lazy && t.pending_to == cv && rtl_view_allows(cv, write) &&
	    !atomic_load(&r->mixed) &&
	    atomic_load_explicit(&r->gen, memory_order_acquire) == t.f.gen) {
		/* The plan held: every register in the span moves to cv's,
		 * the operand's base and address with it, where the access is
		 * allowed, and the forms after it reach what they did. (The
		 * generation: r was not freed and its record reused meanwhile,
		 * by another thread.) */
		rtl_move_frame(frame, r, cv);
	} else {
		rtl_trap_materialize(&t);
		settle(&t, r);
		if (!t.dead)
			rtl_ctx_set_gprs(uc, t.gpr);
	}
	if (--depth == 0 && t0)
		RTL_ADD(trap_ns, rtl_now_ns() - t0);
	errno = saved_errno;
	return 0;
}

/* ---- the general path ---- */

/* Read or write where the frame cannot settle it (aarch64: no syndrome
 * under qemu-user, and an atomic's syndrome may say read): the decoded
 * operand that holds the address; failing that the frame's word, and with
 * neither a write (a handler asked for a write grants a read too). Decodes
 * once: the trap path below reuses it. */
static int write_by_decoding(struct trap *t, int frame)
{
	const struct rtl_mem_op *m;

	rtl_ctx_gprs(t->uc, t->entry_gpr);
	t->have_insn = rtl_decode(rtl_ctx_pc(t->uc), &t->insn) == 0;
	t->decoded = 1;
	m = t->have_insn ? rtl_trap_operand(t) : NULL;
	if (m && m->access)
		return (m->access & RTL_ACC_WRITE) != 0;
	return frame >= 0 ? frame : 1;
}

/* Every trap the fast path does not take, and every fault that is not
 * rtl's. Out of line: its frame is not the fast path's. */
static __attribute__((noinline)) void general_trap(int sig, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	struct trap t;
	uint64_t t0 = 0;

	t.addr = t.inside = (uintptr_t)si->si_addr;
	t.uc = ucv;
	/* Read or write: the page-fault error code decides (the CPU reports
	 * read-modify-write as a write even on PROT_NONE); the decoded operand
	 * says which operand faulted and how its address was formed. */
	t.write = rtl_ctx_is_write(t.uc);
	t.decoded = 0;
	t.lazy = 0;
	t.pending_to = -1;
	if ((t.write < 0 || RTL_CTX_DECODE_DECIDES) && si->si_code > 0 &&
	    rtl_view_of(t.addr) >= 0)
		t.write = write_by_decoding(&t, t.write);
	if (si->si_code <= 0 || !ours(t.addr, t.write)) {
		/* Outside the views, an extension may own the fault (the
		 * preload's aliases) before the program's action sees it. */
		if (si->si_code <= 0 || rtl_view_of(t.addr) >= 0 ||
		    !rtl_hooks_foreign(t.addr, t.write, SIGSEGV, ucv))
			rtl_foreign_pass_on(sig, si, ucv);
		errno = saved_errno;
		return;
	}
	if (depth == 0 &&
	    atomic_load_explicit(&rtl_time_traps, memory_order_relaxed))
		t0 = rtl_now_ns();
	RTL_COUNT(traps);
	t.f.r = NULL;
	t.op = NULL;
	t.ambiguous = 0;
	t.outer = NULL;
	t.dead = 0;
	t.granted = 0;
	t.moved_r = NULL;
	t.moved_to = -1;
	if (!t.decoded) {
		rtl_ctx_gprs(t.uc, t.entry_gpr);
		t.have_insn = rtl_decode(rtl_ctx_pc(t.uc), &t.insn) == 0;
	}
	memcpy(t.gpr, t.entry_gpr, sizeof(t.gpr));
	if (t.have_insn)
		t.op = rtl_trap_operand(&t);
	if (++depth > MAX_DEPTH) {
		rtl_trap_die(&t, "region traps nested too deeply (a handler keeps trapping)");
	} else if (rtl_trap_attribute(&t) < 0) {
		t.f.r = NULL;
		rtl_trap_die(&t, rtl_views_in_gap(t.addr)
		                         ? "access to rtl's views past the memory rtl has "
		                           "handed out (the program ran off its blocks, "
		                           "or formed the address from pointers through "
		                           "different views)"
		                         : "access to rtl's views outside any region (a "
		                           "freed region?)");
	} else {
		if (t.have_insn && !t.op)
			t.op = rtl_trap_operand_in_span(&t);
		region_trap(&t);
		if (!t.dead)
			rtl_ctx_set_gprs(t.uc, t.gpr);
	}
	if (--depth == 0 && t0)
		RTL_ADD(trap_ns, rtl_now_ns() - t0);
	errno = saved_errno;
}

/* The fast path and the general path each have a frame of their own, and
 * the general path's call is a tail call: a trap that leaves the fast path
 * never holds both on the stack (which may be a small alternate one). */
static void on_sigsegv(int sig, siginfo_t *si, void *ucv)
{
	if (si->si_code > 0 && fast_trap(sig, si, ucv) == 0)
		return;
#if defined(__aarch64__)
	/* A tag-check fault never lies in the views: the tag arena's. */
	if (si->si_code == SEGV_MTESERR) {
		int saved_errno = errno;

		if (rtl_tag_fault(si, ucv) == 0) {
			errno = saved_errno;
			return;
		}
	}
#endif
	general_trap(sig, si, ucv);
}

/* SIGBUS where protection lives in the page tables (core/prot/prot.c): a
 * write to a page write-protected there. It goes to the extension that
 * made the mapping (the preload's foreign hook), as a SIGSEGV outside the
 * views does; anything else (an access past the end of a file, a sent
 * SIGBUS) to the program's SIGBUS action. */
static void on_sigbus(int sig, siginfo_t *si, void *ucv)
{
	int saved_errno = errno;
	uintptr_t addr = (uintptr_t)si->si_addr;

	if (si->si_code <= 0 || !rtl_prot_owns(addr) ||
	    !rtl_hooks_foreign(addr, 1, SIGBUS, ucv))
		rtl_foreign_pass_on(sig, si, ucv);
	errno = saved_errno;
}

static void action(struct sigaction *sa, void (*fn)(int, siginfo_t *, void *))
{
	memset(sa, 0, sizeof(*sa));
	sa->sa_sigaction = fn;
	/* NODEFER: a handler may touch another protected region. */
	sa->sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa->sa_mask);
}

int rtl_trap_install(void)
{
	struct sigaction sa;

	rtl_move_init();
	action(&sa, on_sigsegv);
	return rtl_foreign_install(SIGSEGV, &sa);
}

int rtl_trap_install_bus(void)
{
	struct sigaction sa;

	action(&sa, on_sigbus);
	return rtl_foreign_install(SIGBUS, &sa);
}
