/* Slots (auto.c): the arena's pool mapped RTL_SLOTS more times, so that
 * each block under a page can be reached through a copy of its own (the
 * auto mechanism's small blocks). */
#ifndef RTL_PLACE_AUTO_H
#define RTL_PLACE_AUTO_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* How many copies: the most blocks one physical page holds (jemalloc's
 * smallest size class is 16 bytes). */
#define RTL_SLOTS 256

/* Bytes of address space the copies take (at a RTL_SLOTS * pool boundary
 * inside the caller's reservation). */
size_t rtl_slots_span(void);

/* Map the copies at base (a range of rtl_slots_span() bytes the caller
 * reserved). 0, or -1 with errno. */
int rtl_slots_init(uintptr_t base);

/* A copy for the block [rw, rw + len) of the pool, where no other live
 * block has taken it on the block's pages: the block's address in it, or 0
 * when every copy of some page is taken. The pages of that copy get prot
 * (one mprotect, only if they had another). */
uintptr_t rtl_slot_take(uintptr_t rw, size_t len, int prot);

/* The copy addr lies in, or -1 outside the slots. */
int rtl_slot_copy_of(uintptr_t addr);

/* Give the copy at addr back (the block is freed). */
void rtl_slot_give(uintptr_t addr, size_t len);

/* The protection of the pages [addr, addr + len) of a copy changed (for
 * the next rtl_slot_take on them). Signal handler. */
void rtl_slot_protected(uintptr_t addr, size_t len, int prot);

/* When the kernel has no mapping left for a grant (vm.max_map_count): the
 * whole copy holding addr made read-write, in one call that only merges
 * mappings. The program goes on exactly; the blocks of that copy lose
 * their protection (their later traps are not taken), which the report
 * says (rtl_slots_opened). 0, or -1. Signal handler: one system call and
 * plain stores. */
int rtl_slot_open_copy(uintptr_t addr);
extern _Atomic uint64_t rtl_slots_opened;

/* Whether the pages [addr, addr + len) of a copy have prot. */
int rtl_slot_has_prot(uintptr_t addr, size_t len, int prot);

/* Around fork: no copy is being mapped while the child is made. */
void rtl_slots_fork_prepare(void);
void rtl_slots_fork_parent(void);

/* In a forked child, after rtl's views moved to a new memfd: map the
 * copies again over it, their pages with the protections they had (one
 * mmap per run of pages of one protection). */
void rtl_slots_forked(void);

#endif
