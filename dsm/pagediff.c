/* Diffs of pages in the encoding rtl uses for regions (docs/dirty.md, "The
 * diff encoding, byte by byte"), so that both units of coherence travel in
 * one format: rtl's own codec on plain buffers (region_buf_diff_*). Checked
 * against region_diff_apply by dsm/tests/pagediff.c. A diff is checked
 * completely before one byte is written. No malloc, no locks. */
#include "dsm/pagediff.h"

#include <rtl/region.h>

ssize_t pagediff_encode(const void *cur, const void *twin, size_t size,
                        void *buf, size_t cap)
{
	return region_buf_diff_encode(cur, twin, size, buf, cap);
}

int pagediff_check(const void *buf, size_t len, size_t size)
{
	return region_buf_diff_check(buf, len, size);
}

int pagediff_apply(void *dst, size_t size, const void *buf, size_t len)
{
	return region_buf_diff_apply(dst, size, buf, len);
}
