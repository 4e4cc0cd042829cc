/* Why rtl ends a process over a trap (die.c): the message, then the
 * default action. Signal-handler code only. */
#ifndef RTL_TRAP_DIE_H
#define RTL_TRAP_DIE_H

struct trap;

/* Print why with the access, the instruction and a backtrace; then let the
 * instruction fault again with the default action: the process ends with
 * SIGSEGV (and a core where enabled). The death hook runs first. */
void rtl_trap_die(struct trap *t, const char *why);

/* The same, for an access the moved registers do not explain. */
void rtl_trap_die_unresolved(struct trap *t, int mixed);

/* The same for a tag fault (core/tag/fault.c): r the region, or NULL
 * for granules no region holds. */
#include <stdint.h>
struct rtl_tag_region;
void rtl_trap_die_tag(void *uc, uintptr_t addr, int write,
                      const struct rtl_tag_region *r, const char *why);

#endif
