/* Moving a trap's interrupted registers between views (move.h): every
 * register lying in the region's span, then the address forms kept where
 * they pointed, by the instruction's cached move plan or the solver of
 * decoder/derive.c.
 *
 * Signal-handler code: no malloc, no locks; readable() makes one system
 * call, only when the solver asks what lies at an address. */
#include "core/trap/move.h"
#include "core/trap/trap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/region/region.h"
#include "core/region/views.h"
#include "core/util/page.h"
#include "decoder/derive.h"

/* The lowest address a mapping may have (vm.mmap_min_addr), read at start:
 * a register holding less is a number, never a pointer. */
static uint64_t min_addr = 65536;

/* Whether a could be a pointer the program dereferences: a readable byte
 * is there. Reservations (PROT_NONE: sanitizer shadow gaps, a JVM's or a
 * runtime's heap not yet in use) hold no object, so a difference of two
 * addresses that lands in one is still no address. process_vm_readv
 * answers EFAULT instead of faulting; where it is refused (a seccomp
 * filter), mincore tells at least whether anything is mapped there. */
static int readable(uint64_t a)
{
	unsigned char byte, vec;
	struct iovec local = { &byte, 1 }, remote = { (void *)a, 1 };

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1)
		return 1;
	if (errno == EFAULT)
		return 0;
	if (mincore((void *)(a & ~(uint64_t)(rtl_page_size() - 1)), 1, &vec) == 0)
		return 1;
	return errno != ENOMEM;
}

/* What lies at address a, outside the span being moved, for derive.c. */
static enum rtl_where where_is(uint64_t a, void *arg)
{
	struct rtl_found f;

	(void)arg;
	if (rtl_view_of(a) >= 0) {
		if (rtl_region_find(a, &f) != 0)
			return RTL_AT_FREE;
		return f.off - f.r->lo < f.r->size ? RTL_AT_OBJECT : RTL_AT_EDGE;
	}
	/* Canonical user addresses end below 2^47 (2^56 with 5-level
	 * paging, which mincore then tells). */
	if (a < min_addr || a >= (uint64_t)1 << 56 || !readable(a))
		return RTL_AT_NOADDR;
	return RTL_AT_OBJECT;
}

/* The registers that lie in r's span, by view (bit i of held[v]): one
 * pass over them for every view a move may leave. */
static void held_by_view(const uint64_t gpr[RTL_NGPR], const struct rtl_region *r,
                         rtl_regset_t held[RTL_NVIEWS])
{
	uint64_t lo = rtl_views.base + r->lo, s = rtl_views.size, span = r->span;
	uint64_t all = RTL_NVIEWS * s;
	rtl_regset_t h[RTL_NVIEWS] = { 0 };

#pragma GCC unroll 32
	for (int i = 0; i < RTL_NGPR; i++) {
		uint64_t d = gpr[i] - lo; /* from the span's start in NONE */
		int v;

		if (d >= all)
			continue; /* most registers: outside the views */
		v = d < s ? 0 : d < 2 * s ? 1
		                          : 2;
		if (d - (uint64_t)v * s < span)
			h[v] |= (rtl_regset_t)1 << i;
	}
	for (int v = 0; v < RTL_NVIEWS; v++)
		held[v] = h[v];
}

/* The plain move breaks an address form: move, then let the solver of
 * decoder/derive.c choose the registers the forms use anew. Out of line:
 * the common trap never comes here. */
static __attribute__((noinline)) void move_derived(struct trap *t,
                                                   const struct rtl_move *mv,
                                                   rtl_regset_t held)
{
	uint64_t old[RTL_NGPR];

	memcpy(old, t->gpr, sizeof(old));
	for (rtl_regset_t h = held; h; h &= h - 1)
		t->gpr[__builtin_ctz(h)] += (uint64_t)mv->delta;
	if (rtl_derive_fix(&t->insn, t->op, mv, old, t->gpr) < 0)
		t->ambiguous = 1;
}

