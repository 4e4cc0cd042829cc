/* The report (docs/policy.md, "Report"): one JSON object built with jansson
 * from the raw counters, records and tables, written once, at exit or for a
 * fatal signal (then by the writer thread, fatal.c). Names of sites and
 * frames are looked up here, not while the program runs. Never called from
 * a signal handler; runs under the re-entrancy guard, so jansson's
 * allocations go to the next allocator. */
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "clock.h"
#include "engine.h"
#include "epoch.h"
#include "heap.h"
#include "init.h"
#include "maps.h"
#include "policy.h"
#include "record.h"
#include "report_path.h"
#include "rtl/region.h"
#include "select.h"
#include "site.h"
#include "trace.h"

#define MAX_SITES 500
#define MAX_STACKS 50
#define MAX_NOTES 16

static _Atomic int claimed;
static char notes[MAX_NOTES][160];
static _Atomic int nnotes;

int rtl_report_claim(void)
{
	int zero = 0;
	return atomic_compare_exchange_strong(&claimed, &zero, 1);
}

void rtl_report_forked(void)
{
	atomic_store(&claimed, 0);
	atomic_store(&nnotes, 0);
}

void rtl_report_note(const char *fmt, ...)
{
	int i = atomic_fetch_add(&nnotes, 1);
	va_list ap;

	if (i >= MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(notes[i], sizeof(notes[i]), fmt, ap);
	va_end(ap);
}

/* The report's path (policy/report_path.c); RTL_REPORT_PID names the
 * process the report belongs to under rtlctl run -o. */
static void expand(const char *tmpl, char *out, size_t len)
{
	const char *owner = getenv("RTL_REPORT_PID");

	rtl_report_path(tmpl, program_invocation_short_name, (long)getpid(),
	                owner ? atol(owner) : 0, out, len);
}

static void set_int(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

static json_t *run_info(int status)
{
	json_t *run = json_object(), *argv = json_array();
	char buf[8192];
	FILE *f = fopen("/proc/self/cmdline", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
		json_array_append_new(argv, json_string(buf + i));
	json_object_set_new(run, "program", json_string(program_invocation_short_name));
	json_object_set_new(run, "argv", argv);
	set_int(run, "pid", (uint64_t)getpid());
	if (status >= 0)
		set_int(run, "exit_status", (uint64_t)status);
	else if (status != RTL_STATUS_UNKNOWN)
		set_int(run, "signal", (uint64_t)-status);
	set_int(run, "duration_ns", rtl_now_ns() - rtl_engine.start_ns);
	return run;
}

static json_t *policy_info(void)
{
	json_t *p = json_object();
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	json_object_set_new(p, "source", json_string(rtl_engine.policy.source));
	if (m) {
		rtl_policy_write(&rtl_engine.policy, m);
		fclose(m);
		json_object_set_new(p, "text", json_string(text ? text : ""));
		free(text);
	}
	return p;
}

static json_t *totals(void)
{
	struct region_stats st;
	json_t *t = json_object();
	uint64_t rd = atomic_load(&rtl_totals.read_traps);
	uint64_t wr = atomic_load(&rtl_totals.write_traps), stale;
	uint64_t fb = 0;

	memset(&st, 0, sizeof(st));
	if (rtl_started())
		region_stats(&st);
	stale = st.stale_traps + atomic_load(&rtl_totals.alias_stale);
	for (int i = 0; i < 3; i++)
		fb += atomic_load(&rtl_totals.fallbacks[i]);
	set_int(t, "allocations", rtl_allocations());
	set_int(t, "selected", atomic_load(&rtl_heap_stats.selected));
	set_int(t, "regions_peak", atomic_load(&rtl_totals.peak));
	set_int(t, "traps", rd + wr + stale);
	set_int(t, "read_traps", rd);
	set_int(t, "write_traps", wr);
	set_int(t, "stale_traps", stale);
	set_int(t, "trap_ns", st.trap_ns + atomic_load(&rtl_totals.alias_ns));
	set_int(t, "mprotect_calls", atomic_load(&rtl_totals.mprotect_calls));
	set_int(t, "syscall_buffers",
	        st.syscall_buffers + atomic_load(&rtl_totals.alias_syscalls));
	set_int(t, "in_place_protects", st.in_place_protects);
	set_int(t, "live", atomic_load(&rtl_heap_stats.live));
	set_int(t, "bytes", atomic_load(&rtl_heap_stats.bytes));
	set_int(t, "fallbacks", fb);
	set_int(t, "libc_skipped", atomic_load(&rtl_totals.libc_skipped));
	set_int(t, "extents", atomic_load(&rtl_arena_extents));
	set_int(t, "foreign", st.foreign);
	return t;
}

static json_t *rules(void)
{
	json_t *a = json_array();

	for (int i = 0; i < rtl_engine.policy.nrules; i++) {
		struct rtl_rule_rt *rt = &rtl_engine.rules[i];
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(rt->r->name));
		json_object_set_new(o, "mechanism",
		                    json_string(rtl_policy_mechanism_str(rt->r->mechanism)));
		set_int(o, "selected", atomic_load(&rt->choice.allocs));
		set_int(o, "bytes", atomic_load(&rt->bytes));
		set_int(o, "read_traps", atomic_load(&rt->read_traps));
		set_int(o, "write_traps", atomic_load(&rt->write_traps));
		json_array_append_new(a, o);
	}
	return a;
}

/* ---- sites: slots merged by (name, rule) ---- */

struct site_row {
	const char *name;
	int rule;
	uint64_t regions, bytes, rd, wr;
};

static int by_name(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->rule - y->rule;
}

static int by_use(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;
	uint64_t tx = x->rd + x->wr, ty = y->rd + y->wr;
	if (tx != ty)
		return tx < ty ? 1 : -1;
	if (x->regions != y->regions)
		return x->regions < y->regions ? 1 : -1;
	return by_name(a, b);
}

static json_t *sites(void)
{
	uint32_t n = rtl_site_slots(), m = 0;
	struct site_row *rows = calloc(n ? n : 1, sizeof(*rows));
	json_t *a = json_array();

	for (uint32_t k = 0; rows && k < n; k++) {
		uint32_t cs;
		int rule;
		struct rtl_site_stats *s = rtl_site_stats(rtl_site_slot_at(k), &cs, &rule);
		uint64_t regions = atomic_load(&s->regions);

		if (!regions)
			continue;
		rows[m++] = (struct site_row){
			rtl_site_name(cs), rule, regions, atomic_load(&s->bytes),
			atomic_load(&s->read_traps), atomic_load(&s->write_traps),
		};
	}
	if (m) {
		uint32_t w = 0;
		qsort(rows, m, sizeof(*rows), by_name);
		for (uint32_t i = 0; i < m; i++) {
			if (w && !by_name(&rows[w - 1], &rows[i])) {
				rows[w - 1].regions += rows[i].regions;
				rows[w - 1].bytes += rows[i].bytes;
				rows[w - 1].rd += rows[i].rd;
				rows[w - 1].wr += rows[i].wr;
			} else {
				rows[w++] = rows[i];
			}
		}
		m = w;
		qsort(rows, m, sizeof(*rows), by_use);
	}
	for (uint32_t i = 0; i < m && i < MAX_SITES; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "site", json_string(rows[i].name));
		json_object_set_new(o, "rule", json_string(
			rows[i].rule >= 0 ? rtl_engine.rules[rows[i].rule].r->name : "?"));
		set_int(o, "regions", rows[i].regions);
		set_int(o, "bytes", rows[i].bytes);
		set_int(o, "read_traps", rows[i].rd);
		set_int(o, "write_traps", rows[i].wr);
		json_array_append_new(a, o);
	}
	if (m > MAX_SITES)
		rtl_report_note("sites: the %u with the most traps listed, of %u",
		                MAX_SITES, m);
	free(rows);
	return a;
}

static const char *slot_name(uint32_t slot)
{
	uint32_t cs = 0;
	rtl_site_stats(slot, &cs, NULL);
	return rtl_site_name(cs);
}

static json_t *top_regions(void)
{
	struct rtl_top top[20];
	size_t n = rtl_rec_top(top, 20);
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		json_object_set_new(o, "site", json_string(slot_name(top[i].site)));
		set_int(o, "size", top[i].size);
		set_int(o, "read_traps", top[i].read_traps);
		set_int(o, "write_traps", top[i].write_traps);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *epochs(void)
{
	const struct rtl_epoch *e;
	uint64_t dropped;
	size_t n;
	json_t *a = json_array();

	rtl_epoch_final();
	n = rtl_epoch_list(&e, &dropped);
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();
		set_int(o, "t_ns", e[i].t_ns);
		set_int(o, "dirty_regions", e[i].dirty_regions);
		set_int(o, "diff_bytes", e[i].diff_bytes);
		set_int(o, "page_bytes", e[i].page_bytes);
		json_array_append_new(a, o);
	}
	if (dropped)
		rtl_report_note("epochs: %zu listed, %llu more not kept", n,
		                (unsigned long long)dropped);
	return a;
}

static json_t *events(void)
{
	const struct rtl_event *ev;
	uint64_t dropped, n = rtl_trace_events(&ev, &dropped);
	json_t *a = json_array();

	for (uint64_t i = 0; i < n; i++) {
		json_t *o = json_object();
		set_int(o, "t_ns", ev[i].t_ns);
		json_object_set_new(o, "kind", json_string(ev[i].write ? "write" : "read"));
		json_object_set_new(o, "site", json_string(slot_name(ev[i].site)));
		set_int(o, "offset", ev[i].offset);
		set_int(o, "size", ev[i].size);
		json_array_append_new(a, o);
	}
	if (dropped)
		rtl_report_note("events: the ring held %llu traps; %llu more were "
		                "not listed", (unsigned long long)n,
		                (unsigned long long)dropped);
	return a;
}

static int by_count(const void *a, const void *b)
{
	uint64_t x = atomic_load(&(*(const struct rtl_stack *const *)a)->count);
	uint64_t y = atomic_load(&(*(const struct rtl_stack *const *)b)->count);
	return x < y ? 1 : x > y ? -1 : 0;
}

static json_t *backtraces(void)
{
	const struct rtl_stack *s, **all;
	uint32_t n = 0;
	json_t *a = json_array();

	for (uint32_t i = 0; rtl_trace_stack(i); i++)
		n += atomic_load(&rtl_trace_stack(i)->ready) != 0;
	all = calloc(n ? n : 1, sizeof(*all));
	n = 0;
	for (uint32_t i = 0; all && (s = rtl_trace_stack(i)); i++)
		if (atomic_load(&s->ready))
			all[n++] = s;
	if (all)
		qsort(all, n, sizeof(*all), by_count);
	for (uint32_t i = 0; all && i < n && i < MAX_STACKS; i++) {
		json_t *o = json_object(), *frames = json_array();
		char name[256];

		s = all[i];
		json_object_set_new(o, "rule", json_string(rtl_engine.rules[s->rule].r->name));
		json_object_set_new(o, "kind", json_string(s->write ? "write" : "read"));
		set_int(o, "count", atomic_load(&s->count));
		for (int f = 0; f < s->n; f++) {
			/* The first frame is the faulting instruction itself. */
			rtl_site_symbolise(s->ip[f] + (f == 0), 1, name, sizeof(name));
			json_array_append_new(frames, json_string(name));
		}
		json_object_set_new(o, "frames", frames);
		json_array_append_new(a, o);
	}
	if (rtl_trace_stacks_dropped())
		rtl_report_note("backtraces: %llu traps had stacks that did not fit "
		                "in the table",
		                (unsigned long long)rtl_trace_stacks_dropped());
	free(all);
	return a;
}

static json_t *notes_list(int status)
{
	json_t *a = json_array();
	uint64_t v;
	char buf[200];
	int n;

	if ((v = atomic_load(&rtl_totals.fallbacks[RTL_FALLBACK_MAX_REGIONS])))
		rtl_report_note("stopped selecting at max_regions = %llu (%llu "
		                "allocations left to the system allocator)",
		                (unsigned long long)rtl_engine.policy.max_regions,
		                (unsigned long long)v);
	if ((v = atomic_load(&rtl_totals.fallbacks[RTL_FALLBACK_FULL])))
		rtl_report_note("rtl's views or records were full: %llu selected "
		                "allocations left to the system allocator",
		                (unsigned long long)v);
	rtl_alias_note(buf, sizeof(buf));
	if (buf[0])
		rtl_report_note("%s", buf);
	rtl_in_place_note(buf, sizeof(buf));
	if (buf[0])
		rtl_report_note("%s", buf);
	if ((v = atomic_load(&rtl_site_overflow)))
		rtl_report_note("%llu allocations found the site table full and are "
		                "under (other sites)", (unsigned long long)v);
	if (status == RTL_STATUS_UNKNOWN)
		rtl_report_note("exit status unknown (the program did not start "
		                "through __libc_start_main)");
	n = atomic_load(&nnotes);
	for (int i = 0; i < n && i < MAX_NOTES; i++)
		json_array_append_new(a, json_string(notes[i]));
	return a;
}

void rtl_report_emit(int status)
{
	char path[RTL_POLICY_PATH_MAX + 32];
	json_t *r;
	int flags = JSON_INDENT(1) | JSON_PRESERVE_ORDER;

	if (!rtl_engine.report[0])
		return;
	r = json_object();
	set_int(r, "rtl_report", 1);
	json_object_set_new(r, "run", run_info(status));
	json_object_set_new(r, "policy", policy_info());
	json_object_set_new(r, "totals", totals());
	json_object_set_new(r, "rules", rules());
	json_object_set_new(r, "sites", sites());
	json_object_set_new(r, "top_regions", top_regions());
	json_object_set_new(r, "epochs", epochs());
	json_object_set_new(r, "events", events());
	json_object_set_new(r, "backtraces", backtraces());
	json_object_set_new(r, "notes", notes_list(status));
	if (!strcmp(rtl_engine.report, "-")) {
		json_dumpf(r, stderr, flags);
		fputc('\n', stderr);
	} else {
		expand(rtl_engine.report, path, sizeof(path));
		if (json_dump_file(r, path, flags) < 0)
			fprintf(stderr, "rtl: cannot write the report %s\n", path);
	}
	json_decref(r);
}

void rtl_report_write(int status)
{
	if (rtl_report_claim())
		rtl_report_emit(status);
}
