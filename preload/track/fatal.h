/* The report on a fatal signal (fatal.c). */
#ifndef RTL_FATAL_H
#define RTL_FATAL_H

#include <signal.h>

/* Install the fatal-signal handlers. */
int rtl_fatal_init(void);
/* From a signal handler: the record and report for death by sig, then
 * return (the caller dies). Waits a bounded time. */
void rtl_fatal_report(int sig);
/* Whether sig's action is the preload's fatal handler (hidden from the
 * program), whether handler is that handler, and forget it when the
 * program sets its own. */
int rtl_fatal_owns(int sig);
int rtl_fatal_is_handler(void (*handler)(int, siginfo_t *, void *));
void rtl_fatal_disown(int sig);
void rtl_fatal_forked(void);

#endif
