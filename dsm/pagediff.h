/* Page diffs in rtl's diff encoding (docs/dirty.md): encode a page against
 * its twin, check and apply an encoded diff. Async-signal-safe: no malloc. */
#ifndef DSM_PAGEDIFF_H
#define DSM_PAGEDIFF_H

#include <stddef.h>
#include <sys/types.h>

/* Encode cur against twin (size bytes each) into buf. cap 0: return the
 * length needed and write nothing. -1 with ENOSPC if cap is too small. */
ssize_t pagediff_encode(const void *cur, const void *twin, size_t size,
                        void *buf, size_t cap);

/* 0 if buf[0, len) is a well-formed diff of a size-byte unit, else -1 with
 * EINVAL. Never reads outside the buffer. */
int pagediff_check(const void *buf, size_t len, size_t size);

/* Check, then write the runs into dst (size bytes). -1 with EINVAL, dst
 * untouched, if the diff is malformed. */
int pagediff_apply(void *dst, size_t size, const void *buf, size_t len);

#endif
