/* Allocating sites: where a malloc-family call comes from, past the
 * allocators' wrappers (operator new, the C++ containers, runtimes'
 * allocators, the policy's site_skip), its name ("module!function", by
 * the exported symbols (symindex.c), else libunwind's reading of the
 * symbol table), cached once per call-site address in a lock-free table,
 * and the per (site, rule) counters. Also the text ranges of libc and the loader
 * (whose allocations are never selected) and of rtl itself (skipped in
 * backtraces). Naming runs in the allocation path under the guard, never in
 * a signal handler; lookups of a named site are lock-free. */
#define UNW_LOCAL_ONLY
#include "preload/engine/site.h"

#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "policy/policy.h"
#include "preload/engine/engine.h"
#include "preload/engine/loader.h"
#include "preload/engine/symindex.h"
#include "preload/engine/tally.h"
#include "preload/engine/wrappers.h"
#include "preload/track/modules.h"

#define CS_CAP (1u << 14)
#define SLOT_CAP (1u << 15)
#define PROBES 64
#define MAX_RANGES 16

struct callsite {
	_Atomic uintptr_t ip; /* 0: free */
	_Atomic int state;    /* 0 unnamed, 1 being named, 2 named */
	uint64_t accept;      /* rules whose site glob accepts it */
	int wrapper;          /* an allocator's wrapper: look further out */
	char name[RTL_SITE_NAME_MAX];
};

#define FRAMES 32      /* looked at past the wrappers, rtl's own included */
#define NEAR_FRAMES 10 /* looked at first: rtl's frames, a wrapper, its caller */

struct range {
	uintptr_t lo, hi;
};

static struct callsite *cs_tab;
static struct rtl_site_stats *slots;
/* Per stripe (tally.h), per slot: regions made and their bytes. A stripe's
 * rows are its own cache lines: threads on different stripes making
 * regions at one site do not share them. */
struct made {
	_Atomic uint64_t regions, bytes;
};
static struct made (*made)[SLOT_CAP];
/* The entries in use, in the order they were taken: what a fork or the
 * report walks, instead of touching the whole (sparse) tables. */
static uint32_t *cs_used, *slot_used;
static _Atomic uint32_t ncs_used, nslot_used;
static struct range libc[MAX_RANGES], self[MAX_RANGES];
static int nlibc, nself;
_Atomic uint64_t rtl_site_overflow;

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static void add(struct range *r, int *n, uintptr_t lo, uintptr_t hi)
{
	if (*n < MAX_RANGES)
		r[(*n)++] = (struct range){ lo, hi };
}

/* The executable segments of libc and the loader (never selected) and of
 * rtl's own libraries (skipped in backtraces). */
static int phdr_cb(struct dl_phdr_info *info, size_t sz, void *arg)
{
	const char *name = base_name(info->dlpi_name ? info->dlpi_name : "");
	struct range *r = NULL;
	int *n = NULL;

	(void)sz, (void)arg;
	if (starts(name, "libc.so") || starts(name, "ld-linux"))
		r = libc, n = &nlibc;
	else if (starts(name, "librtlpreload.so") || starts(name, "librtl.so"))
		r = self, n = &nself;
	if (!r)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			add(r, n, info->dlpi_addr + ph->p_vaddr,
			    info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
	}
	return 0;
}

int rtl_site_init(void)
{
	if (cs_tab)
		return 0;
	cs_tab = map(CS_CAP * sizeof(*cs_tab));
	slots = map(SLOT_CAP * sizeof(*slots));
	made = map(RTL_STRIPES * sizeof(*made));
	cs_used = map(CS_CAP * sizeof(*cs_used));
	slot_used = map(SLOT_CAP * sizeof(*slot_used));
	if (!cs_tab || !slots || !made || !cs_used || !slot_used)
		return -1;
	/* Entry 0 of each: everything that found no room. */
	strcpy(cs_tab[0].name, "(other sites)");
	atomic_store(&cs_tab[0].state, 2);
	cs_tab[0].accept = ~0ull;
	dl_iterate_phdr(phdr_cb, NULL);
	return 0;
}

static int in(const struct range *r, int n, uintptr_t a)
{
	for (int i = 0; i < n; i++)
		if (a - r[i].lo < r[i].hi - r[i].lo)
			return 1;
	return 0;
}

int rtl_site_in_libc(const void *caller)
{
	return in(libc, nlibc, (uintptr_t)caller);
}

int rtl_site_in_rtl(uintptr_t ip)
{
	return in(self, nself, ip);
}

/* ---- naming ---- */

/* "module!function" (+0xOFF with with_offset), or "module!+0xOFF" when no
 * symbol covers ip. ip is a return address: the call is at ip - 1. */
