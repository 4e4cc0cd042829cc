/* The pointer registry: bound pointers (one region each) and unbounded
 * pointers (searched on every protect, as in the paper), region_bptr,
 * region_ptr, region_ptr_free, and rewriting them on a protection change.
 *
 * Lock order: rtl_define_lock, the shard locks (records.h),
 * rtl_registry_lock, a region's lock, then unbounded_lock. Swizzling runs
 * under the region lock only, so it may run in a trap handler. */
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/region/pointers.h"
#include "core/region/uthash_meta.h"
#include "core/region/views.h"
#include "core/start/init.h"
#include "core/tag/tagged.h"

struct rtl_ptr {
	void **var;
	struct rtl_region *region;   /* NULL: unbounded */
	struct rtl_ptr *next, *prev; /* in region->bptrs or unbounded */
	UT_hash_handle hh;           /* in by_var */
};

pthread_mutex_t rtl_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rtl_ptr *by_var;
static struct rtl_ptr *unbounded;
static struct rtl_lock unbounded_lock;
static _Atomic size_t n_unbounded;
static struct rtl_pool ptr_pool = RTL_POOL_INIT(sizeof(struct rtl_ptr));

static void list_add(struct rtl_ptr **head, struct rtl_ptr *p)
{
	p->prev = NULL;
	p->next = *head;
	if (*head)
		(*head)->prev = p;
	*head = p;
}

static void list_del(struct rtl_ptr **head, struct rtl_ptr *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		*head = p->next;
	if (p->next)
		p->next->prev = p->prev;
}

/* Take p off whatever list it is on; registry lock held. */
static void detach(struct rtl_ptr *p)
{
	if (p->region) {
		rtl_lock_acquire(&p->region->lock);
		list_del(&p->region->bptrs, p);
		rtl_lock_release(&p->region->lock);
	} else {
		rtl_lock_acquire(&unbounded_lock);
		list_del(&unbounded, p);
		atomic_fetch_sub(&n_unbounded, 1);
		rtl_lock_release(&unbounded_lock);
	}
}

/* The registration record for var, created if needed and detached from its
 * list; registry lock held. */
static struct rtl_ptr *take(void **var)
{
	struct rtl_ptr *p;

