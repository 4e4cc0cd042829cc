/* The table of checks, and what they share: failures, progress, traps. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rtl/region.h>

#include "tools/selftest/selftest.h"
#include "tools/selftest/shapes.h"

void st_sweep_strcpy(struct st_report *r);
void st_sweep_memcpy(struct st_report *r);
void st_sweep_strcmp(struct st_report *r);
void st_sweep_memcmp(struct st_report *r);

#define SWEEP(fn, what)                                 \
	{                                               \
		"sweep/" #fn, what, NULL, st_sweep_##fn \
	}
#define SHAPE(n, avail, what) { "shape/" #n, what, avail, st_shape_##n },

const struct st_check st_checks[] = {
	SWEEP(strcpy, "glibc's strcpy between regions that revoke each other"),
	SWEEP(memcpy, "glibc's memcpy (below rep movsb) between regions that revoke each other"),
	SWEEP(strcmp, "glibc's strcmp between regions that revoke each other"),
	SWEEP(memcmp, "glibc's memcmp between regions that revoke each other"),
	ST_SHAPES(SHAPE)
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
