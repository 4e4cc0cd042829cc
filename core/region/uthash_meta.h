/* uthash configured for the core: tables live in rtl's metadata memory (never
 * malloc), and running out of memory fails the one insert instead of exiting.
 * After HASH_ADD, rtl_uthash_oom is non-zero if the element was not added. */
#ifndef RTL_UTHASH_META_H
#define RTL_UTHASH_META_H

#include "core/region/meta.h"

extern __thread int rtl_uthash_oom;

#define HASH_NONFATAL_OOM 1
#define uthash_malloc(sz) rtl_meta_alloc(sz)
#define uthash_free(ptr, sz) rtl_meta_free(ptr, sz)
#define uthash_nonfatal_oom(elt) (rtl_uthash_oom = 1)
#include <uthash.h>

#endif
