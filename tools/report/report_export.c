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

	fputs("site,rule,regions,bytes,read_traps,write_traps\n", out);
	json_array_foreach(json_object_get(r, "sites"), i, e)
	{
		csv_field(text(e, "site", buf), out);
		fputc(',', out);
		csv_field(text(e, "rule", buf), out);
		csv_num(report_num(e, "regions"), out);
		csv_num(report_num(e, "bytes"), out);
		csv_num(report_num(e, "read_traps"), out);
		csv_num(report_num(e, "write_traps"), out);
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

/* Append frame f to line at *n: escaped, ';' and ' ' (the format's
 * separators) replaced, and "module!function+0xOFF" cut to
 * "module!function". */
static void add_frame(char *line, size_t *n, const char *f)
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
		line[(*n)++] = s[i] == ';' ? ':' : s[i] == ' ' ? '_'
		                                               : s[i];
	line[*n] = '\0';
}

struct folded {
	char *stack;
	json_int_t count;
};

static int by_stack(const void *a, const void *b)
{
	return strcmp(((const struct folded *)a)->stack, ((const struct folded *)b)->stack);
}

size_t report_print_folded(json_t *r, FILE *out)
{
	json_t *bts = json_object_get(r, "backtraces"), *e, *frames;
	size_t n = json_array_size(bts), kept = 0, printed = 0, i;
	struct folded *all = calloc(n ? n : 1, sizeof(*all));
	const char *name;
	char prog[SHOWN];

	if (!all)
		return 0;
	name = json_string_value(json_object_get(json_object_get(r, "run"), "program"));
	rtl_shown(name ? name : "?", prog, sizeof(prog));
	json_array_foreach(bts, i, e)
	{
		char line[STACK_MAX];
		size_t len = 0;

		frames = json_object_get(e, "frames");
		line[0] = '\0';
		add_frame(line, &len, prog);
		for (size_t k = json_array_size(frames); k-- > 0;) /* outermost first */
			if (json_is_string(json_array_get(frames, k)))
				add_frame(line, &len, json_string_value(json_array_get(frames, k)));
		if (report_num(e, "count") <= 0 || !(all[kept].stack = strdup(line)))
			continue;
		all[kept++].count = report_num(e, "count");
	}
	qsort(all, kept, sizeof(*all), by_stack);
	for (i = 0; i < kept; i++) {
		json_int_t sum = all[i].count;

		/* Stacks that differ only in offsets are one now: one line. */
		while (i + 1 < kept && !strcmp(all[i].stack, all[i + 1].stack)) {
			if (__builtin_add_overflow(sum, all[++i].count, &sum))
				sum = LLONG_MAX;
		}
		fprintf(out, "%s %" JSON_INTEGER_FORMAT "\n", all[i].stack, sum);
		printed++;
	}
	for (i = 0; i < kept; i++)
		free(all[i].stack);
	free(all);
	return printed;
}
