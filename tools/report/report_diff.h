/* rtlctl report --diff A B (docs/report.md, "Two runs"): two reports set
 * side by side per rule and per site, traps, regions, bytes and time in
 * traps in A, in B and the change, rows by the largest change first. From
 * checked reports (report_read.h). */
#ifndef RTL_REPORT_DIFF_H
#define RTL_REPORT_DIFF_H

#include <jansson.h>
#include <stdio.h>

/* The comparison of a (read from file_a) and b (file_b), as JSON
 * ("rtl_diff": 1). */
json_t *report_diff(json_t *a, json_t *b, const char *file_a, const char *file_b);

/* Its tables, every string escaped (text.h). */
void report_diff_print(json_t *diff, FILE *out);

#endif
