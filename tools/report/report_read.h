/* Reading a report file (docs/report-fields.md, "What rtlctl checks"):
 * parse and check the structure every reader relies on. Also the fuzzing
 * entry point. */
#ifndef RTLCTL_REPORT_READ_H
#define RTLCTL_REPORT_READ_H

#include <jansson.h>
#include <stddef.h>

/* A checked report, or NULL with the reason ("FILE: ...") in why. */
json_t *rtl_report_load(const char *path, char *why, size_t len);

/* The same from bytes in memory; name is used in messages. */
json_t *rtl_report_parse(const char *data, size_t size, const char *name,
                         char *why, size_t len);

/* What every reader of a checked report asks of it (a report is a file
 * anyone may write, so nothing is trusted beyond the checks above). */

/* The integer at key, or 0 where there is none. */
json_int_t report_num(json_t *obj, const char *key);

/* The string at key, or dflt where there is none; unescaped: callers
 * that print it pass it through rtl_shown. */
const char *report_str(json_t *obj, const char *key, const char *dflt);

/* a + b, held at the ends of json_int_t's range (no signed overflow). */
json_int_t report_sat_add(json_int_t a, json_int_t b);

/* read_traps + write_traps of a site or region, saturating. */
json_int_t report_traps(json_t *e);

/* The elements of the array at key, most traps first (report_traps),
 * in a new array of *n pointers the caller frees; NULL and *n = 0 when
 * it is empty or memory runs out. One ranking for every table and plot. */
json_t **report_by_traps(json_t *r, const char *key, size_t *n);

#endif
