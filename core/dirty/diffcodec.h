/* The diff codec on plain buffers (diffcodec.c): used by diff.c for regions
 * and exported for the DSM's pages as region_buf_diff_*. */
#ifndef RTL_DIFFCODEC_H
#define RTL_DIFFCODEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef int (*run_fn)(void *ctx, size_t off, size_t len);

/* Call fn for every maximal run of bytes where cur and old differ, in order
 * (equal words skipped eight bytes at a time). Stops early if fn returns
 * non-zero. Returns the number of runs. */
size_t rtl_diff_scan(const unsigned char *cur, const unsigned char *old,
                     size_t n, run_fn fn, void *ctx);

/* Encode cur against twin (size bytes each; twin NULL: no change) into
 * buf. cap 0: the length needed, nothing written. -1 with ENOSPC if cap is
 * too small, EINVAL if buf is NULL with a cap. */
ssize_t rtl_diff_encode(const unsigned char *cur, const unsigned char *twin,
                        size_t size, void *buf, size_t cap);

/* Check an encoded diff for a unit of size bytes and, if dst is not NULL,
 * copy its runs into dst (and twin, if not NULL). 0, or -1 at the first
 * thing wrong. Never reads outside [buf, buf + len), never writes outside
 * [dst, dst + size). */
int rtl_diff_walk(const unsigned char *buf, size_t len, uint64_t size,
                  unsigned char *dst, unsigned char *twin);

#endif
