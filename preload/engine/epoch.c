/* Dirty tracking's accounts and the epoch timer. A region written since its
 * twin was taken is diffed (swizzle: rtl's region_diff; alias: the
 * preload's own twin, taken in the fault handler before the first write)
 * when it is freed, at each epoch of its rule, and at exit; an epoch record
 * says how many regions were written, how many bytes differ, and the bytes
 * of the distinct 4 KiB pages that hold those changes (what a page-granular
 * tracker would have had to save).
 *
 * The epoch thread (auto and alias rules with an epoch) re-applies the rule's
 * protection to its live regions and closes a dirty epoch. It and the
 * callers here run outside signal handlers, under the re-entrancy guard. */
#include "preload/engine/epoch.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/util/clock.h"
#include "core/util/lock.h"
#include "core/util/page.h"
#include <rtl/region.h>
#include "policy/policy.h"
#include "preload/engine/actions.h"
#include "preload/engine/engine.h"
#include "preload/engine/record.h"
#include "preload/engine/select.h"
#include "preload/place/alias.h"
#include "preload/place/page.h"
#include "preload/shim/next.h"

#define PAGE rtl_page_size()
#define SET_CAP (1u << 16) /* distinct pages per epoch, deduplicated */
#define MAX_EPOCHS 4096

static struct rtl_lock acc_lock = RTL_LOCK_INIT;
static uint64_t acc_regions, acc_diff, acc_pages;
static uintptr_t *pageset;
static uint32_t npageset;
static struct rtl_epoch list[MAX_EPOCHS];
static size_t nlist;
static uint64_t dropped;
static pthread_t thread;
static int thread_running;

/* A page with a changed byte: counted once per epoch (acc_lock held). */
static void add_page(uintptr_t page)
{
	uint32_t h;

	if (!pageset) {
		void *p = mmap(NULL, SET_CAP * sizeof(*pageset),
		               PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			acc_pages += PAGE;
			return;
		}
		pageset = p;
	}
	if (npageset >= SET_CAP / 2) { /* full enough: count, do not dedupe */
		acc_pages += PAGE;
		return;
	}
	h = (uint32_t)((page * 0x9e3779b97f4a7c15ull) >> 40);
	for (;; h++) {
		uintptr_t *slot = &pageset[h & (SET_CAP - 1)];
		if (*slot == page + 1)
			return;
		if (!*slot) {
			*slot = page + 1;
			npageset++;
			acc_pages += PAGE;
			return;
		}
	}
}

static void add_run(uintptr_t at, size_t len)
{
	acc_diff += len;
	for (uintptr_t p = at / PAGE; p <= (at + len - 1) / PAGE; p++)
		add_page(p);
}

/* Alias: the runs where the object differs from its twin. */
static void diff_twin(const struct rtl_rec *rec)
{
	const unsigned char *now = rec->rw, *was = rec->twin;
	size_t i = 0, n = rec->size;

	while (i < n) {
		size_t start;

		while (i + 8 <= n && !memcmp(now + i, was + i, 8))
			i += 8;
		while (i < n && now[i] == was[i])
			i++;
		if (i >= n)
			break;
		start = i;
		while (i < n && now[i] != was[i])
			i++;
		add_run((uintptr_t)now + start, i - start);
	}
}

/* Swizzle: rtl's own diff against the twin it took at the first write. */
static void diff_region(const struct rtl_rec *rec)
{
	rtl_run_t small[64], *runs = small;
	ssize_t n = region_diff(rec->rw, NULL, 0);

	if (n <= 0)
		return;
	if (n > 64 && !(runs = malloc((size_t)n * sizeof(*runs))))
		return;
	n = region_diff(rec->rw, runs, (size_t)n);
	for (ssize_t i = 0; i < n; i++)
		add_run((uintptr_t)rec->rw + runs[i].offset, runs[i].len);
	if (runs != small)
		free(runs);
}

/* rec was written since its twin was taken: account its diff. A page
 * block's writes are the page's (rtl_epoch_page_written). */
