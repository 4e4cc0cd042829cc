/* Keeping derived addresses right across a view move (see derive.h): which
 * registers move is chosen so that every address form reaches the object
 * it reached, the cheapest choice by what the registers hold.
 *
 * Runs in the trap handler: arithmetic on register arrays plus the caller's
 * lock-free classifier; never allocates, never blocks. */
#include "decoder/derive.h"

#include <string.h>

#define MAX_FORMS (RTL_INSN_MAX_MEM + RTL_INSN_MAX_LATER + RTL_NGPR)
#define NEVER 1000000 /* the cost of a choice that may not be made */
#define MISSED 20     /* the cost of a look-ahead form left unreached */

/* What a register holds, relative to the move. */
enum hold {
	H_IN,        /* inside the moving region's bytes */
	H_IN_TAIL,   /* ... within RTL_DERIVE_BIAS of the span's end */
	H_SPAN_EDGE, /* the region's one-past-end byte and padding */
	H_BELOW,     /* within RTL_DERIVE_BIAS below the span */
	H_OBJECT,    /* a live object elsewhere (RTL_AT_OBJECT) */
	H_EDGE,      /* another region's edge (RTL_AT_EDGE) */
	H_FREE,      /* rtl's free space (RTL_AT_FREE) */
	H_NOADDR,    /* not an address (RTL_AT_NOADDR) */
	H_UNKNOWN,
};

/* The cost of moving a register by -delta, 0, +delta, by what it holds:
 * pointers into the region move with it, pointers into other objects stay,
 * a value that is no address moves only as a difference of pointers. */
static const int cost_of[H_UNKNOWN][3] = {
	[H_IN] = { NEVER, 50, 0 },
	[H_IN_TAIL] = { NEVER, 10, 0 },
	[H_SPAN_EDGE] = { NEVER, 3, 0 },
	[H_BELOW] = { NEVER, 0, 2 },
	[H_OBJECT] = { 50, 0, 50 },
	[H_EDGE] = { 6, 0, 3 },
	[H_FREE] = { 6, 0, 3 },
	[H_NOADDR] = { 5, 0, 5 },
};

struct form {
	int8_t base, index;
	uint8_t scale;
	uint8_t ext;   /* RTL_EXT_*: a 32-bit index, widened */
	uint8_t hard;  /* an operand of the instruction itself */
	int8_t target; /* 1: the span's new view; 0: stays; -1: either */
	uint64_t disp;
};

struct solver {
	const struct rtl_move *mv;
	const uint64_t *old;
	struct form f[MAX_FORMS];
	int nf;
	int8_t hold[RTL_NGPR];
	int8_t var[RTL_NGPR]; /* registers chosen anew, in search order */
	int nvar;
	rtl_regset_t stays;     /* scaled or widened indexes: element numbers
	                           never move */
	uint8_t unit[RTL_NGPR]; /* a register moves by delta / unit: the
	                           scale of an index used with no base */
	rtl_regset_t must_regs; /* the faulting operand's registers */
	int8_t a[RTL_NGPR];     /* the choice: -1, 0, 1 (units of delta) */
	int8_t best[RTL_NGPR];
	int best_cost;
	int ambiguous; /* another choice as cheap moves must's registers apart */
};

static int in_span(const struct rtl_move *mv, uint64_t a)
{
	return a - mv->lo < mv->hi - mv->lo;
}

/* |v| within RTL_DERIVE_NEAR: an index or a length, not a pointer. */
static int small(uint64_t v)
{
	return v + RTL_DERIVE_NEAR <= 2 * RTL_DERIVE_NEAR;
}

static uint64_t form_ea(const struct form *f, const uint64_t gpr[RTL_NGPR])
{
	uint64_t ea = f->disp;
	if (f->base >= 0)
		ea += gpr[f->base];
	if (f->index >= 0)
		ea += rtl_index_value(gpr[f->index], f->ext) * f->scale;
	return ea;
}

static enum hold hold_of(struct solver *s, int r)
{
	const struct rtl_move *mv = s->mv;
	uint64_t v = s->old[r];

	if (s->hold[r] != H_UNKNOWN)
		return (enum hold)s->hold[r];
	if (in_span(mv, v))
		s->hold[r] = v >= mv->end                   ? H_SPAN_EDGE
		             : mv->hi - v > RTL_DERIVE_BIAS ? H_IN
		                                            : H_IN_TAIL;
	else if (mv->lo - v <= RTL_DERIVE_BIAS)
		s->hold[r] = H_BELOW;
	else
		s->hold[r] = (int8_t)(H_OBJECT + mv->where(v, mv->arg));
	return (enum hold)s->hold[r];
}

