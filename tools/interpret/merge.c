/* Many processes' reports made into one (merge.h): a run of `rtlctl run`
 * is every process the program started, each of which wrote a raw record
 * of its own; the report of the run is their sum, analysed once, with a
 * row per process. Reports are files anyone may write: numbers are added
 * saturating, and only what report_read.c checked is relied on. */
#include "tools/interpret/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/report/report_read.h"

#define SITES 500 /* as raw_build.c keeps them */
#define TOP_REGIONS 20
#define BACKTRACES 50
#define EVENTS 65536

/* to.key += from.key, for every integer of from (none that to has of
 * another type). */
static void add_ints(json_t *to, json_t *from)
{
	const char *key;
	json_t *v;

	json_object_foreach(from, key, v)
	{
		json_t *have = json_object_get(to, key);

		if (!json_is_integer(v))
			continue;
		if (!have)
			json_object_set_new(to, key, json_integer(json_integer_value(v)));
		else if (json_is_integer(have))
			json_integer_set(have, report_sat_add(json_integer_value(have),
			                                      json_integer_value(v)));
	}
}

/* The element of list whose fields k1 (and k2, if not NULL) equal e's. */
static json_t *find_same(json_t *list, json_t *e, const char *k1, const char *k2)
{
	const char *a1 = report_str(e, k1, ""), *a2 = k2 ? report_str(e, k2, "") : "";
	json_t *x;
	size_t i;

	json_array_foreach(list, i, x)
	{
		if (!strcmp(report_str(x, k1, ""), a1) &&
		    (!k2 || !strcmp(report_str(x, k2, ""), a2)))
			return x;
	}
	return NULL;
}

/* Rows that are one thing in every process (a rule, a site) added up. */
static void add_rows(json_t *to, json_t *from, const char *k1, const char *k2)
{
	json_t *e;
	size_t i;

	json_array_foreach(from, i, e)
	{
		json_t *same = find_same(to, e, k1, k2);

		if (same)
			add_ints(same, e);
		else
			json_array_append_new(to, json_deep_copy(e));
	}
}

/* Stacks are one when rule, kind and frames are. */
static int same_stack(json_t *a, json_t *b)
{
	return !strcmp(report_str(a, "rule", ""), report_str(b, "rule", "")) &&
	       !strcmp(report_str(a, "kind", ""), report_str(b, "kind", "")) &&
	       json_equal(json_object_get(a, "frames"), json_object_get(b, "frames"));
}

static void add_stacks(json_t *to, json_t *from)
{
	json_t *e, *x;
	size_t i, j;

	json_array_foreach(from, i, e)
	{
		json_t *same = NULL;

		json_array_foreach(to, j, x) if (same_stack(x, e))
		{
			same = x;
			break;
		}
		if (same)
			add_ints(same, e);
		else
			json_array_append_new(to, json_deep_copy(e));
	}
}

static void append_all(json_t *to, json_t *from, size_t cap)
{
	json_t *e;
	size_t i;

	json_array_foreach(from, i, e)
	{
		if (json_array_size(to) >= cap)
			return;
		json_array_append(to, e);
	}
}

static void append_notes(json_t *to, json_t *from)
{
	json_t *e, *x;
	size_t i, j;

	json_array_foreach(from, i, e)
	{
		int seen = 0;

		json_array_foreach(to, j, x) seen |= json_equal(x, e);
		if (!seen)
			json_array_append(to, e);
	}
}

static int by_count(const void *a, const void *b)
{
	json_int_t x = report_num(*(json_t *const *)a, "count"),
	           y = report_num(*(json_t *const *)b, "count");

	return x < y ? 1 : x > y ? -1
	                         : 0;
}

/* The n with the most of what rank says first, the rest dropped. */
static void keep_most(json_t *r, const char *key, size_t n, int by_traps)
{
	json_t *list = json_object_get(r, key), *kept = json_array(), **sorted;
	size_t m = json_array_size(list), i;

	if (!kept)
		return;
	if (by_traps) {
		sorted = report_by_traps(r, key, &m);
	} else {
		json_t *e;

		sorted = m ? calloc(m, sizeof(*sorted)) : NULL;
		if (sorted) {
			json_array_foreach(list, i, e) sorted[i] = e;
			qsort(sorted, m, sizeof(*sorted), by_count);
		} else {
			m = 0;
		}
	}
	for (i = 0; i < m && i < n; i++)
		json_array_append(kept, sorted[i]);
	free(sorted);
	json_object_set_new(r, key, kept);
}

