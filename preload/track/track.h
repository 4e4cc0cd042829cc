/* The run's raw record (track.c): written once, as the program ends, with
 * async-signal-safe code, then handed to rtlctl, which makes the JSON
 * report out of it (analyse.c). Nothing here names a symbol or builds
 * JSON: that happens outside the program. */
#ifndef RTL_TRACK_H
#define RTL_TRACK_H

/* status: exit status, or -(signal number), or RTL_STATUS_UNKNOWN. */
#define RTL_STATUS_UNKNOWN (-1000)

/* At start, when the policy asks for a report: the policy's text, the
 * module map, where rtlctl is. Not from a signal handler. 0, or -1. */
int rtl_track_init(void);

/* At exit: the last epoch closed, the module map refreshed, the record
 * written and analysed. Not from a signal handler. */
void rtl_track_exit(int status);

/* From a signal handler, for death by sig: the record written and
 * analysed (a bounded wait), then return; the caller dies. */
void rtl_track_fatal(int sig);

/* In a forked child: the child writes a record of its own. */
void rtl_track_forked(void);

#endif
