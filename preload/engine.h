/* The policy engine's internal interface: the rules at run time, the record
 * of each selected allocation, allocating sites, trap actions, the alias
 * mechanism, dirty epochs and the report. Built once in the constructor;
 * afterwards only counters and records change. Functions marked "signal
 * handler" are called from the SIGSEGV handler: no malloc, no locks the
 * interrupted code may hold. */
#ifndef RTL_ENGINE_H
#define RTL_ENGINE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "lock.h"
#include "policy.h"
#include "select.h"

#define RTL_NO_SITE 0u /* callsite 0 is "(unknown)" */

/* A rule at run time. */
struct rtl_rule_rt {
	const struct rtl_rule *r;
	struct rtl_choice choice;
	_Atomic uint64_t matched; /* for sampling */
	_Atomic uint64_t bytes;   /* asked for by its regions */
	_Atomic uint64_t read_traps, write_traps;
};

struct rtl_engine {
	struct rtl_policy policy;
	struct rtl_rule_rt rules[RTL_POLICY_MAX_RULES];
	char report[RTL_POLICY_PATH_MAX]; /* template, after RTL_REPORT */
	int needs_site;  /* a rule has a site glob */
	int names_early; /* resolve site names at allocation (log, abort) */
	int any_alias, any_dirty, any_epoch;
	uint64_t start_ns;
};
extern struct rtl_engine rtl_engine;


/* ---- counters for the report (engine.c) ---- */
struct rtl_totals {
	_Atomic uint64_t read_traps, write_traps; /* region handler, alias, syscalls */
	_Atomic uint64_t alias_stale;             /* alias faults already allowed */
	_Atomic uint64_t alias_ns;                /* in the alias fault handler */
	_Atomic uint64_t peak;                    /* live regions, at most */
	_Atomic uint64_t mprotect_calls;          /* with mprotect = log */
	_Atomic uint64_t fallbacks[3];            /* RTL_FALLBACK_* */
	_Atomic uint64_t libc_skipped;            /* callers inside libc or ld.so */
	_Atomic uint64_t alias_syscalls;          /* alias buffers resolved for a call */
};
extern struct rtl_totals rtl_totals;
uint64_t rtl_allocations(void); /* seen by the shim since start */

/* ---- records: one per selected allocation (record.c) ---- */
struct rtl_rec {
	_Atomic uint32_t next;  /* free list: index + 1 */
	_Atomic uint8_t live;
	uint8_t mech;           /* RTL_MECH_* */
	_Atomic uint8_t in_place; /* swizzle: protected in place (heap.c) */
	uint16_t rule;
	uint32_t site;          /* stats slot (site.c) */
	uint32_t pages;         /* alias: pages of its mapping */
	size_t size;
	void *rw;               /* first byte in the RW view */
	uintptr_t alias;        /* alias: page-aligned start of the mapping */
	_Atomic uint32_t read_traps, write_traps;
	_Atomic int prot;       /* alias: current protection of the mapping */
	_Atomic int written;    /* dirty: written since the last epoch */
	struct rtl_lock lock;   /* alias: mapping and twin changes */
	void *twin;             /* alias with dirty: contents at first write */
};

int rtl_rec_init(uint64_t cap);
struct rtl_rec *rtl_rec_new(void); /* NULL when the pool is exhausted */
void rtl_rec_free(struct rtl_rec *rec);
struct rtl_rec *rtl_rec_at(uint32_t index); /* signal handler */
uint32_t rtl_rec_index(const struct rtl_rec *rec);
uint32_t rtl_rec_count(void); /* records ever used: iterate [0, count) */
void rtl_rec_lock(struct rtl_rec *rec);   /* spin; signal handler */
void rtl_rec_unlock(struct rtl_rec *rec);

/* The regions with the most traps, freed ones included. */
struct rtl_top {
	uint32_t site;
	size_t size;
	uint32_t read_traps, write_traps;
};
size_t rtl_rec_top(struct rtl_top *out, size_t max);
void rtl_rec_forked(void);

/* ---- allocating sites (site.c) ---- */
int rtl_site_init(void);
/* Whether the malloc-family call returns into libc or the loader. */
int rtl_site_in_libc(const void *caller);
/* The callsite of an allocation whose malloc call returns to caller
 * (operator new and its kin skipped); resolve: its name is needed now. */
uint32_t rtl_site_callsite(const void *caller, int resolve);
/* Whether rule i's site glob accepts the callsite (resolves it). */
int rtl_site_accepts(uint32_t cs, int rule);
/* Its "module!function" name: resolved now (not in a handler), or, from a
 * handler, NULL if it is not resolved yet. */
const char *rtl_site_name(uint32_t cs);
const char *rtl_site_name_ready(uint32_t cs); /* signal handler */
uintptr_t rtl_site_ip(uint32_t cs);
/* Whether ip lies in rtl's own libraries (the preload, librtl). Signal
 * handler. */
