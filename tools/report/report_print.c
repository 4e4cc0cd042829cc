/* The tables of `rtlctl report` and the summary of `rtlctl run`, from a
 * report that passed report_read.c's checks. A report is a file anyone may
 * craft: numbers are summed saturating (no signed overflow), and every
 * string is printed through rtl_shown (no control character reaches the
 * terminal). */
#include "tools/report/report_print.h"

#include <limits.h>
#include <stdlib.h>

#include "tools/report/report_read.h"
#include "tools/util/text.h"

_Static_assert(sizeof(json_int_t) == sizeof(long long), "json_int_t is long long");

#define SHOWN 512 /* a string as printed, escapes included */

/* The string at key (dflt if there is none), escaped into buf. */
static const char *str(json_t *obj, const char *key, const char *dflt, char *buf)
{
	json_t *v = json_object_get(obj, key);
	return rtl_shown(json_is_string(v) ? json_string_value(v) : dflt, buf, SHOWN);
}

/* A site as people read it: its demangled form, where the report has one
 * (0.3.0 on), else the symbol. */
static const char *site_of(json_t *obj, char *buf)
{
	return json_is_string(json_object_get(obj, "demangled"))
	               ? str(obj, "demangled", "?", buf)
	               : str(obj, "site", "?", buf);
}

void report_print_summary(json_t *r, FILE *out)
{
	json_t *t = json_object_get(r, "totals");

	fprintf(out, "rtl: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT " allocations became regions; %" JSON_INTEGER_FORMAT " traps (%" JSON_INTEGER_FORMAT " read, %" JSON_INTEGER_FORMAT " write, %" JSON_INTEGER_FORMAT " stale)\n",
	        report_num(t, "selected"), report_num(t, "allocations"), report_num(t, "traps"),
	        report_num(t, "read_traps"), report_num(t, "write_traps"), report_num(t, "stale_traps"));
}

/* Which protection backend ran and why (the why opens with its name), and
 * its calls. */
static void print_protection(json_t *r, FILE *out)
{
	json_t *p = json_object_get(r, "protection"), *t = json_object_get(r, "totals");
	char why[SHOWN];

	if (!p)
		return;
	fprintf(out, "protect   %s", str(p, "why", "?", why));
	if (json_object_get(t, "protect_calls"))
		fprintf(out, "; %" JSON_INTEGER_FORMAT " calls, %" JSON_INTEGER_FORMAT " of them mprotect",
		        report_num(t, "protect_calls"), report_num(t, "protect_mprotects"));
	fprintf(out, "\n");
}

/* Where tag rules' blocks went, and why (the why opens with what the
 * machine has). */
static void print_tag(json_t *r, FILE *out)
{
	json_t *t = json_object_get(r, "tag");
	char placed[SHOWN], why[SHOWN];

	if (t)
		fprintf(out, "tag       on %s: %s\n", str(t, "placed", "?", placed),
		        str(t, "why", "?", why));
}

