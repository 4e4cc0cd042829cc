/* rtlctl's side of report files (policy/report_file.h has the rules):
 * writing a JSON report under its name or the next free one. */
#ifndef RTL_REPORT_SAVE_H
#define RTL_REPORT_SAVE_H

#include <jansson.h>
#include <stddef.h>

/* Save r as the file out (or the next free out.N): 0, or
 * RTL_EXIT_NOT_WRITTEN after one line on stderr that says why (and that
 * raw, if not NULL, stays). Nothing is left behind on failure. */
int report_save(json_t *r, const char *out, const char *raw);

/* The same, quiet: 0 with the name it got in got, or -1 with errno (and
 * nothing left behind). */
int report_save_as(json_t *r, const char *out, char *got, size_t len);

#endif
