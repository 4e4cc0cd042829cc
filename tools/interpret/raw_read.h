/* The raw record of a run (preload/track/format.h) turned into the JSON
 * report of docs/report-fields.md: raw_read.c. Malformed input is an
 * error with the reason, never a crash. */
#ifndef RTLCTL_RAW_READ_H
#define RTLCTL_RAW_READ_H

#include <jansson.h>
#include <stddef.h>

/* Whether data (size bytes) starts like a raw record. */
int rtl_raw_is(const void *data, size_t size);

/* The report made from a raw record in memory, or NULL with the reason
 * ("NAME: ...") in why. Names come from the files of the record's module
 * map, read now. */
json_t *rtl_raw_report(const void *data, size_t size, const char *name,
                       char *why, size_t len);

#endif
