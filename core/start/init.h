/* Start-up (init.c): the views, the allocator, the region map, the decoder
 * and the trap handler, once per process, on first use. */
#ifndef RTL_INIT_H
#define RTL_INIT_H

#include <stdatomic.h>

#include "core/util/export.h"

/* First use: map the views, open the decoder, install the trap handler.
 * Thread-safe and idempotent; -1 with errno if rtl cannot start. */
int rtl_init(void);

extern RTL_PRIVATE_API _Atomic int rtl_initialised;

static inline int rtl_ensure_init(void)
{
	if (atomic_load_explicit(&rtl_initialised, memory_order_acquire))
		return 0;
	return rtl_init();
}

/* Whether rtl has started (never starts it). */
static inline int rtl_started(void)
{
	return atomic_load_explicit(&rtl_initialised, memory_order_acquire);
}

#endif
