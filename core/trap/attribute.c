/* Which operand and which region a trap belongs to, and whether the moved
 * registers settle it: questions about the decoded instruction, for the
 * trap path (trap.c). Signal-handler code: no malloc, no locks. */
#include "core/trap/attribute.h"

#include <string.h>

#include "core/region/views.h"

/* Which memory operand made the access at addr: its address range holds
 * addr (for a masked access, addr is the first element not masked off). */
const struct rtl_mem_op *rtl_trap_operand(const struct trap *t)
{
	const struct rtl_insn *in = &t->insn;

	for (int i = 0; i < in->nmem; i++) {
		const struct rtl_mem_op *m = &in->mem[i];
		uint64_t ea;
		if (m->segment)
			continue;
		ea = rtl_mem_ea(in, m, t->entry_gpr);
		if (t->addr - ea < (m->size ? m->size : 1u))
			return m;
	}
	return NULL;
}

/* Failing that (bt with a bit offset, unknown size): the operand whose
 * address lies in the region's span. */
const struct rtl_mem_op *rtl_trap_operand_in_span(const struct trap *t)
{
	const struct rtl_insn *in = &t->insn;
	uintptr_t lo = rtl_view_base(t->f.view) + t->f.r->lo;

	for (int i = 0; i < in->nmem; i++) {
		const struct rtl_mem_op *m = &in->mem[i];
		if (!m->segment &&
		    rtl_mem_ea(in, m, t->entry_gpr) - lo < t->f.r->span)
			return m;
	}
	return NULL;
}

/* Whether the access of operand m overlaps the bytes of the region q its
 * base points into: a vector block read past the end of a string (or
 * before its start) holds some of them. A pointer biased into the next
 * region (glibc's memcmp keeps s1 + (s2 - s1) & ~15, which may lie in the
 * previous region's last bytes) reaches none: its access is the next
 * region's. */
static int touches(const struct trap *t, const struct rtl_mem_op *m,
                   const struct rtl_found *q)
{
	uint64_t lo = rtl_view_base(q->view) + q->r->lo;
	uint64_t ea = rtl_mem_ea(&t->insn, m, t->entry_gpr);
	uint64_t size = m->size ? m->size : 1;

	return ea < lo + q->r->size && ea + size > lo;
}

/* Which region the trap belongs to: the one at the faulting address, except
 * that an access through base + disp whose base points into another
 * region's span, in the same view, and that touches that region's bytes,
 * belongs to that region (a vector block read past its end must not run a
 * neighbour's handler); its handler is then told the pointer as the
 * address. -1 if none. */
int rtl_trap_attribute(struct trap *t)
{
	int found = rtl_region_find(t->addr, &t->f) == 0;
	const struct rtl_mem_op *m = t->op;
	struct rtl_found q;

	/* The usual case: the base points into the same span. */
	if (found && m && m->base >= 0 && m->base < RTL_NGPR &&
	    t->entry_gpr[m->base] - (rtl_view_base(t->f.view) + t->f.r->lo) <
	            t->f.r->span)
		return 0;
	if (m && m->index < 0 && m->base >= 0 && m->base < RTL_NGPR &&
	    rtl_region_find(t->entry_gpr[m->base], &q) == 0 &&
	    q.view == rtl_view_of(t->addr) && (!found || q.r != t->f.r) &&
	    touches(t, m, &q)) {
		t->inside = t->entry_gpr[m->base];
		q.off = t->addr - rtl_view_base(q.view);
		t->f = q;
		return 0;
	}
	return found ? 0 : -1;
}

/* A write must stay inside the span of the region it is checked against:
 * past it lie other regions, which rtl would otherwise let it change. */
int rtl_trap_write_in_span(const struct trap *t)
{
	const struct rtl_mem_op *m = t->op;
	uint64_t lo, ea, size;

	if (!t->write || !m || !m->size || (t->insn.flags & RTL_INSN_MASKED))
		return 1;
	lo = rtl_view_base(t->f.view) + t->f.r->lo;
	ea = rtl_mem_ea(&t->insn, m, t->entry_gpr) - lo;
	size = m->size;
	return ea <= t->f.r->span && t->f.r->span - ea >= size;
}

/* After swizzling: is the access now going where it may? */
int rtl_trap_resolved(const struct trap *t)
{
	uint64_t ea;
	int view;

	if (!t->op)
		return memcmp(t->gpr, t->entry_gpr, sizeof(t->gpr)) != 0;
	ea = rtl_mem_ea(&t->insn, t->op, t->gpr);
	view = rtl_view_of(ea);
	return view < 0 || rtl_view_allows(view, t->write);
}
