/* glibc's aarch64 string functions: one variant per run, the one glibc picks
 * for this CPU (its IFUNCs choose by CPU model and SVE/MOPS, which
 * GLIBC_TUNABLES cannot take away one by one as x86-64's hwcaps can), and
 * what an implementation is, by glibc's own symbol for it where the
 * symbol table has one. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tools/selftest/selftest.h"

int st_variants(struct st_variant *out, int max)
{
	static const struct st_variant dflt = { "default", "" };

	if (max < 1)
		return 0;
	out[0] = dflt;
	return 1;
}

/* The function's own symbol where dladdr finds it (glibc's aarch64
 * variants are named for what they use), else "aarch64". */
const char *st_kind_of(const void *p, const Dl_info *info)
{
	return info->dli_sname && info->dli_saddr == p ? info->dli_sname : "aarch64";
}
