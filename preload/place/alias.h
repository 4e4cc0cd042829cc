/* The alias mechanism (alias.c): a selected object gets pages of its own
 * that map its bytes in the views' memfd; protection is set on them
 * through rtl's protection backend. */
#ifndef RTL_ALIAS_H
#define RTL_ALIAS_H

#include "preload/engine/record.h"

/* with_slots: map the slots too (an auto rule exists); with_pages: the
 * page mechanism's copy (a page rule exists); with_whole: the copy of
 * auto's blocks of whole pages (an auto rule exists: used only where
 * protection lives in the page tables). */
int rtl_alias_init(int with_slots, int with_pages, int with_whole);
int rtl_alias_owns(const void *p);
/* Map rec (rw, size, rule set) at its own pages; the address to hand out,
 * or NULL with errno. */
void *rtl_alias_map(struct rtl_rec *rec, int prot);
/* The record of p (an address inside a live alias object), or NULL. */
struct rtl_rec *rtl_alias_find(const void *p);
void rtl_alias_unmap(struct rtl_rec *rec);
/* Set the mapping's protection (rec locked). Signal handler. */
int rtl_alias_protect(struct rtl_rec *rec, int prot);

/* rec's pages are about to get prot (a call over a run of several blocks'
 * pages, reprotect.c): what the copies remember of them, no call. */
void rtl_alias_protected(struct rtl_rec *rec, int prot);

/* The program's own mprotect of [lo, hi) (page-aligned): the blocks of
 * rtl's alias reservation there give their protection up to it. */
void rtl_alias_take_over(uintptr_t lo, uintptr_t hi);

/* An epoch's run over [lo, hi), the pages between two of rule's blocks in
 * one copy (a slot copy or the copy of blocks of whole pages; a few
 * thousand pages at most): whether the run may take them too at prot,
 * each free there or holding a live block of rule at prot already. If so,
 * the free ones are remembered at prot. */
int rtl_alias_bridge(uintptr_t lo, uintptr_t hi, int rule, int prot);

/* The fault and system-call hooks for the reservation [res, res + span)
 * (alias_trap.c). */
void rtl_alias_traps_init(void *res, size_t span);

struct rtl_choice;
/* Whether a block of rule choice c may split mappings as its protection
 * changes (maps.c counts it then): under mprotect any that can trap;
 * under page tables only one protected against reads. */
int rtl_alias_splits(const struct rtl_choice *c);

/* Whether auto's blocks of whole pages of rule c leave rtl's views for
 * the copy of such blocks (page-table protection, whole.c). */
int rtl_alias_whole(const struct rtl_choice *c);

#endif
