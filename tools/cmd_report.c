/* rtlctl report: read a run's report (docs/policy.md, "Report"), or make it
 * from the run's raw record (the preload's, "Raw record"), and print it as
 * tables, or as checked, indented JSON (-o: into a file, as the preload
 * has rtlctl do when a traced program ends). A malformed report or record
 * is an error with the reason, never a crash. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "raw_read.h"
#include "report_read.h"
#include "rtlctl.h"

/* The whole file; NULL with a message on stderr. */
static char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f) {
		fprintf(stderr, "rtlctl report: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			char *grown = realloc(buf, cap = cap ? 2 * cap : 65536);
			if (!grown) {
				free(buf);
				fclose(f);
				fprintf(stderr, "rtlctl report: %s: out of memory\n", path);
				return NULL;
			}
			buf = grown;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*size = n;
	return buf;
}

/* Load and check a report, or make it from a raw record; NULL with a
 * message on stderr. */
static json_t *load_report(const char *path)
{
	char why[256];
	size_t size = 0;
	char *data = slurp(path, &size);
	json_t *r;

	if (!data)
		return NULL;
	if (rtl_raw_is(data, size))
		r = rtl_raw_report(data, size, path, why, sizeof(why));
	else
		r = rtl_report_parse(data, size, path, why, sizeof(why));
	free(data);
	if (!r)
		fprintf(stderr, "rtlctl report: %s\n", why);
	return r;
}

static json_int_t num(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return json_is_integer(v) ? json_integer_value(v) : 0;
}

static const char *str(json_t *obj, const char *key, const char *dflt)
{
	json_t *v = json_object_get(obj, key);
	return json_is_string(v) ? json_string_value(v) : dflt;
}

int report_summary(const char *path, FILE *out)
{
	json_t *r = load_report(path), *t;

	if (!r)
		return -1;
	t = json_object_get(r, "totals");
	fprintf(out, "rtl: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT " allocations became regions; %" JSON_INTEGER_FORMAT " traps (%" JSON_INTEGER_FORMAT " read, %" JSON_INTEGER_FORMAT " write, %" JSON_INTEGER_FORMAT " stale)\n",
	        num(t, "selected"), num(t, "allocations"), num(t, "traps"),
	        num(t, "read_traps"), num(t, "write_traps"), num(t, "stale_traps"));
	json_decref(r);
	return 0;
}

static void print_run(json_t *r, FILE *out)
{
	json_t *run = json_object_get(r, "run"), *t = json_object_get(r, "totals");
	json_int_t traps = num(t, "traps"), trap_ns = num(t, "trap_ns");

	fprintf(out, "program   %s (pid %" JSON_INTEGER_FORMAT "), ", str(run, "program", "?"),
	        num(run, "pid"));
	if (json_object_get(run, "signal"))
		fprintf(out, "killed by signal %" JSON_INTEGER_FORMAT, num(run, "signal"));
	else
		fprintf(out, "exit %" JSON_INTEGER_FORMAT, num(run, "exit_status"));
	fprintf(out, ", %.3f s\n", (double)num(run, "duration_ns") / 1e9);
	fprintf(out, "policy    %s\n", str(json_object_get(r, "policy"), "source", "?"));
	fprintf(out, "regions   %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT " allocations (peak %" JSON_INTEGER_FORMAT " live)\n",
	        num(t, "selected"), num(t, "allocations"), num(t, "regions_peak"));
	fprintf(out, "traps     %" JSON_INTEGER_FORMAT " (read %" JSON_INTEGER_FORMAT ", write %" JSON_INTEGER_FORMAT ", stale %" JSON_INTEGER_FORMAT ")",
	        traps, num(t, "read_traps"), num(t, "write_traps"), num(t, "stale_traps"));
	if (traps)
		fprintf(out, ", %.3f ms in traps (%.0f ns each)", (double)trap_ns / 1e6,
		        (double)trap_ns / (double)traps);
	fprintf(out, "\n");
	if (num(t, "syscall_buffers"))
		fprintf(out, "syscalls  %" JSON_INTEGER_FORMAT " buffers in regions resolved before the kernel saw them\n",
		        num(t, "syscall_buffers"));
	if (num(t, "in_place_protects"))
		fprintf(out, "in place  %" JSON_INTEGER_FORMAT " protection changes by mprotect (blocks of whole pages)\n",
		        num(t, "in_place_protects"));
}

static void print_rules(json_t *r, FILE *out)
{
	json_t *rules = json_object_get(r, "rules"), *e;
	size_t i;

	if (!json_array_size(rules))
		return;
	fprintf(out, "\n%-20s %10s %12s %10s %10s\n", "rule", "regions", "bytes",
	        "read", "write");
	json_array_foreach(rules, i, e)
	        fprintf(out, "%-20s %10" JSON_INTEGER_FORMAT " %12" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT "\n",
	                str(e, "name", "?"), num(e, "selected"), num(e, "bytes"),
	                num(e, "read_traps"), num(e, "write_traps"));
}

static int by_traps(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t tx = num(x, "read_traps") + num(x, "write_traps");
	json_int_t ty = num(y, "read_traps") + num(y, "write_traps");
	return tx < ty ? 1 : tx > ty ? -1
	                             : 0;
}

static void print_sites(json_t *r, FILE *out)
{
	json_t *sites = json_object_get(r, "sites"), *e;
	size_t n = json_array_size(sites), i;
	json_t **sorted;

	if (!n)
		return;
	sorted = calloc(n, sizeof(*sorted));
	if (!sorted)
		return;
	json_array_foreach(sites, i, e)
	        sorted[i] = e;
	qsort(sorted, n, sizeof(*sorted), by_traps);
	fprintf(out, "\ntop sites by traps\n%10s %10s %10s %12s  %s\n", "read",
	        "write", "regions", "bytes", "site (rule)");
	for (i = 0; i < n && i < 20; i++)
		fprintf(out, "%10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %12" JSON_INTEGER_FORMAT "  %s (%s)\n",
		        num(sorted[i], "read_traps"), num(sorted[i], "write_traps"),
		        num(sorted[i], "regions"), num(sorted[i], "bytes"),
		        str(sorted[i], "site", "?"), str(sorted[i], "rule", "?"));
	free(sorted);
}

static void print_regions(json_t *r, FILE *out)
{
	json_t *regions = json_object_get(r, "top_regions"), *e;
	size_t i;

	if (!json_array_size(regions))
		return;
	fprintf(out, "\ntop regions by traps\n%10s %10s %10s  %s\n", "read", "write",
	        "size", "site");
	json_array_foreach(regions, i, e)
	        fprintf(out, "%10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT "  %s\n",
	                num(e, "read_traps"), num(e, "write_traps"), num(e, "size"),
	                str(e, "site", "?"));
}

static void print_epochs(json_t *r, FILE *out)
{
	json_t *epochs = json_object_get(r, "epochs"), *e;
	json_int_t diff = 0, pages = 0;
	size_t i;

	if (!json_array_size(epochs))
		return;
	json_array_foreach(epochs, i, e)
	{
		diff += num(e, "diff_bytes");
		pages += num(e, "page_bytes");
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
		        (double)num(e, "t_ns") / 1e6, num(e, "dirty_regions"),
		        num(e, "diff_bytes"), num(e, "page_bytes"));
	}
}

