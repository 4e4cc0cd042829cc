/* What the Table 2 and Table 3 examples share: a trap counter that the
 * handlers bump, and STEP(statement), which runs one statement and prints
 * whether it trapped.
 *
 * The compiler does not know that an access can run a handler, so it may
 * move a plain store past the read of the counter. STEP puts a compiler
 * barrier on both sides of the statement (a function call would do too). */
#ifndef EXAMPLES_STEP_H
#define EXAMPLES_STEP_H

#include <rtl/region.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

extern volatile int traps; /* handler calls so far */

/* Table 3, right column: grant exactly the access that trapped. */
void reg_handler(rtl_trap_t *t);

static inline void step_print(const char *stmt, int trapped)
{
	printf("  %s: %-7s", stmt, trapped ? "trap" : "no trap");
}

#define STEP(stmt)                                        \
	do {                                              \
		int before_ = traps;                      \
		__asm__ __volatile__("" ::                \
		                             : "memory"); \
		stmt;                                     \
		__asm__ __volatile__("" ::                \
		                             : "memory"); \
		step_print(#stmt, traps != before_);      \
	} while (0)

#ifdef __cplusplus
}
#endif

#endif
