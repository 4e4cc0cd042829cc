/* The raw record of a run (preload/track/format.h) turned into the JSON
 * report of docs/report-fields.md: raw_read.c. Malformed input is an
 * error with the reason, never a crash. */
#ifndef RTLCTL_RAW_READ_H
#define RTLCTL_RAW_READ_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Whether data (size bytes) starts like a raw record. */
int rtl_raw_is(const void *data, size_t size);

/* The report made from a raw record in memory, or NULL with the reason
 * ("NAME: ...") in why. Names come from the files of the record's module
 * map, read now. mapped: data maps the file (its pages read are let go as
 * it goes: a long run's record is mostly events the report does not
 * list). */
json_t *rtl_raw_report(const void *data, size_t size, int mapped, const char *name,
                       char *why, size_t len);

/* One trap of a raw record's events, its site and rule named as in the
 * report. */
struct rtl_raw_event {
	uint64_t t_ns, offset, size;
	uint32_t tid; /* 0: a record from before 0.4.0 */
	int write;
	const char *site, *rule;
};
/* Called per event, in the record's order, with the process's pid; a
 * negative return stops. */
typedef int (*rtl_raw_event_fn)(void *arg, int64_t pid, const struct rtl_raw_event *e);

/* Every event of the raw record in data, however many: the memory used is
 * the record's sites and rules, not its events (mapped: data is a mapping
 * of the file, whose pages read are let go as it goes). 0, or -1 with the
 * reason in why (malformed, or fn stopped). */
int rtl_raw_each_event(const void *data, size_t size, int mapped, const char *name,
                       rtl_raw_event_fn fn, void *arg, char *why, size_t len);

#endif