/* The default move: registers in the span moved, the rest did not. */
static int moved_by_default(const struct rtl_move *mv, const uint64_t *old,
                            int r)
{
	return in_span(mv, old[r]);
}

/* Where form f must lead after the move (see derive.h). A pointer into an
 * object used alone (base + disp) leads where it points: a vector block
 * read past the object's end is the object's, as the trap's attribution
 * says. Anything else leads where its address lies. */
static int target_of(struct solver *s, const struct form *f)
{
	const struct rtl_move *mv = s->mv;
	uint64_t ea = form_ea(f, s->old);
	enum rtl_where w;
	int b = f->base, i = f->index;

	if (i < 0 && b >= 0) {
		enum hold h = hold_of(s, b);
		/* ... unless the access starts past the span: it then holds
		 * none of the region's bytes, and is where its address lies,
		 * as the trap's attribution says (a destination biased back
		 * into the previous region's tail: glibc's aarch64 memcpy
		 * stores through [(dst - (src & 15)) + 16]). */
		if ((h == H_IN || h == H_IN_TAIL) && ea < mv->hi)
			return 1;
		if (h == H_OBJECT)
			return 0;
	}
	if (in_span(mv, ea))
		return 1;
	/* A pointer into the region plus a small number, carried out of the
	 * span by the displacement (a field or a block past the end: ASan's
	 * checks form [p + i + 0x61] with i = 0), is the pointer's, like
	 * base + disp: the number is an index, not a difference. */
	if (b >= 0 && i >= 0) {
		enum hold hb = hold_of(s, b), hx = hold_of(s, i);
		int pb = hb == H_IN || hb == H_IN_TAIL;
		int px = (hx == H_IN || hx == H_IN_TAIL) && f->scale == 1;
		if ((pb && hx == H_NOADDR && small(s->old[i] * f->scale) &&
		     !in_span(mv, s->old[b] + f->disp)) ||
		    (px && hb == H_NOADDR && small(s->old[b]) &&
		     !in_span(mv, s->old[i] + f->disp)))
			return 1;
	}
	w = mv->where(ea, mv->arg);
	if (w == RTL_AT_FREE || w == RTL_AT_NOADDR)
		return -1; /* no object there: a way not taken, or arithmetic */
	/* A pointer into the region plus a small value, just outside it. */
	if (b >= 0 && i >= 0 &&
	    (ea < mv->lo ? mv->lo - ea : ea - mv->hi) < RTL_DERIVE_NEAR) {
		enum hold hb = hold_of(s, b), hi = hold_of(s, i);
		/* Past the end from the last bytes, it is rather a pointer
		 * biased into the next object (glibc's strcpy). */
		int below = ea < mv->lo;
		int pb = hb == H_IN || (hb == H_IN_TAIL && below);
		int pi = hi == H_IN || (hi == H_IN_TAIL && below);
		if ((pb && hi == H_NOADDR) || (pi && hb == H_NOADDR))
			return -1;
	}
	return 0;
}

/* ---- gathering the forms ---- */

static void add(struct solver *s, int base, int index, unsigned scale,
                unsigned ext, uint64_t disp, int hard)
{
	struct form *f;

	if (base < 0 && index < 0)
		return;
	for (int k = 0; k < s->nf; k++) {
		f = &s->f[k];
		if (f->base == base && f->index == index && f->scale == scale &&
		    f->ext == ext && f->disp == disp) {
			f->hard |= (uint8_t)hard;
			return;
		}
	}
	if (s->nf == MAX_FORMS)
		return;
	f = &s->f[s->nf++];
	f->base = (int8_t)base;
	f->index = (int8_t)index;
	f->scale = (uint8_t)scale;
	f->ext = (uint8_t)ext;
	f->disp = disp;
	f->hard = (uint8_t)hard;
	f->target = -1;
}

static void gather(struct solver *s, const struct rtl_insn *in)
{
	for (int k = 0; k < in->nmem; k++) {
		const struct rtl_mem_op *m = &in->mem[k];
		if (rtl_derive_own_form(m))
			add(s, m->base, m->index, m->scale, m->ext,
			    (uint64_t)m->disp, 1);
	}
	for (int k = 0; k < in->nlater; k++) {
		const struct rtl_form *l = &in->later[k];
		int feasible = 1;
		/* On a way the registers cannot take (glibc's dispatch on
		 * the size), the form means nothing. */
		for (int c = 0; c < l->ncond; c++)
			feasible &= rtl_cond_holds(&l->cond[c], s->old);
		if (feasible)
			add(s, l->base, l->index, l->scale, l->ext,
			    (uint64_t)l->disp, 0);
	}
	for (int r = 0; r < RTL_NGPR; r++)
		if (in->ptr_regs >> r & 1)
			add(s, r, RTL_REG_NONE, 1, RTL_EXT_NONE, 0, 0);
}

