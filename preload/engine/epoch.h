/* Dirty tracking's accounts and the epoch timer (epoch.c). Outside signal
 * handlers, under the re-entrancy guard. */
#ifndef RTL_EPOCH_H
#define RTL_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#include "preload/engine/record.h"

int rtl_epoch_start(void);
/* The page mechanism diffed a page written since its twin (len bytes at
 * now, in the RW view): one written page of the epoch. */
void rtl_epoch_page_written(const unsigned char *now,
                            const unsigned char *was, size_t len);
/* A tracked region is freed: account its diff first. */
void rtl_epoch_freeing(struct rtl_rec *rec);
/* At exit: close the last epoch. */
void rtl_epoch_final(void);
struct rtl_epoch {
	uint64_t t_ns, dirty_regions, diff_bytes, page_bytes;
};
size_t rtl_epoch_list(const struct rtl_epoch **out, uint64_t *dropped);
void rtl_epoch_forked(void);

#endif
