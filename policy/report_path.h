/* The report's file name from the policy's template (docs/policy.md,
 * "Report"): %e the program's name, %p its pid. One expansion for the
 * preload, which names its raw record after it, and rtlctl, which writes
 * the report there. */
#ifndef RTL_REPORT_PATH_H
#define RTL_REPORT_PATH_H

#include <stddef.h>

/* Expand tmpl for program prog (its base name) and process pid into out
 * (len bytes, always terminated; cut if too long). owner is the pid the
 * report belongs to (rtlctl run: RTL_REPORT_PID), 0 for none: another
 * process writes its pid before the extension instead (c.json ->
 * c.PID.json; c -> c.PID), unless tmpl has a %p. Returns the
 * length written. No stdio, no malloc: async-signal-safe. */
size_t rtl_report_path(const char *tmpl, const char *prog, long pid,
                       long owner, char *out, size_t len);

#endif
