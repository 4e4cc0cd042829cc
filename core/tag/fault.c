/* Traps on memory tags: a tag-check fault (SEGV_MTESERR) in the tag arena,
 * and the kernel's accesses to tag regions on the program's behalf. No
 * register moves: the handler's grant retags the granules and the
 * instruction runs again with the pointer it had.
 *
 * Signal-handler code: no malloc, no locks but a region's spin lock (held
 * only around tag stores, which never fault). */
#include "core/tag/fault.h"

#include <errno.h>

#include "core/region/region.h"
#include "core/start/stats.h"
#include "core/tag/tagged.h"
#include "core/trap/context.h"
#include "core/trap/die.h"
#include "core/util/clock.h"
#include "decoder/decoder.h"

#define TLS __thread __attribute__((tls_model("initial-exec")))

/* The last fault this thread resumed without a handler, and how many
 * times in a row: the same instruction and address faulting again and
 * again on a region that allows it means the pointer itself lacks the
 * region's tag (a program that rewrote the top byte; hardware reports
 * the address without it), not grants racing the fault, which another
 * thread's protection changes can make happen a few times. */
#define STALE_MAX 8
static TLS uintptr_t last_pc, last_addr;
static TLS int stale_run;

/* The region this thread's innermost tag trap is on, and whether its
 * handler granted it: an epoch may protect it again before the handler
 * returns, and the instruction then meets that as a trap of its own. */
static TLS const struct rtl_tag_region *trapping;
static TLS int granted;

void rtl_tag_granted(const struct rtl_tag_region *r)
{
	if (trapping == r)
		granted = 1;
}

static region_handler_t handler_of(const struct rtl_tag_region *r)
{
	region_handler_t h = atomic_load(&r->handler);

	return h ? h : atomic_load(&rtl_default_handler);
}

static void call(struct rtl_tag_region *r, region_handler_t h, uintptr_t a, int write)
{
	uintptr_t base = rtl_tag_base(r);
	rtl_trap_t info = {
		.addr = (void *)a,
		.base = (void *)base,
		.size = r->size,
		.offset = rtl_mte_untag(a) - r->lo,
		.write = write,
		.prot = atomic_load(&r->prot),
		.data = atomic_load(&r->data),
	};

	RTL_COUNT(handler_calls);
	atomic_fetch_add_explicit(&r->traps, 1, memory_order_relaxed);
	h(&info);
}

/* call, noting whether the handler granted r (rtl_tag_granted), with
 * the trap it interrupted (a nested one) kept as it was. */
static int call_granting(struct rtl_tag_region *r, region_handler_t h, uintptr_t a,
                         int write)
{
	const struct rtl_tag_region *outer = trapping;
	int outer_granted = granted, mine;

	trapping = r;
	granted = 0;
	call(r, h, a, write);
	mine = granted;
	trapping = outer;
	granted = outer_granted;
	return mine;
}

static int allows(const struct rtl_tag_region *r)
{
	return atomic_load_explicit(&r->prot, memory_order_acquire) != PROT_NONE;
}

/* Read or write: the syndrome where the frame has one (hardware), else
 * the decoded instruction (qemu-user gives no syndrome), else a write. */
static int fault_write(ucontext_t *uc)
{
	int w = rtl_ctx_is_write(uc);
	struct rtl_insn in;

	if (w >= 0 && !RTL_CTX_DECODE_DECIDES)
		return w;
	if (rtl_decoder_ready() && rtl_decode(rtl_ctx_pc(uc), &in) == 0)
		for (int k = 0; k < in.nmem; k++)
			if (in.mem[k].access)
				return (in.mem[k].access & RTL_ACC_WRITE) != 0;
	return w >= 0 ? w : 1;
}

static int fault(const siginfo_t *si, ucontext_t *uc);

/* Nested tag traps (a handler touching another protected region) are
 * timed with the outermost. */
static TLS int depth;

