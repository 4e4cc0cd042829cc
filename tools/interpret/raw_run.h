/* The decoded raw record, between raw_read.c (which reads and checks it)
 * and raw_build.c (which turns it into the report). Private to tools/. */
#ifndef RTL_RAW_RUN_H
#define RTL_RAW_RUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/interpret/symbols.h"

/* ---- what the record holds ---- */

struct site {
	uint32_t slot;
	uint64_t ip;
	int rule;
	uint64_t regions, bytes, rd, wr;
	uint64_t false_sharing, grants, granted_bytes, touched_bytes;
	/* dirty epochs (a later record: has_dirty) */
	uint64_t dirty_regions, object_bytes, diff_bytes, card_bytes[3];
	int has_dirty;
	char *name;   /* the site the report names */
	char *symbol; /* the symbol at ip, when name is a function inlined there */
	char *line;   /* "file.c:LINE" of the call in it, or NULL */
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

/* A rule's timeline: n intervals of counts (traps, grants, made, freed). */
struct timeline {
	uint32_t rule, n;
	uint64_t base; /* live at the start */
	uint64_t *v;   /* 4 n */
};

struct run {
	json_t *run, *policy, *totals, *rules, *epochs, *events;
	json_t *dirty;      /* how dirty rules saw writes: way, why; or NULL */
	json_t *protection; /* how protection changed: backend, why; or NULL */
	json_t *tag;        /* where tag rules' blocks went: placed, why; or NULL */
	struct rtl_modules mods;
	struct site *sites;
	size_t nsites, capsites;
	struct top *tops;
	size_t ntops, captops;
	struct stack *stacks;
	size_t nstacks, capstacks;
	struct timeline *timelines;
	size_t ntimelines, captimelines;
	uint64_t interval_ns; /* of every timeline; 0: none */
	json_t *limits;       /* name -> value */
	json_t *notes;
	int64_t status;
	int have_run;
	uint64_t events_recorded; /* in the record; the report lists some */
	int skip_events;          /* none in the report: read for their names */
};

static inline void set_int(json_t *o, const char *k, uint64_t v)
{
	json_object_set_new(o, k, json_integer((json_int_t)v));
}

struct cur;

/* raw_read.c: every record of the file into r (0, or -1 with the reason
 * in why; mapped: data maps the file, whose pages read are let go as it
 * goes, with rtl_raw_forget), and r's memory freed. */
int rtl_raw_read_all(struct run *r, const void *data, size_t size, int mapped,
                     const char *name, char *why, size_t len);
void rtl_raw_run_free(struct run *r);
void rtl_raw_forget(const void *data, const unsigned char *p, uintptr_t *done);

/* raw_events.c: an EVENT or EVENTS record into r; -1 if malformed. */
int rtl_raw_read_events(struct run *r, uint32_t tag, struct cur *c);

/* The report of a run that has been read whole (its notes added). */
json_t *rtl_raw_build(struct run *r);

/* raw_sites.c: the run's sites named (rtl_raw_build does it first), and
 * a slot's site, a slot's rule and a rule by name ("(other sites)", "?"
 * when unknown); the run's policy, parsed by rtl_raw_name, or NULL. */
void rtl_raw_name(struct run *r);
const char *rtl_raw_slot_name(struct run *r, uint32_t slot);
const char *rtl_raw_slot_rule(struct run *r, uint32_t slot);
const char *rtl_raw_rule_name(struct run *r, int rule);
struct rtl_policy;
const struct rtl_policy *rtl_raw_policy(void);

#endif
