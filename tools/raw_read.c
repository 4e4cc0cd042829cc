/* From the raw record to the report: every record checked against its
 * length before a field is read; sites named once and merged by (name,
 * rule); lists sorted and cut as docs/policy.md says; the notes made from
 * the limits the record carries. */
#include "raw_read.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols.h"
#include "text.h"
#include "track_format.h"

#ifndef RTL_VERSION
#define RTL_VERSION "unknown"
#endif
#define MAX_SITES 500
#define MAX_STACKS 50
#define MAX_TOP 20
#define EVENTS_KEPT 65536

/* A cursor over one record's payload. */
struct cur {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t u64(struct cur *c)
{
	uint64_t v = 0;

	if (c->end - c->p < 8) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static uint32_t u32(struct cur *c)
{
	uint32_t v = 0;

	if (c->end - c->p < 4) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 4);
	c->p += 4;
	return v;
}

/* A string, copied and terminated (free it); "" on a bad record. */
static char *str(struct cur *c, size_t *len_out)
{
	uint32_t n = u32(c);
	char *s;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		n = 0;
	}
	s = malloc((size_t)n + 1);
	if (!s) {
		c->bad = 1;
		return NULL;
	}
	memcpy(s, c->p, n);
	s[n] = '\0';
	c->p += n;
	if (len_out)
		*len_out = n;
	return s;
}

/* ---- what the record holds ---- */

struct site {
	uint32_t slot;
	uint64_t ip;
	int rule;
	uint64_t regions, bytes, rd, wr;
	char *name;
};

struct top {
	uint32_t slot;
	uint64_t size, rd, wr;
	uint64_t addr; /* 0: a record from before 0.2.0 */
	int rule;      /* -1: likewise */
};

struct stack {
	uint32_t rule, write, n;
	uint64_t count;
	uint64_t ip[16];
};

struct run {
	json_t *run, *policy, *totals, *rules, *epochs, *events;
	struct rtl_modules mods;
	struct site *sites;
	size_t nsites, capsites;
	struct top *tops;
	size_t ntops, captops;
	struct stack *stacks;
	size_t nstacks, capstacks;
	json_t *limits; /* name -> value */
	json_t *notes;
	int64_t status;
	int have_run;
};

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	q = realloc(p, *cap * size);
	if (!q)
		free(p);
	return q;
}

