/* From a decoded run (raw_run.h) to the report: sites (named by
 * raw_sites.c) merged by (name, rule), C++ names demangled beside them; lists sorted
 * and cut as docs/report-fields.md says; the timeline per rule; the notes made
 * from the limits the record carries and the policy's warnings. */
#include "tools/interpret/merge.h"
#include "tools/interpret/raw_run.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "preload/track/format.h"
#include "tools/interpret/demangle.h"
#include "tools/util/text.h"

#ifndef RTL_VERSION
#define RTL_VERSION "unknown"
#endif
#define MAX_SITES 500
#define MAX_STACKS 50
#define MAX_TOP 20

static void note(struct run *r, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void note(struct run *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_array_append_new(r->notes, rtl_json_text(buf));
}

/* "file.c:LINE" of return address ip, with its inlined calls
 * (sources.c), or "" without debug information for it. */
static json_t *source_of(struct run *r, uint64_t ip)
{
	char buf[1024];

	if (!ip || rtl_source_line(&r->mods, ip, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	return rtl_json_text(buf);
}

/* name's demangled form (demangle.h), for display. */
static json_t *demangled(const char *name)
{
	char buf[4096];

	return rtl_json_text(rtl_demangle(name, buf, sizeof(buf)));
}

static int by_name(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->rule - y->rule;
}

static int by_use(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	uint64_t tx = x->rd + x->wr, ty = y->rd + y->wr;

	if (tx != ty)
		return tx < ty ? 1 : -1;
	if (x->regions != y->regions)
		return x->regions < y->regions ? 1 : -1;
	return by_name(a, b);
}

static json_t *sites(struct run *r)
{
	struct site *rows = calloc(r->nsites ? r->nsites : 1, sizeof(*rows));
	json_t *a = json_array();
	size_t m = 0, w = 0;

	for (size_t i = 0; rows && i < r->nsites; i++)
		if (r->sites[i].regions && r->sites[i].name)
			rows[m++] = r->sites[i];
	if (m) {
		qsort(rows, m, sizeof(*rows), by_name);
		for (size_t i = 0; i < m; i++) {
			if (w && !by_name(&rows[w - 1], &rows[i])) {
				rows[w - 1].regions += rows[i].regions;
				rows[w - 1].bytes += rows[i].bytes;
				rows[w - 1].rd += rows[i].rd;
				rows[w - 1].wr += rows[i].wr;
				rows[w - 1].false_sharing += rows[i].false_sharing;
				rows[w - 1].grants += rows[i].grants;
				rows[w - 1].granted_bytes += rows[i].granted_bytes;
				rows[w - 1].touched_bytes += rows[i].touched_bytes;
				rows[w - 1].has_dirty |= rows[i].has_dirty;
				rows[w - 1].dirty_regions += rows[i].dirty_regions;
				rows[w - 1].object_bytes += rows[i].object_bytes;
				rows[w - 1].diff_bytes += rows[i].diff_bytes;
				for (int k = 0; k < 3; k++)
					rows[w - 1].card_bytes[k] += rows[i].card_bytes[k];
			} else {
				rows[w++] = rows[i];
			}
		}
		m = w;
		qsort(rows, m, sizeof(*rows), by_use);
	}
	for (size_t i = 0; i < m && i < MAX_SITES; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "site", rtl_json_text(rows[i].name));
		json_object_set_new(o, "demangled", demangled(rows[i].name));
		json_object_set_new(o, "source", source_of(r, rows[i].ip));
		json_object_set_new(o, "line", rtl_json_text(rows[i].line ? rows[i].line : ""));
		if (rows[i].symbol)
			json_object_set_new(o, "symbol", rtl_json_text(rows[i].symbol));
		json_object_set_new(o, "rule", rtl_json_text(rtl_raw_rule_name(r, rows[i].rule)));
		set_int(o, "regions", rows[i].regions);
		set_int(o, "bytes", rows[i].bytes);
		set_int(o, "read_traps", rows[i].rd);
		set_int(o, "write_traps", rows[i].wr);
		set_int(o, "false_sharing_traps", rows[i].false_sharing);
		set_int(o, "grants", rows[i].grants);
		set_int(o, "granted_bytes", rows[i].granted_bytes);
		set_int(o, "touched_bytes", rows[i].touched_bytes);
		if (rows[i].has_dirty && rows[i].dirty_regions) {
			set_int(o, "dirty_regions", rows[i].dirty_regions);
			set_int(o, "object_bytes", rows[i].object_bytes);
			set_int(o, "diff_bytes", rows[i].diff_bytes);
			set_int(o, "card128_bytes", rows[i].card_bytes[0]);
			set_int(o, "card512_bytes", rows[i].card_bytes[1]);
			set_int(o, "card4096_bytes", rows[i].card_bytes[2]);
		}
		json_array_append_new(a, o);
	}
	if (m > MAX_SITES)
		note(r, "sites: the %u with the most traps listed, of %zu", MAX_SITES, m);
	free(rows);
	return a;
}

static int top_by_traps(const void *a, const void *b)
{
	const struct top *x = a, *y = b;
	uint64_t tx = x->rd + x->wr, ty = y->rd + y->wr;

	return tx < ty ? 1 : tx > ty ? -1
	                             : 0;
}

static json_t *top_regions(struct run *r)
{
	json_t *a = json_array();

	qsort(r->tops, r->ntops, sizeof(*r->tops), top_by_traps);
	for (size_t i = 0; i < r->ntops && i < MAX_TOP; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "site", rtl_json_text(rtl_raw_slot_name(r, r->tops[i].slot)));
		json_object_set_new(o, "demangled", demangled(rtl_raw_slot_name(r, r->tops[i].slot)));
		if (r->tops[i].rule >= 0)
			json_object_set_new(o, "rule",
			                    rtl_json_text(rtl_raw_rule_name(r, r->tops[i].rule)));
		if (r->tops[i].addr) {
			char hex[24];
			snprintf(hex, sizeof(hex), "0x%" PRIx64, r->tops[i].addr);
			json_object_set_new(o, "address", json_string(hex));
		}
		set_int(o, "size", r->tops[i].size);
		set_int(o, "read_traps", r->tops[i].rd);
		set_int(o, "write_traps", r->tops[i].wr);
		json_array_append_new(a, o);
	}
	return a;
}

static uint64_t limit(struct run *r, const char *name)
{
	json_t *v = json_object_get(r->limits, name);

	return json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
}

static void name_events(struct run *r)
{
	json_t *e;
	size_t i;
	uint64_t seen = limit(r, RTL_TRACK_LIMIT_EVENTS), n;
	uint64_t lost = limit(r, RTL_TRACK_LIMIT_EVENTS_LOST);
	json_t *pid = json_object_get(r->run, "pid");

	json_array_foreach(r->events, i, e)
	{
		uint32_t slot = (uint32_t)json_integer_value(json_object_get(e, "site"));

		/* The process: events of a run's processes are one list. Its
		 * record's events come before its run record. */
		if (json_is_integer(pid))
			json_object_set(e, "pid", pid);

		json_object_set_new(e, "site", rtl_json_text(rtl_raw_slot_name(r, slot)));
		json_object_set_new(e, "rule", rtl_json_text(rtl_raw_slot_rule(r, slot)));
	}
	n = json_array_size(r->events);
	/* A record from before 0.4.0: a ring of the first 65536. */
	if (!json_object_get(r->limits, RTL_TRACK_LIMIT_EVENTS_LOST) && seen > r->events_recorded)
		note(r, "events: the ring held %llu traps; %llu more were not recorded",
		     (unsigned long long)r->events_recorded,
		     (unsigned long long)(seen - r->events_recorded));
	if (r->events_recorded > n)
		note(r, "events: %llu traps recorded, the first %llu listed here; "
		        "rtlctl report --trace OUT RAW-RECORD... writes them all",
		     (unsigned long long)r->events_recorded, (unsigned long long)n);
	if (lost)
		note(r, "events: %llu traps not recorded: the ring was full while the "
		        "record file was written, or the file was lost",
		     (unsigned long long)lost);
}

static int stack_by_count(const void *a, const void *b)
{
	const struct stack *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1
	                                                     : 0;
}

/* A frame's inlined functions, "module!demangled" each, as its own. */
struct inlined {
	json_t *a;
	const char *frame; /* "module!..." */
};

static void add_inlined(void *arg, const char *linkage)
{
	struct inlined *x = arg;
	char full[RTL_POLICY_WRAPPER_NAME_MAX], buf[RTL_POLICY_WRAPPER_NAME_MAX];

	snprintf(full, sizeof(full), "%.*s!%s", (int)strcspn(x->frame, "!"), x->frame, linkage);
	json_array_append_new(x->a, rtl_json_text(rtl_demangle(full, buf, sizeof(buf))));
}

static json_t *backtraces(struct run *r)
{
	json_t *a = json_array();

	qsort(r->stacks, r->nstacks, sizeof(*r->stacks), stack_by_count);
	for (size_t i = 0; i < r->nstacks && i < MAX_STACKS; i++) {
		const struct stack *s = &r->stacks[i];
		json_t *o = json_object(), *frames = json_array();
		json_t *sources = json_array(), *names = json_array(), *inl = json_array();
		char name[512];

		json_object_set_new(o, "rule", rtl_json_text(rtl_raw_rule_name(r, (int)s->rule)));
		json_object_set_new(o, "kind", json_string(s->write ? "write" : "read"));
		set_int(o, "count", s->count);
		for (uint32_t f = 0; f < s->n; f++) {
			/* The first frame is the faulting instruction itself. */
			rtl_symbolise(&r->mods, s->ip[f] + (f == 0), 1, name, sizeof(name));
			json_array_append_new(frames, rtl_json_text(name));
			json_array_append_new(names, demangled(name));
			json_array_append_new(sources, source_of(r, s->ip[f] + (f == 0)));
			{
				struct inlined x = { json_array(), name };

				rtl_source_inlines(&r->mods, s->ip[f] + (f == 0), add_inlined, &x);
				json_array_append_new(inl, x.a);
			}
		}
		json_object_set_new(o, "frames", frames);
		json_object_set_new(o, "demangled", names);
		json_object_set_new(o, "sources", sources);
		json_object_set_new(o, "inlined", inl);
		json_array_append_new(a, o);
	}
	if (limit(r, RTL_TRACK_LIMIT_STACKS_DROPPED))
		note(r, "backtraces: %llu traps kept no stack (the table was full, or "
		        "another thread was forking)",
		     (unsigned long long)limit(r, RTL_TRACK_LIMIT_STACKS_DROPPED));
	return a;
}

/* The notes that follow the lists' own, in the order the preload used to
 * write them. */
static void limit_notes(struct run *r)
{
	uint64_t v;

	if ((v = limit(r, RTL_TRACK_LIMIT_FALLBACK_MAX)))
		note(r, "stopped selecting at max_regions = %llu (%llu allocations left "
		        "to the system allocator)",
		     (unsigned long long)limit(r, RTL_TRACK_LIMIT_MAX_REGIONS),
		     (unsigned long long)v);
	if ((v = limit(r, RTL_TRACK_LIMIT_FALLBACK_FULL)))
		note(r, "rtl's views or records were full: %llu selected allocations "
		        "left to the system allocator",
		     (unsigned long long)v);
	if ((v = limit(r, RTL_TRACK_LIMIT_FALLBACK_TAGS)))
		note(r, "memory tags could not take %llu allocations of mechanism = tag "
		        "rules (an alignment above 16 bytes, or the tag arena full: "
		        "RTL_TAG_ARENA_SIZE): left to the system allocator",
		     (unsigned long long)v);
	if ((v = limit(r, RTL_TRACK_LIMIT_FALLBACK_MAPS)) ||
	    limit(r, RTL_TRACK_LIMIT_ALIAS_HIT))
		note(r, "the mapping budget was full: %llu selected allocations left to "
		        "the system allocator (blocks that can trap split the process's "
		        "mappings; %llu were live when it filled, with "
		        "vm.max_map_count = %lld and %lld mappings at start: raise it, e.g. "
		        "sysctl -w vm.max_map_count=%lld)",
		     (unsigned long long)v,
		     (unsigned long long)limit(r, RTL_TRACK_LIMIT_BUDGET),
		     (long long)limit(r, RTL_TRACK_LIMIT_MAX_MAPS),
		     (long long)limit(r, RTL_TRACK_LIMIT_MAPS_AT_START),
		     (long long)limit(r, RTL_TRACK_LIMIT_MAX_MAPS) * 4);
	if ((v = limit(r, RTL_TRACK_LIMIT_FALLBACK_SLOTS)))
		note(r, "%llu selected allocations left to the system allocator: every "
		        "copy of their page held a live protected block (mechanism = "
		        "auto reaches a page through 256 copies: blocks of 16 bytes or "
		        "less can fill them)",
		     (unsigned long long)v);
	if (limit(r, RTL_TRACK_LIMIT_IN_PLACE_HIT) &&
	    !limit(r, RTL_TRACK_LIMIT_FALLBACK_MAPS))
		note(r, "swizzle blocks of whole pages past %llu live were ordinary "
		        "swizzle regions, not protected in place (vm.max_map_count = "
		        "%lld, %lld mappings at start)",
		     (unsigned long long)limit(r, RTL_TRACK_LIMIT_BUDGET),
		     (long long)limit(r, RTL_TRACK_LIMIT_MAX_MAPS),
		     (long long)limit(r, RTL_TRACK_LIMIT_MAPS_AT_START));
	if ((v = limit(r, RTL_TRACK_LIMIT_SITE_OVERFLOW)))
		note(r, "%llu allocations found the site table full and are under "
		        "(other sites)",
		     (unsigned long long)v);
	if (r->status == RTL_TRACK_STATUS_UNKNOWN)
		note(r, "exit status unknown (the program did not start through "
		        "__libc_start_main)");
	if ((v = limit(r, RTL_TRACK_LIMIT_COPIES_OPENED)))
		note(r, "the process ran out of mappings at a grant %llu times: each "
		        "time the blocks of one slot copy lost their protection (their "
		        "later traps were not taken; raise vm.max_map_count)",
		     (unsigned long long)v);
	if ((v = limit(r, RTL_TRACK_LIMIT_SECCOMP_REFUSED)))
		note(r, "the kernel refused rtl's seccomp filter (%s): only the calls "
		        "rtl wraps were resolved; others on protected memory got EFAULT "
		        "(docs/syscalls.md, \"Every call\")",
		     strerror((int)v));
	if ((v = limit(r, RTL_TRACK_LIMIT_KEPT_PINNED)))
		note(r, "%llu freed blocks kept as they were: freed while a thread's "
		        "alternate signal stack, where the kernel still writes",
		     (unsigned long long)v);
	if (limit(r, RTL_TRACK_LIMIT_EPOCH_OPEN))
		note(r, "the last epoch was not closed: the process died of a signal");
}

/* What rtlctl check warns of in the policy the run loaded (policy/warn.c),
 * from its effective text: said on stderr only by a preload rtlctl did not
 * start, in every report. */
static void policy_notes(struct run *r)
{
	static struct rtl_policy_warning w[RTL_POLICY_WARNINGS_MAX];
	const struct rtl_policy *p = rtl_raw_policy();
	const char *source = json_string_value(json_object_get(r->policy, "source"));
	int n;

	if (!p)
		return;
	n = rtl_policy_warnings(p, w, RTL_POLICY_WARNINGS_MAX);
	for (int i = 0; i < n; i++)
		note(r, "policy warning (rtlctl check %s): %s", source, w[i].text);
}

/* Per rule, each interval's counts, and the regions live at its end. */
static json_t *timeline(struct run *r)
{
	json_t *o = json_object(), *rules = json_array();
	uint32_t most = 0;

	for (size_t i = 0; i < r->ntimelines; i++) {
		const struct timeline *t = &r->timelines[i];
		static const char *const names[] = { "traps", "grants", "made", "freed" };
		json_t *e = json_object(), *live = json_array();
		int64_t l = t->base > INT64_MAX ? INT64_MAX : (int64_t)t->base;

		json_object_set_new(e, "rule", rtl_json_text(rtl_raw_rule_name(r, (int)t->rule)));
		for (int c = 0; c < 4; c++) {
			json_t *a = json_array();

			for (uint32_t k = 0; k < t->n; k++)
				json_array_append_new(a, json_integer((json_int_t)t->v[4 * k + c]));
			json_object_set_new(e, names[c], a);
		}
		for (uint32_t k = 0; k < t->n; k++) {
			uint64_t made = t->v[4 * k + 2], freed = t->v[4 * k + 3];

			if (__builtin_add_overflow(l, (int64_t)(made & INT64_MAX), &l))
				l = INT64_MAX;
			l = l - (int64_t)(freed & INT64_MAX);
			if (l < 0)
				l = 0;
			json_array_append_new(live, json_integer(l));
		}
		json_object_set_new(e, "live", live);
		json_array_append_new(rules, e);
		if (t->n > most)
			most = t->n;
	}
	set_int(o, "interval_ns", r->interval_ns);
	set_int(o, "intervals", most);
	json_object_set_new(o, "rules", rules);
	return o;
}

json_t *rtl_raw_build(struct run *r)
{
	json_t *out = json_object(), *site_list, *top, *bts;
	uint64_t dropped = limit(r, RTL_TRACK_LIMIT_EPOCHS_DROPPED);

	rtl_raw_name(r);
	site_list = sites(r);
	top = top_regions(r);
	if (dropped)
		note(r, "epochs: %zu listed, %llu more not kept",
		     json_array_size(r->epochs), (unsigned long long)dropped);
	name_events(r);
	bts = backtraces(r);
	limit_notes(r);
	policy_notes(r);
	set_int(out, "rtl_report", 1);
	json_object_set_new(out, "rtl_version", json_string(RTL_VERSION));
	json_object_set(out, "run", r->run);
	json_object_set(out, "policy", r->policy);
	json_object_set(out, "totals", r->totals);
	json_object_set(out, "rules", r->rules);
	json_object_set_new(out, "sites", site_list);
	json_object_set_new(out, "top_regions", top);
	json_object_set(out, "epochs", r->epochs);
	if (r->dirty)
		json_object_set(out, "dirty", r->dirty);
	if (r->protection)
		json_object_set(out, "protection", r->protection);
	if (r->tag)
		json_object_set(out, "tag", r->tag);
	json_object_set(out, "events", r->events);
	json_object_set_new(out, "backtraces", bts);
	json_object_set_new(out, "timeline", timeline(r));
	json_object_set(out, "notes", r->notes);
	json_object_set_new(out, "processes", rtl_report_processes(out));
	return out;
}