/* The most frequent trapping call stacks (the backtrace action). */
static void print_backtraces(json_t *r, FILE *out)
{
	json_t *bts = json_object_get(r, "backtraces"), *e, *f;
	size_t i, k;

	if (!json_array_size(bts))
		return;
	fprintf(out, "\ntop trapping stacks\n");
	json_array_foreach(bts, i, e)
	{
		if (i == 10)
			break;
		fprintf(out, "%10" JSON_INTEGER_FORMAT " %s traps (%s)\n", num(e, "count"),
		        str(e, "kind", "?"), str(e, "rule", "?"));
		json_array_foreach(json_object_get(e, "frames"), k, f) if (json_is_string(f) && k < 8)
		        fprintf(out, "%12s%s\n", "", json_string_value(f));
	}
}

static void print_notes(json_t *r, FILE *out)
{
	json_t *notes = json_object_get(r, "notes"), *e;
	size_t i;

	json_array_foreach(notes, i, e) if (json_is_string(e))
	        fprintf(out, "note: %s\n", json_string_value(e));
}

int cmd_report(int argc, char **argv)
{
	const char *file = NULL, *out = NULL;
	int as_json = 0, rc = 0;
	json_t *r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			as_json = 1;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage_of("report", stdout);
			return 0;
		} else if (argv[i][0] == '-' || file) {
			fprintf(stderr, "rtlctl report: unexpected '%s'\n", argv[i]);
			usage_of("report", stderr);
			return EXIT_USAGE;
		} else {
			file = argv[i];
		}
	}
	if (!file) {
		usage_of("report", stderr);
		return EXIT_USAGE;
	}
	r = load_report(file);
	if (!r)
		return EXIT_INVALID;
	if (out && !strcmp(out, "-")) {
		json_dumpf(r, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else if (out) {
		/* The report as the traced program's end leaves it. */
		if (json_dump_file(r, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER) < 0) {
			fprintf(stderr, "rtl: cannot write the report %s\n", out);
			rc = EXIT_INVALID;
		}
	} else if (as_json) {
		json_dumpf(r, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		print_run(r, stdout);
		print_rules(r, stdout);
		print_sites(r, stdout);
		print_regions(r, stdout);
		print_epochs(r, stdout);
		print_backtraces(r, stdout);
		print_notes(r, stdout);
	}
	json_decref(r);
	return rc;
}
