/* rtl's self-test: checks that run glibc's string functions and the
 * addressing shapes of their code over regions that trap, on the machine
 * and libraries at hand, and compare every result with the same work on
 * ordinary memory. Used by rtl-selftest (rtlctl selftest) and by the unit
 * tests, which run them once per glibc string variant the CPU has. */
#ifndef RTL_SELFTEST_H
#define RTL_SELFTEST_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

/* What one check found. */
struct st_report {
	unsigned cases;  /* cases run */
	unsigned failed; /* cases whose result differed */
	uint64_t traps;  /* region traps taken */
	char first[240]; /* the first failure, in words */
	char *progress;  /* where the case running is written, or NULL: a
	                    parent reads it when the check crashes */
	size_t progress_len;
};

struct st_check {
	const char *name;       /* "sweep/strcpy", "shape/offset-sse2" ... */
	const char *what;       /* one line */
	int (*available)(void); /* NULL: always */
	void (*run)(struct st_report *r);
};

/* Every destination alignment and every size at every alignment, not a
 * sample (rtl-selftest --full): minutes instead of seconds. */
extern int st_full;

extern const struct st_check st_checks[];
extern const int st_nchecks;

/* The check called name, or NULL. */
const struct st_check *st_find(const char *name);

/* Record a failed case (the first one's words are kept). */
void st_fail(struct st_report *r, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Say which case runs now (for a crash). */
void st_progress(struct st_report *r, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Whether a and b are one place (in one region, through any views). */
int st_same_place(const void *a, const void *b);

/* Region traps so far (rtl's counter). */
uint64_t st_traps(void);

/* ---- glibc's variants ---- */

/* A set of string-function implementations glibc can be made to pick on
 * this CPU, with the GLIBC_TUNABLES value that picks it ("" for none). */
struct st_variant {
	const char *name;     /* "evex", "avx2", "sse2" */
	const char *tunables; /* value of GLIBC_TUNABLES */
};

/* The variants this CPU can run, the default (the one glibc picks) first.
 * Returns how many were filled in. */
int st_variants(struct st_variant *out, int max);

/* What the implementation glibc resolved for fn in this process is, by its
 * code: "avx512", "evex", "avx2", "sse4", "sse2", or "?". Writes
 * "name=kind(libc+0xOFFSET)" into buf, or "name=not glibc's(LIB)" when the
 * name resolves outside glibc (a sanitizer's interceptor). */
void st_describe(const char *fn, char *buf, size_t len);

/* The kind of the implementation at p (variant_*.c, one per CPU). */
const char *st_kind_of(const void *p, const Dl_info *info);

/* The functions the checks call, for st_describe. */
extern const char *const st_functions[];

#endif
