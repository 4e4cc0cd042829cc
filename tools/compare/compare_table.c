/* rtlctl compare's comparison: each run's report read, the figures per
 * rule, per site and per run set side by side with each region run's
 * ratio to page (compare.json), and the table printed from it. Reports
 * are files anyone may write: every string goes through rtl_shown. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tools/compare/compare.h"
#include "tools/interpret/load.h"
#include "tools/report/report_save.h"
#include "tools/report/report_read.h"
#include "tools/rtlctl/rtlctl.h"
#include "tools/util/text.h"

#define SHOWN 512
#define MAX_SITES 12 /* in the table; compare.json has 100 */

void compare_read_reports(struct compare *c)
{
	char why[600];

	for (int i = 0; i < c->nruns; i++) {
		struct compare_run *run = &c->runs[i];

		if (run->mechanism == COMPARE_NONE)
			continue;
		/* Every process of the run, in one report (kept as NAME.json
		 * beside compare.json). None from a program that ends with
		 * _exit (dash) and starts nothing, or is killed by SIGKILL: its
		 * column stays empty. */
		if (!(run->r = rtl_load_run(run->run_dir, (long)run->pid, why, sizeof(why))))
			fprintf(stderr, "rtlctl compare: %s: no report (%s)\n", run->name, why);
		else if (report_save(run->r, run->report, NULL) != 0)
			fprintf(stderr, "rtlctl compare: %s: report not kept\n", run->name);
	}
}

/* ---- the figures ---- */

/* What a rule or a site row holds, by the report's field names. */
static const char *const row_fields[] = { "false_sharing_traps", "grants",
	                                  "granted_bytes", "touched_bytes",
	                                  "prot_changes", "bytes",
	                                  "dirty_regions", "object_bytes",
	                                  "diff_bytes", "card128_bytes",
	                                  "card512_bytes", "card4096_bytes" };

/* What the epochs add up to for the run (the report's epoch fields, and
 * compare.json's names for them). */
static const char *const epoch_fields[][2] = {
	{ "page_bytes", "dirty_page_bytes" },
	{ "diff_bytes", "dirty_diff_bytes" },
	{ "object_bytes", "dirty_object_bytes" },
	{ "card128_bytes", "dirty_card128_bytes" },
	{ "card512_bytes", "dirty_card512_bytes" },
	{ "card4096_bytes", "dirty_card4096_bytes" },
	{ "written_bytes", "dirty_written_bytes" },
};
#define NEPOCH_FIELDS (sizeof(epoch_fields) / sizeof(*epoch_fields))

static json_t *row_figures(json_t *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "traps", json_integer(report_num(e, "read_traps") + report_num(e, "write_traps")));
	for (size_t k = 0; k < sizeof(row_fields) / sizeof(*row_fields); k++)
		if (json_object_get(e, row_fields[k]))
			json_object_set_new(o, row_fields[k],
			                    json_integer(report_num(e, row_fields[k])));
	if (json_object_get(e, "selected"))
		json_object_set_new(o, "regions", json_integer(report_num(e, "selected")));
	if (json_object_get(e, "regions"))
		json_object_set_new(o, "regions", json_integer(report_num(e, "regions")));
	return o;
}

static json_t *run_figures(const struct compare_run *run)
{
	json_t *o = json_object(), *t = json_object_get(run->r, "totals"), *e;
	json_t *epochs = json_object_get(run->r, "epochs");
	json_int_t sum[NEPOCH_FIELDS] = { 0 };
	size_t i;
	static const char *const keys[] = { "traps", "stale_traps", "false_sharing_traps",
		                            "grants", "granted_bytes", "touched_bytes",
		                            "prot_changes", "trap_ns", "selected" };

	for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++)
		json_object_set_new(o, keys[k], json_integer(report_num(t, keys[k])));
	json_array_foreach(epochs, i, e) for (size_t k = 0; k < NEPOCH_FIELDS; k++)
	        sum[k] += report_num(e, epoch_fields[k][0]);
	/* A figure the reports have no field for stays out (older reports),
	 * and so do the blocks written under page (it accounts pages) and
	 * the pages found written where the kernel's bits did not run. */
	for (size_t k = 0; k < NEPOCH_FIELDS; k++) {
		const char *f = epoch_fields[k][0];

		if (k >= 2 && !(json_array_size(epochs) && json_object_get(json_array_get(epochs, 0), f)))
			continue;
		if ((!strcmp(f, "object_bytes") && run->mechanism == RTL_MECH_PAGE) ||
		    (!strcmp(f, "written_bytes") &&
		     strcmp(report_str(json_object_get(run->r, "dirty"), "way", ""), "written bits")))
			continue;
		json_object_set_new(o, epoch_fields[k][1], json_integer(sum[k]));
	}
	if (json_object_get(t, "epoch_ns"))
		json_object_set_new(o, "epoch_ns", json_integer(report_num(t, "epoch_ns")));
	json_object_set_new(o, "wall_ns", json_integer((json_int_t)run->wall_ns));
	return o;
}