/* Move the interrupted registers held (those in r's span in view from) to
 * view to, then keep the addresses the instruction and the code after it
 * form pointing where they pointed (difference and biased registers): the
 * solver runs only when the plain move breaks one. Whether it ran (then
 * any register may have moved). */
static inline int move_view(struct trap *t, const struct rtl_region *r, int from,
                            int to, rtl_regset_t held)
{
	struct rtl_move mv;

	if (from == to)
		return 0;
	mv.lo = rtl_view_base(from) + r->lo;
	mv.hi = mv.lo + r->span;
	mv.end = mv.lo + r->size;
	mv.delta = (int64_t)(rtl_view_base(to) - rtl_view_base(from));
	mv.where = where_is;
	mv.arg = NULL;
	/* Whether every form reaches what it did after the plain move: the
	 * common case, decided by the instruction's cached plan. */
	if (!t->have_insn || !rtl_derive_needed_fast(&t->insn, &mv, t->gpr, held)) {
		for (rtl_regset_t h = held; h; h &= h - 1)
			t->gpr[__builtin_ctz(h)] += (uint64_t)mv.delta;
		return 0;
	}
	move_derived(t, &mv, held);
	return 1;
}

/* The views (bit v) that hold a register of r or one of the faulting
 * instruction's address forms: a view with neither has nothing to move. */
static unsigned views_to_move(const struct trap *t, const struct rtl_region *r,
                              rtl_regset_t held[RTL_NVIEWS])
{
	unsigned views = 0;

	held_by_view(t->gpr, r, held);
	for (int v = 0; v < RTL_NVIEWS; v++)
		views |= (unsigned)(held[v] != 0) << v;
	if (t->have_insn)
		views |= rtl_derive_forms_in_fast(&t->insn, t->gpr, rtl_views.base + r->lo,
		                                  r->span, rtl_views.size);
	return views;
}

/* Every register of regs (n of them) lying in r's span, in any view, to
 * view to: one pass, a few instructions for each register outside the
 * views (most of them). */
static inline void move_span(uint64_t *regs, int n, const struct rtl_region *r, int to)
{
	uint64_t lo = rtl_views.base + r->lo, s = rtl_views.size, span = r->span;
	uint64_t all = RTL_NVIEWS * s;

#pragma GCC unroll 32
	for (int i = 0; i < n; i++) {
		uint64_t d = regs[i] - lo; /* from the span's start in NONE */
		uint64_t v;

		/* The register is rebuilt from d: hidden from the compiler,
		 * which would otherwise keep a copy of it, so that the common
		 * register (outside the views) costs a load, a subtraction, a
		 * compare and a branch. */
		__asm__(""
		        : "+r"(d));
		if (d >= all)
			continue;
		v = d < s ? 0 : d < 2 * s ? 1
		                          : 2;
		if (d - v * s < span)
			regs[i] = lo + d + ((uint64_t)to - v) * s;
	}
}

/* The fast path's move, by scan.h's vector scan where the CPU has one
 * (chosen at install): the registers within the three views' reach of the
 * span, then move_span's rule for each of them (usually one or two). */
#ifdef RTL_SCAN_AVX2
int rtl_move_scan_avx2;

__attribute__((target("avx2"))) void rtl_move_frame_avx2(uint64_t *frame,
                                                         const struct rtl_region *r, int to)
{
	uint64_t lo = rtl_views.base + r->lo, s = rtl_views.size, span = r->span;

	for (uint32_t near = rtl_scan_avx2(frame, lo, RTL_NVIEWS * s); near;
	     near &= near - 1) {
		int i = __builtin_ctz(near);
		uint64_t d = frame[i] - lo;
		uint64_t v = d < s ? 0 : d < 2 * s ? 1
		                                   : 2;

		if (d - v * s < span)
			frame[i] = lo + d + ((uint64_t)to - v) * s;
	}
}
#endif

void rtl_move_frame_scalar(uint64_t *frame, const struct rtl_region *r, int to)
{
	move_span(frame, RTL_NGPR, r, to);
}

