/* Keeping derived addresses right across a view move (see derive.h).
 * Runs in the trap handler: pure arithmetic on register arrays plus the
 * caller's lock-free classifier; never allocates, never blocks. */
#include "derive.h"

struct form {
	int base, index;
	uint64_t scale;
	uint64_t disp;
};

static uint64_t form_ea(const struct form *f, const uint64_t gpr[RTL_NGPR])
{
	uint64_t ea = f->disp;
	if (f->base >= 0)
		ea += gpr[f->base];
	if (f->index >= 0)
		ea += gpr[f->index] * f->scale;
	return ea;
}

static int in_span(const struct rtl_move *mv, uint64_t a)
{
	return a - mv->lo < mv->hi - mv->lo;
}

static enum rtl_where where(const struct rtl_move *mv, uint64_t a)
{
	return in_span(mv, a) ? RTL_AT_SPAN : mv->where(a, mv->arg);
}

static int small(uint64_t v)
{
	return v + RTL_DERIVE_NEAR <= 2 * RTL_DERIVE_NEAR;
}

/* A register value that is a pointer biased by a constant into the span
 * (close to the address, in the span's view, in no other region). */
static int near(const struct rtl_move *mv, uint64_t v, uint64_t ea)
{
	uint64_t d = v > ea ? v - ea : ea - v;
	return d <= RTL_DERIVE_NEAR && where(mv, v) == RTL_AT_FREE;
}

/* Neither register moved but the address is in the span: which one is not
 * a pointer to something else, and so carries the span's address? Returns
 * the register, or -1 if that cannot be told. */
static int carrier(const struct form *f, const struct rtl_move *mv,
                   uint16_t ptr_regs, const uint64_t old[RTL_NGPR],
                   uint64_t ea)
{
	int b = f->base, i = f->scale == 1 ? f->index : -1;
	int b_other, i_other;

	if (f->index < 0)
		return b; /* base + disp: the base is the pointer */
	if (b < 0)
		return f->index;
	/* A scaled index is an element number, never the pointer: the base
	 * carries the address, even when it lies in another region's span (a
	 * pointer biased back by the first index, as in LU's blocked loops;
	 * moving the index would run the loop away). */
	if (i < 0)
		return b;
	/* A register inside a region (any view) points at that region. */
	b_other = where(mv, old[b]) == RTL_AT_REGION;
	i_other = where(mv, old[i]) == RTL_AT_REGION;
	if (b_other != i_other)
		return b_other ? f->index : b;
	/* A pointer biased into the span: that one carries it. */
	if (near(mv, old[b], ea) != near(mv, old[i], ea))
		return near(mv, old[b], ea) ? b : i;
	/* The code after uses one of them alone as a base: the pointer. */
	if (!(ptr_regs >> b & 1) != !(ptr_regs >> i & 1))
		return (ptr_regs >> b & 1) ? i : b;
	return -1;
}

/* Whether f already forms after the move the address it must: the first
 * test fix_form makes, cheap enough for every form on every move. */
static int consistent(const struct form *f, const struct rtl_move *mv,
                      const uint64_t old[RTL_NGPR], const uint64_t gpr[RTL_NGPR])
{
	uint64_t ea_old = form_ea(f, old);
	uint64_t want = in_span(mv, ea_old) ? ea_old + (uint64_t)mv->delta : ea_old;
	return form_ea(f, gpr) == want;
}

/* Make one form consistent. Returns -1 if it needed a move and which
 * register to move could not be told. */
