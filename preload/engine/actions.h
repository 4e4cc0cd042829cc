/* What a trap on a selected region does (actions.c), for both mechanisms.
 * Signal handler: no malloc, no locks the interrupted code may hold. */
#ifndef RTL_ACTIONS_H
#define RTL_ACTIONS_H

#include <stddef.h>

#include "record.h"
#include "rtl/region.h"

/* A trap on rec (offset into the object, write or read): count, log,
 * backtrace, events; abort ends the process here. Returns the protection
 * to grant (-1: none). */
int rtl_act_trap(struct rtl_rec *rec, size_t offset, int write);
/* The swizzle mechanism's region handler. */
void rtl_act_swizzle_trap(rtl_trap_t *t);

#endif
