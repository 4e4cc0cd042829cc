/* Which operand and which region a trap belongs to, from its decoded
 * instruction, and whether the moved registers settle it (attribute.c).
 * Signal-handler code only. */
#ifndef RTL_TRAP_ATTRIBUTE_H
#define RTL_TRAP_ATTRIBUTE_H

#include "core/trap/trap_state.h"

/* The memory operand whose address range holds t->addr (for a masked
 * access, the first element not masked off), or NULL. */
const struct rtl_mem_op *rtl_trap_operand(const struct trap *t);

/* Failing that (bt with a bit offset, unknown size): the operand whose
 * address lies in t->f's region's span, or NULL. */
const struct rtl_mem_op *rtl_trap_operand_in_span(const struct trap *t);

/* Fill t->f with the region the trap belongs to (and t->inside, when a
 * read past a region's end is its own): 0, or -1 if none. */
int rtl_trap_attribute(struct trap *t);

/* Whether a write stays inside the span of the region it is checked
 * against. */
int rtl_trap_write_in_span(const struct trap *t);

/* After swizzling: whether the access now goes where it may. */
int rtl_trap_resolved(const struct trap *t);

#endif
