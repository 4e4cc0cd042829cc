/* rtlctl report's tables and rtlctl run's summary, printed from a checked
 * report (report_read.h). Any report that passed the checks prints without
 * a crash, an overflow or a control character (tests/fuzz/fuzz_report.c). */
#ifndef RTL_REPORT_PRINT_H
#define RTL_REPORT_PRINT_H

#include <jansson.h>
#include <stdio.h>

/* One line: regions made, traps by kind. */
void report_print_summary(json_t *r, FILE *out);

/* The run, rules, top sites and regions, dirty epochs, stacks, notes. */
void report_print_tables(json_t *r, FILE *out);

#endif
