/* glibc's aarch64 string functions: one variant per run, the one glibc picks
 * for this CPU (its IFUNCs choose by CPU model and SVE/MOPS, which
 * GLIBC_TUNABLES cannot take away one by one as x86-64's hwcaps can), and
 * what an implementation is, by glibc's own symbol for it where the
 * symbol table has one. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tools/selftest/selftest.h"

const char *const st_functions[] = {
	"strcpy",
	"memcpy",
	"strcmp",
	"memcmp",
	"strlen",
	"memchr",
	"memset",
	NULL,
};

int st_variants(struct st_variant *out, int max)
{
	static const struct st_variant dflt = { "default", "" };

	if (max < 1)
		return 0;
	out[0] = dflt;
	return 1;
}

void st_describe(const char *fn, char *buf, size_t len)
{
	void *p = dlsym(RTLD_DEFAULT, fn);
	Dl_info info;

	if (!p || !dladdr(p, &info)) {
		snprintf(buf, len, "%s=?", fn);
		return;
	}
	if (!strstr(info.dli_fname, "libc.so")) {
		const char *base = strrchr(info.dli_fname, '/');
		snprintf(buf, len, "%s=not glibc's(%s)", fn,
		         base ? base + 1 : info.dli_fname);
		return;
	}
	snprintf(buf, len, "%s=%s(libc+%#lx)", fn,
	         info.dli_sname && info.dli_saddr == p ? info.dli_sname : "aarch64",
	         (unsigned long)((char *)p - (char *)info.dli_fbase));
}
