/* The policy's warnings (policy/warn.c: a swizzle rule that can trap, a
 * rule that selects nothing) said on stderr once per run when rtlctl did
 * not start the program (warn.c). At start, never from a handler. */
#ifndef RTL_ENGINE_WARN_H
#define RTL_ENGINE_WARN_H

#include "policy/policy.h"

/* p was loaded from config (RTL_CONFIG's value). */
void rtl_engine_warn(const struct rtl_policy *p, const char *config);

#endif