static void set_int(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

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

static int read_run(struct run *r, struct cur *c)
{
	char *prog, *argv;
	size_t n = 0;

	uint64_t pid, ns, ppid = 0, root = 0;

	r->status = (int64_t)u64(c);
	pid = u64(c);
	ns = u64(c);
	prog = str(c, NULL);
	argv = str(c, &n);
	if (c->p < c->end) { /* a record of 0.2.0 or later */
		ppid = u64(c);
		root = u64(c);
	}
	if (!c->bad) {
		json_t *a = json_array();

		for (size_t i = 0; i < n; i += strlen(argv + i) + 1)
			json_array_append_new(a, rtl_json_text(argv + i));
		json_object_set_new(r->run, "program", rtl_json_text(prog));
		json_object_set_new(r->run, "argv", a);
		set_int(r->run, "pid", pid);
		if (r->status >= 0)
			set_int(r->run, "exit_status", (uint64_t)r->status);
		else if (r->status != RTL_TRACK_STATUS_UNKNOWN)
			set_int(r->run, "signal", (uint64_t)-r->status);
		set_int(r->run, "duration_ns", ns);
		if (ppid)
			set_int(r->run, "ppid", ppid);
		if (root)
			set_int(r->run, "root_pid", root);
		r->have_run = 1;
	}
	free(prog);
	free(argv);
	return c->bad ? -1 : 0;
}

static int read_policy(struct run *r, struct cur *c)
{
	char *source = str(c, NULL), *text = str(c, NULL);

	if (!c->bad) {
		json_object_set_new(r->policy, "source", rtl_json_text(source));
		json_object_set_new(r->policy, "text", rtl_json_text(text));
	}
	free(source);
	free(text);
	return c->bad ? -1 : 0;
}

/* Name/value pairs into o. */
static int read_pairs(json_t *o, struct cur *c)
{
	uint32_t n = u32(c);

	for (uint32_t i = 0; i < n && !c->bad; i++) {
		char *name = str(c, NULL);
		uint64_t v = u64(c);

		if (!c->bad)
			set_int(o, name, v);
		free(name);
	}
	return c->bad ? -1 : 0;
}

static int read_rule(struct run *r, struct cur *c)
{
	char *name = str(c, NULL), *mech = str(c, NULL);
	uint64_t sel = u64(c), bytes = u64(c), rd = u64(c), wr = u64(c);

	if (!c->bad) {
		json_t *o = json_object();

		json_object_set_new(o, "name", rtl_json_text(name));
		json_object_set_new(o, "mechanism", rtl_json_text(mech));
		set_int(o, "selected", sel);
		set_int(o, "bytes", bytes);
		set_int(o, "read_traps", rd);
		set_int(o, "write_traps", wr);
		json_array_append_new(r->rules, o);
	}
	free(name);
	free(mech);
	return c->bad ? -1 : 0;
}

static int read_module(struct run *r, struct cur *c)
{
	uint64_t bias = u64(c), lo = u64(c), hi = u64(c);
	char *path = str(c, NULL), *name = str(c, NULL);
	int rc = c->bad || rtl_modules_add(&r->mods, bias, lo, hi, path, name);

	free(path);
	free(name);
	return rc ? -1 : 0;
}

static int read_site(struct run *r, struct cur *c)
{
	struct site s = { 0 };

	s.slot = u32(c);
	s.ip = u64(c);
	s.rule = (int)u32(c);
	s.regions = u64(c);
	s.bytes = u64(c);
	s.rd = u64(c);
	s.wr = u64(c);
	if (c->bad)
		return -1;
	r->sites = grow(r->sites, &r->capsites, r->nsites, sizeof(s));
	if (!r->sites)
		return -1;
	r->sites[r->nsites++] = s;
	return 0;
}

static int read_top(struct run *r, struct cur *c)
{
	struct top t;

	t.slot = u32(c);
	t.size = u64(c);
	t.rd = u64(c);
	t.wr = u64(c);
	t.addr = 0;
	t.rule = -1;
	if (c->p < c->end) { /* a record of 0.2.0 or later */
		t.addr = u64(c);
		t.rule = (int)u32(c);
	}
	if (c->bad)
		return -1;
	r->tops = grow(r->tops, &r->captops, r->ntops, sizeof(t));
	if (!r->tops)
		return -1;
	r->tops[r->ntops++] = t;
	return 0;
}

static int read_epoch(struct run *r, struct cur *c)
{
	json_t *o = json_object();

	set_int(o, "t_ns", u64(c));
	set_int(o, "dirty_regions", u64(c));
	set_int(o, "diff_bytes", u64(c));
	set_int(o, "page_bytes", u64(c));
	if (c->bad) {
		json_decref(o);
		return -1;
	}
	json_array_append_new(r->epochs, o);
	return 0;
}

/* Events name their site by slot: kept raw until the sites are named. */
static int read_event(struct run *r, struct cur *c)
{
	json_t *o = json_object();
	uint64_t t = u64(c);
	uint32_t slot = u32(c), write = u32(c);
	uint64_t off = u64(c), size = u64(c);

	if (c->bad) {
		json_decref(o);
		return -1;
	}
	set_int(o, "t_ns", t);
	json_object_set_new(o, "kind", json_string(write ? "write" : "read"));
	set_int(o, "site", slot); /* named later */
	set_int(o, "offset", off);
	set_int(o, "size", size);
	json_array_append_new(r->events, o);
	return 0;
}

static int read_stack(struct run *r, struct cur *c)
{
	struct stack s;

	s.rule = u32(c);
	s.write = u32(c);
	s.count = u64(c);
	s.n = u32(c);
	if (s.n > 16)
		c->bad = 1;
	for (uint32_t i = 0; i < s.n && !c->bad; i++)
		s.ip[i] = u64(c);
	if (c->bad)
		return -1;
	r->stacks = grow(r->stacks, &r->capstacks, r->nstacks, sizeof(s));
	if (!r->stacks)
		return -1;
	r->stacks[r->nstacks++] = s;
	return 0;
}

/* ---- turning it into the report ---- */

static const char *rule_name(struct run *r, int rule)
{
	json_t *o = json_array_get(r->rules, (size_t)rule);
	const char *s = json_string_value(json_object_get(o, "name"));

	return rule >= 0 && s ? s : "?";
}

static void name_sites(struct run *r)
{
	for (size_t i = 0; i < r->nsites; i++) {
		char buf[512];

		if (r->sites[i].ip)
			rtl_symbolise(&r->mods, r->sites[i].ip, 0, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "(other sites)");
		r->sites[i].name = strdup(buf);
	}
}

static const char *slot_name(struct run *r, uint32_t slot)
{
	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i].slot == slot && r->sites[i].name)
			return r->sites[i].name;
	return "(other sites)";
}

