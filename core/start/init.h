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

/* Before rtl starts: start the decoder only when rtl_init_decoder asks
 * (the preload, whose exact mechanisms never decode). Not where the
 * signal frame cannot tell read from write (aarch64): there every trap
 * decodes. */
RTL_PRIVATE_API void rtl_init_lazy_decoder(void);

/* Start the decoder now if it has not started (not in a signal handler:
 * it loads Capstone). Until it has, a trap that must move registers ends
 * the process with a message. -1 with errno if it cannot start. */
RTL_PRIVATE_API int rtl_init_decoder(void);

static inline int rtl_ensure_init(void)
{
	if (atomic_load_explicit(&rtl_initialised, memory_order_acquire))
		return 0;
	return rtl_init();
}

/* For the calls that make regions whose traps may move registers: rtl
 * and its decoder started. */
static inline int rtl_ensure_decoder(void)
{
	return rtl_ensure_init() < 0 ? -1 : rtl_init_decoder();
}

/* Whether rtl has started (never starts it). */
static inline int rtl_started(void)
{
	return atomic_load_explicit(&rtl_initialised, memory_order_acquire);
}

#endif
