/* fork: the views are shared mappings, so without help a child would share
 * region memory with its parent. The child gets a private copy of the
 * populated extents before it runs on, and the forking thread of the parent
 * waits until that copy is made: writes the parent makes after fork returns
 * must not reach the child's copy. (Other threads of the parent are not
 * stopped: their writes during the copy may reach the child. See
 * docs/signals.md, "Limits".) posix_spawn and vfork need nothing. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/dirty/dirty.h"
#include "core/prot/prot.h"
#include "core/region/pointers.h"
#include "core/region/records.h"
#include "core/region/region.h"
#include "core/region/views.h"
#include "core/start/fork.h"
#include "core/tag/tagged.h"
#include "core/trap/foreign.h"
#include "core/util/lock.h"

_Atomic unsigned rtl_lock_forks;

static void count_fork(void)
{
	atomic_fetch_add_explicit(&rtl_lock_forks, 1, memory_order_relaxed);
}

/* Registered when librtl is loaded, before the handlers of rtl's start and
 * its preload: child handlers run in the order they were registered, so
 * the count is raised before any of them takes a lock. */
__attribute__((constructor(101))) static void count_forks(void)
{
	pthread_atfork(NULL, NULL, count_fork);
}

/* Child to parent: "copied" (closed, or one byte). -1: no pipe, no wait. */
static int copied[2] = { -1, -1 };

void rtl_fork_prepare(void)
{
	/* No define, free or registration is half-done at the fork. */
	pthread_mutex_lock(&rtl_define_lock);
	rtl_shards_lock(RTL_SHARDS_ALL);
	pthread_mutex_lock(&rtl_registry_lock);
	rtl_foreign_fork_prepare();
	if (pipe2(copied, O_CLOEXEC) < 0)
		copied[0] = copied[1] = -1;
}

void rtl_fork_parent(void)
{
	char c;

	if (copied[0] >= 0) {
		close(copied[1]);
		/* EOF if the child died first: nothing left to wait for. */
		while (read(copied[0], &c, 1) < 0)
			;
		close(copied[0]);
		copied[0] = copied[1] = -1;
	}
	rtl_foreign_fork_done();
	pthread_mutex_unlock(&rtl_registry_lock);
	rtl_shards_unlock(RTL_SHARDS_ALL);
	pthread_mutex_unlock(&rtl_define_lock);
}

void rtl_fork_child(void)
{
	if (rtl_views_fork_child() < 0) {
		/* Sharing memory with the parent would be silent corruption. */
		fputs("rtl: fork: cannot give the child its own copy of the "
		      "views; aborting the child\n",
		      stderr);
		abort();
	}
	/* The child's own userfaultfd before anything maps the child's file
	 * again (the preload's fork handlers, registered after this one). */
	rtl_prot_forked();
	if (copied[0] >= 0) {
		close(copied[0]);
		close(copied[1]); /* the parent reads EOF: go on */
		copied[0] = copied[1] = -1;
	}
	/* Threads that held region locks did not come along. */
	rtl_regions_after_fork();
	rtl_tag_forked();
	rtl_ptrs_after_fork();
	rtl_dirty_after_fork(); /* the kernel's written bits, of the child's views */
	rtl_foreign_fork_done();
	pthread_mutex_unlock(&rtl_registry_lock);
	rtl_shards_unlock(RTL_SHARDS_ALL);
	pthread_mutex_unlock(&rtl_define_lock);
}
