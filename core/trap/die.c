/* Why rtl ends a process over a trap: one message with the access, the
 * region, the instruction and a backtrace, written with write(2) from the
 * SIGSEGV handler (no stdio, no malloc), then the default action. */
#include <string.h>

#include "core/region/views.h"
#include "core/tag/tagged.h"
#include "core/trap/backtrace.h"
#include "core/trap/context.h"
#include "core/trap/die.h"
#include "core/trap/hooks.h"
#include "core/trap/trap.h"
#include "core/trap/trap_state.h"

static const char *prot_name(int view)
{
	static const char *const n[RTL_NVIEWS] = { "PROT_NONE", "PROT_READ",
		                                   "PROT_READ|PROT_WRITE" };
	return n[view];
}

/* The faulting operand's registers as the trap found them. */
static void describe_registers(struct rtl_line *d, const struct trap *t)
{
	const int regs[2] = { t->op->base, t->op->index };

	rtl_line_str(d, "\nrtl:   registers:");
	for (int k = 0; k < 2; k++) {
		if (regs[k] < 0 || regs[k] >= RTL_NGPR)
			continue;
		rtl_line_str(d, " ");
		rtl_line_str(d, rtl_reg_name(regs[k]));
		rtl_line_str(d, "=");
		rtl_line_hex(d, t->entry_gpr[regs[k]]);
	}
}

static void describe(struct rtl_line *d, const struct trap *t)
{
	rtl_line_str(d, t->write ? "rtl:   write" : "rtl:   read");
	rtl_line_str(d, " at ");
	rtl_line_hex(d, t->addr);
	if (t->f.r) {
		const struct rtl_region *r = t->f.r;
		rtl_line_str(d, ", offset ");
		rtl_line_dec(d, t->f.off - r->lo);
		rtl_line_str(d, " of region ");
		rtl_line_hex(d, rtl_view_base(t->f.view) + r->lo);
		rtl_line_str(d, " (");
		rtl_line_dec(d, r->size);
		rtl_line_str(d, " bytes), through the ");
		rtl_line_str(d, prot_name(t->f.view));
		rtl_line_str(d, " view; region protection ");
		rtl_line_str(d, atomic_load(&r->mixed)
		                        ? "mixed (MAP2)"
		                        : prot_name(atomic_load(&r->view)));
	}
	rtl_line_str(d, "\nrtl:   instruction: ");
	rtl_line_str(d, t->have_insn ? t->insn.text : "(not decoded)");
	rtl_line_str(d, " at ");
	rtl_line_hex(d, rtl_ctx_pc(t->uc));
	if (t->op)
		describe_registers(d, t);
	rtl_line_str(d, "\nrtl:   backtrace:\n");
}

void rtl_trap_die(struct trap *t, const char *why)
{
	struct rtl_line d;
	struct sigaction dfl;

	t->dead = 1; /* the frame keeps the registers it came with */
	d.n = 0;
	rtl_line_str(&d, "rtl: ");
	rtl_line_str(&d, why);
	rtl_line_str(&d, "\n");
	describe(&d, t);
	rtl_backtrace_write(&d, t->uc);
	rtl_line_flush(&d);
	rtl_hooks_death(SIGSEGV); /* the preload's report */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	rtl_hooks_real_sigaction(SIGSEGV, &dfl, NULL);
}

void rtl_trap_die_unresolved(struct trap *t, int mixed)
{
	if (mixed)
		rtl_trap_die(t, "region trap not granted by its handler (MAP2 region)");
	else if (t->ambiguous)
		rtl_trap_die(t, "trap through base + index: rtl cannot tell which "
		                "register carries the region's address (both or "
		                "neither could be a pointer; docs/trap.md, "
		                "\"Which registers move\")");
	else
		rtl_trap_die(t, "trap that no register explains (the address was not "
		                "formed from a register pointing into the region)");
}

void rtl_trap_die_tag(void *uc, uintptr_t addr, int write,
                      const struct rtl_tag_region *r, const char *why)
{
	ucontext_t *u = uc;
	struct rtl_line d;
	struct sigaction dfl;

	d.n = 0;
	rtl_line_str(&d, "rtl: ");
	rtl_line_str(&d, why);
	rtl_line_str(&d, write ? "\nrtl:   write" : "\nrtl:   read");
	rtl_line_str(&d, " at ");
	rtl_line_hex(&d, addr);
	if (r) {
		rtl_line_str(&d, ", offset ");
		rtl_line_dec(&d, rtl_mte_untag(addr) - r->lo);
		rtl_line_str(&d, " of region ");
		rtl_line_hex(&d, rtl_tag_base(r));
		rtl_line_str(&d, " (");
		rtl_line_dec(&d, r->size);
		rtl_line_str(&d, " bytes), on memory tags; region protection ");
		rtl_line_str(&d, atomic_load(&r->prot) ? prot_name(RTL_VIEW_RW)
		                                       : prot_name(RTL_VIEW_NONE));
	}
	rtl_line_str(&d, "\nrtl:   at ");
	rtl_line_hex(&d, rtl_ctx_pc(u));
	rtl_line_str(&d, "\nrtl:   backtrace:\n");
	rtl_backtrace_write(&d, u);
	rtl_line_flush(&d);
	rtl_hooks_death(SIGSEGV);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	rtl_hooks_real_sigaction(SIGSEGV, &dfl, NULL);
}