/* The timelines of the processes as one: each counts from its own
 * process's start, so they are set side by side from there, in intervals
 * as wide as the widest's (a narrower one's counts fall into the interval
 * that holds their start); counts add up, "live" too (regions live in
 * all of them at that age). A rule the root's timeline lacks is added. */
static const char *const timeline_keys[] = { "traps", "grants", "made", "freed", "live" };

static void timeline_add(json_t *to, json_t *from)
{
	json_int_t wt = report_num(to, "interval_ns"), wf = report_num(from, "interval_ns");
	json_int_t nt = report_num(to, "intervals"), nf = report_num(from, "intervals");
	json_t *e;
	size_t i;

	if (wt <= 0 || wf <= 0 || nf <= 0)
		return;
	if (wf > wt) {
		/* The wider one's intervals: this one's counts regrouped. */
		json_t *rules = json_object_get(to, "rules");
		json_int_t n = (nt * wt + wf - 1) / wf;

		json_array_foreach(rules, i, e)
		{
			for (size_t k = 0; k < sizeof(timeline_keys) / sizeof(*timeline_keys); k++) {
				json_t *old = json_object_get(e, timeline_keys[k]), *now = json_array();

				for (json_int_t j = 0; j < n; j++)
					json_array_append_new(now, json_integer(0));
				for (json_int_t j = 0; j < nt; j++) {
					json_t *c = json_array_get(now, (size_t)(j * wt / wf));
					json_integer_set(c, report_sat_add(json_integer_value(c),
					                                   json_integer_value(json_array_get(old, (size_t)j))));
				}
				json_object_set_new(e, timeline_keys[k], now);
			}
		}
		json_object_set_new(to, "interval_ns", json_integer(wf));
		json_object_set_new(to, "intervals", json_integer(n));
		wt = wf;
		nt = n;
	}
	json_array_foreach(json_object_get(from, "rules"), i, e)
	{
		json_t *same = find_same(json_object_get(to, "rules"), e, "rule", NULL);
		json_int_t need = (nf * wf - 1) / wt + 1;

		if (!same) {
			same = json_object();
			json_object_set_new(same, "rule", json_string(report_str(e, "rule", "?")));
			for (size_t k = 0; k < sizeof(timeline_keys) / sizeof(*timeline_keys); k++)
				json_object_set_new(same, timeline_keys[k], json_array());
			json_array_append_new(json_object_get(to, "rules"), same);
		}
		if (need > nt)
			nt = need;
		for (size_t k = 0; k < sizeof(timeline_keys) / sizeof(*timeline_keys); k++) {
			json_t *dst = json_object_get(same, timeline_keys[k]);
			json_t *src = json_object_get(e, timeline_keys[k]);

			for (json_int_t j = 0; j < nf; j++) {
				size_t at = (size_t)(j * wf / wt);
				json_t *c;

				while (json_array_size(dst) <= at)
					json_array_append_new(dst, json_integer(0));
				c = json_array_get(dst, at);
				json_integer_set(c, report_sat_add(json_integer_value(c),
				                                   json_integer_value(json_array_get(src, (size_t)j))));
			}
		}
	}
	/* Every series as long as the longest. */
	json_array_foreach(json_object_get(to, "rules"), i, e) for (size_t k = 0; k < sizeof(timeline_keys) / sizeof(*timeline_keys); k++)
	{
		json_t *dst = json_object_get(e, timeline_keys[k]);

		while ((json_int_t)json_array_size(dst) < nt)
			json_array_append_new(dst, json_integer(0));
	}
	json_object_set_new(to, "intervals", json_integer(nt));
}

/* The timeline's rules in the order of the report's rules. */
static void timeline_order(json_t *r)
{
	json_t *tl = json_object_get(r, "timeline"), *sorted = json_array(), *x;
	size_t i;

	if (!tl || !sorted)
		return;
	json_array_foreach(json_object_get(r, "rules"), i, x)
	{
		json_t *probe = json_pack("{s:s}", "rule", report_str(x, "name", "")), *same;

		same = probe ? find_same(json_object_get(tl, "rules"), probe, "rule", NULL) : NULL;
		json_decref(probe);
		if (same)
			json_array_append(sorted, same);
	}
	json_object_set_new(tl, "rules", sorted);
}

