/* Moving a trap's interrupted registers between views (move.c), for the
 * trap path (trap.c). Signal-handler code only. */
#ifndef RTL_TRAP_MOVE_H
#define RTL_TRAP_MOVE_H

#include "core/trap/scan.h"
#include "core/trap/trap_state.h"

/* rtl_trap_move_registers (trap.h) is here too: the handler's
 * region_protect moves the trap's registers in every view but to.
 *
 * Move the registers of t lying in r's span in view from to view to,
 * keeping every address form the instruction and the code after it use
 * pointing where it pointed (t->ambiguous when the solver cannot choose),
 * without first asking which views hold an address form: a stale pointer,
 * a region back from in place. */
void rtl_move_from(struct trap *t, const struct rtl_region *r, int from, int to);

/* The fast path's move: every register of the signal frame's array frame
 * (rtl_ctx_frame) lying in r's span, in any view, to view to. With AVX2,
 * the registers near the span are found four at a time (scan.h); the
 * choice is made at install. */
void rtl_move_frame_scalar(uint64_t *frame, const struct rtl_region *r, int to);
#ifdef RTL_SCAN_AVX2
extern int rtl_move_scan_avx2;
void rtl_move_frame_avx2(uint64_t *frame, const struct rtl_region *r, int to);
#endif

static inline void rtl_move_frame(uint64_t *frame, const struct rtl_region *r, int to)
{
#ifdef RTL_SCAN_AVX2
	if (rtl_move_scan_avx2) {
		rtl_move_frame_avx2(frame, r, to);
		return;
	}
#endif
	rtl_move_frame_scalar(frame, r, to);
}

/* Make the move a fast-path trap noted (t->pending_to), by the general
 * path's rules: rtl_trap_materialize's last step. */
void rtl_move_pending(struct trap *t);

/* Read vm.mmap_min_addr (below it no register is a pointer), at install. */
void rtl_move_init(void);

#endif
