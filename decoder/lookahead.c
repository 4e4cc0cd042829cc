/* The look-aheads' shared part (lookahead.h). Trap-handler code: no malloc,
 * no locks. */
#include "decoder/lookahead.h"

#include <string.h>

void rtl_flow_add_form(struct rtl_insn *out, const struct rtl_path *p, int base,
                       int index, uint8_t scale, uint8_t ext, int64_t disp)
{
	struct rtl_form f;

	memset(&f, 0, sizeof(f));
	f.base = (int8_t)base;
	f.index = (int8_t)index;
	f.scale = scale;
	f.ext = ext;
	f.disp = disp;
	f.ncond = p->ncond;
	memcpy(f.cond, p->cond, sizeof(f.cond));

	for (int i = 0; i < out->nlater; i++)
		if (memcmp(&out->later[i], &f, sizeof(f)) == 0)
			return;
	if (out->nlater < RTL_INSN_MAX_LATER) {
		out->later[out->nlater++] = f;
		return;
	}
	/* Full: base + index forms (differences) matter more than base +
	 * disp ones (biased pointers); the nearest come first. */
	if (index < 0)
		return;
	for (int i = out->nlater - 1; i >= 0; i--)
		if (out->later[i].index < 0) {
			memmove(&out->later[i], &out->later[i + 1],
			        (size_t)(out->nlater - 1 - i) * sizeof(f));
			out->later[out->nlater - 1] = f;
			return;
		}
}

void rtl_flow_add_cond(struct rtl_path *p, int cc)
{
	struct rtl_cond c = p->cmp;

	c.cc = (uint8_t)cc;
	if (p->ncond == RTL_FORM_MAX_COND) {
		memmove(&p->cond[0], &p->cond[1],
		        (RTL_FORM_MAX_COND - 1) * sizeof(c));
		p->ncond--;
	}
	p->cond[p->ncond++] = c;
}

int rtl_flow_seen(struct rtl_scan *s, uint64_t pc)
{
	for (int i = 0; i < s->nseen; i++)
		if (s->seen[i] == pc)
			return 1;
	if (s->nseen < (int)(sizeof(s->seen) / sizeof(s->seen[0])))
		s->seen[s->nseen++] = pc;
	return 0;
}

void rtl_flow_branch_to(struct rtl_scan *s, const struct rtl_path *p,
                        uint64_t target, int cc)
{
	struct rtl_path *q;

	if (s->nqueue == RTL_FLOW_QUEUE || rtl_flow_seen(s, target))
		return;
	q = &s->queue[s->nqueue++];
	*q = *p;
	q->pc = target;
	if (cc >= 0)
		rtl_flow_add_cond(q, cc);
}

void rtl_flow_run(struct rtl_scan *s, csh h, cs_insn *ci, struct rtl_code *code,
                  struct rtl_insn *out,
                  void (*walk)(struct rtl_scan *s, struct rtl_path p, int skip_first))
{
	struct rtl_path first;

	s->h = h;
	s->ci = ci;
	s->code = code;
	s->out = out;
	s->nqueue = 0;
	s->nseen = 0;
	s->steps = 0;
	out->nlater = 0;
	out->ptr_regs = 0;
	memset(&first, 0, sizeof(first));
	first.pc = out->pc;
	/* Every register holds its value at the trap. */
	first.live = RTL_NGPR >= 32 ? ~(rtl_regset_t)0
	                            : (rtl_regset_t)((1ull << RTL_NGPR) - 1);
	first.cmp.reg = -1;
	rtl_flow_seen(s, first.pc);
	walk(s, first, 1);
	while (s->nqueue > 0) {
		struct rtl_path p = s->queue[--s->nqueue];
		walk(s, p, 0);
	}
}
