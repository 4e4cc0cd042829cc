/* The pointer registry (pointers.c): bound pointers, one region each, and
 * unbounded pointers, searched on every protect. */
#ifndef RTL_POINTERS_H
#define RTL_POINTERS_H

#include <pthread.h>

#include "core/region/region.h"

/* Lock order: rtl_define_lock, the shard locks (records.h),
 * rtl_registry_lock, a region's lock, then the unbounded list's lock. */
extern pthread_mutex_t rtl_registry_lock;

/* Read or write a pointer variable the caller handed in: 0, or -1 with
 * EFAULT if it is at a bad address. */
int rtl_var_load(void *var, void **out);
int rtl_var_store(void *var, void *val);

int rtl_ptr_bind(struct rtl_region *r, void **var);
void rtl_ptrs_unbind_region(struct rtl_region *r);
void rtl_ptrs_swizzle(struct rtl_region *r, int view); /* holds r->lock */
void rtl_ptrs_after_fork(void);

#endif
