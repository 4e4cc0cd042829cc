/* fork: the views are shared mappings, so without help a child would share
 * region memory with its parent. The child gets a private copy of the
 * populated extents before it runs on. posix_spawn and vfork need nothing. */
#include <stdio.h>
#include <stdlib.h>

#include "core.h"
#include "views.h"

void rtl_fork_prepare(void);
void rtl_fork_parent(void);
void rtl_fork_child(void);

void rtl_fork_prepare(void)
{
	/* No define, free or registration is half-done at the fork. */
	pthread_mutex_lock(&rtl_define_lock);
	pthread_mutex_lock(&rtl_registry_lock);
}

void rtl_fork_parent(void)
{
	pthread_mutex_unlock(&rtl_registry_lock);
	pthread_mutex_unlock(&rtl_define_lock);
}

void rtl_fork_child(void)
{
	rtl_tid_reset();
	if (rtl_views_fork_child() < 0) {
		/* Sharing memory with the parent would be silent corruption. */
		fputs("rtl: fork: cannot give the child its own copy of the "
		      "views; aborting the child\n", stderr);
		abort();
	}
	/* Threads that held region locks did not come along. */
	rtl_regions_after_fork();
	rtl_ptrs_after_fork();
	pthread_mutex_unlock(&rtl_registry_lock);
	pthread_mutex_unlock(&rtl_define_lock);
}
