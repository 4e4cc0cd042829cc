/* What a trap on a selected region does, for every mechanism: the actions
 * of on_read / on_write (count, log, backtrace, dirty, abort, and which
 * protection to grant), and the swizzle mechanism's region handler.
 *
 * Everything here runs in the SIGSEGV handler (or before a wrapped system
 * call): relaxed counters, region_protect, write(2) and the fatal report's
 * bounded wait. No malloc, no stdio, no lock the interrupted code may hold. */
#include "preload/engine/actions.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/util/line.h"
#include <rtl/region.h>
#include "policy/policy.h"
#include "preload/engine/engine.h"
#include "preload/engine/reprotect.h"
#include "preload/engine/record.h"
#include "preload/engine/site.h"
#include "preload/engine/timeline.h"
#include "preload/engine/trace.h"
#include "preload/shim/next.h"
#include "preload/track/fatal.h"

/* "write at offset 8 of a 56-byte region from objects!make_record (rule
 * small-objects)" */
static void describe(struct rtl_line *l, const struct rtl_rec *rec, size_t offset,
                     int write)
{
	uint32_t cs = 0;
	const char *site;

	rtl_site_stats(rec->site, &cs, NULL);
	site = rtl_site_name_ready(cs);
	rtl_line_str(l, write ? "write" : "read");
	rtl_line_str(l, " at offset ");
	rtl_line_dec(l, offset);
	rtl_line_str(l, " of a ");
	rtl_line_dec(l, rec->size);
	rtl_line_str(l, "-byte region from ");
	if (site)
		rtl_line_str(l, site);
	else
		rtl_line_hex(l, rtl_site_ip(cs));
	rtl_line_str(l, " (rule ");
	rtl_line_str(l, rtl_engine.rules[rec->rule].r->name);
	rtl_line_str(l, ")");
}

/* The line ends: out it goes, in one write where it fits. */
static void emit(struct rtl_line *l)
{
	rtl_line_str(l, "\n");
	rtl_line_flush(l);
}

static void log_trap(const struct rtl_rec *rec, size_t offset, int write)
{
	struct rtl_line l = { .n = 0 };

	rtl_line_str(&l, "rtl: ");
	rtl_line_str(&l, write ? "write trap: " : "read trap: ");
	describe(&l, rec, offset, write);
	emit(&l);
}

/* abort: say which access, write the report, die of SIGABRT. */
static void die(const struct rtl_rec *rec, size_t offset, int write)
{
	struct rtl_line l = { .n = 0 };
	struct sigaction dfl;
	sigset_t set;

	rtl_line_str(&l, "rtl: abort: ");
	describe(&l, rec, offset, write);
	emit(&l);
	rtl_fatal_report(SIGABRT);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	rtl_next()->sigaction(SIGABRT, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGABRT);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGABRT);
	_exit(128 + SIGABRT); /* not reached */
}