static void account(struct rtl_rec *rec)
{
	int region = 0;

	if (!atomic_exchange(&rec->written, 0) || rec->mech == RTL_MECH_PAGE)
		return;
	rtl_lock_acquire(&acc_lock);
	acc_regions++;
	if (rec->alias) { /* alias, or auto in a slot: the preload's twin */
		if (rec->twin)
			diff_twin(rec);
	} else {
		diff_region(rec);
		region = 1;
	}
	rtl_lock_release(&acc_lock);
	/* rtl's twin becomes the contents now, as the preload's does at the
	 * next first write: else every later epoch would count these changes
	 * again. */
	if (region && atomic_load(&rec->live))
		region_checkpoint(rec->rw);
}

void rtl_epoch_page_written(const unsigned char *now,
                            const unsigned char *was, size_t len)
{
	size_t i = 0;

	rtl_lock_acquire(&acc_lock);
	acc_regions++;
	add_page((uintptr_t)now / PAGE); /* written: a page tracker saves it */
	while (i < len) {
		size_t start;

		while (i < len && now[i] == was[i])
			i++;
		start = i;
		while (i < len && now[i] != was[i])
			i++;
		acc_diff += i - start;
	}
	rtl_lock_release(&acc_lock);
}

void rtl_epoch_freeing(struct rtl_rec *rec)
{
	if (rtl_engine.rules[rec->rule].choice.track)
		account(rec);
}

/* Close the epoch: its record, and the counts start again. */
static void push(void)
{
	rtl_lock_acquire(&acc_lock);
	if (nlist < MAX_EPOCHS)
		list[nlist++] = (struct rtl_epoch){
			rtl_now_ns() - rtl_engine.start_ns,
			acc_regions,
			acc_diff,
			acc_pages,
		};
	else
		dropped++;
	acc_regions = acc_diff = acc_pages = 0;
	if (pageset && npageset)
		memset(pageset, 0, SET_CAP * sizeof(*pageset));
	npageset = 0;
	rtl_lock_release(&acc_lock);
}

void rtl_epoch_final(void)
{
	if (!rtl_engine.any_dirty)
		return;
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		struct rtl_rec *rec = rtl_rec_at(i);

		if (!atomic_load(&rec->live) ||
		    !rtl_engine.rules[rec->rule].choice.track)
			continue;
		if (rec->alias) {
			rtl_rec_lock(rec);
			account(rec);
			rtl_rec_unlock(rec);
		} else {
			account(rec);
		}
	}
	if (rtl_engine.any_page)
		rtl_pageprot_diff(0);
	push();
}

size_t rtl_epoch_list(const struct rtl_epoch **out, uint64_t *drop)
{
	*out = list;
	*drop = dropped;
	return nlist;
}

/* ---- the epoch thread ---- */

/* An auto block protected in place gets prot again: a change when its
 * home view's pages allow more (a grant since the last epoch). */
static void reprotect_in_place(struct rtl_rec *rec, int prot)
{
	struct region_info r;
	void *home = (void *)rec->addr;

	if (region_find(home, &r) == 0 && r.prot != prot &&
	    region_protect(rec->rw, prot) == 0)
		rtl_act_prot_changed(rec->rule);
}

