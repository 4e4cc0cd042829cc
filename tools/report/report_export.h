/* rtlctl report's formats for other tools: CSV tables (spreadsheets,
 * pandas, sqlite's .import) and collapsed stacks (flamegraph.pl,
 * speedscope, inferno). From a checked report (report_read.h); every
 * string escaped as the tables escape it (text.h). */
#ifndef RTL_REPORT_EXPORT_H
#define RTL_REPORT_EXPORT_H

#include <jansson.h>
#include <stdio.h>

/* The tables --csv knows, by name: "sites", "rules". */
int report_csv_known(const char *table);

/* One CSV table (RFC 4180: a header line, fields with a comma, quote or
 * space quoted, quotes doubled). */
void report_print_csv(json_t *r, const char *table, FILE *out);

/* The trap backtraces as collapsed stacks: "prog;outer;...;inner COUNT",
 * the program first, then the frames from main down to the faulting
 * instruction, demangled, functions without their +0xOFF (so one function
 * is one box), identical stacks merged. Returns how many lines it
 * printed. */
size_t report_print_folded(json_t *r, FILE *out);

/* The same stacks, sorted, for other printers (the HTML page's flame
 * graph): spaces in names kept if spaces, else '_' as in the text. NULL
 * and *n = 0 when there are none; free with report_folded_free. */
struct report_stack {
	char *stack; /* frames joined by ';' */
	json_int_t count;
};
struct report_stack *report_folded(json_t *r, int spaces, size_t *n);
void report_folded_free(struct report_stack *s, size_t n);

#endif
