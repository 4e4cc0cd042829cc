/* The backtrace and events = traps records: raw instruction addresses and
 * numbers, kept in preallocated tables by the trap handler; names come at
 * report time. Stacks are aggregated in place (a lock-free hash of the
 * frames); events stream into the record file (preload/track/events.c).
 *
 * rtl_trace_backtrace and rtl_trace_event run in the SIGSEGV handler: no
 * malloc, no locks; libunwind's local unwinding (unw_init_local, unw_step)
 * is documented async-signal-safe. (unw_is_signal_frame is true for the
 * interrupted frame, not the trampoline: the code check below is used.) */
#define UNW_LOCAL_ONLY
#include "preload/engine/trace.h"

#include <libunwind.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "core/util/clock.h"
#include "core/util/relax.h"
#include "policy/policy.h"
#include "preload/engine/engine.h"
#include "preload/engine/loader.h"
#include "preload/engine/record.h"
#include "preload/engine/site.h"
#include "preload/track/events.h"

#define STACKS 4096
#define PROBES 32

static struct rtl_stack *stacks;
static _Atomic uint64_t stacks_dropped;

static void *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

int rtl_trace_init(void)
{
	unsigned acts = 0;

	for (int i = 0; i < rtl_engine.policy.nrules; i++)
		acts |= rtl_engine.rules[i].r->on_read | rtl_engine.rules[i].r->on_write;
	if ((acts & RTL_ACT_BACKTRACE) && !stacks &&
	    !(stacks = map(STACKS * sizeof(*stacks))))
		return -1;
	if (rtl_engine.policy.events) {
		if (rtl_events_init() < 0)
			return -1;
		rtl_events_start(); /* the record's file, when it has a name yet */
	}
	return 0;
}

/* ---- backtraces ---- */

static uint64_t hash_of(const uintptr_t *ip, int n, int rule, int write)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(rule * 2 + write);

	for (int i = 0; i < n; i++) {
		h ^= ip[i];
		h *= 1099511628211ull;
	}
	return h | 1; /* never 0: 0 marks a free slot */
}

/* The kernel's signal return trampoline (glibc's __restore_rt: on x86-64
 * mov $15, %rax; syscall; on aarch64 the vDSO's mov x8, #139; svc #0): the
 * frame between rtl's handler and the faulting code. Reading code bytes is
 * safe. */
static int trampoline(uintptr_t pc)
{
#if defined(__aarch64__)
	static const unsigned char code[] = { 0x68, 0x11, 0x80, 0xd2,
		                              0x01, 0x00, 0x00, 0xd4 };
#else
	static const unsigned char code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00,
		                              0x00, 0x00, 0x0f, 0x05 };
#endif
	return pc && !memcmp((const void *)pc, code, sizeof(code));
}

/* Counts one more of this stack, in the table or as dropped. */
static void count_stack(const uintptr_t *ip, int n, int rule, int write)
{
	uint64_t h = hash_of(ip, n, rule, write);

	for (uint32_t k = 0; k < PROBES; k++) {
		struct rtl_stack *s = &stacks[(h + k) % STACKS];
		uint64_t cur_h = atomic_load_explicit(&s->hash, memory_order_acquire);
		uint64_t zero = 0;

		if (cur_h == h) {
			/* Being filled by another thread: count it there when
			 * ready (the filler is never this thread: a handler does
			 * not trap while filling). */
			while (!atomic_load_explicit(&s->ready, memory_order_acquire))
				rtl_cpu_relax();
			if (s->n == n && s->rule == rule && s->write == write &&
			    !memcmp(s->ip, ip, (size_t)n * sizeof(*ip))) {
				atomic_fetch_add_explicit(&s->count, 1,
				                          memory_order_relaxed);
				return;
			}
			continue;
		}
		if (cur_h || !atomic_compare_exchange_strong(&s->hash, &zero, h)) {
			if (zero == h) /* someone took it for this very stack */
				k--;
			continue;
		}
		s->n = (uint8_t)n;
		s->rule = (uint16_t)rule;
		s->write = (uint8_t)write;
		memcpy(s->ip, ip, (size_t)n * sizeof(*ip));
		atomic_store_explicit(&s->count, 1, memory_order_relaxed);
		atomic_store_explicit(&s->ready, 1, memory_order_release);
		return;
	}
	atomic_fetch_add_explicit(&stacks_dropped, 1, memory_order_relaxed);
}

void rtl_trace_backtrace(int rule, int write)
{
	unw_context_t ctx;
	unw_cursor_t cur;
	uintptr_t ip[16];
	int n = 0, skipping = 1;

	/* Not while another thread forks (loader.h): the trap is counted,
	 * its stack dropped. Inside the gate until the stack is counted: a
	 * child inherits no entry half filled. */
	if (!stacks)
		return;
	if (!rtl_loader_try_enter()) {
		atomic_fetch_add_explicit(&stacks_dropped, 1, memory_order_relaxed);
		return;
	}
	if (unw_getcontext(&ctx) == 0 && unw_init_local(&cur, &ctx) == 0) {
		/* Skip rtl's own frames (this handler, the core's trap path or
		 * a system-call wrapper) and the signal frame; keep the
		 * program's. */
		while (n < 16 && unw_step(&cur) > 0) {
			unw_word_t pc = 0;

			unw_get_reg(&cur, UNW_REG_IP, &pc);
			if (skipping) {
				if (rtl_site_in_rtl(pc) || trampoline(pc))
					continue;
				skipping = 0;
			}
			ip[n++] = pc;
		}
		count_stack(ip, n, rule, write);
	}
	rtl_loader_leave();
}

const struct rtl_stack *rtl_trace_stack(uint32_t i)
{
	if (!stacks || i >= STACKS)
		return NULL;
	return &stacks[i];
}

uint64_t rtl_trace_stacks_dropped(void)
{
	return atomic_load(&stacks_dropped);
}

/* ---- events ---- */

void rtl_trace_event(const struct rtl_rec *rec, size_t offset, int write)
{
	if (rtl_engine.policy.events)
		rtl_events_add(rec->site, offset, rec->size, write);
}

void rtl_trace_forked(void)
{
	if (stacks)
		memset(stacks, 0, STACKS * sizeof(*stacks));
	atomic_store(&stacks_dropped, 0);
	rtl_events_forked();
}