int rtl_tag_fault(const siginfo_t *si, ucontext_t *uc)
{
	uint64_t t0 = 0;
	int rc;

	if (si->si_code != SEGV_MTESERR || !rtl_tag_owns((uintptr_t)si->si_addr))
		return -1;
	if (depth++ == 0 && atomic_load_explicit(&rtl_time_traps, memory_order_relaxed))
		t0 = rtl_now_ns();
	rc = fault(si, uc);
	if (--depth == 0 && t0)
		RTL_ADD(trap_ns, rtl_now_ns() - t0);
	return rc;
}

static int fault(const siginfo_t *si, ucontext_t *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, pc = rtl_ctx_pc(uc);
	struct rtl_tag_found f;
	struct rtl_tag_region *r;
	region_handler_t h;
	int write;

	write = fault_write(uc);
	RTL_COUNT(traps);
	if (rtl_tag_find(a, &f) < 0) {
		rtl_trap_die_tag(uc, a, write, NULL,
		                 "access to rtl's tag arena outside any region (a "
		                 "freed region?)");
		return 0;
	}
	r = f.r;
	/* Hardware reports the address without its tag (unless the handler
	 * asked for SA_EXPOSE_TAGBITS); qemu-user keeps it. */
	if (rtl_mte_tag_of(a) == 0)
		a = rtl_mte_with_tag(a, r->tag);
	else if (rtl_mte_tag_of(a) != r->tag) {
		rtl_trap_die_tag(uc, a, write, r,
		                 "access through a pointer that does not carry its "
		                 "region's tag (the top byte was changed)");
		return 0;
	}
	if (allows(r)) {
		/* Granted by another thread since the fault: run it again. */
		stale_run = pc == last_pc && a == last_addr ? stale_run + 1 : 1;
		last_pc = pc;
		last_addr = a;
		if (stale_run >= STALE_MAX && rtl_mte_load_tag(a) == r->tag) {
			last_pc = 0;
			rtl_trap_die_tag(uc, a, write, r,
			                 "access through a pointer that does not carry "
			                 "its region's tag (the top byte was changed)");
			return 0;
		}
		RTL_COUNT(stale_traps);
		return 0;
	}
	last_pc = 0;
	h = handler_of(r);
	if (!h) {
		rtl_trap_die_tag(uc, a, write, r, "unhandled region trap (no handler)");
		return 0;
	}
	if (call_granting(r, h, a, write))
		return 0;
	if (!rtl_tag_still(&f) || !allows(r))
		rtl_trap_die_tag(uc, a, write, rtl_tag_still(&f) ? r : NULL,
		                 "region trap not granted by its handler");
	return 0;
}

void *rtl_tag_kernel_access(const void *p, size_t len, int write)
{
	uintptr_t a = rtl_mte_untag((uintptr_t)p), end = a + len;

	if (end < a || rtl_mte_untag(end - 1) - rtl_tag_arena.base >= rtl_tag_arena.size ||
	    a - rtl_tag_arena.base >= rtl_tag_arena.size) {
		errno = EFAULT; /* straddles the arena's edge */
		return NULL;
	}
	RTL_COUNT(syscall_buffers);
	while (a < end) {
		struct rtl_tag_found f;
		struct rtl_tag_region *r;
		region_handler_t h;

		if (rtl_tag_find(a, &f) < 0) {
			a += RTL_MTE_GRANULE; /* free granules: the kernel's EFAULT */
			continue;
		}
		r = f.r;
		if (!allows(r)) {
			if (!(h = handler_of(r))) {
				errno = EFAULT;
				return NULL;
			}
			RTL_COUNT(traps);
			call(r, h, rtl_mte_with_tag(a, r->tag), write);
			if (!rtl_tag_still(&f) || !allows(r)) {
				errno = EFAULT;
				return NULL;
			}
		}
		a = r->lo + r->span;
	}
	return (void *)p;
}
