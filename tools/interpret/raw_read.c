/* Reading the raw record: every record checked against its length before
 * a field is read, into a run (raw_run.h) that raw_build.c turns into the
 * report; its events are raw_events.c's. */
#include "tools/interpret/raw_read.h"
#include "tools/interpret/raw_cursor.h"
#include "tools/interpret/raw_run.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "preload/track/format.h"
#include "tools/interpret/symbols.h"
#include "tools/util/text.h"

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

static int read_run(struct run *r, struct cur *c)
{
	char *prog, *argv;
	size_t n = 0;

	uint64_t pid, ns, ppid = 0, root = 0, start = 0;

	r->status = (int64_t)u64(c);
	pid = u64(c);
	ns = u64(c);
	prog = str(c, NULL);
	argv = str(c, &n);
	if (c->p < c->end) { /* a record of 0.2.0 or later */
		ppid = u64(c);
		root = u64(c);
	}
	if (c->p < c->end) /* 0.4.0 or later */
		start = u64(c);
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
		if (start)
			set_int(r->run, "start_ns", start);
		r->have_run = 1;
	}
	free(prog);
	free(argv);
	return c->bad ? -1 : 0;
}

static int read_dirty(struct run *r, struct cur *c)
{
	char *way = str(c, NULL), *why = str(c, NULL);

	if (!c->bad) {
		json_decref(r->dirty);
		r->dirty = json_pack("{s:o, s:o}", "way", rtl_json_text(way), "why",
		                     rtl_json_text(why));
	}
	free(way);
	free(why);
	return c->bad ? -1 : 0;
}

static int read_protection(struct run *r, struct cur *c)
{
	char *backend = str(c, NULL), *why = str(c, NULL);

	if (!c->bad) {
		json_decref(r->protection);
		json_decref(r->tag);
		r->protection = json_pack("{s:o, s:o}", "backend", rtl_json_text(backend),
		                          "why", rtl_json_text(why));
	}
	free(backend);
	free(why);
	return c->bad ? -1 : 0;
}