/* Each region run's figure over page's, by name; null where page's is 0. */
static json_t *ratios(json_t *by_run, const char *page_name)
{
	json_t *page = json_object_get(by_run, page_name), *out = json_object(), *fig;
	const char *name;

	json_object_foreach(by_run, name, fig)
	{
		json_t *r = json_object(), *v;
		const char *key;

		if (!strcmp(name, page_name))
			continue;
		json_object_foreach(fig, key, v)
		{
			json_int_t p = report_num(page, key);
			json_object_set_new(r, key, p ? json_real((double)json_integer_value(v) / (double)p) : json_null());
		}
		json_object_set_new(out, name, r);
	}
	return out;
}

/* The rows (rules: by name; sites: by site and rule) of every run, joined. */
static json_t *join(const struct compare *c, const char *list, int sites)
{
	json_t *rows = json_array();

	for (int i = 0; i < c->nruns; i++) {
		const struct compare_run *run = &c->runs[i];
		json_t *e;
		size_t k;

		if (!run->r)
			continue;
		json_array_foreach(json_object_get(run->r, list), k, e)
		{
			const char *name = report_str(e, sites ? "site" : "name", "?");
			const char *rule = sites ? report_str(e, "rule", "?") : "";
			json_t *row = NULL, *x;
			size_t j;

			json_array_foreach(rows, j, x) if (!strcmp(report_str(x, sites ? "site" : "name", "?"), name) &&
			                                   (!sites || !strcmp(report_str(x, "rule", "?"), rule))) row = x;
			if (!row) {
				row = json_object();
				json_object_set_new(row, sites ? "site" : "name", json_string(name));
				if (sites)
					json_object_set_new(row, "rule", json_string(rule));
				json_object_set_new(row, "runs", json_object());
				json_array_append_new(rows, row);
			}
			json_object_set_new(json_object_get(row, "runs"), run->name,
			                    row_figures(e));
		}
	}
	return rows;
}

static json_int_t most_traps(json_t *row)
{
	json_t *fig;
	const char *name;
	json_int_t most = 0;

	json_object_foreach(json_object_get(row, "runs"), name, fig) if (report_num(fig, "traps") > most) most = report_num(fig, "traps");
	return most;
}

static int by_traps(const void *a, const void *b)
{
	json_int_t x = most_traps(*(json_t *const *)a), y = most_traps(*(json_t *const *)b);
	return x == y ? 0 : x < y ? 1
	                          : -1;
}

/* The 100 sites with the most traps in any run, most first. */
static json_t *top_sites(json_t *rows)
{
	size_t n = json_array_size(rows), i;
	json_t **v = calloc(n ? n : 1, sizeof(*v)), *out = json_array(), *e;

	json_array_foreach(rows, i, e)
	        v[i] = e;
	qsort(v, n, sizeof(*v), by_traps);
	for (i = 0; i < n && i < 100; i++)
		json_array_append(out, v[i]);
	free(v);
	json_decref(rows);
	return out;
}

/* Each site's time in traps, estimated: its traps at its run's mean cost
 * of a trap (the reports time traps per run, not per site). */
static void add_estimates(json_t *rows, json_t *by_run)
{
	json_t *row, *fig;
	const char *name;
	size_t i;

	json_array_foreach(rows, i, row) json_object_foreach(json_object_get(row, "runs"), name, fig)
	{
		json_t *run = json_object_get(by_run, name);
		json_int_t traps = report_num(run, "traps");

		if (traps)
			json_object_set_new(fig, "trap_ns_est",
			                    json_integer(report_num(fig, "traps") * report_num(run, "trap_ns") / traps));
	}
}

static void add_ratios(json_t *rows, const char *page_name)
{
	json_t *row;
	size_t i;

	json_array_foreach(rows, i, row)
	        json_object_set_new(row, "ratio_to_page",
	                            ratios(json_object_get(row, "runs"), page_name));
}

static json_t *status_of(int status)
{
	json_t *o = json_object();

	if (WIFEXITED(status))
		json_object_set_new(o, "exit_status", json_integer(WEXITSTATUS(status)));
	else if (WIFSIGNALED(status))
		json_object_set_new(o, "signal", json_integer(WTERMSIG(status)));
	return o;
}

