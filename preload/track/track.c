/* The raw record of the run (preload/track/format.h): the counters, rules,
 * sites as instruction pointers, the module map, the regions with the most
 * traps, epochs, stacks and what the notes are made of, written
 * once, at exit or for a fatal signal, after the events streamed there
 * during the run (events.c), with async-signal-safe code only:
 * counters are atomics, tables are preallocated, the file is write(2).
 * rtlctl makes the report out of it (analyse.c). */
#include "preload/track/track.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/prot/prot.h"
#include "core/start/init.h"
#include "core/util/clock.h"
#include <rtl/region.h>
#include "interpose/sigsys.h"
#include "policy/policy.h"
#include "policy/report_file.h"
#include "policy/report_path.h"
#include "preload/engine/engine.h"
#include "preload/engine/epoch.h"
#include "preload/engine/record.h"
#include "preload/engine/site.h"
#include "preload/engine/tally.h"
#include "preload/engine/timeline.h"
#include "preload/engine/trace.h"
#include "preload/place/auto.h"
#include "preload/place/arena.h"
#include "preload/place/heap.h"
#include "preload/place/maps.h"
#include "preload/shim/next.h"
#include "preload/track/analyse.h"
#include "preload/track/events.h"
#include "preload/track/format.h"
#include "preload/track/modules.h"
#include "preload/track/raw.h"
#include "preload/track/record_file.h"

static _Atomic int claimed;
static char policy_text[32 << 10];
static char cmdline[8192];
/* Read at start: by exit, rtlctl run --no-children has taken them out of
 * the environment (shim/children.c). */
static long report_owner;
static const char *raw_kept;

int rtl_track_init(void)
{
	FILE *f = fmemopen(policy_text, sizeof(policy_text) - 1, "w");

	if (f) {
		rtl_policy_write(&rtl_engine.policy, f);
		fclose(f);
	}
	const char *owner = secure_getenv("RTL_REPORT_PID");

	report_owner = owner ? atol(owner) : 0;
	rtl_record_owner(report_owner);
	raw_kept = secure_getenv("RTL_RAW");
	rtl_modules_refresh();
	rtl_analyse_init();
	rtl_events_set_opener(rtl_record_open_unnamed);
	if (rtl_engine.policy.events && rtl_engine.report[0])
		rtl_events_start();
	return 0;
}

/* The core's counters when this process was forked: a child inherits its
 * parent's, and its record counts its own (the run's report sums them
 * over its processes). */
static struct region_stats forked_at;
static uint64_t forked_pt, forked_mp;

void rtl_track_forked(void)
{
	atomic_store(&claimed, 0);
	if (rtl_started())
		region_stats(&forked_at);
	rtl_prot_calls(&forked_pt, &forked_mp);
}

/* region_stats since this process began (or was forked). */
static void stats_since_start(struct region_stats *st)
{
	uint64_t *now = (uint64_t *)st;
	const uint64_t *then = (const uint64_t *)&forked_at;

	region_stats(st);
	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		if (&now[i] != &st->regions) /* a level, not a count */
			now[i] -= then[i];
}

static int claim(void)
{
	int zero = 0;

	return atomic_compare_exchange_strong(&claimed, &zero, 1);
}

/* The pairs of a name/value record, counted as they are written: the
 * count before them is filled in by pairs_end (a count written by hand
 * once fell one short, and the reader dropped the last pair). */
static size_t pairs_at;
static uint32_t npairs;

static void pairs_start(uint32_t tag)
{
	rtl_raw_start(tag);
	pairs_at = rtl_raw_u32_later();
	npairs = 0;
}

static void pairs_end(void)
{
	rtl_raw_patch_u32(pairs_at, npairs);
	rtl_raw_end();
}

static void kv(const char *name, uint64_t v)
{
	rtl_raw_str(name);
	rtl_raw_u64(v);
	npairs++;
}

