/* Traps on rtl's alias reservation (the alias mechanism's objects, the
 * slots of auto and alias, the page mechanism's copy, the copy of auto's
 * blocks of whole pages): a fault there, which the core hands to the
 * foreign hook (SIGSEGV outside the views, or SIGBUS for a page
 * write-protected in the page tables), and a system call's access to a
 * buffer there, which the wrappers resolve first. Each runs the block's
 * rule and grants through alias.c.
 *
 * Both run in signal handlers: no malloc, the record's spin lock only. */
#include "preload/place/alias.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/trap/hooks.h"
#include "core/util/clock.h"
#include "core/util/fmt.h"
#include "core/util/page.h"
#include "interpose/access.h"
#include "preload/engine/actions.h"
#include "preload/engine/engine.h"
#include "preload/engine/record.h"
#include "preload/engine/reprotect.h"
#include "preload/place/page.h"

#define PAGE rtl_page_size()

static int allows(int prot, int write)
{
	return write ? (prot & PROT_WRITE) != 0 : (prot & PROT_READ) != 0;
}

/* An access to rec at a (rec locked): the rule's actions; whether it may
 * proceed now. */
static int access_locked(struct rtl_rec *rec, uintptr_t a, int write)
{
	uintptr_t obj = rec->alias + ((uintptr_t)rec->rw & (PAGE - 1));
	size_t offset = a < obj ? 0 : a - obj;
	int prot;

	if (offset >= rec->size && rec->size)
		offset = rec->size - 1; /* a neighbour's bytes on its pages */
	if (write && rtl_engine.rules[rec->rule].choice.track &&
	    !atomic_load_explicit(&rec->written, memory_order_relaxed) && rec->twin)
		memcpy(rec->twin, rec->rw, rec->size); /* before the write */
	prot = rtl_act_trap(rec, offset, write);
	rtl_reprotect_note(rec); /* its rule's next epoch protects it again */
	if (prot >= 0 && allows(prot, write) && rtl_alias_protect(rec, prot) == 0) {
		rtl_act_granted(rec, rec->size);
		rtl_act_prot_changed(rec->rule);
	}
	return allows(atomic_load(&rec->prot), write);
}

/* A fault in the reservation outside every live block: the program ran off
 * the end of its block (or used a freed one). Its crash goes on as it
 * would; rtl says once where it was. Signal handler: write(2) only. */
static void ran_off(uintptr_t a)
{
	static _Atomic int said;
	static const char head[] = "rtl: access at ",
	                  tail[] = ", in rtl's memory but outside every live block: "
	                           "the program ran off the end of its block or "
	                           "used a freed one\n";
	char buf[RTL_FMT_MAX], *hex = rtl_fmt_hex(a, buf);

	if (atomic_exchange(&said, 1))
		return;
	if (write(STDERR_FILENO, head, sizeof(head) - 1) < 0 ||
	    write(STDERR_FILENO, hex, strlen(hex)) < 0 ||
	    write(STDERR_FILENO, tail, sizeof(tail) - 1) < 0)
		return; /* nowhere to say it */
}

/* The core's foreign hook: a SIGSEGV outside the views, or a SIGBUS on a
 * page write-protected in the page tables (core/prot/prot.h). Signal
 * handler. */
static int alias_fault(void *addr, int write, int sig, void *uc)
{
	uintptr_t a = (uintptr_t)addr;
	struct rtl_rec *rec;
	uint64_t t0;
	int ok;

	(void)uc;
	if (rtl_pageprot_owns(a)) {
		t0 = rtl_now_ns();
		ok = rtl_pageprot_fault(a, write);
		atomic_fetch_add_explicit(&rtl_totals.alias_ns, rtl_now_ns() - t0,
		                          memory_order_relaxed);
		return ok;
	}
	if (!(rec = rtl_alias_find(addr))) {
		/* A SIGBUS here is an access past the end of the file: the
		 * program's SIGBUS action says so (track/fatal.c). */
		if (rtl_alias_owns(addr) && sig == SIGSEGV)
			ran_off(a);
		return 0; /* not an alias, or a freed one: the program's */
	}
	t0 = rtl_now_ns();
	rtl_rec_lock(rec);
	if (!atomic_load(&rec->live) || atomic_load(&rec->in_place) == RTL_REC_PROGRAMS) {
		ok = 0; /* freed, or the program's own protection refused it */
	} else if (allows(atomic_load(&rec->prot), write)) {
		/* Granted by another thread meanwhile; or the pages were set
		 * from a stale record (an epoch's call over a block freed and
		 * taken again since): the record is right, its pages get its
		 * protection again. */
		atomic_fetch_add_explicit(&rtl_totals.alias_stale, 1,
		                          memory_order_relaxed);
		rtl_alias_protect(rec, atomic_load(&rec->prot));
		ok = 1;
	} else {
		ok = access_locked(rec, a, write);
	}
	rtl_rec_unlock(rec);
	atomic_fetch_add_explicit(&rtl_totals.alias_ns, rtl_now_ns() - t0,
	                          memory_order_relaxed);
	return ok;
}

/* The system-call wrappers' resolver: p is the buffer, in an alias. */
static void *alias_access(const void *p, size_t len, int write)
{
	struct rtl_rec *rec;
	int ok;

	if (rtl_pageprot_owns((uintptr_t)p)) {
		atomic_fetch_add_explicit(&rtl_totals.alias_syscalls, 1,
		                          memory_order_relaxed);
		if (rtl_pageprot_access((uintptr_t)p, len, write))
			return (void *)p;
		errno = EFAULT;
		return NULL;
	}
	rec = rtl_alias_find(p);
	if (!rec) {
		errno = EFAULT;
		return NULL;
	}
	atomic_fetch_add_explicit(&rtl_totals.alias_syscalls, 1,
	                          memory_order_relaxed);
	/* The program's own protection: the kernel answers as it would. */
	if (allows(atomic_load_explicit(&rec->prot, memory_order_acquire), write) ||
	    atomic_load(&rec->in_place) == RTL_REC_PROGRAMS)
		return (void *)p;
	rtl_rec_lock(rec);
	ok = atomic_load(&rec->live) &&
	     (allows(atomic_load(&rec->prot), write) ||
	      access_locked(rec, (uintptr_t)p, write));
	rtl_rec_unlock(rec);
	if (!ok) {
		errno = EFAULT;
		return NULL;
	}
	return (void *)p;
}

/* The kernel refused a buffer alias_access let through (rtl_access_repair):
 * its pages set to what its record allows again, if that is the access. */
static int alias_repair(const void *p, size_t len, int write)
{
	struct rtl_rec *rec;
	int ok;

	if (rtl_pageprot_owns((uintptr_t)p))
		return rtl_pageprot_repair((uintptr_t)p, len, write);
	if (!(rec = rtl_alias_find(p)))
		return 0;
	rtl_rec_lock(rec);
	ok = atomic_load(&rec->live) && atomic_load(&rec->in_place) != RTL_REC_PROGRAMS &&
	     allows(atomic_load(&rec->prot), write) &&
	     rtl_alias_protect(rec, atomic_load(&rec->prot)) == 0;
	rtl_rec_unlock(rec);
	if (ok)
		atomic_fetch_add_explicit(&rtl_totals.alias_stale, 1, memory_order_relaxed);
	return ok;
}

void rtl_alias_traps_init(void *res, size_t span)
{
	rtl_hook_foreign(alias_fault);
	rtl_access_set_range(res, span, alias_access);
	rtl_access_set_repair(alias_repair);
}