json_t *compare_build(const struct compare *c)
{
	json_t *out = json_object(), *argv = json_array(), *runs = json_array();
	json_t *by_run = json_object(), *rules, *sites;
	const char *page_name = "page";

	for (char **a = c->argv; *a; a++)
		json_array_append_new(argv, rtl_json_text(*a));
	json_object_set_new(out, "rtl_compare", json_integer(1));
	json_object_set_new(out, "rtl_version", json_string(RTL_VERSION));
	json_object_set_new(out, "command", argv);
	json_object_set_new(out, "identical", json_boolean(c->identical));
	if (!c->identical)
		json_object_set_new(out, "difference", rtl_json_text(c->difference));
	for (int i = 0; i < c->nruns; i++) {
		const struct compare_run *run = &c->runs[i];
		json_t *o = status_of(run->status);

		json_object_set_new(o, "name", json_string(run->name));
		json_object_set_new(o, "wall_ns", json_integer((json_int_t)run->wall_ns));
		if (run->r) {
			json_t *d = json_object_get(run->r, "dirty");

			json_object_set_new(o, "policy", rtl_json_text(run->policy));
			json_object_set_new(o, "report", rtl_json_text(run->report));
			if (d)
				json_object_set(o, "dirty", d);
			json_object_set_new(by_run, run->name, run_figures(run));
		}
		json_array_append_new(runs, o);
	}
	json_object_set_new(out, "runs", runs);
	rules = join(c, "rules", 0);
	sites = top_sites(join(c, "sites", 1));
	add_estimates(sites, by_run);
	add_ratios(rules, page_name);
	add_ratios(sites, page_name);
	json_object_set_new(out, "totals", json_pack("{s:o, s:o}", "runs", by_run, "ratio_to_page", ratios(by_run, page_name)));
	json_object_set_new(out, "rules", rules);
	json_object_set_new(out, "sites", sites);
	return out;
}

/* ---- the table ---- */

static void bytes(json_int_t v, char *out, size_t len)
{
	if (v >= 10 << 20)
		snprintf(out, len, "%.1f MiB", (double)v / (1 << 20));
	else if (v >= 10 << 10)
		snprintf(out, len, "%.1f KiB", (double)v / (1 << 10));
	else
		snprintf(out, len, "%lld B", (long long)v);
}

static void span(json_int_t ns, char *out, size_t len)
{
	if (ns >= 1000000000)
		snprintf(out, len, "%.2f s", (double)ns / 1e9);
	else
		snprintf(out, len, "%.3f ms", (double)ns / 1e6);
}

enum unit { COUNT,
	    BYTES,
	    TIME };

