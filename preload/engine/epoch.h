/* Dirty tracking's accounts and an epoch's work (epoch.c), and the epoch
 * timer (epoch_timer.c). Outside signal handlers, under the re-entrancy
 * guard. */
#ifndef RTL_EPOCH_H
#define RTL_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#include "preload/engine/record.h"
#include "preload/engine/reprotect.h"

/* The timer's thread, started once (again in a forked child). */
int rtl_epoch_start(void);
/* One epoch of the rules in due_mask: their blocks protected again, their
 * dirty epoch closed; st gets the protection calls and blocks. The
 * timer's thread only. */
void rtl_epoch_tick(uint64_t due_mask, struct rtl_reprotect_stats *st);
/* In a forked child (from rtl_epoch_forked): the timer's counts from
 * zero, its thread started again. */
void rtl_epoch_timer_forked(void);
/* The page mechanism diffed a page written since its twin (len bytes at
 * now, in the RW view): one written page of the epoch. */
void rtl_epoch_page_written(const unsigned char *now,
                            const unsigned char *was, size_t len);
/* A tracked region is freed: account its diff first. */
void rtl_epoch_freeing(struct rtl_rec *rec);
/* At start (rtl running): which dirty rules go on the kernel's written bits
 * (engine.h's any_wbits, dirty_why), asking the kernel once. */
void rtl_epoch_choose(void);
/* The epochs' own time so far: protecting again, scans, diffs, re-arming. */
uint64_t rtl_epoch_time_ns(void);
/* The epochs so far, their protection calls, the blocks those protected
 * again, and the epochs put off because the one before took more than a
 * tenth of its period (and by how much in all). */
struct rtl_epoch_counts {
	uint64_t epochs, calls, blocks, stretched, stretch_ns;
};
void rtl_epoch_counts(struct rtl_epoch_counts *out);
/* At exit: close the last epoch. */
void rtl_epoch_final(void);
/* Card sizes: 128, 512, 4096 bytes. */
#define RTL_CARDS 3
struct rtl_epoch {
	uint64_t t_ns, dirty_regions, diff_bytes, page_bytes;
	uint64_t object_bytes;          /* the written blocks, whole */
	uint64_t card_bytes[RTL_CARDS]; /* cards holding a changed byte */
	uint64_t written_bytes;         /* pages the kernel found written */
};
size_t rtl_epoch_list(const struct rtl_epoch **out, uint64_t *dropped);
void rtl_epoch_forked(void);

#endif