/* The common trap's move: a plain instruction (its one form is base +
 * disp, nothing after it forms an address; derive.h) and every view moving
 * to view to. The form reaches its object after the plain move exactly
 * when its base and its address lie in the span of the same view, or
 * neither does in a view that moves; then one pass over the registers
 * moves them all. 0 if it did, -1 if the general path must (the registers
 * are untouched). */
static int move_plain(struct trap *t, const struct rtl_region *r, int to)
{
	uint64_t lo = rtl_views.base + r->lo, s = rtl_views.size, span = r->span;
	unsigned ea_in = rtl_view_bit(rtl_plain_ea(&t->insn, t->gpr), lo, span, s);
	unsigned base_in = rtl_view_bit(t->gpr[t->insn.mem[0].base], lo, span, s);

	if ((ea_in ^ base_in) & ~(1u << to))
		return -1;
	move_span(t->gpr, RTL_NGPR, r, to);
	return 0;
}

/* Every register of t in r's span, in any view other than to (from < 0)
 * or in view from only, to view to. */
static void move_registers(struct trap *t, const struct rtl_region *r, int from, int to)
{
	rtl_regset_t held[RTL_NVIEWS];
	unsigned allowed, todo;

	if (from < 0 && t->have_insn && (t->insn.flags & RTL_INSN_PLAIN) &&
	    move_plain(t, r, to) == 0) {
		t->moved_r = r;
		t->moved_to = to;
		return;
	}
	allowed = (from >= 0 ? 1u << from : (1u << RTL_NVIEWS) - 1) & ~(1u << to);
	todo = views_to_move(t, r, held) & allowed;
	while (todo) {
		int v = __builtin_ctz(todo);

		todo &= todo - 1;
		/* The solver may have moved any register, into a later view
		 * too: look again at the views after v. Otherwise what moved
		 * is in to's span now, and the other views' registers and
		 * forms are as they were. */
		if (move_view(t, r, v, to, held[v]))
			todo = views_to_move(t, r, held) & allowed & ~((2u << v) - 1);
	}
	if (from < 0) { /* every view's registers are in to's now */
		t->moved_r = r;
		t->moved_to = to;
	}
}

/* Leaving the fast path (materialize is a no-op off it): the general
 * path's move. */
static __attribute__((noinline)) void move_now(struct trap *t, const struct rtl_region *r,
                                               int from, int to)
{
	rtl_trap_materialize(t);
	move_registers(t, r, from, to);
}

/* region_protect's call, from the handler of the trap being handled
 * (rtl_trap_move_registers in trap.h has seen that there is one). On the
 * fast path, the trapping region's move is only noted: the frame moves
 * once, after the handler (trap.c). */
void rtl_trap_move_registers_now(const struct rtl_region *r, int from, int to)
{
	struct trap *t = rtl_trap_now;

	/* The note alone, without move_registers' frame: the common grant. */
	if (t->lazy && from < 0 && r == t->f.r) {
		t->pending_to = to;
		return;
	}
	move_now(t, r, from, to);
}

/* The move the fast path noted, made by the general path's rules. */
void rtl_move_pending(struct trap *t)
{
	int to = t->pending_to;

	t->pending_to = -1;
	if (to >= 0)
		move_registers(t, t->f.r, -1, to);
}

void rtl_move_from(struct trap *t, const struct rtl_region *r, int from, int to)
{
	rtl_regset_t held[RTL_NVIEWS];

	held_by_view(t->gpr, r, held);
	move_view(t, r, from, to, held[from]);
}

/* vm.mmap_min_addr, where the kernel tells it. */
void rtl_move_init(void)
{
	char buf[32];
	int fd = open("/proc/sys/vm/mmap_min_addr", O_RDONLY | O_CLOEXEC);
	ssize_t n;

#ifdef RTL_SCAN_AVX2
	rtl_move_scan_avx2 = rtl_scan_avx2_ok();
#endif
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	min_addr = strtoull(buf, NULL, 10);
	if (min_addr < rtl_page_size())
		min_addr = rtl_page_size(); /* page zero is never a pointer */
}