	HASH_FIND(hh, by_var, &var, sizeof(var), p);
	if (p) {
		detach(p);
		return p;
	}
	p = rtl_pool_get(&ptr_pool);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->var = var;
	rtl_uthash_oom = 0;
	HASH_ADD(hh, by_var, var, sizeof(p->var), p);
	if (rtl_uthash_oom) {
		rtl_pool_put(&ptr_pool, p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

static void forget(struct rtl_ptr *p)
{
	HASH_DELETE(hh, by_var, p);
	rtl_pool_put(&ptr_pool, p);
}

/* ---- pointer variables the caller hands in ---- */

/* Where process_vm_* is refused (a seccomp filter, qemu-user): the copy
 * through a pipe, which the kernel also checks. 1 done, 0 bad address, -1
 * no pipe. A failed write leaves the pipe to be closed: nothing stays. */
static int pipe_copy(void *var, void *val, int store)
{
	const size_t n = sizeof(void *);
	int fd[2], ok;

	if (pipe2(fd, O_CLOEXEC) < 0)
		return -1;
	if (store)
		ok = write(fd[1], val, n) == (ssize_t)n && read(fd[0], var, n) == (ssize_t)n;
	else
		ok = write(fd[1], var, n) == (ssize_t)n && read(fd[0], val, n) == (ssize_t)n;
	close(fd[0]);
	close(fd[1]);
	return ok;
}

/* The kernel copies, so that a variable at a bad address is EFAULT, not a
 * crash (region.h: bad input gets errno). A variable in rtl's views is
 * accessed directly: the access may be a region trap, resolved as any. */
static int var_copy(void *var, void *val, int store)
{
	struct iovec local = { val, sizeof(void *) }, remote = { var, sizeof(void *) };
	ssize_t n;

	if (rtl_view_of((uintptr_t)var) < 0) {
		n = store ? process_vm_writev(getpid(), &local, 1, &remote, 1, 0)
		          : process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (n == (ssize_t)sizeof(void *))
			return 0;
		if (n >= 0 || errno == EFAULT) {
			errno = EFAULT;
			return -1;
		}
		switch (pipe_copy(var, val, store)) {
		case 1:
			return 0;
		case 0:
			errno = EFAULT;
			return -1;
		} /* no pipe either (out of descriptors): the access itself */
	}
	if (store)
		__atomic_store_n((void **)var, *(void **)val, __ATOMIC_RELAXED);
	else
		*(void **)val = __atomic_load_n((void **)var, __ATOMIC_RELAXED);
	return 0;
}

int rtl_var_load(void *var, void **out)
{
	return var_copy(var, out, 0);
}

int rtl_var_store(void *var, void *val)
{
	return var_copy(var, &val, 1);
}

/* A variable rtl will rewrite later: it must be readable and writable
 * now. Written back with the value it holds. */
static int var_usable(void *var)
{
	void *v;

	return rtl_var_load(var, &v) < 0 ? -1 : rtl_var_store(var, v);
}

/* Link p to region r (r locked by the caller or fresh). */
static void attach_bound(struct rtl_ptr *p, struct rtl_region *r)
{
	p->region = r;
	list_add(&r->bptrs, p);
}

int rtl_ptr_bind(struct rtl_region *r, void **var)
{
	struct rtl_ptr *p;

	pthread_mutex_lock(&rtl_registry_lock);
	p = take(var);
	if (p) {
		rtl_lock_acquire(&r->lock);
		attach_bound(p, r);
		rtl_lock_release(&r->lock);
	}
	pthread_mutex_unlock(&rtl_registry_lock);
	return p ? 0 : -1;
}

void rtl_ptrs_unbind_region(struct rtl_region *r)
{
	struct rtl_ptr *p, *next;
	int none;

	/* Most regions have no bound pointer: then no registry lock, which
	 * every thread freeing a region would take in turn. A bind racing
	 * with the free of its region is the program's use after free. */
	rtl_lock_acquire(&r->lock);
	none = !r->bptrs;
	rtl_lock_release(&r->lock);
	if (none)
		return;
	pthread_mutex_lock(&rtl_registry_lock);
	rtl_lock_acquire(&r->lock);
	for (p = r->bptrs; p; p = next) {
		next = p->next;
		forget(p);
	}
	r->bptrs = NULL;
	rtl_lock_release(&r->lock);
	pthread_mutex_unlock(&rtl_registry_lock);
}

/* Move *var to view if it points into r's span (in any view). Other threads
 * may read the variable meanwhile: relaxed atomic accesses, so a reader sees
 * the old or the new pointer, never a torn one. */
static void swizzle_var(void **var, const struct rtl_region *r, int view)
{
	uintptr_t v = (uintptr_t)__atomic_load_n(var, __ATOMIC_RELAXED);
	int from = rtl_view_of(v);
	uint64_t off;

	if (from < 0 || from == view)
		return;
	off = v - rtl_view_base(from);
	if (off - r->lo < r->span)
		__atomic_store_n(var, (void *)(rtl_view_base(view) + off),
		                 __ATOMIC_RELAXED);
}

void rtl_ptrs_swizzle(struct rtl_region *r, int view)
{
	struct rtl_ptr *p;

	for (p = r->bptrs; p; p = p->next)
		swizzle_var(p->var, r, view);
	if (!atomic_load_explicit(&n_unbounded, memory_order_relaxed))
		return;
	if (rtl_lock_acquire(&unbounded_lock) < 0)
		return;
	for (p = unbounded; p; p = p->next)
		swizzle_var(p->var, r, view);
	rtl_lock_release(&unbounded_lock);
}

void rtl_ptrs_after_fork(void)
{
	rtl_lock_reset(&unbounded_lock);
}

int region_bptr(void *bptr, void *bptr2)
{
	struct rtl_found f;
	struct rtl_ptr *p;
	void *v;

	if (rtl_ensure_init() < 0)
		return -1;
	if (!bptr || !bptr2) {
		errno = EINVAL;
		return -1;
	}
	if (rtl_var_load(bptr, &v) < 0 || var_usable(bptr2) < 0)
		return -1;
	if (rtl_tag_owns((uintptr_t)v)) { /* its pointers never move */
		struct rtl_tag_found tf;

		if (rtl_tag_find((uintptr_t)v, &tf) == 0)
			return 0;
		errno = ENOENT;
		return -1;
	}
	if (rtl_region_find((uintptr_t)v, &f) < 0) {
		errno = ENOENT;
		return -1;
	}
	pthread_mutex_lock(&rtl_registry_lock);
	p = take(bptr2);
	if (p) {
		if (rtl_region_lock(&f) < 0) {
			int e = errno;
			forget(p);
			pthread_mutex_unlock(&rtl_registry_lock);
			errno = e;
			return -1;
		}
		attach_bound(p, f.r);
		rtl_lock_release(&f.r->lock);
	}
	pthread_mutex_unlock(&rtl_registry_lock);
	return p ? 0 : -1;
}

int region_ptr(void *pptr)
{
	struct rtl_ptr *p;

	if (rtl_ensure_init() < 0)
		return -1;
	if (!pptr) {
		errno = EINVAL;
		return -1;
	}
	if (var_usable(pptr) < 0)
		return -1;
	pthread_mutex_lock(&rtl_registry_lock);
	p = take(pptr);
	if (p) {
		p->region = NULL;
		rtl_lock_acquire(&unbounded_lock);
		list_add(&unbounded, p);
		atomic_fetch_add(&n_unbounded, 1);
		rtl_lock_release(&unbounded_lock);
	}
	pthread_mutex_unlock(&rtl_registry_lock);
	return p ? 0 : -1;
}

int region_ptr_free(void *pptr)
{
	struct rtl_ptr *p;
	void **var = pptr;

	if (rtl_ensure_init() < 0)
		return -1;
	if (!pptr) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&rtl_registry_lock);
	HASH_FIND(hh, by_var, &var, sizeof(var), p);
	if (p) {
		detach(p);
		forget(p);
	}
	pthread_mutex_unlock(&rtl_registry_lock);
	if (!p) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}
