/* Two reports side by side (report_diff.h). A row per rule (by name) and
 * per site (by site and rule) of either report; a row one report lacks
 * counts 0 there. Figures: traps (read + write, as counted), regions,
 * bytes, and time in traps. The preload times traps per run, not per rule
 * (totals.trap_ns), so a rule's or a site's time is the run's shared out
 * by traps: trap_ns x its traps / the run's traps. Reports are files
 * anyone may write: sums saturate, strings are escaped when printed. */
#include "tools/report/report_diff.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tools/report/report_read.h"
#include "tools/util/text.h"

#define SHOWN 512
#define PRINTED_SITES 20

static const char *const figures[] = { "traps", "regions", "bytes", "trap_ns" };
#define NFIG 4

static json_int_t sat_sub(json_int_t a, json_int_t b)
{
	json_int_t s;

	if (!__builtin_sub_overflow(a, b, &s))
		return s;
	return b < 0 ? LLONG_MAX : LLONG_MIN;
}

/* The run's time in traps shared out to a row of traps t. */
static json_int_t share(json_t *r, json_int_t t)
{
	json_t *totals = json_object_get(r, "totals");
	json_int_t all = report_num(totals, "traps"), ns = report_num(totals, "trap_ns");

	if (all <= 0 || t <= 0 || ns <= 0)
		return 0;
	return (json_int_t)((double)ns * (double)(t < all ? t : all) / (double)all + 0.5);
}

/* A row's figures in report r (e NULL: it is not there). */
static json_t *row_figures(json_t *r, json_t *e, const char *regions)
{
	json_int_t t = e ? report_traps(e) : 0;

	return json_pack("{s:I, s:I, s:I, s:I}", "traps", (json_int_t)t, "regions",
	                 e ? report_num(e, regions) : 0, "bytes",
	                 e ? report_num(e, "bytes") : 0, "trap_ns", e ? share(r, t) : 0);
}

static json_t *change_of(json_t *a, json_t *b)
{
	json_t *c = json_object();

	for (int k = 0; k < NFIG; k++)
		json_object_set_new(c, figures[k],
		                    json_integer(sat_sub(report_num(b, figures[k]),
		                                         report_num(a, figures[k]))));
	return c;
}

/* The element of list whose key (and rule, for sites) is e's, or NULL. */
static json_t *find(json_t *list, json_t *e, const char *key, int sites)
{
	const char *name = report_str(e, key, "?"), *rule = report_str(e, "rule", "?");
	json_t *x;
	size_t i;

	json_array_foreach(list, i, x) if (json_is_object(x) && !strcmp(report_str(x, key, "?"), name) &&
	                                   (!sites || !strcmp(report_str(x, "rule", "?"), rule))) return x;
	return NULL;
}

static json_int_t mag(json_t *row, const char *fig)
{
	json_int_t v = report_num(json_object_get(row, "change"), fig);

	return v < 0 ? (v == LLONG_MIN ? LLONG_MAX : -v) : v;
}

/* The largest change first: in traps, then bytes, then regions, then
 * time in traps; then by name. */
static int by_change(const void *x, const void *y)
{
	json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	static const char *const order[] = { "traps", "bytes", "regions", "trap_ns" };

	for (int k = 0; k < 4; k++) {
		json_int_t p = mag(a, order[k]), q = mag(b, order[k]);
		if (p != q)
			return p < q ? 1 : -1;
	}
	return strcmp(report_str(a, "name", ""), report_str(b, "name", ""));
}

/* The rows of list ("rules" or "sites") in a and b, joined and sorted. */
static json_t *rows(json_t *a, json_t *b, const char *list, int sites)
{
	const char *key = sites ? "site" : "name", *regions = sites ? "regions" : "selected";
	json_t *la = json_object_get(a, list), *lb = json_object_get(b, list), *e, *out;
	json_t *srcs[2] = { la, lb }, **v;
	size_t i, n = 0, cap = json_array_size(la) + json_array_size(lb);

	v = calloc(cap ? cap : 1, sizeof(*v));
	if (!v)
		return json_array();
	for (int s = 0; s < 2; s++)
		json_array_foreach(srcs[s], i, e)
		{
			json_t *ea, *eb, *fa, *fb, *ch, *row;
			if (!json_is_object(e) || (s == 1 && find(la, e, key, sites)))
				continue; /* B's rows that A has are joined already */
			ea = s == 0 ? e : NULL;
			eb = s == 0 ? find(lb, e, key, sites) : e;
			row = json_object();
			json_object_set_new(row, sites ? "site" : "rule",
			                    rtl_json_text(report_str(e, key, "?")));
			if (sites) {
				json_object_set_new(row, "demangled",
				                    rtl_json_text(report_str(e, "demangled", report_str(e, "site", "?"))));
				json_object_set_new(row, "rule", rtl_json_text(report_str(e, "rule", "?")));
			}
			fa = row_figures(a, ea, regions);
			fb = row_figures(b, eb, regions);
			ch = change_of(fa, fb);
			json_object_set_new(row, "a", fa);
			json_object_set_new(row, "b", fb);
			json_object_set_new(row, "change", ch);
			json_object_set_new(row, "name", json_string(report_str(e, key, "?")));
			v[n++] = row;
		}
	qsort(v, n, sizeof(*v), by_change);
	out = json_array();
	for (i = 0; i < n; i++) {
		json_object_del(v[i], "name"); /* only for sorting */
		json_array_append_new(out, v[i]);
	}
	free(v);
	return out;
}