static int fix_form(const struct form *f, const struct rtl_move *mv,
                    uint16_t ptr_regs, const uint64_t old[RTL_NGPR],
                    uint64_t gpr[RTL_NGPR], uint16_t *fixed)
{
	uint64_t ea_old = form_ea(f, old), ea_new = form_ea(f, gpr);
	int inside = in_span(mv, ea_old);
	uint64_t want = inside ? ea_old + (uint64_t)mv->delta : ea_old;
	int b_moved = f->base >= 0 && gpr[f->base] != old[f->base];
	int i_moved = f->index >= 0 && gpr[f->index] != old[f->index];
	uint64_t diff, scale;
	int x;

	if (ea_new == want)
		return 0;
	if (inside) {
		if (b_moved || i_moved)
			return 0; /* two pointers summed: no meaning to keep */
		x = carrier(f, mv, ptr_regs, old, ea_old);
		if (x < 0)
			return -1;
	} else {
		/* Its pointer moved; the other register is a difference to
		 * another object, unless the address only runs past the span
		 * into free space of its view (the span's own index). */
		if (b_moved == i_moved || where(mv, ea_old) == RTL_AT_FREE)
			return 0;
		x = b_moved ? f->index : f->base;
		if (x < 0 || (ptr_regs >> x & 1))
			return 0; /* past the span by a constant, or two pointers */
		if (small(old[x] * (x == f->base ? 1 : f->scale)) &&
		    small(ea_old - (ea_old < mv->lo ? mv->lo : mv->hi)))
			return 0; /* a length just past an end, not a difference */
	}
	scale = x == f->base ? 1 : f->scale;
	diff = want - ea_new;
	if ((*fixed >> x & 1) || diff % scale)
		return 0;
	gpr[x] += diff / scale;
	*fixed |= (uint16_t)(1u << x);
	return 0;
}

static int own_form(const struct rtl_mem_op *m, struct form *f)
{
	if (m->segment || m->addr32 || m->base == RTL_REG_PC)
		return 0;
	if (m->base < 0 && m->index < 0)
		return 0;
	f->base = m->base;
	f->index = m->index;
	f->scale = m->scale;
	f->disp = (uint64_t)m->disp;
	return 1;
}

int rtl_derive_fix(const struct rtl_insn *in, const struct rtl_mem_op *must,
                   const struct rtl_move *mv, const uint64_t old[RTL_NGPR],
                   uint64_t gpr[RTL_NGPR])
{
	uint16_t fixed = 0;
	int ret = 0;
	struct form f;

	if (must && own_form(must, &f) &&
	    fix_form(&f, mv, in->ptr_regs, old, gpr, &fixed) < 0)
		ret = -1;
	for (int i = 0; i < in->nmem; i++)
		if (&in->mem[i] != must && own_form(&in->mem[i], &f))
			fix_form(&f, mv, in->ptr_regs, old, gpr, &fixed);
	for (int i = 0; i < in->nlater; i++) {
		const struct rtl_form *l = &in->later[i];
		int feasible = 1;

		f.base = l->base;
		f.index = l->index;
		f.scale = l->scale;
		f.disp = (uint64_t)l->disp;
		/* Most forms are consistent already (nothing they use moved, or
		 * all of it did): look no further, this runs on every move. */
		if (consistent(&f, mv, old, gpr))
			continue;
		/* On a way the registers cannot take (glibc's dispatch on the
		 * size), the form means nothing. */
		for (int c = 0; c < l->ncond; c++)
			feasible &= rtl_cond_holds(&l->cond[c], old);
		if (feasible)
			fix_form(&f, mv, in->ptr_regs, old, gpr, &fixed);
	}
	return ret;
}

int rtl_derive_inside(const struct rtl_insn *in, const struct rtl_move *mv,
                      const uint64_t gpr[RTL_NGPR])
{
	struct form f;

	for (int i = 0; i < in->nmem; i++)
		if (own_form(&in->mem[i], &f) && in_span(mv, form_ea(&f, gpr)))
			return 1;
	for (int i = 0; i < in->nlater; i++) {
		const struct rtl_form *l = &in->later[i];
		f.base = l->base;
		f.index = l->index;
		f.scale = l->scale;
		f.disp = (uint64_t)l->disp;
		if (in_span(mv, form_ea(&f, gpr)))
			return 1;
	}
	return 0;
}