static int read_tag(struct run *r, struct cur *c)
{
	char *placed = str(c, NULL), *why = str(c, NULL);

	if (!c->bad) {
		json_decref(r->tag);
		r->tag = json_pack("{s:o, s:o}", "placed", rtl_json_text(placed), "why",
		                   rtl_json_text(why));
	}
	free(placed);
	free(why);
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
	uint64_t later[5] = { 0 };

	if (c->p < c->end) /* a record of 0.3.0 or later */
		for (int i = 0; i < 5; i++)
			later[i] = u64(c);
	if (!c->bad) {
		json_t *o = json_object();

		json_object_set_new(o, "name", rtl_json_text(name));
		json_object_set_new(o, "mechanism", rtl_json_text(mech));
		set_int(o, "selected", sel);
		set_int(o, "bytes", bytes);
		set_int(o, "read_traps", rd);
		set_int(o, "write_traps", wr);
		set_int(o, "false_sharing_traps", later[0]);
		set_int(o, "grants", later[1]);
		set_int(o, "granted_bytes", later[2]);
		set_int(o, "touched_bytes", later[3]);
		set_int(o, "prot_changes", later[4]);
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
	if (c->p < c->end) { /* a record of 0.3.0 or later */
		s.false_sharing = u64(c);
		s.grants = u64(c);
		s.granted_bytes = u64(c);
		s.touched_bytes = u64(c);
	}
	if (c->p < c->end) { /* later: the dirty epochs' accounts */
		s.has_dirty = 1;
		s.dirty_regions = u64(c);
		s.object_bytes = u64(c);
		s.diff_bytes = u64(c);
		for (int k = 0; k < 3; k++)
			s.card_bytes[k] = u64(c);
	}
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
	if (c->p < c->end) { /* later: what other barriers would rescan */
		set_int(o, "object_bytes", u64(c));
		set_int(o, "card128_bytes", u64(c));
		set_int(o, "card512_bytes", u64(c));
		set_int(o, "card4096_bytes", u64(c));
		set_int(o, "written_bytes", u64(c));
	}
	if (c->bad) {
		json_decref(o);
		return -1;
	}
	json_array_append_new(r->epochs, o);
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

static int read_timeline(struct run *r, struct cur *c)
{
	struct timeline t = { 0 };
	uint64_t width;

	t.rule = u32(c);
	width = u64(c);
	t.base = u64(c);
	t.n = u32(c);
	/* The counts must be there: 32 bytes an interval. */
	if (c->bad || !width || (r->interval_ns && width != r->interval_ns) ||
	    (size_t)(c->end - c->p) / 32 < t.n)
		return -1;
	r->interval_ns = width;
	t.v = malloc((t.n ? t.n : 1) * 4 * sizeof(*t.v));
	if (!t.v)
		return -1;
	for (uint32_t i = 0; i < 4 * t.n; i++)
		t.v[i] = u64(c);
	r->timelines = grow(r->timelines, &r->captimelines, r->ntimelines, sizeof(t));
	if (!r->timelines) {
		free(t.v);
		r->ntimelines = 0;
		return -1;
	}
	r->timelines[r->ntimelines++] = t;
	return 0;
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
	case RTL_TRACK_EVENT:
	case RTL_TRACK_EVENTS: return rtl_raw_read_events(r, tag, c);
	case RTL_TRACK_STACK: return read_stack(r, c);
	case RTL_TRACK_LIMITS: return read_pairs(r->limits, c);
	case RTL_TRACK_TIMELINE: return read_timeline(r, c);
	case RTL_TRACK_DIRTY: return read_dirty(r, c);
	case RTL_TRACK_PROTECTION: return read_protection(r, c);
	case RTL_TRACK_TAG: return read_tag(r, c);
	}
	return 0; /* a record of a later version: skipped */
}

void rtl_raw_run_free(struct run *r)
{
	json_decref(r->run);
	json_decref(r->policy);
	json_decref(r->totals);
	json_decref(r->rules);
	json_decref(r->epochs);
	json_decref(r->events);
	json_decref(r->limits);
	json_decref(r->notes);
	json_decref(r->dirty);
	json_decref(r->protection);
	for (size_t i = 0; i < r->nsites; i++) {
		free(r->sites[i].name);
		free(r->sites[i].symbol);
		free(r->sites[i].line);
	}
	free(r->sites);
	free(r->tops);
	free(r->stacks);
	for (size_t i = 0; i < r->ntimelines; i++)
		free(r->timelines[i].v);
	free(r->timelines);
	rtl_modules_free(&r->mods);
}

/* The pages of a record mapped from its file before p, read: out of this
 * process's memory (a private read-only mapping of a file: read again if
 * touched). The kernel maps the pages around each one read (fault-around,
 * 64 KiB), so that reading only the records' headers of a long run's
 * events would still bring much of the file in. From *done (where the last
 * call stopped) on, a MiB at least at a time. */
void rtl_raw_forget(const void *data, const unsigned char *p, uintptr_t *done)
{
	uintptr_t lo = ((uintptr_t)data + 4095) & ~(uintptr_t)4095;
	uintptr_t hi = (uintptr_t)p & ~(uintptr_t)4095;

	if (*done > lo)
		lo = *done;
	if (hi > lo + (1u << 20)) {
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
		*done = hi;
	}
}

/* Every record of the file into r; 0, or -1 with the reason in why. */
int rtl_raw_read_all(struct run *r, const void *data, size_t size, int mapped,
                     const char *name, char *why, size_t len)
{
	const unsigned char *p = data, *end = p + size;
	uintptr_t done = 0;

	if (!rtl_raw_is(data, size)) {
		snprintf(why, len, "%s: not a raw record of rtl", name);
		return -1;
	}
	r->run = json_object();
	r->policy = json_object();
	r->totals = json_object();
	r->rules = json_array();
	r->epochs = json_array();
	r->events = json_array();
	r->limits = json_object();
	r->notes = json_array();
	p += RTL_TRACK_MAGIC_LEN;
	while (p < end) {
		uint32_t hdr[2];
		struct cur c;

		if (end - p < (ptrdiff_t)sizeof(hdr)) {
			snprintf(why, len, "%s: truncated at byte %td", name,
			         p - (const unsigned char *)data);
			return -1;
		}
		memcpy(hdr, p, sizeof(hdr));
		p += sizeof(hdr);
		if ((size_t)(end - p) < hdr[1]) {
			snprintf(why, len, "%s: record %u at byte %td runs past the end",
			         name, hdr[0], p - (const unsigned char *)data - 8);
			return -1;
		}
		c = (struct cur){ p, p + hdr[1], 0 };
		if (read_record(r, hdr[0], &c) < 0) {
			snprintf(why, len, "%s: record %u at byte %td is malformed", name,
			         hdr[0], p - (const unsigned char *)data - 8);
			return -1;
		}
		p += hdr[1];
		if (mapped)
			rtl_raw_forget(data, p, &done);
	}
	if (!r->have_run) {
		snprintf(why, len, "%s: no run record", name);
		return -1;
	}
	return 0;
}

json_t *rtl_raw_report(const void *data, size_t size, int mapped, const char *name,
                       char *why, size_t len)
{
	struct run r = { 0 };
	json_t *out = NULL;

	if (rtl_raw_read_all(&r, data, size, mapped, name, why, len) == 0)
		out = rtl_raw_build(&r);
	rtl_raw_run_free(&r);
	return out;
}
