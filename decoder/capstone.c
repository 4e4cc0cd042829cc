/* Capstone for every backend: opened once at start with rtl's own
 * allocator hooks, then used from signal handlers. Each decode has a slot of
 * its own (a Capstone handle, its instruction buffer and a scratch arena),
 * so threads never share Capstone state and nothing is allocated per trap.
 * A thread goes back to the slot it used last; when every open slot is in
 * use (more threads decoding at once than were opened at start, or a decode
 * interrupted by a signal whose handler traps), one more is opened on the
 * spot from memory mapped at start, never waiting for another thread. */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>

#include "decoder/backend.h"
#include "decoder/cache.h"
#include "decoder/cs.h"
#include "decoder/decoder.h"
#include "decoder/derive.h"
#include "core/util/relax.h"

/* Opened at start: one per thread decoding at once. Two cover a trap
 * interrupted by another; more open on the spot (slot_grow), from memory
 * mapped at start, so a process that never traps from many threads at
 * once pays for two (each costs about 20 us of Capstone's set-up). */
#define NSLOTS_START 2
#define NSLOTS_MAX 4096 /* decodes at once, at most */

#ifndef RTL_CAPSTONE_SONAME
#error "RTL_CAPSTONE_SONAME: the file name of Capstone's library (decoder/meson.build)"
#endif

struct rtl_cs rtl_cs;

/* Capstone, loaded now: its library's calls into rtl_cs. Not in a signal
 * handler (dlopen). Loaded local and never closed. */
static int cs_load(void)
{
	void *h = dlopen(RTL_CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "rtl: cannot load %s: %s\n", RTL_CAPSTONE_SONAME,
		        dlerror());
		return -1;
	}
	*(void **)&rtl_cs.open = dlsym(h, "cs_open");
	*(void **)&rtl_cs.option = dlsym(h, "cs_option");
	*(void **)&rtl_cs.malloc = dlsym(h, "cs_malloc");
	*(void **)&rtl_cs.disasm_iter = dlsym(h, "cs_disasm_iter");
	*(void **)&rtl_cs.regs_access = dlsym(h, "cs_regs_access");
	if (!rtl_cs.open || !rtl_cs.option || !rtl_cs.malloc ||
	    !rtl_cs.disasm_iter || !rtl_cs.regs_access) {
		fprintf(stderr, "rtl: %s lacks a call rtl needs\n", RTL_CAPSTONE_SONAME);
		return -1;
	}
	return 0;
}

/* ---- memory for Capstone: bump arenas, never malloc ---- */

struct arena {
	char *base;
	size_t size, used;
};

static struct arena init_arena;
/* Set while a slot decodes: anything Capstone allocates then comes from the
 * slot's scratch arena and is dropped when the decode ends. */
static __thread struct arena *cur_arena __attribute__((tls_model("initial-exec")));

/* The init arena is shared by every thread that opens a slot: its bump is
 * atomic. A scratch arena belongs to the one decode using its slot. */
static _Atomic size_t init_used;

static void *arena_alloc(size_t n)
{
	struct arena *a = cur_arena;
	size_t need = (n + 16 + 15) & ~(size_t)15; /* 16-byte header */
	size_t at, *hdr;

	if (!a) {
		a = &init_arena;
		at = atomic_fetch_add_explicit(&init_used, need,
		                               memory_order_relaxed);
	} else {
		at = a->used;
		a->used += need;
	}
	if (!a->base || at + need > a->size)
		return NULL;
	hdr = (size_t *)(a->base + at);
	*hdr = n;
	return (char *)hdr + 16;
}

/* Allocations made while decoding in a handler (should stay zero). */
static _Atomic uint64_t late_allocs;

static void *cs_hook_malloc(size_t n)
{
	if (cur_arena)
		atomic_fetch_add_explicit(&late_allocs, 1, memory_order_relaxed);
	return arena_alloc(n);
}

static void *cs_hook_calloc(size_t n, size_t m)
{
	void *p = cs_hook_malloc(n * m);
	if (p)
		memset(p, 0, n * m);
	return p;
}

static void *cs_hook_realloc(void *old, size_t n)
{
	void *p = cs_hook_malloc(n);
	if (p && old) {
		size_t was = *(size_t *)((char *)old - 16);
		memcpy(p, old, was < n ? was : n);
	}
	return p;
}

static void cs_hook_free(void *p) { (void)p; /* arenas are dropped whole */ }

static int arena_map(struct arena *a, size_t size)
{
	a->base = mmap(NULL, size, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a->base == MAP_FAILED) {
		a->base = NULL;
		return -1;
	}
	a->size = size;
	a->used = 0;
	return 0;
}

/* ---- handle slots ---- */

struct slot {
	_Atomic int busy;
	_Atomic int ready; /* opened: may be borrowed */
	csh handle;
	cs_insn *insn;
	struct arena scratch;
};

static struct slot slots[NSLOTS_MAX];
static _Atomic int nslots;                                              /* slots taken for opening, ready or not */
static __thread int my_slot __attribute__((tls_model("initial-exec"))); /* index + 1 */

/* Open slot s: a handle with detail on, its instruction buffer, its scratch
 * arena, and the tables Capstone builds on first use built now, in the init
 * arena (the scratch arena is reset at every decode). Only system calls and
 * the hooks above: safe in a signal handler once rtl_decoder_init ran. */
static int slot_open(struct slot *s)
{
	if (rtl_backend_open(&s->handle) < 0)
		return -1;
	rtl_cs.option(s->handle, CS_OPT_DETAIL, CS_OPT_ON);
	s->insn = rtl_cs.malloc(s->handle);
	if (!s->insn || arena_map(&s->scratch, 1u << 20) < 0)
		return -1;
	rtl_backend_warmup(s->handle, s->insn);
	return 0;
}

