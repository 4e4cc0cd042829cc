/* The core's counters. */
#include "stats.h"

struct rtl_stats rtl_stats;
_Atomic int rtl_time_traps;
