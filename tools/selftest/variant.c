/* Which of glibc's implementations a function resolved to in this process:
 * the part every CPU shares; what the code at the address is, each CPU's
 * variant_*.c says (st_kind_of). */
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

void st_describe(const char *fn, char *buf, size_t len)
{
	void *p = dlsym(RTLD_DEFAULT, fn);
	Dl_info info;

	if (!p || !dladdr(p, &info)) {
		snprintf(buf, len, "%s=?", fn);
		return;
	}
	if (!strstr(info.dli_fname, "libc.so")) {
		/* A sanitizer's interceptor, or a preloaded library's. */
		const char *base = strrchr(info.dli_fname, '/');
		snprintf(buf, len, "%s=not glibc's(%s)", fn,
		         base ? base + 1 : info.dli_fname);
		return;
	}
	snprintf(buf, len, "%s=%s(libc+%#lx)", fn, st_kind_of(p, &info),
	         (unsigned long)((char *)p - (char *)info.dli_fbase));
}
