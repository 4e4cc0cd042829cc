/* CSV and collapsed stacks out of a report (report_export.h). A report is
 * a file anyone may write: strings go through rtl_shown (no control
 * character), numbers are read as integers or 0. */
#include "tools/report/report_export.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tools/report/report_read.h"
#include "tools/util/text.h"

#define SHOWN 512
#define STACK_MAX 8192 /* a folded line, frames joined */

static const char *text(json_t *obj, const char *key, char *buf)
{
	json_t *v = json_object_get(obj, key);
	return rtl_shown(json_is_string(v) ? json_string_value(v) : "", buf, SHOWN);
}

/* A CSV field: quoted when it holds a comma, a quote or a space. */
static void csv_field(const char *s, FILE *out)
{
	if (!strpbrk(s, ",\" ")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_num(json_int_t v, FILE *out)
{
	fprintf(out, ",%" JSON_INTEGER_FORMAT, v);
}

int report_csv_known(const char *table)
{
	return !strcmp(table, "sites") || !strcmp(table, "rules");
}

static void csv_sites(json_t *r, FILE *out)
{
	json_t *e;
	char buf[SHOWN];
	size_t i;

	fputs("site,rule,regions,bytes,read_traps,write_traps,line\n", out);
	json_array_foreach(json_object_get(r, "sites"), i, e)
	{
		csv_field(text(e, "site", buf), out);
		fputc(',', out);
		csv_field(text(e, "rule", buf), out);
		csv_num(report_num(e, "regions"), out);
		csv_num(report_num(e, "bytes"), out);
		csv_num(report_num(e, "read_traps"), out);
		csv_num(report_num(e, "write_traps"), out);
		fputc(',', out);
		csv_field(text(e, "line", buf), out);
		fputc('\n', out);
	}
}

static void csv_rules(json_t *r, FILE *out)
{
	json_t *e;
	char buf[SHOWN];
	size_t i;

	fputs("rule,mechanism,regions,bytes,read_traps,write_traps\n", out);
	json_array_foreach(json_object_get(r, "rules"), i, e)
	{
		csv_field(text(e, "name", buf), out);
		fputc(',', out);
		csv_field(text(e, "mechanism", buf), out);
		csv_num(report_num(e, "selected"), out);
		csv_num(report_num(e, "bytes"), out);
		csv_num(report_num(e, "read_traps"), out);
		csv_num(report_num(e, "write_traps"), out);
		fputc('\n', out);
	}
}

void report_print_csv(json_t *r, const char *table, FILE *out)
{
	if (!strcmp(table, "sites"))
		csv_sites(r, out);
	else if (!strcmp(table, "rules"))
		csv_rules(r, out);
}

/* ---- collapsed stacks ---- */

/* Append frame f to line at *n: escaped, ';' (the format's separator)
 * replaced, ' ' too unless spaces, and "module!function+0xOFF" cut to
 * "module!function". */
static void add_frame(char *line, size_t *n, const char *f, int spaces)
{
	char buf[SHOWN];
	const char *s = rtl_shown(f, buf, sizeof(buf)), *plus = strrchr(s, '+');
	const char *bang = strchr(s, '!');
	size_t len = strlen(s);

	/* An unnamed frame (module!+0xOFF) keeps its offset: it is all
	 * there is to tell two of them apart. */
	if (plus && bang && plus > bang + 1 && !strncmp(plus, "+0x", 3))
		len = (size_t)(plus - s);
	if (*n && *n + 1 < STACK_MAX)
		line[(*n)++] = ';';
	for (size_t i = 0; i < len && *n + 1 < STACK_MAX; i++)
		line[(*n)++] = s[i] == ';' ? ':' : s[i] == ' ' && !spaces ? '_'
		                                                          : s[i];
	line[*n] = '\0';
}

static int by_stack(const void *a, const void *b)
{
	return strcmp(((const struct report_stack *)a)->stack,
	              ((const struct report_stack *)b)->stack);
}

/* A backtrace's names: demangled where the report has them (0.3.0 on). */
static json_t *names_of(json_t *bt)
{
	json_t *frames = json_object_get(bt, "frames"), *d = json_object_get(bt, "demangled");

	return json_array_size(d) == json_array_size(frames) ? d : frames;
}

struct report_stack *report_folded(json_t *r, int spaces, size_t *count)
{
	json_t *bts = json_object_get(r, "backtraces"), *e, *frames;
	size_t n = json_array_size(bts), kept = 0, w = 0, i;
	struct report_stack *all = calloc(n ? n : 1, sizeof(*all));
	const char *name;
	char prog[SHOWN];

	*count = 0;
	if (!all)
		return NULL;
	name = json_string_value(json_object_get(json_object_get(r, "run"), "program"));
	rtl_shown(name ? name : "?", prog, sizeof(prog));
	json_array_foreach(bts, i, e)
	{
		char line[STACK_MAX];
		size_t len = 0;

		frames = names_of(e);
		line[0] = '\0';
		add_frame(line, &len, prog, spaces);
		for (size_t k = json_array_size(frames); k-- > 0;) { /* outermost first */
			/* The functions inlined there (0.4.0 on), innermost
			 * first in the report: each called from the one after. */
			json_t *in = json_array_get(json_object_get(e, "inlined"), k);

			if (json_is_string(json_array_get(frames, k)))
				add_frame(line, &len, json_string_value(json_array_get(frames, k)),
				          spaces);
			for (size_t j = json_array_size(in); j-- > 0;)
				if (json_is_string(json_array_get(in, j)))
					add_frame(line, &len, json_string_value(json_array_get(in, j)),
					          spaces);
		}
		if (report_num(e, "count") <= 0 || !(all[kept].stack = strdup(line)))
			continue;
		all[kept++].count = report_num(e, "count");
	}
	qsort(all, kept, sizeof(*all), by_stack);
	/* Stacks that differ only in offsets are one now: one entry. */
	for (i = 0; i < kept; i++) {
		if (w && !strcmp(all[w - 1].stack, all[i].stack)) {
			if (__builtin_add_overflow(all[w - 1].count, all[i].count,
			                           &all[w - 1].count))
				all[w - 1].count = LLONG_MAX;
			free(all[i].stack);
			continue;
		}
		all[w++] = all[i];
	}
	*count = w;
	return all;
}

void report_folded_free(struct report_stack *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		free(s[i].stack);
	free(s);
}

size_t report_print_folded(json_t *r, FILE *out)
{
	size_t n;
	struct report_stack *s = report_folded(r, 0, &n);

	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s %" JSON_INTEGER_FORMAT "\n", s[i].stack, s[i].count);
	report_folded_free(s, n);
	return n;
}
