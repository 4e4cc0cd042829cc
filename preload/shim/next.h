/* The next allocator and the bootstrap allocator (next.c), and the
 * re-entrancy guard every file of the preload's shim respects. */
#ifndef RTL_NEXT_H
#define RTL_NEXT_H

#include <signal.h>
#include <stddef.h>

#define RTL_TLS __thread __attribute__((tls_model("initial-exec")))

/* Another name for function f, exported too (glibc's __libc_malloc for
 * malloc, say); with its attributes where the compiler can copy them. */
#if defined(__has_attribute) && __has_attribute(copy)
#define RTL_ALIAS_OF(f) __attribute__((alias(#f), copy(f)))
#else
#define RTL_ALIAS_OF(f) __attribute__((alias(#f)))
#endif

/* Set while this thread runs the preload's own code (policy loading, rtl's
 * start, jemalloc, region calls): any allocation it makes, or that libc or
 * jemalloc make on its behalf, goes straight to the next allocator. */
extern RTL_TLS int rtl_preload_busy;

struct rtl_next {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
	int (*mprotect)(void *, size_t, int);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	/* The signal-mask calls (sigmask.c keeps SIGSEGV out of the kernel's
	 * mask). */
	int (*sigprocmask)(int, const sigset_t *, sigset_t *);
	int (*pthread_sigmask)(int, const sigset_t *, sigset_t *);
	int (*sigsuspend)(const sigset_t *);
	int (*sigpending)(sigset_t *);
};

/* The functions that follow the preload in the lookup order (glibc's), or
 * NULL while this thread is resolving them (dlsym allocates): the caller
 * then uses the bootstrap allocator. Aborts if they cannot be found. */
const struct rtl_next *rtl_next(void);

/* A small static bump allocator for the calls made while resolving. Its
 * memory is never reused; free ignores it. */
void *rtl_boot_alloc(size_t size, size_t align);
int rtl_boot_owns(const void *p);
size_t rtl_boot_size(const void *p);

#endif
