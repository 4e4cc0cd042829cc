/* Names as tables show them (docs/report.md, "Names"): report_names.c. */
#ifndef RTLCTL_REPORT_NAMES_H
#define RTLCTL_REPORT_NAMES_H

#include <jansson.h>

/* Every demangled name of report r (sites, top regions, backtraces) in its
 * short form (demangle.h: std::string, template arguments elided), in
 * place: for the text tables and the HTML page; --full-names skips it. */
void report_shorten_names(json_t *r);

#endif
