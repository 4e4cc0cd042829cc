/* The plans cached with a decode (derive.h): RTL_INSN_PLAIN, the general
 * path's one-comparison check, and the trap's fast plan. Run when a decode
 * is cached; the checks that use them run in the trap handler (derive.h). */
#include "decoder/derive.h"

#include <string.h>

void rtl_derive_plan(struct rtl_insn *in)
{
	const struct rtl_mem_op *m = &in->mem[0];

	in->flags &= (uint8_t)~RTL_INSN_PLAIN;
	if (in->nmem == 1 && in->nlater == 0 && !in->ptr_regs && rtl_derive_own_form(m) &&
	    m->base >= 0 && m->base < RTL_NGPR && m->index < 0 &&
	    !(in->flags & (RTL_INSN_REP | RTL_INSN_UNSUPPORTED | RTL_INSN_MASKED)))
		in->flags |= RTL_INSN_PLAIN;
}

static int plan_form(struct rtl_plan_form *f, int base, int index, unsigned scale,
                     unsigned ext, int64_t disp)
{
	if (base < 0 || base >= RTL_NGPR || index >= RTL_NGPR || disp != (int32_t)disp)
		return -1;
	f->base = (int8_t)base;
	f->index = (int8_t)(index < 0 ? RTL_REG_NONE : index);
	f->scale = (uint8_t)scale;
	f->ext = (uint8_t)ext;
	f->disp = (int32_t)disp;
	return 0;
}

int rtl_derive_fast_plan(const struct rtl_insn *in, struct rtl_fast_plan *out)
{
	const struct rtl_mem_op *m = &in->mem[0];

	memset(out, 0, sizeof(*out));
	out->op.base = RTL_REG_NONE;
	if (in->nmem != 1 || !rtl_derive_own_form(m) || in->nlater > RTL_PLAN_FORMS ||
	    (in->flags & (RTL_INSN_REP | RTL_INSN_UNSUPPORTED | RTL_INSN_MASKED)))
		return -1;
	for (int k = 0; k < in->nlater; k++) {
		const struct rtl_form *l = &in->later[k];

		if (plan_form(&out->form[k], l->base, l->index, l->scale, l->ext, l->disp) < 0)
			return -1;
	}
	out->nforms = in->nlater;
	out->ptrs = in->ptr_regs;
	out->access = m->access;
	out->size = m->size;
	if (plan_form(&out->op, m->base, m->index, m->scale, m->ext, m->disp) < 0) {
		out->op.base = RTL_REG_NONE;
		return -1;
	}
	out->only_op = !in->nlater && !in->ptr_regs && m->index < 0;
	return 0;
}