static json_t *run_of(json_t *r, const char *file)
{
	json_t *run = json_object_get(r, "run");

	return json_pack("{s:o, s:o, s:I, s:o}", "file", rtl_json_text(file), "program",
	                 rtl_json_text(report_str(run, "program", "?")), "pid",
	                 report_num(run, "pid"), "policy",
	                 rtl_json_text(report_str(json_object_get(r, "policy"), "source", "?")));
}

static json_t *totals_of(json_t *r)
{
	json_t *t = json_object_get(r, "totals");

	return json_pack("{s:I, s:I, s:I, s:I}", "traps", report_num(t, "traps"), "regions",
	                 report_num(t, "selected"), "bytes", report_num(t, "bytes"),
	                 "trap_ns", report_num(t, "trap_ns"));
}

static int unchanged(json_t *row)
{
	for (int k = 0; k < NFIG; k++)
		if (report_num(json_object_get(row, "change"), figures[k]))
			return 0;
	return 1;
}

json_t *report_diff(json_t *a, json_t *b, const char *file_a, const char *file_b)
{
	json_t *out = json_object(), *totals = json_object(), *list[2], *e;
	json_t *ta = totals_of(a), *tb = totals_of(b), *ch = change_of(ta, tb);
	int same;
	size_t i;

	json_object_set_new(out, "rtl_diff", json_integer(1));
	json_object_set_new(out, "a", run_of(a, file_a));
	json_object_set_new(out, "b", run_of(b, file_b));
	json_object_set_new(totals, "a", ta);
	json_object_set_new(totals, "b", tb);
	json_object_set_new(totals, "change", ch);
	list[0] = rows(a, b, "rules", 0);
	list[1] = rows(a, b, "sites", 1);
	same = unchanged(totals);
	for (int k = 0; k < 2; k++)
		json_array_foreach(list[k], i, e) same = same && unchanged(e);
	json_object_set_new(out, "same", json_boolean(same));
	json_object_set_new(out, "totals", totals);
	json_object_set_new(out, "rules", list[0]);
	json_object_set_new(out, "sites", list[1]);
	return out;
}

/* ---- the tables ---- */

static void cell(FILE *out, json_t *figs, const char *k, int sign)
{
	json_int_t v = report_num(figs, k);

	if (!strcmp(k, "trap_ns"))
		fprintf(out, sign ? " %+10.3f" : " %10.3f", (double)v / 1e6);
	else
		fprintf(out, sign ? " %+10lld" : " %10lld", (long long)v);
}

static void head(FILE *out, const char *what, const char *title)
{
	fprintf(out, "\n%s\n", title);
	for (int k = 0; k < NFIG; k++) {
		const char *f = !strcmp(figures[k], "trap_ns") ? "trap ms" : figures[k];
		char a[32], b[32];

		snprintf(a, sizeof(a), "%s A", f);
		snprintf(b, sizeof(b), "%s B", f);
		fprintf(out, " %10s %10s %10s", a, b, "change");
	}
	fprintf(out, "  %s\n", what);
}

static void line(FILE *out, json_t *row, const char *label)
{
	for (int k = 0; k < NFIG; k++) {
		cell(out, json_object_get(row, "a"), figures[k], 0);
		cell(out, json_object_get(row, "b"), figures[k], 0);
		cell(out, json_object_get(row, "change"), figures[k], 1);
	}
	fprintf(out, "  %s\n", label);
}

void report_diff_print(json_t *d, FILE *out)
{
	char buf[SHOWN], buf2[SHOWN], label[2 * SHOWN + 16];
	json_t *e;
	size_t i;

	for (int k = 0; k < 2; k++) {
		json_t *s = json_object_get(d, k ? "b" : "a");

		fprintf(out, "%s  %s: %s (pid %lld), policy ", k ? "B" : "A",
		        rtl_shown(report_str(s, "file", "?"), buf, SHOWN),
		        rtl_shown(report_str(s, "program", "?"), buf2, SHOWN),
		        (long long)report_num(s, "pid"));
		fprintf(out, "%s\n", rtl_shown(report_str(s, "policy", "?"), buf, SHOWN));
	}
	if (json_is_true(json_object_get(d, "same")))
		fprintf(out, "no change: every rule and site has the same traps, regions, "
		             "bytes and time in traps in A and B\n");
	head(out, "", "the run (its traps: stale ones included)");
	line(out, json_object_get(d, "totals"), "");
	head(out, "rule", "rules, largest change first");
	json_array_foreach(json_object_get(d, "rules"), i, e)
	        line(out, e, rtl_shown(report_str(e, "rule", "?"), buf, SHOWN));
	head(out, "site (rule)", "sites, largest change first");
	json_array_foreach(json_object_get(d, "sites"), i, e)
	{
		if (i == PRINTED_SITES) {
			fprintf(out, "(%zu sites more: --json lists them)\n",
			        json_array_size(json_object_get(d, "sites")) - i);
			break;
		}
		snprintf(label, sizeof(label), "%s (%s)",
		         rtl_shown(report_str(e, "demangled", report_str(e, "site", "?")), buf, SHOWN),
		         rtl_shown(report_str(e, "rule", "?"), buf2, SHOWN));
		line(out, e, label);
	}
	fprintf(out, "(time in traps per rule and site: the run's, shared out by traps)\n");
}