/* Set once rtl_decoder_init succeeded: before, nothing decodes. */
static _Atomic int ready;

int rtl_decoder_ready(void)
{
	return atomic_load_explicit(&ready, memory_order_acquire);
}

int rtl_decoder_init(void)
{
	cs_opt_mem mem = {
		.malloc = cs_hook_malloc,
		.calloc = cs_hook_calloc,
		.realloc = cs_hook_realloc,
		.free = cs_hook_free,
		.vsnprintf = vsnprintf,
	};

	if (cs_load() < 0) {
		errno = ELIBACC;
		return -1;
	}
	if (arena_map(&init_arena, (size_t)64 << 20) < 0)
		return -1;
	rtl_code_init();
	if (rtl_cs.option(0, CS_OPT_MEM, (size_t)&mem) != CS_ERR_OK)
		goto fail;
	for (int i = 0; i < NSLOTS_START; i++) {
		if (slot_open(&slots[i]) < 0)
			goto fail;
		atomic_store_explicit(&slots[i].ready, 1, memory_order_release);
	}
	atomic_store_explicit(&nslots, NSLOTS_START, memory_order_release);
	atomic_store_explicit(&ready, 1, memory_order_release);
	return 0;
fail:
	errno = ENOMEM;
	return -1;
}

static struct slot *slot_try(int i)
{
	struct slot *s = &slots[i];

	if (!atomic_load_explicit(&s->ready, memory_order_acquire) ||
	    atomic_exchange_explicit(&s->busy, 1, memory_order_acquire))
		return NULL;
	my_slot = i + 1;
	return s;
}

/* One more slot, opened for this decode (busy from the start); NULL if
 * NSLOTS_MAX are open or it cannot be. */
static struct slot *slot_grow(void)
{
	int i = atomic_fetch_add_explicit(&nslots, 1, memory_order_relaxed);
	struct slot *s;

	if (i >= NSLOTS_MAX) {
		atomic_fetch_sub_explicit(&nslots, 1, memory_order_relaxed);
		return NULL;
	}
	struct arena *outer = cur_arena; /* a decode this one interrupted */
	int ok;

	s = &slots[i];
	atomic_store_explicit(&s->busy, 1, memory_order_relaxed);
	cur_arena = NULL; /* the handle's memory lives in the init arena */
	ok = slot_open(s) == 0;
	cur_arena = outer;
	if (!ok)
		return NULL; /* stays busy and never ready: not used again */
	atomic_store_explicit(&s->ready, 1, memory_order_release);
	my_slot = i + 1;
	return s;
}

/* This thread's slot if it is free, else any free one, else a new one.
 * Waits only with NSLOTS_MAX decodes in flight. */
static struct slot *slot_get(void)
{
	struct slot *s;

	if (my_slot && (s = slot_try(my_slot - 1)))
		return s;
	for (;;) {
		int n = atomic_load_explicit(&nslots, memory_order_acquire);

		for (int i = 0; i < n && i < NSLOTS_MAX; i++)
			if ((s = slot_try(i)))
				return s;
		if ((s = slot_grow()))
			return s;
		rtl_cpu_relax();
	}
}

static void slot_put(struct slot *s)
{
	atomic_store_explicit(&s->busy, 0, memory_order_release);
}

/* Decode the instruction at pc from code, then look ahead. */
static int decode_at(struct rtl_code *code, uint64_t pc, struct rtl_insn *out)
{
	struct slot *s = slot_get();
	struct arena *outer = cur_arena; /* a decode this one interrupted */
	int ok;

	cur_arena = &s->scratch;
	s->scratch.used = 0;
	ok = rtl_backend_decode(s->handle, s->insn, code, pc, out) == 0;
	cur_arena = outer;
	slot_put(s);
	if (ok)
		rtl_derive_plan(out);
	return ok ? 0 : -1;
}

int rtl_decode_buf(const uint8_t *code, size_t len, uint64_t pc,
                   struct rtl_insn *out)
{
	struct rtl_code c = { .buf = code, .len = len, .pc = pc };

	if (!atomic_load_explicit(&ready, memory_order_acquire))
		return -1;
	return decode_at(&c, pc, out);
}

static _Atomic uint64_t cache_hits, cache_misses;

/* Out of line: a cache hit sets up none of this. */
static __attribute__((noinline)) int decode_and_cache(uint64_t pc, struct rtl_insn *out)
{
	/* The page of pc holds the instruction being executed: readable. */
	struct rtl_code c = { .readable = { pc & ~(rtl_code_page - 1) },
		              .nreadable = 1 };

	if (decode_at(&c, pc, out) < 0)
		return -1;
	rtl_dcache_put(out);
	return 0;
}

int rtl_decode(uint64_t pc, struct rtl_insn *out)
{
	if (rtl_dcache_get(pc, out) == 0) {
		atomic_fetch_add_explicit(&cache_hits, 1, memory_order_relaxed);
		return 0;
	}
	atomic_fetch_add_explicit(&cache_misses, 1, memory_order_relaxed);
	if (!atomic_load_explicit(&ready, memory_order_acquire))
		return -1; /* never started: the caller goes without */
	return decode_and_cache(pc, out);
}

int rtl_decode_again(uint64_t pc, struct rtl_insn *out)
{
	if (rtl_dcache_get(pc, out) == 0)
		return 0;
	if (!atomic_load_explicit(&ready, memory_order_acquire))
		return -1;
	return decode_and_cache(pc, out);
}

uint64_t rtl_decoder_late_allocs(void)
{
	return atomic_load(&late_allocs);
}

void rtl_decode_cache_stats(uint64_t *hits, uint64_t *misses)
{
	*hits = atomic_load(&cache_hits);
	*misses = atomic_load(&cache_misses);
}
