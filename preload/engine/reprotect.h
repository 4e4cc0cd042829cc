/* An epoch's protection again (reprotect.c): the blocks of a rule with an
 * epoch that trapped since its last one, noted by the trap path, get the
 * rule's protection back at the next, one protection call per run of
 * adjacent pages. */
#ifndef RTL_REPROTECT_H
#define RTL_REPROTECT_H

#include <stdint.h>

#include "preload/engine/record.h"

/* rec trapped: its rule's next epoch looks at it. Signal handler: a
 * compare-and-swap or two. */
void rtl_reprotect_note(struct rtl_rec *rec);

/* The epoch thread: the blocks of rule noted since its last epoch get
 * protection prot again (in place ones by region_protect, the others in
 * runs); each such block, and each noted block whose protection had not
 * changed, is then passed to done (for the dirty accounts) unless another
 * thread holds it. A block a system call is using, or whose lock a trap
 * holds, is noted for the next epoch instead: the epoch never waits for
 * a trap. */
struct rtl_reprotect_stats {
	uint64_t blocks; /* blocks whose protection was set again */
	uint64_t calls;  /* protection calls that did it */
};
void rtl_reprotect_rule(int rule, int prot, void (*done)(struct rtl_rec *),
                        struct rtl_reprotect_stats *st);

/* After a block was pinned for a system call (its pins counted under its
 * lock, heap.c): an epoch that lowered it before the pin has made its
 * calls. Spins for at most one epoch's calls; may run in a signal handler
 * (the epoch thread never waits for another thread). */
void rtl_reprotect_wait(void);

/* Around an epoch's lowering of records and its calls (here, and the page
 * mechanism's dirty pages, page.c): what rtl_reprotect_wait waits for. */
void rtl_reprotect_lowering(int on);

/* The page mechanism's blocks of rule, each page of them at prot again
 * (page.c decides which), in runs. */
void rtl_reprotect_pages(int rule, int prot, struct rtl_reprotect_stats *st);

/* In a forked child: no list holds a block the child's epochs must not see
 * twice (the lists are the parent's, copied: kept). */

#endif
