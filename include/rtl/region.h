/* rtl — region-granularity memory protection and trap handling.
 *
 * The public API of the Region Trap Library (Brecht & Sandhu, USENIX 1999) for
 * x86-64 Linux. Every call may be made from any thread. Bad input returns -1
 * (or NULL) with errno set and changes nothing. See docs/guide.md. */
#ifndef RTL_REGION_H
#define RTL_REGION_H

#include <stddef.h>
#include <sys/mman.h> /* PROT_NONE, PROT_READ, PROT_WRITE */
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef RTL_API
#define RTL_API __attribute__((visibility("default")))
#endif

/* What a region handler is told about one trap. */
typedef struct rtl_trap {
	void *addr;    /* faulting address, as the program used it */
	void *base;    /* start of the region, in the same view as addr */
	size_t size;   /* region size */
	size_t offset; /* addr - base */
	int write;     /* non-zero for a write access */
	int prot;      /* the region's protection when it trapped */
	void *data;    /* the region's user data (region_set_data) */
} rtl_trap_t;

typedef void (*region_handler_t)(rtl_trap_t *trap);

/* A "pointer variable" argument (bptr, pptr) is the address of a pointer of
 * any type: pass &x for char *x. rtl rewrites that variable on every
 * protection change of the region it points into. */

/* Allocate a zero-filled region of size bytes, readable and writable. If bptr
 * is not NULL, *bptr is set to the region and registered as a bound pointer. */
RTL_API void *region_alloc(size_t size, void *bptr);

/* Make [addr, addr + size) a region. Memory outside rtl's views is copied into
 * a new region (the original is left to its owner) and the new address is
 * returned; bptr, if given and pointing into the old range, is moved to it. */
RTL_API void *region_define(void *addr, size_t size, void *bptr);

/* End the region that contains addr. Its bound pointers are unregistered. */
RTL_API int region_free(void *addr);

/* Register bptr2 as a bound pointer of the region that *bptr points into. */
RTL_API int region_bptr(void *bptr, void *bptr2);

/* Register an unbounded pointer: it may point into any region at any time. */
RTL_API int region_ptr(void *pptr);

/* Forget a pointer registered by region_alloc/define, region_bptr or
 * region_ptr. */
RTL_API int region_ptr_free(void *pptr);

/* Set the trap handler of the region containing addr; addr NULL sets the
 * default handler for regions without one. h NULL removes it. */
RTL_API int region_handler(void *addr, region_handler_t h);

/* Set the protection of the region containing addr: PROT_NONE, PROT_READ or
 * PROT_READ|PROT_WRITE. No system call: registered pointers are rewritten. */
RTL_API int region_protect(void *addr, int prot);

/* MAP2: move only the pointer variable pptr to the view of prot. */
RTL_API int region_protect_ptr(void *pptr, int prot);

/* Attach user data, handed to the handler in rtl_trap_t.data. */
RTL_API int region_set_data(void *addr, void *data);

#ifdef __cplusplus
}
#endif

#endif /* RTL_REGION_H */