static void tick(uint64_t due_mask)
{
	int dirty = 0;

	for (int i = 0; i < rtl_engine.policy.nrules; i++)
		if (((due_mask >> i) & 1) && rtl_engine.rules[i].choice.track)
			dirty = 1;
	for (uint32_t i = 0; i < rtl_rec_count(); i++) {
		struct rtl_rec *rec = rtl_rec_at(i);
		const struct rtl_choice *c;

		if (!atomic_load(&rec->live) || rec->mech == RTL_MECH_SWIZZLE ||
		    !((due_mask >> rec->rule) & 1))
			continue;
		c = &rtl_engine.rules[rec->rule].choice;
		/* A system call is using it: the next epoch re-protects it. */
		if (atomic_load_explicit(&rec->pins, memory_order_acquire))
			continue;
		if (!rec->alias) {
			/* auto, a block of whole pages protected in place: its
			 * pages get the rule's protection again (under the record's
			 * lock, which a system call takes to pin it). */
			rtl_rec_lock(rec);
			if (atomic_load(&rec->in_place) && !atomic_load(&rec->pins))
				reprotect_in_place(rec, c->prot);
			rtl_rec_unlock(rec);
			if (c->track)
				account(rec);
			continue;
		}
		rtl_rec_lock(rec);
		if (atomic_load(&rec->live) && !atomic_load(&rec->pins)) {
			/* Protect first: a write after this traps (and waits for
			 * the lock), so none slips between diff and twin. A page
			 * block's pages may have been granted for a neighbour:
			 * they are set again whatever its own protection. */
			if (rec->mech == RTL_MECH_PAGE)
				rtl_alias_protect(rec, c->prot);
			else if (atomic_load(&rec->prot) != c->prot &&
			         rtl_alias_protect(rec, c->prot) == 0)
				rtl_act_prot_changed(rec->rule);
			if (c->track)
				account(rec);
		}
		rtl_rec_unlock(rec);
	}
	if (dirty && rtl_engine.any_page)
		rtl_pageprot_diff(1);
	if (dirty)
		push();
}

/* The process's threads that still run (a main thread that left with
 * pthread_exit stays a zombie till the end), or -1. */
static long threads_running(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		ssize_t len;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		/* The state follows the command's closing parenthesis. */
		if ((p = strrchr(buf, ')')) && p[1] == ' ' && p[2] != 'Z' &&
		    p[2] != 'X')
			n++;
	}
	closedir(d);
	return n;
}

static void *epoch_main(void *arg)
{
	uint64_t last_check = 0;
	uint64_t next[RTL_POLICY_MAX_RULES] = { 0 };
	sigset_t all;

	(void)arg;
	rtl_preload_busy = 1; /* whatever this thread allocates is glibc's */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (int i = 0; i < rtl_engine.policy.nrules; i++)
		if (rtl_engine.rules[i].r->epoch_ns)
			next[i] = rtl_now_ns() + rtl_engine.rules[i].r->epoch_ns;
	for (;;) {
		uint64_t due = UINT64_MAX, mask = 0, now;
		struct timespec ts;

		for (int i = 0; i < rtl_engine.policy.nrules; i++)
			if (next[i] && next[i] < due)
				due = next[i];
		ts.tv_sec = (time_t)(due / 1000000000u);
		ts.tv_nsec = (long)(due % 1000000000u);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			;
		now = rtl_now_ns();
		for (int i = 0; i < rtl_engine.policy.nrules; i++) {
			if (!next[i] || next[i] > now)
				continue;
			mask |= 1ull << i;
			while (next[i] <= now) /* a late tick does not pile up */
				next[i] += rtl_engine.rules[i].r->epoch_ns;
		}
		tick(mask);
		/* The program's last thread left with pthread_exit: the process
		 * ends as the kernel would have ended it, with status 0 and the
		 * atexit handlers run, not kept alive by this thread. */
		if (now - last_check > 100 * 1000 * 1000) {
			last_check = now;
			if (threads_running() == 1)
				exit(0);
		}
	}
	return NULL;
}

int rtl_epoch_start(void)
{
	if (thread_running)
		return 0;
	if (pthread_create(&thread, NULL, epoch_main, NULL))
		return -1;
	thread_running = 1;
	return 0;
}

void rtl_epoch_forked(void)
{
	rtl_lock_reset(&acc_lock); /* its holder did not come along */
	nlist = 0;
	dropped = 0;
	acc_regions = acc_diff = acc_pages = 0;
	if (pageset && npageset)
		memset(pageset, 0, SET_CAP * sizeof(*pageset));
	npageset = 0;
	thread_running = 0; /* threads do not survive fork */
	if (rtl_engine.any_epoch)
		rtl_epoch_start();
}