static void write_run(int status)
{
	long root = report_owner;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, cmdline, sizeof(cmdline) - 1) : 0;

	if (fd >= 0)
		close(fd);
	rtl_raw_start(RTL_TRACK_RUN);
	rtl_raw_u64((uint64_t)(int64_t)status);
	rtl_raw_u64((uint64_t)getpid());
	rtl_raw_u64(rtl_now_ns() - rtl_engine.start_ns);
	rtl_raw_str(program_invocation_short_name);
	rtl_raw_bytes(cmdline, n > 0 ? (size_t)n : 0);
	/* Later fields: rtlctl run lists the reports of the program's
	 * descendants by the program's pid they inherited (root). */
	rtl_raw_u64((uint64_t)getppid());
	rtl_raw_u64(root > 0 ? (uint64_t)root : 0);
	/* Since 0.4.0: when the preload started (CLOCK_MONOTONIC), which
	 * sets the processes of a run side by side in a trace. */
	rtl_raw_u64(rtl_engine.start_ns);
	rtl_raw_end();
	rtl_raw_start(RTL_TRACK_POLICY);
	rtl_raw_str(rtl_engine.policy.source);
	rtl_raw_str(policy_text);
	rtl_raw_end();
}

static uint64_t load(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

static void write_totals(void)
{
	struct region_stats st;
	uint64_t rd = load(&rtl_totals.read_traps), wr = load(&rtl_totals.write_traps);
	uint64_t stale, fb = 0;
	struct rtl_sigsys_stats sys = { 0 };
	struct rtl_epoch_counts ep;
	uint64_t pt_calls, mp_calls;

	memset(&st, 0, sizeof(st));
	if (rtl_sigsys_on())
		rtl_sigsys_stats(&sys);
	if (rtl_started())
		stats_since_start(&st);
	stale = st.stale_traps + load(&rtl_totals.alias_stale);
	for (int i = 0; i < RTL_NFALLBACKS; i++)
		fb += load(&rtl_totals.fallbacks[i]);
	rtl_prot_calls(&pt_calls, &mp_calls);
	pt_calls -= forked_pt;
	mp_calls -= forked_mp;
	rtl_epoch_counts(&ep);
	pairs_start(RTL_TRACK_TOTALS);
	kv("allocations", rtl_allocations());
	kv("selected", rtl_tally_selected());
	kv("regions_peak", load(&rtl_totals.peak));
	kv("traps", rd + wr + stale);
	kv("read_traps", rd);
	kv("write_traps", wr);
	kv("stale_traps", stale);
	kv("trap_ns", st.trap_ns + load(&rtl_totals.alias_ns));
	kv("mprotect_calls", load(&rtl_totals.mprotect_calls));
	kv("syscall_buffers", st.syscall_buffers + load(&rtl_totals.alias_syscalls));
	kv("syscalls_trapped", sys.calls);
	kv("syscalls_refused", sys.refused);
	kv("in_place_protects", st.in_place_protects);
	kv("live", rtl_heap_live());
	kv("bytes", rtl_tally_bytes());
	kv("fallbacks", fb);
	kv("libc_skipped", load(&rtl_totals.libc_skipped));
	kv("extents", load(&rtl_arena_extents));
	kv("foreign", st.foreign);
	kv("false_sharing_traps", load(&rtl_totals.false_sharing));
	kv("grants", load(&rtl_totals.grants));
	kv("granted_bytes", load(&rtl_totals.granted_bytes));
	kv("touched_bytes", load(&rtl_totals.touched_bytes));
	kv("prot_changes", load(&rtl_totals.prot_changes));
	kv("epoch_ns", rtl_epoch_time_ns());
	kv("epochs", ep.epochs);
	kv("epoch_calls", ep.calls);
	kv("epoch_blocks", ep.blocks);
	kv("epochs_stretched", ep.stretched);
	kv("epoch_stretch_ns", ep.stretch_ns);
	kv("protect_calls", pt_calls + mp_calls);
	kv("protect_mprotects", mp_calls);
	pairs_end();
}

static void write_rules(void)
{
	for (int i = 0; i < rtl_engine.policy.nrules; i++) {
		struct rtl_rule_rt *rt = &rtl_engine.rules[i];

		rtl_raw_start(RTL_TRACK_RULE);
		rtl_raw_str(rt->r->name);
		rtl_raw_str(rtl_policy_mechanism_str(rt->r->mechanism));
		rtl_raw_u64(RTL_TALLY_SUM(rule_allocs[i]));
		rtl_raw_u64(RTL_TALLY_SUM(rule_bytes[i]));
		rtl_raw_u64(load(&rt->read_traps));
		rtl_raw_u64(load(&rt->write_traps));
		/* Later fields: what rtlctl compare sets side by side. */
		rtl_raw_u64(load(&rt->false_sharing));
		rtl_raw_u64(load(&rt->grants));
		rtl_raw_u64(load(&rt->granted_bytes));
		rtl_raw_u64(load(&rt->touched_bytes));
		rtl_raw_u64(load(&rt->prot_changes));
		rtl_raw_end();
	}
}

static void write_sites(void)
{
	uint32_t n = rtl_site_slots();

	for (uint32_t k = 0; k < n; k++) {
		uint32_t slot = rtl_site_slot_at(k), cs;
		int rule;
		struct rtl_site_stats *s = rtl_site_stats(slot, &cs, &rule);
		uint64_t regions, bytes;

		rtl_site_made(slot, &regions, &bytes);

		rtl_raw_start(RTL_TRACK_SITE);
		rtl_raw_u32(slot);
		rtl_raw_u64(cs ? rtl_site_ip(cs) : 0);
		rtl_raw_u32((uint32_t)rule);
		rtl_raw_u64(regions);
		rtl_raw_u64(bytes);
		rtl_raw_u64(load(&s->read_traps));
		rtl_raw_u64(load(&s->write_traps));
		/* Later fields: what rtlctl compare sets side by side. */
		rtl_raw_u64(load(&s->false_sharing));
		rtl_raw_u64(load(&s->grants));
		rtl_raw_u64(load(&s->granted_bytes));
		rtl_raw_u64(load(&s->touched_bytes));
		/* Later fields: the dirty epochs' accounts (epoch.c). */
		rtl_raw_u64(s->dirty_regions);
		rtl_raw_u64(s->object_bytes);
		rtl_raw_u64(s->diff_bytes);
		for (int c = 0; c < RTL_CARDS; c++)
			rtl_raw_u64(s->card_bytes[c]);
		rtl_raw_end();
	}
}

static void write_top(void)
{
	struct rtl_top top[20];
	size_t n = rtl_rec_top(top, 20);

	for (size_t i = 0; i < n; i++) {
		rtl_raw_start(RTL_TRACK_TOP);
		rtl_raw_u32(top[i].site);
		rtl_raw_u64(top[i].size);
		rtl_raw_u64(top[i].read_traps);
		rtl_raw_u64(top[i].write_traps);
		/* Later fields: which region, and its rule. */
		rtl_raw_u64((uint64_t)top[i].addr);
		rtl_raw_u32(top[i].rule);
		rtl_raw_end();
	}
}

static void write_epochs(void)
{
	const struct rtl_epoch *e;
	uint64_t dropped;
	size_t n = rtl_epoch_list(&e, &dropped);

	for (size_t i = 0; i < n; i++) {
		rtl_raw_start(RTL_TRACK_EPOCH);
		rtl_raw_u64(e[i].t_ns);
		rtl_raw_u64(e[i].dirty_regions);
		rtl_raw_u64(e[i].diff_bytes);
		rtl_raw_u64(e[i].page_bytes);
		/* Later fields: what other barriers would rescan. */
		rtl_raw_u64(e[i].object_bytes);
		for (int c = 0; c < RTL_CARDS; c++)
			rtl_raw_u64(e[i].card_bytes[c]);
		rtl_raw_u64(e[i].written_bytes);
		rtl_raw_end();
	}
	if (rtl_engine.any_prot) {
		rtl_raw_start(RTL_TRACK_PROTECTION);
		rtl_raw_str(rtl_prot_backend() == RTL_PROT_PAGE_TABLES ? "page tables"
		                                                       : "mprotect");
		rtl_raw_str(rtl_prot_why());
		rtl_raw_end();
	}
	if ((rtl_engine.any_tag || rtl_engine.tag_auto) && rtl_engine.tag_why) {
		rtl_raw_start(RTL_TRACK_TAG);
		rtl_raw_str(rtl_engine.any_tag ? "tags" : "auto");
		rtl_raw_str(rtl_engine.tag_why);
		rtl_raw_end();
	}
	if (rtl_engine.any_dirty && rtl_engine.dirty_why) {
		rtl_raw_start(RTL_TRACK_DIRTY);
		rtl_raw_str(rtl_engine.any_wbits ? "written bits" : "traps");
		rtl_raw_str(rtl_engine.dirty_why);
		rtl_raw_end();
	}
}

static void write_stacks(void)
{
	const struct rtl_stack *s;

	for (uint32_t i = 0; (s = rtl_trace_stack(i)); i++) {
		if (!atomic_load_explicit(&s->ready, memory_order_acquire))
			continue;
		rtl_raw_start(RTL_TRACK_STACK);
		rtl_raw_u32(s->rule);
		rtl_raw_u32(s->write);
		rtl_raw_u64(atomic_load_explicit(&s->count, memory_order_relaxed));
		rtl_raw_u32(s->n);
		for (int f = 0; f < s->n; f++)
			rtl_raw_u64(s->ip[f]);
		rtl_raw_end();
	}
}

/* The timeline (engine/timeline.h): per rule, every interval's counts. */
static void write_timeline(void)
{
	unsigned shift;
	uint32_t n = rtl_timeline_close(&shift);

	for (int i = 0; i < rtl_engine.policy.nrules; i++) {
		rtl_raw_start(RTL_TRACK_TIMELINE);
		rtl_raw_u32((uint32_t)i);
		rtl_raw_u64((uint64_t)1 << shift);
		rtl_raw_u64(rtl_timeline_live_at_start(i));
		rtl_raw_u32(n);
		for (uint32_t k = 0; k < n; k++)
			for (int c = 0; c < RTL_TL_COUNTERS; c++)
				rtl_raw_u64(rtl_timeline_count(i, k, c));
		rtl_raw_end();
	}
}

static void write_limits(int epoch_open)
{
	const struct rtl_epoch *e;
	uint64_t epochs_dropped, events, events_lost;
	struct rtl_maps_state m;

	rtl_events_counts(&events, &events_lost);

	rtl_epoch_list(&e, &epochs_dropped);
	rtl_maps_state(&m);
	pairs_start(RTL_TRACK_LIMITS);
	kv(RTL_TRACK_LIMIT_MAX_REGIONS, rtl_engine.policy.max_regions);
	kv(RTL_TRACK_LIMIT_FALLBACK_MAX,
	   load(&rtl_totals.fallbacks[RTL_FALLBACK_MAX_REGIONS]));
	kv(RTL_TRACK_LIMIT_FALLBACK_FULL, load(&rtl_totals.fallbacks[RTL_FALLBACK_FULL]));
	kv(RTL_TRACK_LIMIT_FALLBACK_MAPS, load(&rtl_totals.fallbacks[RTL_FALLBACK_MAPS]));
	kv(RTL_TRACK_LIMIT_FALLBACK_SLOTS, load(&rtl_totals.fallbacks[RTL_FALLBACK_SLOTS]));
	kv(RTL_TRACK_LIMIT_FALLBACK_TAGS, load(&rtl_totals.fallbacks[RTL_FALLBACK_TAGS]));
	kv(RTL_TRACK_LIMIT_ALIAS_HIT, (uint64_t)m.alias_hit);
	kv(RTL_TRACK_LIMIT_IN_PLACE_HIT, (uint64_t)m.in_place_hit);
	kv(RTL_TRACK_LIMIT_BUDGET, m.budget);
	kv(RTL_TRACK_LIMIT_MAX_MAPS, (uint64_t)m.max_maps);
	kv(RTL_TRACK_LIMIT_MAPS_AT_START, (uint64_t)m.maps_at_start);
	kv(RTL_TRACK_LIMIT_SITE_OVERFLOW, load(&rtl_site_overflow));
	kv(RTL_TRACK_LIMIT_EPOCHS_DROPPED, epochs_dropped);
	kv(RTL_TRACK_LIMIT_EVENTS, events);
	kv(RTL_TRACK_LIMIT_EVENTS_LOST, events_lost);
	kv(RTL_TRACK_LIMIT_STACKS_DROPPED, rtl_trace_stacks_dropped());
	kv(RTL_TRACK_LIMIT_EPOCH_OPEN, (uint64_t)epoch_open);
	kv(RTL_TRACK_LIMIT_SECCOMP_REFUSED, (uint64_t)rtl_engine.sigsys_failed);
	kv(RTL_TRACK_LIMIT_COPIES_OPENED, load(&rtl_slots_opened));
	kv(RTL_TRACK_LIMIT_KEPT_PINNED, load(&rtl_totals.kept_pinned));
	pairs_end();
}

/* Write the record: into the file its events went to, or a new one (both
 * report_file.h's: never through a planted name); under rtlctl run in the
 * run's folder, for rtlctl to make the run's report; else beside the
 * report's name, where `rtlctl report` reads it when asked. Only a report
 * to stderr is made now, by rtlctl (analyse.c). */
static void emit(int status, int epoch_open)
{
	char report[RTL_POLICY_PATH_MAX + 32], raw[RTL_POLICY_PATH_MAX + 64];
	char tmp[RTL_POLICY_PATH_MAX + 128], kept[RTL_POLICY_PATH_MAX + 80];
	const char *keep = raw_kept;
	int fd;

	if (!rtl_engine.report[0])
		return;
	rtl_record_paths(report, sizeof(report), raw, sizeof(raw));
	fd = rtl_engine.policy.events ? rtl_events_finish(tmp, sizeof(tmp))
	                              : rtl_record_open(tmp, sizeof(tmp));
	/* A file with no name yet (the events'): named now, before it is
	 * finished, so that the rest goes as for every record. */
	if (fd >= 0 && !tmp[0] && rtl_file_name_fd(fd, raw, tmp, sizeof(tmp)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		fd = -1;
	}
	if (fd < 0) {
		rtl_analyse_failed(report, "the raw record", raw, errno);
		return;
	}
	rtl_raw_open(fd);
	write_run(status);
	write_totals();
	write_rules();
	rtl_modules_write();
	write_sites();
	write_top();
	write_epochs();
	write_stacks();
	write_timeline();
	write_limits(epoch_open);
	if (rtl_raw_close() < 0) {
		int e = errno;
		unlink(tmp); /* never a cut record */
		rtl_analyse_failed(report, "the raw record", raw, e);
		return;
	}
	if (strcmp(report, "-") || rtl_analyse_in_run()) {
		/* The record is what the program leaves: under its name, or
		 * the next free one. */
		if (rtl_file_publish(tmp, raw, kept, sizeof(kept)) < 0) {
			int e = errno;
			unlink(tmp);
			rtl_analyse_failed(report, "the raw record", raw, e);
		}
		return;
	}
	/* RTL_RAW: the record stays, under that name or the next free one. */
	if (keep && *keep && rtl_file_publish(tmp, raw, kept, sizeof(kept)) == 0) {
		rtl_analyse(kept, report, 1);
		return;
	}
	rtl_analyse(tmp, report, 0);
}

void rtl_track_exit(int status)
{
	if (!claim())
		return;
	rtl_epoch_final();
	rtl_modules_refresh();
	emit(status, 0);
}

void rtl_track_fatal(int sig)
{
	if (!claim())
		return; /* written already, or being written */
	/* Closing the last epoch diffs regions under their locks: not here. */
	emit(-sig, rtl_engine.any_dirty);
}
