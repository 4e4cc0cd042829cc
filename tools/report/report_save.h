/* rtlctl's side of report files (policy/report_file.h has the rules):
 * writing the JSON report for the preload, and finding the one a run of
 * `rtlctl run` left, whatever free name it got. */
#ifndef RTL_REPORT_SAVE_H
#define RTL_REPORT_SAVE_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

/* Save r as the file out (or the next free out.N): 0, or
 * RTL_EXIT_NOT_WRITTEN after one line on stderr that says why (and that
 * raw, if not NULL, stays). Nothing is left behind on failure. */
int report_save(json_t *r, const char *out, const char *raw);

/* The report process pid wrote at path or the next names after it
 * (modified at `since` or later), into found: 0, or -1 if there is none. */
int report_find(const char *path, long pid, time_t since, char *found, size_t len);

#endif