/* One line: a figure in every rtl run, then each region run's ratio. */
static void line(FILE *out, const char *label, json_t *by_run, json_t *ratio,
                 json_t *run_names, const char *key, enum unit u)
{
	json_t *name;
	size_t i;

	fprintf(out, "  %-28s", label);
	json_array_foreach(run_names, i, name)
	{
		json_t *fig = json_object_get(by_run, json_string_value(name));
		char buf[32];

		if (!json_object_get(fig, key)) {
			fprintf(out, " %12s", "-");
			continue;
		}
		if (u == BYTES)
			bytes(report_num(fig, key), buf, sizeof(buf));
		else if (u == TIME)
			span(report_num(fig, key), buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%lld", (long long)report_num(fig, key));
		fprintf(out, " %12s", buf);
	}
	json_array_foreach(run_names, i, name)
	{
		json_t *v = json_object_get(json_object_get(ratio, json_string_value(name)), key);

		if (!strcmp(json_string_value(name), "page"))
			continue;
		if (json_is_real(v))
			fprintf(out, " %12.3g", json_real_value(v));
		else
			fprintf(out, " %12s", "-");
	}
	fputc('\n', out);
}

/* Whether some run's figures have key. */
static int any_has(json_t *by_run, const char *key)
{
	json_t *fig;
	const char *name;

	json_object_foreach(by_run, name, fig) if (json_object_get(fig, key)) return 1;
	return 0;
}

static void row_lines(FILE *out, json_t *row, json_t *names, int rule)
{
	json_t *by = json_object_get(row, "runs"), *ra = json_object_get(row, "ratio_to_page");

	line(out, "traps", by, ra, names, "traps", COUNT);
	line(out, "false-sharing traps", by, ra, names, "false_sharing_traps", COUNT);
	if (rule)
		line(out, "protection changes", by, ra, names, "prot_changes", COUNT);
	line(out, "grants", by, ra, names, "grants", COUNT);
	line(out, "bytes made accessible", by, ra, names, "granted_bytes", BYTES);
	line(out, "bytes of blocks that trapped", by, ra, names, "touched_bytes", BYTES);
	if (rule || !any_has(by, "dirty_regions"))
		return;
	line(out, "time in traps (est.)", by, ra, names, "trap_ns_est", TIME);
	line(out, "rescan: blocks written", by, ra, names, "object_bytes", BYTES);
	line(out, "rescan: cards of 128 B", by, ra, names, "card128_bytes", BYTES);
	line(out, "rescan: cards of 512 B", by, ra, names, "card512_bytes", BYTES);
	line(out, "rescan: cards of 4 KiB", by, ra, names, "card4096_bytes", BYTES);
	line(out, "ship: bytes that differ", by, ra, names, "diff_bytes", BYTES);
}

void compare_print(json_t *cmp, FILE *out)
{
	json_t *names = json_array(), *run, *row, *t = json_object_get(cmp, "totals");
	json_t *by = json_object_get(t, "runs"), *ra = json_object_get(t, "ratio_to_page");
	char buf[SHOWN], buf2[SHOWN], wall[32];
	size_t i, k = 0;

	fprintf(out, "rtlctl compare:");
	json_array_foreach(json_object_get(cmp, "command"), i, run)
	        fprintf(out, " %s", rtl_shown(json_string_value(run), buf, sizeof(buf)));
	fprintf(out, "\n");
	json_array_foreach(json_object_get(cmp, "runs"), i, run)
	{
		if (i == 0) {
			span(report_num(run, "wall_ns"), wall, sizeof(wall));
			continue;
		}
		json_array_append_new(names, json_string(report_str(run, "name", "?")));
	}
	if (json_is_true(json_object_get(cmp, "identical")))
		fprintf(out, "outputs: identical in every run (exit status, stdout, stderr, files)\n");
	else
		fprintf(out, "outputs: DIFFER: %s\n",
		        rtl_shown(report_str(cmp, "difference", "?"), buf, sizeof(buf)));
	fprintf(out, "\n  %-28s", "");
	json_array_foreach(names, i, run)
	        fprintf(out, " %12s", json_string_value(run));
	json_array_foreach(names, i, run)
	{
		if (strcmp(json_string_value(run), "page")) {
			snprintf(buf, sizeof(buf), "%s/page", json_string_value(run));
			fprintf(out, " %12s", buf);
		}
	}
	fprintf(out, "\n");
	json_array_foreach(json_object_get(cmp, "rules"), i, row)
	{
		fprintf(out, "rule %s\n", rtl_shown(report_str(row, "name", "?"), buf, sizeof(buf)));
		row_lines(out, row, names, 1);
	}
	json_array_foreach(json_object_get(cmp, "sites"), i, row)
	{
		if (k++ == MAX_SITES)
			break;
		fprintf(out, "site %s (rule %s)\n", rtl_shown(report_str(row, "site", "?"), buf, sizeof(buf)),
		        rtl_shown(report_str(row, "rule", "?"), buf2, sizeof(buf2)));
		row_lines(out, row, names, 0);
	}
	fprintf(out, "run\n");
	line(out, "traps (stale included)", by, ra, names, "traps", COUNT);
	line(out, "protection changes", by, ra, names, "prot_changes", COUNT);
	line(out, "dirty: pages x 4 KiB", by, ra, names, "dirty_page_bytes", BYTES);
	if (any_has(by, "dirty_object_bytes")) {
		line(out, "rescan: blocks written", by, ra, names, "dirty_object_bytes", BYTES);
		line(out, "rescan: cards of 128 B", by, ra, names, "dirty_card128_bytes", BYTES);
		line(out, "rescan: cards of 512 B", by, ra, names, "dirty_card512_bytes", BYTES);
		line(out, "rescan: cards of 4 KiB", by, ra, names, "dirty_card4096_bytes", BYTES);
		line(out, "rescan: pages found written", by, ra, names, "dirty_written_bytes", BYTES);
	}
	line(out, "dirty: bytes that differ", by, ra, names, "dirty_diff_bytes", BYTES);
	line(out, "time in traps", by, ra, names, "trap_ns", TIME);
	if (any_has(by, "epoch_ns"))
		line(out, "time in epochs", by, ra, names, "epoch_ns", TIME);
	line(out, "wall time", by, ra, names, "wall_ns", TIME);
	fprintf(out, "  (wall time without rtl: %s)\n", wall);
	json_array_foreach(json_object_get(cmp, "runs"), i, run)
	{
		json_t *d = json_object_get(run, "dirty");

		if (d)
			fprintf(out, "  %s: writes seen by %s (%s)\n",
			        rtl_shown(report_str(run, "name", "?"), buf, sizeof(buf)),
			        rtl_shown(report_str(d, "way", "?"), wall, sizeof(wall)),
			        rtl_shown(report_str(d, "why", "?"), buf2, sizeof(buf2)));
	}
	json_decref(names);
}
