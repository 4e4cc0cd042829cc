/* The page mechanism (page.c): page protection on the preload's own
 * block layout, the baseline that rtlctl compare sets the region
 * mechanisms beside. Every block of a `mechanism = page` rule is reached
 * through one more copy of the arena's pool, shared by all of them, and
 * protection is per page of that copy. */
#ifndef RTL_PLACE_PAGE_H
#define RTL_PLACE_PAGE_H

#include <stddef.h>
#include <stdint.h>

#include "preload/engine/record.h"

/* Bytes of address space the copy takes. */
size_t rtl_pageprot_span(void);

/* Map the copy at base (rtl_pageprot_span() bytes the caller reserved).
 * 0, or -1 with errno. */
int rtl_pageprot_init(uintptr_t base);

/* Whether a lies in the copy. Signal handler. */
int rtl_pageprot_owns(uintptr_t a);

/* rec (rw, size) is a new block: its address in the copy, or 0 with
 * errno if the kernel refused to lower its pages to prot. Sets
 * rec->alias, rec->pages and rec->prot. */
uintptr_t rtl_pageprot_take(struct rtl_rec *rec, int prot);

/* rec is freed (no longer live): forget where it starts. Its pages keep
 * their protection, as a page tracker's would. */
void rtl_pageprot_give(struct rtl_rec *rec);

/* The live block holding a, or NULL. Signal handler. */
struct rtl_rec *rtl_pageprot_find(uintptr_t a);

/* Apply protection prot to rec (rec locked): it becomes the block's own,
 * and every page holding it is lowered to prot (never raised: a page
 * keeps the least of what its blocks were given). Epochs. */
int rtl_pageprot_protect(struct rtl_rec *rec, int prot);

/* A fault at a in the copy: the rule's actions for the block touched and
 * a grant of the whole page. 1 if the access may proceed. Signal
 * handler. */
int rtl_pageprot_fault(uintptr_t a, int write);

/* A system call's buffer [p, p + len) in the copy (len 1: a name or a
 * structure of unknown length, so up to the end of its block): every page
 * of it that does not allow the access is trapped as a fault would be. 1
 * if the kernel may go ahead. Signal handler. */
int rtl_pageprot_access(uintptr_t p, size_t len, int write);

/* The kernel refused [p, p + len) after rtl_pageprot_access let it
 * through: each page whose state allows the access set to that state
 * again (a late epoch's call); whether any was. Signal-handler safe. */
int rtl_pageprot_repair(uintptr_t p, size_t len, int write);

/* An epoch: the pages of rec that do not have prot get it in the page
 * states now (not those a system call is using, nor those whose lock a
 * trap holds), each passed to add for the epoch's calls, in runs. How many
 * pages. */
size_t rtl_pageprot_lower(const struct rtl_rec *rec, int prot,
                          void (*add)(uintptr_t at, size_t len, struct rtl_rec *rec));

/* Whether an epoch's run may take the pages [lo, hi) of the copy too at
 * prot: each has it already. */
int rtl_pageprot_bridge(uintptr_t lo, uintptr_t hi, int prot);

/* The program's own mprotect of the copy's page at a: from now on its
 * protection is the program's, and no block's. */
void rtl_pageprot_take_over(uintptr_t a);

/* Dirty tracking, the page tracker's way: a page written since its twin
 * was taken is diffed against it (epoch.c accounts each page), and with
 * relower its pages are protected again first, so that the next write
 * traps and takes a new twin. Outside signal handlers. */
void rtl_pageprot_diff(int relower);

/* In a forked child: map the copy again over the new memfd and give its
 * pages back their protections. */
void rtl_pageprot_forked(void);

#endif
