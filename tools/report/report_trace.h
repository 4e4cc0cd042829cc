/* rtlctl report --trace: a run's traps, epochs and timeline as Chrome's
 * trace-event JSON (the "JSON Object Format" of the Trace Event Format),
 * which Perfetto's UI and chrome://tracing open (docs/report.md, "Formats
 * for other tools"). */
#ifndef RTL_REPORT_TRACE_H
#define RTL_REPORT_TRACE_H

#include <jansson.h>

/* Write the trace of report r to out ("-": stdout). 0, or -1 with a
 * message on stderr. */
int report_trace(json_t *r, const char *out);

#endif
