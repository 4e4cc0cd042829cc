/* The backtrace of an interrupted context, for the message rtl prints as it
 * ends a process over a trap (die.c). Signal-handler code: libunwind's
 * local unwinder, no stdio, no malloc. */
#ifndef RTL_BACKTRACE_H
#define RTL_BACKTRACE_H

#include <ucontext.h>

#include "core/util/line.h"

/* One "rtl:     #N ip name+off" line per frame, at most 32. */
void rtl_backtrace_write(struct rtl_line *l, ucontext_t *uc);

#endif
