/* Protection changes (protect.c): region_protect and region_protect_ptr,
 * and the step both take, for the core's other modules. */
#ifndef RTL_PROTECT_H
#define RTL_PROTECT_H

#include "core/region/region.h"

/* Set r's protection to view: rewrite its pointers (and, inside a handler,
 * the interrupted registers). r's lock held; async-signal-safe. */
void rtl_protect_locked(struct rtl_region *r, int view);

#endif