/* ---- the choice ---- */

/* How far the address of f moves, in units of delta (a fraction, for a
 * register moving in another unit, never equals a target). */
static int64_t shift_bytes(const struct solver *s, const struct form *f)
{
	int64_t sh = 0, d = s->mv->delta;

	if (f->base >= 0)
		sh += s->a[f->base] * (d / s->unit[f->base]);
	if (f->index >= 0)
		sh += s->a[f->index] * (d / s->unit[f->index]) * f->scale;
	return sh;
}

static int reaches(const struct solver *s, const struct form *f, int target)
{
	return shift_bytes(s, f) == target * s->mv->delta;
}

static int cost_now(const struct solver *s)
{
	int c = 0;

	for (int k = 0; k < s->nvar; k++) {
		int r = s->var[k];
		c += cost_of[s->hold[r]][s->a[r] + 1];
	}
	for (int k = 0; k < s->nf; k++) {
		const struct form *f = &s->f[k];
		if (f->target >= 0 && !reaches(s, f, f->target))
			c += f->hard ? NEVER : MISSED;
	}
	return c;
}

static int differs_on_must(const struct solver *s)
{
	for (int r = 0; r < RTL_NGPR; r++)
		if ((s->must_regs >> r & 1) && s->a[r] != s->best[r])
			return 1;
	return 0;
}

/* Every choice for the registers from var[k] on (3^nvar at most; nvar is
 * the handful of registers a few forms use). */
static void search(struct solver *s, int k)
{
	static const int8_t order[3] = { 0, 1, -1 };
	int c;

	if (k == s->nvar) {
		c = cost_now(s);
		if (c < s->best_cost) {
			s->best_cost = c;
			s->ambiguous = 0;
			memcpy(s->best, s->a, sizeof(s->a));
		} else if (c == s->best_cost && c < NEVER && differs_on_must(s)) {
			s->ambiguous = 1;
		}
		return;
	}
	int r = s->var[k];
	int8_t first = s->a[r];
	for (int j = -1; j < 3; j++) {
		/* The default first, so that ties keep it. */
		int8_t v = j < 0 ? first : order[j];
		if (j >= 0 && v == first)
			continue;
		if (cost_of[s->hold[r]][v + 1] >= NEVER ||
		    (v != 0 && (s->stays >> r & 1)))
			continue;
		s->a[r] = v;
		search(s, k + 1);
	}
	s->a[r] = first;
}

static void add_var(struct solver *s, int r)
{
	for (int k = 0; k < s->nvar; k++)
		if (s->var[k] == r)
			return;
	hold_of(s, r);
	s->var[s->nvar++] = (int8_t)r;
}

int rtl_derive_fix(const struct rtl_insn *in, const struct rtl_mem_op *must,
                   const struct rtl_move *mv, const uint64_t old[RTL_NGPR],
                   uint64_t gpr[RTL_NGPR])
{
	struct solver s;
	int broken = 0;

	s.mv = mv;
	s.old = old;
	s.nf = 0;
	s.nvar = 0;
	s.stays = 0;
	s.must_regs = 0;
	memset(s.hold, H_UNKNOWN, sizeof(s.hold));
	for (int r = 0; r < RTL_NGPR; r++) {
		s.a[r] = (int8_t)moved_by_default(mv, old, r);
		s.unit[r] = 1;
	}
	gather(&s, in);

	/* Most forms are reached by the default move already (nothing they
	 * use moved, or all of it did): this runs on every move. */
	for (int k = 0; k < s.nf; k++) {
		struct form *f = &s.f[k];
		int span = in_span(mv, form_ea(f, old));

		if (reaches(&s, f, span))
			continue;
		f->target = (int8_t)target_of(&s, f);
		if (f->target >= 0 && !reaches(&s, f, f->target))
			broken = 1;
	}
	if (!broken)
		return 0;

	/* Some form is broken: every form with an object to reach counts,
	 * and the registers they use are chosen anew. */
	for (int k = 0; k < s.nf; k++) {
		struct form *f = &s.f[k];
		if (reaches(&s, f, in_span(mv, form_ea(f, old))))
			f->target = (int8_t)target_of(&s, f);
	}
	for (int k = 0; k < s.nf; k++) {
		struct form *f = &s.f[k];
		if (f->target < 0)
			continue;
		if (f->base >= 0)
			add_var(&s, f->base);
		if (f->index >= 0 && f->ext != RTL_EXT_NONE) {
			/* A 32-bit index cannot hold a view address: it is
			 * a number, whatever its scale. */
			add_var(&s, f->index);
			s.stays |= 1u << f->index;
		} else if (f->index < 0 || f->scale == 1) {
			if (f->index >= 0)
				add_var(&s, f->index);
		} else if (f->base < 0) {
			/* No base: the index is the pointer, scaled. */
			s.unit[f->index] = f->scale;
			add_var(&s, f->index);
		} else {
			/* A scaled index beside a base is an element number:
			 * the base carries the address. */
			add_var(&s, f->index);
			s.stays |= 1u << f->index;
		}
	}
	if (must && rtl_derive_own_form(must)) {
		if (must->base >= 0)
			s.must_regs |= 1u << must->base;
		if (must->index >= 0)
			s.must_regs |= 1u << must->index;
	}
	s.best_cost = NEVER;
	s.ambiguous = 0;
	memcpy(s.best, s.a, sizeof(s.a));
	search(&s, 0);
	if (s.best_cost >= NEVER || s.ambiguous)
		return must ? -1 : 0;
	for (int k = 0; k < s.nvar; k++) {
		int r = s.var[k];
		gpr[r] = old[r] + (uint64_t)(s.best[r] * (mv->delta / s.unit[r]));
	}
	return 0;
}