void rtl_site_symbolise(uintptr_t ip, int with_offset, char *out, size_t len)
{
	const char *mod = "?", *fn = NULL;
	uintptr_t at = ip - 1, off = 0, base = 0;
	char buf[256];
	struct rtl_sym sym;
	int found = rtl_symindex_lookup(at, &sym) == 0;

	if (found) {
		mod = *sym.file ? base_name(sym.file) : program_invocation_short_name;
		base = sym.base;
		/* The exported symbol covering ip, if one does (static
		 * functions lie between them). */
		if (sym.name && (sym.size == 0 || at - sym.addr < sym.size)) {
			fn = sym.name;
			off = at - sym.addr;
		}
	}
	/* Static functions: the file's full symbol table, where it has one. */
	if (!fn && (!found || sym.has_symtab)) {
		unw_context_t ctx;
		unw_cursor_t cur;
		unw_word_t o = 0;

		unw_proc_info_t pi;

		/* libunwind names the nearest symbol below ip, covering it or
		 * not: only if it starts where the unwind tables say ip's
		 * function starts is it ip's (rtlctl's symbol tables, with
		 * sizes, then name it the same; tools/interpret/symbols.c). */
		/* A name longer than buf comes cut (UNW_ENOMEM): C++
		 * templates' mangled names run to hundreds of bytes, and
		 * their start is what names them. */
		int got;

		if (unw_getcontext(&ctx) == 0 && unw_init_local(&cur, &ctx) == 0 &&
		    unw_set_reg(&cur, UNW_REG_IP, at) == 0 &&
		    ((got = unw_get_proc_name(&cur, buf, sizeof(buf), &o)) == 0 ||
		     got == -UNW_ENOMEM) &&
		    unw_get_proc_info(&cur, &pi) == 0 && at - o == pi.start_ip) {
			fn = buf;
			off = o;
		}
	}
	if (!fn)
		snprintf(out, len, "%s!+0x%lx", mod, (unsigned long)(at - base));
	else if (with_offset)
		snprintf(out, len, "%s!%s+0x%lx", mod, fn, (unsigned long)off);
	else
		snprintf(out, len, "%s!%s", mod, fn);
}

