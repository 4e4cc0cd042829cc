/* The alias mechanism (alias.c): a selected object gets pages of its own
 * that map its bytes in the views' memfd; protection is mprotect on them. */
#ifndef RTL_ALIAS_H
#define RTL_ALIAS_H

#include "preload/engine/record.h"

/* with_slots: map the slots too (an auto rule exists); with_pages: the
 * page mechanism's copy (a page rule exists). */
int rtl_alias_init(int with_slots, int with_pages);
int rtl_alias_owns(const void *p);
/* Map rec (rw, size, rule set) at its own pages; the address to hand out,
 * or NULL with errno. */
void *rtl_alias_map(struct rtl_rec *rec, int prot);
/* The record of p (an address inside a live alias object), or NULL. */
struct rtl_rec *rtl_alias_find(const void *p);
void rtl_alias_unmap(struct rtl_rec *rec);
/* Set the mapping's protection (rec locked). Signal handler. */
int rtl_alias_protect(struct rtl_rec *rec, int prot);

#endif