static void print_run(json_t *r, FILE *out)
{
	json_t *run = json_object_get(r, "run"), *t = json_object_get(r, "totals");
	json_int_t traps = report_num(t, "traps"), trap_ns = report_num(t, "trap_ns");
	char buf[SHOWN];

	fprintf(out, "program   %s (pid %" JSON_INTEGER_FORMAT "), ",
	        str(run, "program", "?", buf), report_num(run, "pid"));
	if (json_object_get(run, "signal"))
		fprintf(out, "killed by signal %" JSON_INTEGER_FORMAT, report_num(run, "signal"));
	else
		fprintf(out, "exit %" JSON_INTEGER_FORMAT, report_num(run, "exit_status"));
	fprintf(out, ", %.3f s\n", (double)report_num(run, "duration_ns") / 1e9);
	fprintf(out, "policy    %s\n", str(json_object_get(r, "policy"), "source", "?", buf));
	fprintf(out, "regions   %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT " allocations (peak %" JSON_INTEGER_FORMAT " live)\n",
	        report_num(t, "selected"), report_num(t, "allocations"), report_num(t, "regions_peak"));
	fprintf(out, "traps     %" JSON_INTEGER_FORMAT " (read %" JSON_INTEGER_FORMAT ", write %" JSON_INTEGER_FORMAT ", stale %" JSON_INTEGER_FORMAT ")",
	        traps, report_num(t, "read_traps"), report_num(t, "write_traps"), report_num(t, "stale_traps"));
	if (traps)
		fprintf(out, ", %.3f ms in traps (%.0f ns each)", (double)trap_ns / 1e6,
		        (double)trap_ns / (double)traps);
	fprintf(out, "\n");
	if (report_num(t, "syscall_buffers"))
		fprintf(out, "syscalls  %" JSON_INTEGER_FORMAT " buffers in regions resolved before the kernel saw them\n",
		        report_num(t, "syscall_buffers"));
	if (report_num(t, "in_place_protects"))
		fprintf(out, "in place  %" JSON_INTEGER_FORMAT " protection changes by mprotect (blocks of whole pages)\n",
		        report_num(t, "in_place_protects"));
	print_protection(r, out);
	print_tag(r, out);
	if (report_num(t, "epochs")) {
		fprintf(out, "epochs    %" JSON_INTEGER_FORMAT " (%" JSON_INTEGER_FORMAT " blocks protected again, %" JSON_INTEGER_FORMAT " protection calls)",
		        report_num(t, "epochs"), report_num(t, "epoch_blocks"),
		        report_num(t, "epoch_calls"));
		if (report_num(t, "epochs_stretched"))
			fprintf(out, ", %" JSON_INTEGER_FORMAT " put off by %.1f ms in all: an epoch's work took over a tenth of its period",
			        report_num(t, "epochs_stretched"),
			        (double)report_num(t, "epoch_stretch_ns") / 1e6);
		fprintf(out, "\n");
	}
}

static void print_rules(json_t *r, FILE *out)
{
	json_t *rules = json_object_get(r, "rules"), *e;
	char buf[SHOWN];
	size_t i;

	if (!json_array_size(rules))
		return;
	fprintf(out, "\n%-20s %10s %12s %10s %10s\n", "rule", "regions", "bytes",
	        "read", "write");
	json_array_foreach(rules, i, e)
	        fprintf(out, "%-20s %10" JSON_INTEGER_FORMAT " %12" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT "\n",
	                str(e, "name", "?", buf), report_num(e, "selected"), report_num(e, "bytes"),
	                report_num(e, "read_traps"), report_num(e, "write_traps"));
}

static void print_sites(json_t *r, FILE *out)
{
	char site[SHOWN], rule[SHOWN], line[SHOWN];
	size_t n, i;
	json_t **sorted = report_by_traps(r, "sites", &n);

	if (!sorted)
		return;
	fprintf(out, "\ntop sites by traps\n%10s %10s %10s %12s  %s\n", "read",
	        "write", "regions", "bytes", "site (rule) file:line");
	for (i = 0; i < n && i < 20; i++) {
		const char *at = str(sorted[i], "line", "", line);

		fprintf(out, "%10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %12" JSON_INTEGER_FORMAT "  %s (%s)%s%s\n",
		        report_num(sorted[i], "read_traps"), report_num(sorted[i], "write_traps"),
		        report_num(sorted[i], "regions"), report_num(sorted[i], "bytes"),
		        site_of(sorted[i], site), str(sorted[i], "rule", "?", rule),
		        *at ? " " : "", at);
	}
	free(sorted);
}

/* Each region by its address (as the program had it), size, site and
 * rule: rows that read alike are still told apart. */
static void print_regions(json_t *r, FILE *out)
{
	json_t *regions = json_object_get(r, "top_regions"), *e;
	char addr[SHOWN], site[SHOWN], rule[SHOWN];
	size_t i;

	if (!json_array_size(regions))
		return;
	fprintf(out, "\ntop regions by traps\n%10s %10s %18s %10s  %s\n", "read",
	        "write", "address", "size", "site (rule)");
	json_array_foreach(regions, i, e)
	        fprintf(out, "%10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %18s %10" JSON_INTEGER_FORMAT "  %s (%s)\n",
	                report_num(e, "read_traps"), report_num(e, "write_traps"),
	                str(e, "address", "?", addr), report_num(e, "size"),
	                site_of(e, site), str(e, "rule", "?", rule));
}

