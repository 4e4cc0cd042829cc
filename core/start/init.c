/* First use: views, allocator, region map, decoder, trap handler, fork
 * handlers, once per process. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/region/extent.h"
#include "core/region/rmap.h"
#include "core/region/views.h"
#include "core/start/fork.h"
#include "core/start/init.h"
#include "core/start/stats.h"
#include "core/trap/context.h"
#include "core/trap/trap.h"
#include "decoder/decoder.h"
#include <rtl/region.h>

_Atomic int rtl_initialised;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_errno;

/* The decoder starts with rtl unless the preload asked for it later:
 * loading Capstone is most of what starting rtl costs, and the preload's
 * exact mechanisms never decode (their traps fault on a block's own
 * pages, and the frame says read or write). */
static _Atomic int decoder_lazy;
static pthread_once_t decoder_once = PTHREAD_ONCE_INIT;
static int decoder_errno;

static void decoder_start(void)
{
	if (rtl_decoder_init() < 0)
		decoder_errno = errno ? errno : ENOMEM;
}

int rtl_init_decoder(void)
{
	pthread_once(&decoder_once, decoder_start);
	if (!rtl_decoder_ready()) {
		errno = decoder_errno;
		return -1;
	}
	return 0;
}

void rtl_init_lazy_decoder(void)
{
	/* Where the frame does not say read or write, every trap decodes. */
	if (!RTL_CTX_DECODE_DECIDES)
		atomic_store_explicit(&decoder_lazy, 1, memory_order_relaxed);
}

static void start(void)
{
	const char *step = "views";

	if (rtl_views_init() < 0)
		goto fail;
	step = "allocator";
	if (rtl_extent_init(rtl_views.size) < 0 || rtl_extent_hold_first() < 0 ||
	    rtl_rmap_init(rtl_views.size) < 0)
		goto fail;
	step = "decoder";
	if (!atomic_load_explicit(&decoder_lazy, memory_order_relaxed) &&
	    rtl_init_decoder() < 0)
		goto fail;
	step = "trap handler";
	if (rtl_trap_install() < 0)
		goto fail;
	pthread_atfork(rtl_fork_prepare, rtl_fork_parent, rtl_fork_child);
	atomic_store_explicit(&rtl_initialised, 1, memory_order_release);
	return;
fail:
	init_errno = errno ? errno : ENOMEM;
	if (step[0] == 'v' && init_errno == EINVAL)
		fprintf(stderr, "rtl: cannot start: RTL_ARENA_SIZE=%s is not a size "
		                "between 1M and 16T\n",
		        secure_getenv("RTL_ARENA_SIZE"));
	else
		fprintf(stderr, "rtl: cannot start: %s: %s\n", step,
		        strerror(init_errno));
}

int rtl_init(void)
{
	pthread_once(&once, start);
	if (!atomic_load_explicit(&rtl_initialised, memory_order_acquire)) {
		errno = init_errno;
		return -1;
	}
	return 0;
}

int region_init(void)
{
	return rtl_init();
}
