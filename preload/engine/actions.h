/* What a trap on a selected region does (actions.c), for every mechanism.
 * Signal handler: no malloc, no locks the interrupted code may hold. */
#ifndef RTL_ACTIONS_H
#define RTL_ACTIONS_H

#include <stddef.h>

#include <rtl/region.h>
#include "preload/engine/record.h"

/* A trap on rec (offset into the object, write or read): count, log,
 * backtrace, events; abort ends the process here. Returns the protection
 * to grant (-1: none). */
int rtl_act_trap(struct rtl_rec *rec, size_t offset, int write);
/* A page-mechanism trap on a block whose own protection already allows
 * the access (rec NULL: bytes of no live block): counted, logged and
 * traced like any trap, but it cannot abort; false_sharing: the page
 * holds a block that does not allow it. Returns the rule's grant for the
 * access, or -1. */
int rtl_act_page_trap(struct rtl_rec *rec, size_t offset, int write,
                      int false_sharing);
/* A grant made bytes accessible (rec NULL: no block's). */
void rtl_act_granted(struct rtl_rec *rec, size_t bytes);
/* rtl changed the protection of a rule's memory (rule -1: none's). */
void rtl_act_prot_changed(int rule);
/* The swizzle mechanism's region handler. */
void rtl_act_swizzle_trap(rtl_trap_t *t);
/* The tag mechanism's: a grant is always read-write. */
void rtl_act_tag_trap(rtl_trap_t *t);

#endif