static void name(struct callsite *c)
{
	int expect = 0;
	uint64_t accept = 0;

	if (atomic_load_explicit(&c->state, memory_order_acquire) == 2)
		return;
	/* Inside the loader gate from before the state says "being named"
	 * until it says "named": a child never inherits a name half made. */
	rtl_loader_enter();
	if (!atomic_compare_exchange_strong(&c->state, &expect, 1)) {
		rtl_loader_leave();
		while (atomic_load_explicit(&c->state, memory_order_acquire) != 2)
			sched_yield(); /* another thread is naming it */
		return;
	}
	rtl_site_symbolise(atomic_load(&c->ip), 0, c->name, sizeof(c->name));
	c->wrapper = rtl_site_is_wrapper(c->name);
	for (int i = 0; i < rtl_engine.policy.nrules; i++)
		if (rtl_policy_site_matches(rtl_engine.rules[i].r, c->name))
			accept |= 1ull << i;
	c->accept = accept;
	atomic_store_explicit(&c->state, 2, memory_order_release);
	rtl_loader_leave();
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* The entry for ip, made if new; 0 if the table is full. */
static uint32_t lookup(uintptr_t ip)
{
	uint32_t h = (uint32_t)mix(ip);

	for (uint32_t k = 0; k < PROBES; k++) {
		uint32_t i = (h + k) & (CS_CAP - 1);
		uintptr_t cur, zero = 0;

		if (i == 0)
			continue;
		cur = atomic_load_explicit(&cs_tab[i].ip, memory_order_acquire);
		if (cur == ip)
			return i;
		if (!cur && atomic_compare_exchange_strong(&cs_tab[i].ip, &zero, ip)) {
			cs_used[atomic_fetch_add(&ncs_used, 1)] = i;
			rtl_modules_cover(ip); /* a new site: its module is mapped */
			return i;
		}
		if (zero == ip)
			return i;
	}
	atomic_fetch_add_explicit(&rtl_site_overflow, 1, memory_order_relaxed);
	return 0;
}

/* Whether entry cs is an allocator's wrapper (named first if need be). */
static int wrapper(uint32_t cs)
{
	name(&cs_tab[cs]);
	return cs_tab[cs].wrapper;
}

/* The call came from a wrapper at caller (entry cs): the first frame
 * outside the wrappers, from a backtrace of this call; cs itself if the
 * frames run out (or the table is full). */
static uint32_t past_wrappers(uintptr_t caller, uint32_t cs)
{
	void *ips[FRAMES];
	/* A backtrace costs by the frame: the near ones first, which
	 * usually hold the caller of the wrapper. */
	for (int depth = NEAR_FRAMES;; depth = FRAMES) {
		int n, i = 0;

		rtl_loader_enter();
		n = unw_backtrace(ips, depth);
		rtl_loader_leave();

		while (i < n && (uintptr_t)ips[i] != caller)
			i++;
		for (i++; i < n; i++) {
			uint32_t next = lookup((uintptr_t)ips[i]);

			if (!next)
				return cs;
			if (!wrapper(next))
				return next;
		}
		if (n < depth || depth == FRAMES)
			return cs;
	}
}

uint32_t rtl_site_callsite(const void *caller, int resolve)
{
	uintptr_t ip = (uintptr_t)caller;
	uint32_t cs;

	if (!cs_tab)
		return 0;
	cs = lookup(ip);
	if (cs && wrapper(cs))
		cs = past_wrappers(ip, cs);
	if (resolve && cs)
		name(&cs_tab[cs]);
	return cs;
}

int rtl_site_accepts(uint32_t cs, int rule)
{
	name(&cs_tab[cs]);
	return (cs_tab[cs].accept >> rule) & 1;
}

const char *rtl_site_name_ready(uint32_t cs)
{
	if (!cs_tab ||
	    atomic_load_explicit(&cs_tab[cs].state, memory_order_acquire) != 2)
		return NULL;
	return cs_tab[cs].name;
}

uintptr_t rtl_site_ip(uint32_t cs)
{
	return atomic_load(&cs_tab[cs].ip);
}

/* ---- per (site, rule) counters ---- */

uint32_t rtl_site_slot(uint32_t cs, int rule)
{
	uint64_t key = (uint64_t)cs << 8 | (uint64_t)(rule + 1);
	uint32_t h = (uint32_t)mix(key);

	if (!slots)
		return 0;
	for (uint32_t k = 0; k < PROBES; k++) {
		uint32_t i = (h + k) & (SLOT_CAP - 1);
		uint64_t cur, zero = 0;

		if (i == 0)
			continue;
		cur = atomic_load_explicit(&slots[i].key, memory_order_acquire);
		if (cur == key)
			return i;
		if (!cur && atomic_compare_exchange_strong(&slots[i].key, &zero, key)) {
			slot_used[atomic_fetch_add(&nslot_used, 1)] = i;
			return i;
		}
		if (zero == key)
			return i;
	}
	atomic_fetch_add_explicit(&rtl_site_overflow, 1, memory_order_relaxed);
	return 0; /* slot 0: "(other sites)", any rule */
}

struct rtl_site_stats *rtl_site_stats(uint32_t slot, uint32_t *cs, int *rule)
{
	uint64_t key = atomic_load(&slots[slot].key);

	if (cs)
		*cs = (uint32_t)(key >> 8);
	if (rule)
		*rule = (int)(key & 0xff) - 1;
	return &slots[slot];
}

/* The slots in use: slot 0, then the rest in the order they were taken. */
uint32_t rtl_site_slots(void)
{
	return slots ? atomic_load(&nslot_used) + 1 : 0;
}

uint32_t rtl_site_slot_at(uint32_t k)
{
	return k ? slot_used[k - 1] : 0;
}

void rtl_site_count_new(uint32_t slot, uint64_t size)
{
	struct made *m = &made[rtl_stripe_index()][slot];

	rtl_tally_add(&m->regions, 1);
	rtl_tally_add(&m->bytes, size);
}

void rtl_site_made(uint32_t slot, uint64_t *regions, uint64_t *bytes)
{
	*regions = *bytes = 0;
	for (unsigned s = 0, n = rtl_stripes_used(); s < n; s++) {
		*regions += atomic_load_explicit(&made[s][slot].regions,
		                                 memory_order_relaxed);
		*bytes += atomic_load_explicit(&made[s][slot].bytes,
		                               memory_order_relaxed);
	}
}

static void zero(struct rtl_site_stats *s)
{
	uint32_t slot = (uint32_t)(s - slots);

	for (unsigned k = 0, n = rtl_stripes_used(); k < n; k++) {
		atomic_store(&made[k][slot].regions, 0);
		atomic_store(&made[k][slot].bytes, 0);
	}
	atomic_store(&s->read_traps, 0);
	atomic_store(&s->write_traps, 0);
	atomic_store(&s->false_sharing, 0);
	atomic_store(&s->grants, 0);
	atomic_store(&s->granted_bytes, 0);
	atomic_store(&s->touched_bytes, 0);
}

void rtl_site_forked(void)
{
	uint32_t n;

	rtl_symindex_forked(); /* its lock's holder may not have come along */
	if (!slots)
		return;
	zero(&slots[0]);
	n = atomic_load(&nslot_used);
	for (uint32_t k = 0; k < n; k++)
		zero(&slots[slot_used[k]]);
	/* A thread naming a site did not come along. */
	n = atomic_load(&ncs_used);
	for (uint32_t k = 0; k < n; k++)
		if (atomic_load(&cs_tab[cs_used[k]].state) == 1)
			atomic_store(&cs_tab[cs_used[k]].state, 0);
	atomic_store(&rtl_site_overflow, 0);
}
