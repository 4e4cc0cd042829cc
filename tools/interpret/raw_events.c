/* The events of a raw record (events = traps; preload/track/format.h,
 * RTL_TRACK_EVENT and RTL_TRACK_EVENTS): the first EVENTS_KEPT of a
 * process into the report, the rest counted without their pages read, and
 * every one of them streamed, named, for --trace (rtl_raw_each_event). */
#include "tools/interpret/raw_cursor.h"
#include "tools/interpret/raw_read.h"
#include "tools/interpret/raw_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload/track/format.h"

#define EVENTS_KEPT 16384

/* An event as the record holds it, decoded. */
struct event {
	uint64_t t_ns, offset, size;
	uint32_t slot, tid; /* tid 0: a record from before 0.4.0 */
	int write;
};

/* Events name their site by slot: kept raw until the sites are named. The
 * report lists the first EVENTS_KEPT of a process; the raw record keeps
 * them all (for --trace). */
static void keep_event(struct run *r, const struct event *e)
{
	json_t *o;

	r->events_recorded++;
	if (r->skip_events || json_array_size(r->events) >= EVENTS_KEPT)
		return;
	o = json_object();
	set_int(o, "t_ns", e->t_ns); /* "pid" when the run record is read */
	if (e->tid)
		set_int(o, "tid", e->tid);
	json_object_set_new(o, "kind", json_string(e->write ? "write" : "read"));
	set_int(o, "site", e->slot); /* named later */
	set_int(o, "offset", e->offset);
	set_int(o, "size", e->size);
	json_array_append_new(r->events, o);
}

/* Each event of an EVENT (one) or EVENTS (many) record, to fn; -1 if the
 * record is malformed. */
static int each_event(struct cur *c, uint32_t tag, void (*fn)(void *, const struct event *),
                      void *arg)
{
	struct event e = { 0 };
	uint32_t n, each;

	if (tag == RTL_TRACK_EVENT) {
		e.t_ns = u64(c);
		e.slot = u32(c);
		e.write = u32(c) != 0;
		e.offset = u64(c);
		e.size = u64(c);
		if (c->bad)
			return -1;
		fn(arg, &e);
		return 0;
	}
	n = u32(c);
	each = u32(c);
	if (c->bad || each < RTL_TRACK_EVENT_BYTES || (size_t)(c->end - c->p) / each < n)
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		struct cur one = { c->p, c->p + each, 0 };
		uint32_t sw;

		e.t_ns = u64(&one);
		sw = u32(&one);
		e.tid = u32(&one);
		e.offset = u32(&one);
		e.size = u32(&one);
		e.slot = sw & 0x7fffffffu;
		e.write = !!(sw & 0x80000000u);
		fn(arg, &e);
		c->p += each;
	}
	return 0;
}

static void keep_event_cb(void *arg, const struct event *e)
{
	keep_event(arg, e);
}

int rtl_raw_read_events(struct run *r, uint32_t tag, struct cur *c)
{
	uint32_t n, each;
	struct cur head = *c;

	if (tag == RTL_TRACK_EVENTS && (r->skip_events || json_array_size(r->events) >= EVENTS_KEPT)) {
		/* Counted, not read: a long run's events are most of its
		 * record, and their pages stay out of memory. */
		n = u32(&head);
		each = u32(&head);
		if (head.bad || each < RTL_TRACK_EVENT_BYTES ||
		    (size_t)(head.end - head.p) / each < n)
			return -1;
		r->events_recorded += n;
		return 0;
	}
	return each_event(c, tag, keep_event_cb, r);
}

/* ---- every event, named, in bounded memory ---- */

struct slot_names {
	uint32_t slot;
	const char *site, *rule;
};

struct each {
	struct run *r;
	struct slot_names *names;
	size_t n;
	int64_t pid;
	rtl_raw_event_fn fn;
	void *arg;
	int stop;
};

static int by_slot(const void *a, const void *b)
{
	const struct slot_names *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static void named_event(void *arg, const struct event *e)
{
	struct each *x = arg;
	struct slot_names key = { .slot = e->slot }, *hit;
	struct rtl_raw_event out;

	if (x->stop)
		return;
	hit = bsearch(&key, x->names, x->n, sizeof(*x->names), by_slot);
	out = (struct rtl_raw_event){
		.t_ns = e->t_ns,
		.tid = e->tid,
		.write = e->write,
		.offset = e->offset,
		.size = e->size,
		.site = hit ? hit->site : "(other sites)",
		.rule = hit ? hit->rule : "?",
	};
	if (x->fn(x->arg, x->pid, &out) < 0)
		x->stop = 1;
}

int rtl_raw_each_event(const void *data, size_t size, int mapped, const char *name,
                       rtl_raw_event_fn fn, void *arg, char *why, size_t len)
{
	struct run r = { .skip_events = 1 };
	struct each x = { .r = &r, .fn = fn, .arg = arg };
	const unsigned char *p = data, *end = p + size;
	uintptr_t done = 0;
	int rc = -1;

	/* First the record without its events: the sites, named. */
	if (rtl_raw_read_all(&r, data, size, mapped, name, why, len) < 0)
		goto out;
	rtl_raw_name(&r);
	x.names = calloc(r.nsites ? r.nsites : 1, sizeof(*x.names));
	if (!x.names) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < r.nsites; i++)
		x.names[x.n++] = (struct slot_names){ r.sites[i].slot,
			                              rtl_raw_slot_name(&r, r.sites[i].slot),
			                              rtl_raw_slot_rule(&r, r.sites[i].slot) };
	qsort(x.names, x.n, sizeof(*x.names), by_slot);
	x.pid = json_integer_value(json_object_get(r.run, "pid"));
	/* Then the events, one record at a time (checked by read_all). */
	p += RTL_TRACK_MAGIC_LEN;
	while (p < end && !x.stop) {
		uint32_t hdr[2];
		struct cur c;

		/* Checked again: the pages let go are read again from the
		 * file, which may have changed since. */
		if (end - p < (ptrdiff_t)sizeof(hdr))
			break;
		memcpy(hdr, p, sizeof(hdr));
		p += sizeof(hdr);
		if ((size_t)(end - p) < hdr[1])
			break;
		c = (struct cur){ p, p + hdr[1], 0 };
		if (hdr[0] == RTL_TRACK_EVENT || hdr[0] == RTL_TRACK_EVENTS)
			each_event(&c, hdr[0], named_event, &x);
		p += hdr[1];
		if (mapped)
			rtl_raw_forget(data, p, &done);
	}
	rc = x.stop ? -1 : 0;
	if (x.stop)
		snprintf(why, len, "%s: stopped", name);
out:
	free(x.names);
	rtl_raw_run_free(&r);
	return rc;
}