int rtl_site_in_rtl(uintptr_t ip);
/* "module!function+0xOFF" for a return address (a backtrace frame). */
void rtl_site_symbolise(uintptr_t ip, int with_offset, char *out, size_t len);

/* Per (callsite, rule) counters: a stats slot. */
struct rtl_site_stats {
	_Atomic uint64_t key; /* callsite << 8 | rule + 1; 0 free */
	_Atomic uint64_t regions, bytes, read_traps, write_traps;
};
uint32_t rtl_site_slot(uint32_t cs, int rule);
struct rtl_site_stats *rtl_site_stats(uint32_t slot, uint32_t *cs, int *rule);
uint32_t rtl_site_slots(void);          /* slots in use, slot 0 included */
uint32_t rtl_site_slot_at(uint32_t k); /* the k-th of them, k < slots */
void rtl_site_forked(void);
extern _Atomic uint64_t rtl_site_overflow; /* allocations not given a site */

/* ---- trap actions (actions.c) ---- */
/* A trap on rec (offset into the object, write or read): count, log,
 * backtrace, events; abort ends the process here. Returns the protection
 * to grant (-1: none). Signal handler. */
int rtl_act_trap(struct rtl_rec *rec, size_t offset, int write);
/* The swizzle mechanism's region handler. */
void rtl_act_swizzle_trap(rtl_trap_t *t);

/* ---- backtraces and events (trace.c) ---- */
int rtl_trace_init(void);
void rtl_trace_backtrace(int rule, int write); /* signal handler */
void rtl_trace_event(const struct rtl_rec *rec, size_t offset, int write);
struct rtl_stack {
	_Atomic uint64_t hash; /* 0 free */
	_Atomic int ready;
	uint8_t write, n;
	uint16_t rule;
	_Atomic uint64_t count;
	uintptr_t ip[16];
};
struct rtl_event {
	uint64_t t_ns;
	uint32_t site;
	uint8_t write;
	size_t offset, size;
};
const struct rtl_stack *rtl_trace_stack(uint32_t i); /* NULL past the end */
uint64_t rtl_trace_events(const struct rtl_event **ev, uint64_t *dropped);
uint64_t rtl_trace_stacks_dropped(void);
void rtl_trace_forked(void);

/* ---- the alias mechanism (alias.c) ---- */
int rtl_alias_init(void);
int rtl_alias_owns(const void *p);
/* Map rec (rw, size, rule set) at its own pages; the address to hand out,
 * or NULL with errno. */
void *rtl_alias_map(struct rtl_rec *rec, int prot);
/* The record of p (an address inside a live alias object), or NULL. */
struct rtl_rec *rtl_alias_find(const void *p);
void rtl_alias_unmap(struct rtl_rec *rec);
/* Set the mapping's protection (rec locked). Signal handler. */
int rtl_alias_protect(struct rtl_rec *rec, int prot);

/* ---- the mapping budget (maps.c) ---- */
void rtl_maps_init(void);
uint64_t rtl_maps_budget(void);
/* Whether another alias object, or block protected in place, fits under
 * vm.max_map_count; the live counts the budget is checked against. */
int rtl_alias_room(void);
int rtl_in_place_room(void);
extern _Atomic uint64_t rtl_alias_live, rtl_in_place_live;
/* The report's notes: "" if that limit was not reached. */
void rtl_alias_note(char *buf, size_t len);
void rtl_in_place_note(char *buf, size_t len);

/* ---- dirty tracking and epochs (epoch.c) ---- */
int rtl_epoch_start(void);
/* A tracked region is freed: account its diff first. */
void rtl_epoch_freeing(struct rtl_rec *rec);
/* At exit: close the last epoch. */
void rtl_epoch_final(void);
struct rtl_epoch {
	uint64_t t_ns, dirty_regions, diff_bytes, page_bytes;
};
size_t rtl_epoch_list(const struct rtl_epoch **out, uint64_t *dropped);
void rtl_epoch_forked(void);

/* ---- the report (report.c) and fatal signals (fatal.c) ---- */
/* Write the report now; status: exit status, or -(signal number), or
 * RTL_STATUS_UNKNOWN. Not from a signal handler. */
#define RTL_STATUS_UNKNOWN (-1000)
void rtl_report_write(int status);
int rtl_report_claim(void);        /* the one writer: 1 if it is us */
void rtl_report_emit(int status);  /* write it (claimed) */
void rtl_report_forked(void);
void rtl_report_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Install the fatal-signal handlers and the writer they wake. */
int rtl_fatal_init(void);
void rtl_fatal_thread(void); /* make sure the writer thread runs */
/* From a signal handler: the report for death by sig, then return (the
 * caller dies). Waits a bounded time. */
void rtl_fatal_report(int sig);
/* Whether sig's action is the preload's fatal handler (hidden from the
 * program), and forget it when the program sets its own. */
int rtl_fatal_owns(int sig, const void *handler);
void rtl_fatal_disown(int sig);
void rtl_fatal_forked(void);

#endif