/* The row of one process in the run's "processes". */
static json_t *process_row(json_t *r)
{
	json_t *run = json_object_get(r, "run"), *t = json_object_get(r, "totals");
	json_t *row = json_object();
	static const char *const from_run[] = { "pid", "ppid", "exit_status",
		                                "signal", "duration_ns", "start_ns" };
	static const char *const from_totals[] = { "allocations", "selected",
		                                   "traps", "trap_ns" };

	if (!row)
		return NULL;
	for (size_t i = 0; i < sizeof(from_run) / sizeof(from_run[0]); i++)
		if (json_is_integer(json_object_get(run, from_run[i])))
			json_object_set(row, from_run[i], json_object_get(run, from_run[i]));
	json_object_set_new(row, "program", json_string(report_str(run, "program", "?")));
	for (size_t i = 0; i < sizeof(from_totals) / sizeof(from_totals[0]); i++)
		json_object_set_new(row, from_totals[i],
		                    json_integer(report_num(t, from_totals[i])));
	return row;
}

json_t *rtl_report_processes(json_t *r)
{
	json_t *rows = json_array(), *row = process_row(r);

	if (!rows || !row) {
		json_decref(rows);
		json_decref(row);
		return NULL;
	}
	json_array_append_new(rows, row);
	return rows;
}

/* The process the others descend from: root's own, else one none of the
 * others is the parent of (the first such, in the order given). */
static size_t root_of(json_t **reports, size_t n, long root)
{
	for (size_t i = 0; root > 0 && i < n; i++)
		if (report_num(json_object_get(reports[i], "run"), "pid") == root)
			return i;
	for (size_t i = 0; i < n; i++) {
		json_int_t ppid = report_num(json_object_get(reports[i], "run"), "ppid");
		size_t j;

		for (j = 0; j < n; j++)
			if (j != i &&
			    report_num(json_object_get(reports[j], "run"), "pid") == ppid)
				break;
		if (j == n)
			return i;
	}
	return 0;
}

json_t *rtl_report_merge(json_t **reports, size_t n, long root_pid)
{
	size_t root;
	json_t *r, *t, *rows;
	json_int_t peak = 0;

	if (!n)
		return NULL;
	root = root_of(reports, n, root_pid);
	r = json_deep_copy(reports[root]);
	rows = json_array();
	if (!r || !rows) {
		json_decref(r);
		json_decref(rows);
		return NULL;
	}
	t = json_object_get(r, "totals");
	for (size_t i = 0; i < n; i++) {
		json_t *x = reports[i], *xt = json_object_get(x, "totals");

		if (report_num(xt, "regions_peak") > peak)
			peak = report_num(xt, "regions_peak");
		json_array_append_new(rows, process_row(x));
		if (i == root)
			continue;
		add_ints(t, xt);
		add_rows(json_object_get(r, "rules"), json_object_get(x, "rules"), "name", NULL);
		add_rows(json_object_get(r, "sites"), json_object_get(x, "sites"), "site", "rule");
		append_all(json_object_get(r, "top_regions"), json_object_get(x, "top_regions"),
		           (size_t)-1);
		append_all(json_object_get(r, "epochs"), json_object_get(x, "epochs"), (size_t)-1);
		append_all(json_object_get(r, "events"), json_object_get(x, "events"), EVENTS);
		add_stacks(json_object_get(r, "backtraces"), json_object_get(x, "backtraces"));
		if (json_object_get(r, "timeline") && json_object_get(x, "timeline"))
			timeline_add(json_object_get(r, "timeline"), json_object_get(x, "timeline"));
		append_notes(json_object_get(r, "notes"), json_object_get(x, "notes"));
		/* One way per policy: a child's says it when the root kept none. */
		if (!json_object_get(r, "dirty") && json_object_get(x, "dirty"))
			json_object_set(r, "dirty", json_object_get(x, "dirty"));
		if (!json_object_get(r, "protection") && json_object_get(x, "protection"))
			json_object_set(r, "protection", json_object_get(x, "protection"));
		if (!json_object_get(r, "tag") && json_object_get(x, "tag"))
			json_object_set(r, "tag", json_object_get(x, "tag"));
	}
	/* Not sums: the most any one process had live at once, and the live
	 * regions of the program itself as it ended. */
	json_object_set_new(t, "regions_peak", json_integer(peak));
	json_object_set(t, "live", json_object_get(json_object_get(reports[root], "totals"), "live"));
	timeline_order(r);
	keep_most(r, "sites", SITES, 1);
	keep_most(r, "top_regions", TOP_REGIONS, 1);
	keep_most(r, "backtraces", BACKTRACES, 0);
	json_object_set_new(r, "processes", rows);
	if (root_pid > 0 && report_num(json_object_get(r, "run"), "pid") != root_pid) {
		char note[160];

		snprintf(note, sizeof(note),
		         "the program (pid %ld) left no record (it ended with _exit, or "
		         "was killed): \"run\" is pid %lld's",
		         root_pid, (long long)report_num(json_object_get(r, "run"), "pid"));
		json_array_append_new(json_object_get(r, "notes"), json_string(note));
	}
	return r;
}
