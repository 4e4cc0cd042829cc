/* The SIGSEGV handler and what the rest of the core asks of it. */
#ifndef RTL_TRAP_H
#define RTL_TRAP_H

#include "core/region/region.h"

int rtl_trap_install(void);

/* rtl's SIGBUS action, for writes to pages protected in the page tables
 * (core/prot/prot.c); the program's becomes the foreign one. */
int rtl_trap_install_bus(void);

struct trap;
extern __thread struct trap *rtl_trap_now __attribute__((tls_model("initial-exec")));

void rtl_trap_move_registers_now(const struct rtl_region *r, int from, int to);

/* Inside a region handler, the protection calls also move the interrupted
 * thread's registers: every register in r's span, in any view other than
 * to (from < 0), or in view from only, goes to view to. No-op outside a
 * handler: inline, so that a protection call outside one pays one load. */
static inline void rtl_trap_move_registers(const struct rtl_region *r, int from, int to)
{
	if (rtl_trap_now)
		rtl_trap_move_registers_now(r, from, to);
}

/* Inside a region handler: r, protected in place, now has the protection
 * of view; if that allows the trapping access, the trap is granted. */
void rtl_trap_granted_in_place(const struct rtl_region *r, int view);

/* Inside a region handler: if address a lies in the span of the region
 * that trapped (any view), fill *f as rtl_region_find would and return 0;
 * otherwise -1. Saves the lookup the handler's own region_protect makes. */
int rtl_trap_current_region(uintptr_t a, struct rtl_found *f);

#endif