/* The rule of a site slot, or -1. */
static int slot_rule(struct run *r, uint32_t slot)
{
	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i].slot == slot)
			return r->sites[i].rule;
	return -1;
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
		json_object_set_new(o, "rule", rtl_json_text(rule_name(r, rows[i].rule)));
		set_int(o, "regions", rows[i].regions);
		set_int(o, "bytes", rows[i].bytes);
		set_int(o, "read_traps", rows[i].rd);
		set_int(o, "write_traps", rows[i].wr);
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

		json_object_set_new(o, "site", rtl_json_text(slot_name(r, r->tops[i].slot)));
		if (r->tops[i].rule >= 0)
			json_object_set_new(o, "rule",
			                    rtl_json_text(rule_name(r, r->tops[i].rule)));
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

	json_array_foreach(r->events, i, e)
	{
		uint32_t slot = (uint32_t)json_integer_value(json_object_get(e, "site"));
		int rule = slot_rule(r, slot);

		json_object_set_new(e, "site", rtl_json_text(slot_name(r, slot)));
		json_object_set_new(e, "rule", rtl_json_text(rule >= 0 ? rule_name(r, rule) : "?"));
	}
	n = json_array_size(r->events);
	if (seen > n)
		note(r, "events: the ring held %llu traps; %llu more were not listed",
		     (unsigned long long)n, (unsigned long long)(seen - n));
}

static int stack_by_count(const void *a, const void *b)
{
	const struct stack *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1
	                                                     : 0;
}

