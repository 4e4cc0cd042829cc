/* rtlctl report --trace: a run's traps, epochs and timeline as Chrome's
 * trace-event JSON (the "JSON Object Format" of the Trace Event Format),
 * which Perfetto's UI and chrome://tracing open (docs/report.md, "Formats
 * for other tools"). */
#ifndef RTL_REPORT_TRACE_H
#define RTL_REPORT_TRACE_H

#include <jansson.h>
#include <stddef.h>

/* Write the trace of report r to out ("-": stdout), its traps read from
 * the nraws raw records r was made of (all of them), or with none from
 * r's events (those the report lists). 0, or -1 with a message on
 * stderr. */
int report_trace(json_t *r, const char *out, char *const *raws, size_t nraws);

#endif
