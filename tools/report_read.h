/* Reading a report file (docs/policy.md, "Report"): parse and check the
 * structure every reader relies on. Also the fuzzing entry point. */
#ifndef RTLCTL_REPORT_READ_H
#define RTLCTL_REPORT_READ_H

#include <jansson.h>
#include <stddef.h>

/* A checked report, or NULL with the reason ("FILE: ...") in why. */
json_t *rtl_report_load(const char *path, char *why, size_t len);

/* The same from bytes in memory; name is used in messages. */
json_t *rtl_report_parse(const char *data, size_t size, const char *name,
                         char *why, size_t len);

#endif
