/* The SIGSEGV handler and what the rest of the core asks of it. */
#ifndef RTL_TRAP_H
#define RTL_TRAP_H

#include "region.h"

int rtl_trap_install(void);

/* Inside a region handler, the protection calls also move the interrupted
 * thread's registers: every register in r's span, in any view other than
 * to (from < 0), or in view from only, goes to view to. No-op outside a
 * handler. */
void rtl_trap_move_registers(const struct rtl_region *r, int from, int to);

#endif