/* Form (base, index, scale, ext, disp) reaches, after the default move,
 * where it must if nothing breaks: the first loop of rtl_derive_fix. */
static int default_reaches(const struct rtl_move *mv, const uint64_t old[RTL_NGPR],
                           rtl_regset_t moved, int base, int index,
                           unsigned scale, unsigned ext, uint64_t disp)
{
	struct form f = { (int8_t)base, (int8_t)index, (uint8_t)scale, (uint8_t)ext,
		          0, 0, disp };
	int64_t shift = 0;

	if (base >= 0 && (moved >> base & 1))
		shift += mv->delta;
	if (index >= 0 && (moved >> index & 1))
		shift += mv->delta * (int64_t)scale;
	return shift == (in_span(mv, form_ea(&f, old)) ? mv->delta : 0);
}

int rtl_derive_needed(const struct rtl_insn *in, const struct rtl_move *mv,
                      const uint64_t old[RTL_NGPR], rtl_regset_t moved)
{
	for (int k = 0; k < in->nmem; k++) {
		const struct rtl_mem_op *m = &in->mem[k];
		if (rtl_derive_own_form(m) &&
		    !default_reaches(mv, old, moved, m->base, m->index, m->scale,
		                     m->ext, (uint64_t)m->disp))
			return 1;
	}
	for (int k = 0; k < in->nlater && k < RTL_INSN_MAX_LATER; k++) {
		const struct rtl_form *l = &in->later[k];
		int feasible = 1;

		for (int c = 0; c < l->ncond; c++)
			feasible &= rtl_cond_holds(&l->cond[c], old);
		if (feasible && (l->base >= 0 || l->index >= 0) &&
		    !default_reaches(mv, old, moved, l->base, l->index, l->scale,
		                     l->ext, (uint64_t)l->disp))
			return 1;
	}
	for (rtl_regset_t p = in->ptr_regs; p; p &= p - 1) {
		int r = __builtin_ctz(p);
		if (!default_reaches(mv, old, moved, r, RTL_REG_NONE, 1, RTL_EXT_NONE, 0))
			return 1;
	}
	return 0;
}

unsigned rtl_derive_forms_in(const struct rtl_insn *in, const uint64_t gpr[RTL_NGPR],
                             uint64_t lo, uint64_t span, uint64_t size)
{
	unsigned views = 0;

	for (int k = 0; k < in->nmem; k++) {
		const struct rtl_mem_op *m = &in->mem[k];
		struct form f = { m->base, m->index, m->scale, m->ext, 0, 0,
			          (uint64_t)m->disp };

		if (rtl_derive_own_form(m))
			views |= rtl_view_bit(form_ea(&f, gpr), lo, span, size);
	}
	for (int k = 0; k < in->nlater && k < RTL_INSN_MAX_LATER; k++) {
		const struct rtl_form *l = &in->later[k];
		struct form f = { l->base, l->index, l->scale, l->ext, 0, 0,
			          (uint64_t)l->disp };
		int feasible = 1;

		for (int c = 0; c < l->ncond; c++)
			feasible &= rtl_cond_holds(&l->cond[c], gpr);
		if (feasible && (l->base >= 0 || l->index >= 0))
			views |= rtl_view_bit(form_ea(&f, gpr), lo, span, size);
	}
	/* A register used alone as a base lies in a span only if it is held
	 * there: the caller knows those. */
	return views;
}