static json_t *backtraces(struct run *r)
{
	json_t *a = json_array();

	qsort(r->stacks, r->nstacks, sizeof(*r->stacks), stack_by_count);
	for (size_t i = 0; i < r->nstacks && i < MAX_STACKS; i++) {
		const struct stack *s = &r->stacks[i];
		json_t *o = json_object(), *frames = json_array();
		char name[512];

		json_object_set_new(o, "rule", rtl_json_text(rule_name(r, (int)s->rule)));
		json_object_set_new(o, "kind", json_string(s->write ? "write" : "read"));
		set_int(o, "count", s->count);
		for (uint32_t f = 0; f < s->n; f++) {
			/* The first frame is the faulting instruction itself. */
			rtl_symbolise(&r->mods, s->ip[f] + (f == 0), 1, name, sizeof(name));
			json_array_append_new(frames, rtl_json_text(name));
		}
		json_object_set_new(o, "frames", frames);
		json_array_append_new(a, o);
	}
	if (limit(r, RTL_TRACK_LIMIT_STACKS_DROPPED))
		note(r, "backtraces: %llu traps had stacks that did not fit in the table",
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
	if ((v = limit(r, RTL_TRACK_LIMIT_FALLBACK_MAPS)) ||
	    limit(r, RTL_TRACK_LIMIT_ALIAS_HIT))
		note(r, "the mapping budget was full: %llu selected allocations left to "
		        "the system allocator (a block that can trap takes up to two of "
		        "the process's mappings; %llu live at most with vm.max_map_count "
		        "= %lld and %lld mappings at start: raise it, e.g. "
		        "sysctl -w vm.max_map_count=%lld)",
		     (unsigned long long)v,
		     (unsigned long long)limit(r, RTL_TRACK_LIMIT_BUDGET),
		     (long long)limit(r, RTL_TRACK_LIMIT_MAX_MAPS),
		     (long long)limit(r, RTL_TRACK_LIMIT_MAPS_AT_START),
		     (long long)limit(r, RTL_TRACK_LIMIT_MAX_MAPS) * 4);
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
	if ((v = limit(r, RTL_TRACK_LIMIT_SECCOMP_REFUSED)))
		note(r, "the kernel refused rtl's seccomp filter (%s): only the calls "
		        "rtl wraps were resolved; others on protected memory got EFAULT "
		        "(docs/syscalls.md, \"Every call\")",
		     strerror((int)v));
	if (limit(r, RTL_TRACK_LIMIT_EPOCH_OPEN))
		note(r, "the last epoch was not closed: the process died of a signal");
}

static json_t *build(struct run *r)
{
	json_t *out = json_object(), *site_list, *top, *bts;
	uint64_t dropped = limit(r, RTL_TRACK_LIMIT_EPOCHS_DROPPED);

	name_sites(r);
	site_list = sites(r);
	top = top_regions(r);
	if (dropped)
		note(r, "epochs: %zu listed, %llu more not kept",
		     json_array_size(r->epochs), (unsigned long long)dropped);
	name_events(r);
	bts = backtraces(r);
	limit_notes(r);
	set_int(out, "rtl_report", 1);
	json_object_set_new(out, "rtl_version", json_string(RTL_VERSION));
	json_object_set(out, "run", r->run);
	json_object_set(out, "policy", r->policy);
	json_object_set(out, "totals", r->totals);
	json_object_set(out, "rules", r->rules);
	json_object_set_new(out, "sites", site_list);
	json_object_set_new(out, "top_regions", top);
	json_object_set(out, "epochs", r->epochs);
	json_object_set(out, "events", r->events);
	json_object_set_new(out, "backtraces", bts);
	json_object_set(out, "notes", r->notes);
	return out;
}

int rtl_raw_is(const void *data, size_t size)
{
	return size >= RTL_TRACK_MAGIC_LEN &&
	       !memcmp(data, RTL_TRACK_MAGIC, RTL_TRACK_MAGIC_LEN);
}

static int read_record(struct run *r, uint32_t tag, struct cur *c)
{
	switch (tag) {
	case RTL_TRACK_RUN: return read_run(r, c);
	case RTL_TRACK_POLICY: return read_policy(r, c);
	case RTL_TRACK_TOTALS: return read_pairs(r->totals, c);
	case RTL_TRACK_RULE: return read_rule(r, c);
	case RTL_TRACK_MODULE: return read_module(r, c);
	case RTL_TRACK_SITE: return read_site(r, c);
	case RTL_TRACK_TOP: return read_top(r, c);
	case RTL_TRACK_EPOCH: return read_epoch(r, c);
	case RTL_TRACK_EVENT: return read_event(r, c);
	case RTL_TRACK_STACK: return read_stack(r, c);
	case RTL_TRACK_LIMITS: return read_pairs(r->limits, c);
	}
	return 0; /* a record of a later version: skipped */
}

static void run_free(struct run *r)
{
	json_decref(r->run);
	json_decref(r->policy);
	json_decref(r->totals);
	json_decref(r->rules);
	json_decref(r->epochs);
	json_decref(r->events);
	json_decref(r->limits);
	json_decref(r->notes);
	for (size_t i = 0; i < r->nsites; i++)
		free(r->sites[i].name);
	free(r->sites);
	free(r->tops);
	free(r->stacks);
	rtl_modules_free(&r->mods);
}

json_t *rtl_raw_report(const void *data, size_t size, const char *name,
                       char *why, size_t len)
{
	const unsigned char *p = data, *end = p + size;
	struct run r = { 0 };
	json_t *out = NULL;

	if (!rtl_raw_is(data, size)) {
		snprintf(why, len, "%s: not a raw record of rtl", name);
		return NULL;
	}
	r.run = json_object();
	r.policy = json_object();
	r.totals = json_object();
	r.rules = json_array();
	r.epochs = json_array();
	r.events = json_array();
	r.limits = json_object();
	r.notes = json_array();
	p += RTL_TRACK_MAGIC_LEN;
	while (p < end) {
		uint32_t hdr[2];
		struct cur c;

		if (end - p < (ptrdiff_t)sizeof(hdr)) {
			snprintf(why, len, "%s: truncated at byte %td", name,
			         p - (const unsigned char *)data);
			goto out;
		}
		memcpy(hdr, p, sizeof(hdr));
		p += sizeof(hdr);
		if ((size_t)(end - p) < hdr[1]) {
			snprintf(why, len, "%s: record %u at byte %td runs past the end",
			         name, hdr[0], p - (const unsigned char *)data - 8);
			goto out;
		}
		c = (struct cur){ p, p + hdr[1], 0 };
		if (read_record(&r, hdr[0], &c) < 0) {
			snprintf(why, len, "%s: record %u at byte %td is malformed", name,
			         hdr[0], p - (const unsigned char *)data - 8);
			goto out;
		}
		p += hdr[1];
	}
	if (!r.have_run) {
		snprintf(why, len, "%s: no run record", name);
		goto out;
	}
	out = build(&r);
out:
	run_free(&r);
	return out;
}
