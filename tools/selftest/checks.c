/* The table of checks, and what they share: failures, progress, traps. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rtl/region.h>

#include "selftest.h"

void st_sweep_strcpy(struct st_report *r);
void st_sweep_memcpy(struct st_report *r);
void st_sweep_strcmp(struct st_report *r);
void st_sweep_memcmp(struct st_report *r);
void st_shape_offset_gp(struct st_report *r);
void st_shape_offset_sse2(struct st_report *r);
void st_shape_offset_avx2(struct st_report *r);
void st_shape_dstdiff_gp(struct st_report *r);
void st_shape_dstdiff_sse2(struct st_report *r);
void st_shape_dstdiff_avx2(struct st_report *r);
void st_shape_diffptr_gp(struct st_report *r);
void st_shape_diffptr_sse2(struct st_report *r);
void st_shape_diffptr_avx2(struct st_report *r);
void st_shape_srcdiff_gp(struct st_report *r);
void st_shape_srcdiff_sse2(struct st_report *r);
void st_shape_srcdiff_avx2(struct st_report *r);
void st_shape_scaled_1(struct st_report *r);
void st_shape_scaled_2(struct st_report *r);
void st_shape_scaled_4(struct st_report *r);
void st_shape_scaled_8(struct st_report *r);

#define SWEEP(fn, what)                                 \
	{                                               \
		"sweep/" #fn, what, NULL, st_sweep_##fn \
	}
#define SHAPE(n, avail, what)                          \
	{                                              \
		"shape/" #n, what, avail, st_shape_##n \
	}

const struct st_check st_checks[] = {
	SWEEP(strcpy, "glibc's strcpy between regions that revoke each other"),
	SWEEP(memcpy, "glibc's memcpy (below rep movsb) between regions that revoke each other"),
	SWEEP(strcmp, "glibc's strcmp between regions that revoke each other"),
	SWEEP(memcmp, "glibc's memcmp between regions that revoke each other"),
	SHAPE(offset_gp, NULL, "aligned source + running offset, biased destination (GP)"),
	SHAPE(offset_sse2, NULL, "aligned source + running offset, biased destination (SSE2)"),
	SHAPE(offset_avx2, st_have_avx2, "aligned source + running offset, biased destination (VEX)"),
	SHAPE(dstdiff_gp, NULL, "destination + (source - destination) (GP)"),
	SHAPE(dstdiff_sse2, NULL, "destination + (source - destination) (SSE2)"),
	SHAPE(dstdiff_avx2, st_have_avx2, "destination + (source - destination) (VEX)"),
	SHAPE(diffptr_gp, NULL, "difference as base, pointer as index (GP)"),
	SHAPE(diffptr_sse2, NULL, "difference as base, pointer as index (SSE2)"),
	SHAPE(diffptr_avx2, st_have_avx2, "difference as base, pointer as index (VEX)"),
	SHAPE(srcdiff_gp, NULL, "store through source + (destination - source) (GP)"),
	SHAPE(srcdiff_sse2, NULL, "store through source + (destination - source) (SSE2)"),
	SHAPE(srcdiff_avx2, st_have_avx2, "store through source + (destination - source) (VEX)"),
	SHAPE(scaled_1, NULL, "element index, scale 1, beside two bases"),
	SHAPE(scaled_2, NULL, "element index, scale 2, beside two bases"),
	SHAPE(scaled_4, NULL, "element index, scale 4, beside two bases"),
	SHAPE(scaled_8, NULL, "element index, scale 8, beside two bases"),
};
int st_full;

const struct st_check *st_find(const char *name)
{
	for (int i = 0; i < st_nchecks; i++)
		if (!strcmp(st_checks[i].name, name))
			return &st_checks[i];
	return NULL;
}

const int st_nchecks = sizeof(st_checks) / sizeof(st_checks[0]);

void st_fail(struct st_report *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->failed++) {
		va_start(ap, fmt);
		vsnprintf(r->first, sizeof(r->first), fmt, ap);
		va_end(ap);
	}
}

void st_progress(struct st_report *r, const char *fmt, ...)
{
	va_list ap;

	if (!r->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(r->progress, r->progress_len, fmt, ap);
	va_end(ap);
}

uint64_t st_traps(void)
{
	struct region_stats s;

	return region_stats(&s) == 0 ? s.traps : 0;
}

int st_same_place(const void *a, const void *b)
{
	void *va = region_view(a, PROT_NONE), *vb = region_view(b, PROT_NONE);

	return va && vb ? va == vb : a == b;
}
