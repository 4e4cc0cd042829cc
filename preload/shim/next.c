/* The next allocator (what follows the preload in the lookup order: glibc),
 * found with dlsym(RTLD_NEXT), and the bootstrap allocator that serves the
 * allocations dlsym itself makes while that lookup runs. Must never call
 * the interposed functions: everything here runs inside malloc. */
#include "core/util/say.h"
#include "preload/shim/next.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

RTL_TLS int rtl_preload_busy;

static struct rtl_next next;
static _Atomic int ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static RTL_TLS int resolving;

/* ---- bootstrap ---- */

#define BOOT_SIZE (64u << 10)
#define BOOT_HDR 16u

static char boot[BOOT_SIZE] __attribute__((aligned(64)));
static _Atomic size_t boot_used;

void *rtl_boot_alloc(size_t size, size_t align)
{
	size_t at, start, end;

	if (align < BOOT_HDR)
		align = BOOT_HDR;
	at = atomic_load_explicit(&boot_used, memory_order_relaxed);
	do {
		start = (at + BOOT_HDR + align - 1) & ~(align - 1);
		end = start + size;
		if (size > BOOT_SIZE || end > BOOT_SIZE)
			return NULL; /* dlsym asked for more than it ever has */
	} while (!atomic_compare_exchange_weak(&boot_used, &at, end));
	memcpy(boot + start - sizeof(size_t), &size, sizeof(size_t));
	return boot + start;
}

int rtl_boot_owns(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + BOOT_SIZE;
}

size_t rtl_boot_size(const void *p)
{
	size_t size;
	memcpy(&size, (const char *)p - sizeof(size_t), sizeof(size_t));
	return size;
}

/* ---- lookup ---- */

static void *find(const char *name, int required)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f && required) {
		static const char msg[] = "rtl: preload: no next definition of ";
		rtl_say(msg, sizeof(msg) - 1);
		rtl_say(name, strlen(name));
		rtl_say("\n", 1);
		abort();
	}
	return f;
}

static void resolve(void)
{
	struct rtl_next n;

	resolving = 1;
	/* POSIX's way to a function from dlsym: through its bytes. */
	*(void **)&n.malloc = find("malloc", 1);
	*(void **)&n.free = find("free", 1);
	*(void **)&n.calloc = find("calloc", 1);
	*(void **)&n.realloc = find("realloc", 1);
	*(void **)&n.memalign = find("memalign", 1);
	*(void **)&n.posix_memalign = find("posix_memalign", 1);
	*(void **)&n.aligned_alloc = find("aligned_alloc", 1);
	*(void **)&n.valloc = find("valloc", 1);
	*(void **)&n.pvalloc = find("pvalloc", 1);
	*(void **)&n.malloc_usable_size = find("malloc_usable_size", 1);
	*(void **)&n.mprotect = find("mprotect", 1);
	*(void **)&n.sigaction = find("sigaction", 1);
	*(void **)&n.sigprocmask = find("sigprocmask", 1);
	*(void **)&n.pthread_sigmask = find("pthread_sigmask", 1);
	*(void **)&n.sigsuspend = find("sigsuspend", 1);
	*(void **)&n.sigpending = find("sigpending", 1);
	resolving = 0;
	next = n;
	atomic_store_explicit(&ready, 1, memory_order_release);
}

const struct rtl_next *rtl_next(void)
{
	if (atomic_load_explicit(&ready, memory_order_acquire))
		return &next;
	if (resolving)
		return NULL;
	pthread_once(&once, resolve);
	return &next;
}