static void bump(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* What every trap does first: the counts, the event, the log line, the
 * backtrace and the dirty mark, as the rule's actions say. */
static void record(struct rtl_rec *rec, size_t offset, int write, unsigned act)
{
	struct rtl_rule_rt *rt = &rtl_engine.rules[rec->rule];
	struct rtl_site_stats *s = rtl_site_stats(rec->site, NULL, NULL);

	bump(write ? &rtl_totals.write_traps : &rtl_totals.read_traps);
	if (!atomic_exchange_explicit(&rec->touched, 1, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&rtl_totals.touched_bytes, rec->size,
		                          memory_order_relaxed);
		atomic_fetch_add_explicit(&rt->touched_bytes, rec->size,
		                          memory_order_relaxed);
		atomic_fetch_add_explicit(&s->touched_bytes, rec->size,
		                          memory_order_relaxed);
	}
	if (act & RTL_ACT_COUNT) {
		bump(write ? &rt->write_traps : &rt->read_traps);
		bump(write ? &s->write_traps : &s->read_traps);
		atomic_fetch_add_explicit(write ? &rec->write_traps : &rec->read_traps,
		                          1, memory_order_relaxed);
		rtl_timeline_add(rec->rule, RTL_TL_TRAPS);
	}
	if (rtl_engine.policy.events)
		rtl_trace_event(rec, offset, write);
	if (act & RTL_ACT_LOG)
		log_trap(rec, offset, write);
	if (act & RTL_ACT_BACKTRACE)
		rtl_trace_backtrace(rec->rule, write);
	if (write && (act & RTL_ACT_DIRTY))
		atomic_store_explicit(&rec->written, 1, memory_order_relaxed);
}

/* The protection act grants to the access. dirty lets the write it
 * tracks go on. */
static int grant_of(unsigned act, int write)
{
	if ((act & RTL_ACT_GRANT_RW) || (write && (act & RTL_ACT_DIRTY)))
		return PROT_READ | PROT_WRITE;
	if ((act & RTL_ACT_GRANT_READ) && !write)
		return PROT_READ;
	return -1;
}

static unsigned actions_of(const struct rtl_rec *rec, int write)
{
	const struct rtl_rule *r = rtl_engine.rules[rec->rule].r;

	return write ? r->on_write : r->on_read;
}

int rtl_act_trap(struct rtl_rec *rec, size_t offset, int write)
{
	unsigned act = actions_of(rec, write);

	record(rec, offset, write, act);
	if (act & RTL_ACT_ABORT)
		die(rec, offset, write);
	return grant_of(act, write);
}

int rtl_act_page_trap(struct rtl_rec *rec, size_t offset, int write,
                      int false_sharing)
{
	unsigned act;

	if (false_sharing)
		bump(&rtl_totals.false_sharing);
	if (!rec) {
		bump(write ? &rtl_totals.write_traps : &rtl_totals.read_traps);
		return -1;
	}
	act = actions_of(rec, write);
	record(rec, offset, write, act);
	if (false_sharing) {
		bump(&rtl_engine.rules[rec->rule].false_sharing);
		bump(&rtl_site_stats(rec->site, NULL, NULL)->false_sharing);
	}
	return grant_of(act, write);
}

void rtl_act_granted(struct rtl_rec *rec, size_t bytes)
{
	struct rtl_rule_rt *rt;
	struct rtl_site_stats *s;

	bump(&rtl_totals.grants);
	atomic_fetch_add_explicit(&rtl_totals.granted_bytes, bytes,
	                          memory_order_relaxed);
	if (!rec)
		return;
	rt = &rtl_engine.rules[rec->rule];
	s = rtl_site_stats(rec->site, NULL, NULL);
	bump(&rt->grants);
	bump(&s->grants);
	rtl_timeline_add(rec->rule, RTL_TL_GRANTS);
	atomic_fetch_add_explicit(&rt->granted_bytes, bytes, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->granted_bytes, bytes, memory_order_relaxed);
}

void rtl_act_prot_changed(int rule)
{
	bump(&rtl_totals.prot_changes);
	if (rule >= 0)
		bump(&rtl_engine.rules[rule].prot_changes);
}

void rtl_act_tag_trap(rtl_trap_t *t)
{
	struct rtl_rec *rec = t->data;
	int prot;

	if (!rec)
		return;
	prot = rtl_act_trap(rec, t->offset, t->write);
	rtl_reprotect_note(rec); /* its rule's next epoch protects it again */
	/* Tags have no read-only: a grant of a read is read-write. */
	if (prot >= 0 && (prot & (t->write ? PROT_WRITE : PROT_READ)) &&
	    region_protect(t->addr, PROT_READ | PROT_WRITE) == 0) {
		rtl_act_granted(rec, rec->size);
		rtl_act_prot_changed(rec->rule);
	}
}

void rtl_act_swizzle_trap(rtl_trap_t *t)
{
	struct rtl_rec *rec = t->data;
	int prot;

	if (!rec)
		return;
	prot = rtl_act_trap(rec, t->offset, t->write);
	if (atomic_load_explicit(&rec->in_place, memory_order_relaxed) == RTL_REC_IN_PLACE)
		rtl_reprotect_note(rec); /* its rule's next epoch protects it again */
	/* A grant that does not allow the access is no grant: rtl's core
	 * then ends the process with its diagnostic. */
	if (prot >= 0 && (!t->write || (prot & PROT_WRITE)) &&
	    region_protect(t->addr, prot) == 0) {
		rtl_act_granted(rec, rec->size);
		rtl_act_prot_changed(rec->rule);
	}
}