static void print_epochs(json_t *r, FILE *out)
{
	json_t *epochs = json_object_get(r, "epochs"), *e, *d = json_object_get(r, "dirty");
	json_int_t diff = 0, pages = 0;
	char way[SHOWN], why[SHOWN];
	size_t i;

	if (d)
		fprintf(out, "\ndirty rules see writes by %s: %s\n", str(d, "way", "?", way),
		        str(d, "why", "?", why));
	if (!json_array_size(epochs))
		return;
	json_array_foreach(epochs, i, e)
	{
		diff = report_sat_add(diff, report_num(e, "diff_bytes"));
		pages = report_sat_add(pages, report_num(e, "page_bytes"));
	}
	fprintf(out, "\ndirty tracking: %zu epochs, %" JSON_INTEGER_FORMAT " bytes in diffs vs %" JSON_INTEGER_FORMAT " bytes in the pages those writes touched",
	        json_array_size(epochs), diff, pages);
	if (pages)
		fprintf(out, " (%.1f%%)", 100.0 * (double)diff / (double)pages);
	fprintf(out, "\n%12s %14s %12s %12s\n", "t (ms)", "dirty regions", "diff bytes",
	        "page bytes");
	json_array_foreach(epochs, i, e)
	{
		if (i == 10 && json_array_size(epochs) > 12) {
			fprintf(out, "%12s\n", "...");
			i = json_array_size(epochs) - 2;
			continue;
		}
		fprintf(out, "%12.1f %14" JSON_INTEGER_FORMAT " %12" JSON_INTEGER_FORMAT " %12" JSON_INTEGER_FORMAT "\n",
		        (double)report_num(e, "t_ns") / 1e6, report_num(e, "dirty_regions"),
		        report_num(e, "diff_bytes"), report_num(e, "page_bytes"));
	}
}

/* The most frequent trapping call stacks (the backtrace action). */
static void print_backtraces(json_t *r, FILE *out)
{
	json_t *bts = json_object_get(r, "backtraces"), *e, *f, *names;
	char kind[SHOWN], rule[SHOWN];
	size_t i, k;

	if (!json_array_size(bts))
		return;
	fprintf(out, "\ntop trapping stacks\n");
	json_array_foreach(bts, i, e)
	{
		if (i == 10)
			break;
		fprintf(out, "%10" JSON_INTEGER_FORMAT " %s traps (%s)\n", report_num(e, "count"),
		        str(e, "kind", "?", kind), str(e, "rule", "?", rule));
		names = json_object_get(e, "demangled");
		if (json_array_size(names) != json_array_size(json_object_get(e, "frames")))
			names = json_object_get(e, "frames");
		json_array_foreach(names, k, f) if (json_is_string(f) && k < 8)
		{
			json_t *in = json_array_get(json_object_get(e, "inlined"), k), *g;
			size_t j;

			/* Inlined there, innermost first: called before the frame. */
			json_array_foreach(in, j, g) if (json_is_string(g))
			        fprintf(out, "%12s%s (inlined)\n", "",
			                rtl_shown(json_string_value(g), kind, SHOWN));
			fprintf(out, "%12s%s\n", "", rtl_shown(json_string_value(f), kind, SHOWN));
		}
	}
}

static void print_notes(json_t *r, FILE *out)
{
	json_t *notes = json_object_get(r, "notes"), *e;
	char buf[SHOWN];
	size_t i;

	json_array_foreach(notes, i, e) if (json_is_string(e))
	        fprintf(out, "note: %s\n", rtl_shown(json_string_value(e), buf, SHOWN));
}

void report_print_tables(json_t *r, FILE *out)
{
	print_run(r, out);
	print_rules(r, out);
	print_sites(r, out);
	print_regions(r, out);
	print_epochs(r, out);
	print_backtraces(r, out);
	print_notes(r, out);
}
