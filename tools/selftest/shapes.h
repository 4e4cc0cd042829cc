/* The addressing-shape checks of the architecture built for (ST_SHAPES,
 * one X(name, available, what) per check), each architecture's beside its
 * twin: shapes_x86_64.h, shapes_aarch64.h. */
#ifndef RTL_SELFTEST_SHAPES_H
#define RTL_SELFTEST_SHAPES_H

#include "tools/selftest/selftest.h"

#if defined(__x86_64__)
#include "tools/selftest/shapes_x86_64.h"
#elif defined(__aarch64__)
#include "tools/selftest/shapes_aarch64.h"
#endif

/* A routine with a shape in its addresses: copies n bytes (rounded up to
 * its step) from src to dst. */
typedef void (*st_copy_fn)(char *dst, const char *src, size_t n);

/* Run fn over the region pairs, sizes and alignments (shapes.c). */
void st_shape_run(st_copy_fn fn, const char *name, struct st_report *r);

#define ST_SHAPE_DECLARE(n, avail, what) void st_shape_##n(struct st_report *r);
ST_SHAPES(ST_SHAPE_DECLARE)
#undef ST_SHAPE_DECLARE

#endif
