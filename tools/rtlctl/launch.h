/* Starting a program under rtl's preload (launch.c): what rtlctl run and
 * rtlctl compare do in the child between fork and exec. */
#ifndef RTLCTL_LAUNCH_H
#define RTLCTL_LAUNCH_H

#include <sys/types.h>

/* The environment of a program under rtl: the preload first in
 * LD_PRELOAD (the user's own kept after it), the policy (config, or the
 * built-in one for NULL), the report (NULL: the policy's), this rtlctl to
 * make it, and the program's pid for its children's reports. */
void launch_env(const char *preload, const char *config, const char *report);

/* The program dies with rtlctl, even of SIGKILL (PR_SET_PDEATHSIG). */
void launch_tie(pid_t parent);

#endif
