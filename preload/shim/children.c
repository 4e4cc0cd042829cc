/* rtlctl run --no-children: the programs this one execs run without rtl.
 * The preload takes itself out of LD_PRELOAD and its RTL_* variables out
 * of the environment once it has read them, at start: every way of
 * starting a program (exec*, posix_spawn, system, a raw execve) passes
 * environ or a copy of it, so all of them are covered by construction.
 * A process forked without exec is still this program and keeps rtl.
 * What the kernel carries across exec stays: the seccomp filter
 * (docs/syscalls.md), which lets every call of a program outside rtl's
 * address range through. */
#include "preload/shim/children.h"

#include <dlfcn.h>
#include <string.h>

extern char **environ;

#define FLAG "RTL_NO_CHILDREN="
#define PRELOAD "LD_PRELOAD="
/* Kept: it describes the filter the kernel passes on (interpose/sigsys.c),
 * which a program started under rtl again must not install twice. */
#define SECCOMP "RTL_SECCOMP="

/* The new LD_PRELOAD= entry; environ points to it from now on. */
static char preload_entry[8192];

/* environ is edited in place, never through getenv, setenv or unsetenv:
 * a program may define its own (bash does, over its shell variables). */

/* LD_PRELOAD without the entries that are this library (by file name:
 * the loader took it from there), separators as the loader reads them;
 * NULL when nothing is left. */
static char *without_self(const char *list, const char *self)
{
	const char *base = strrchr(self, '/');
	size_t blen, k = sizeof(PRELOAD) - 1;

	base = base ? base + 1 : self;
	blen = strlen(base);
	memcpy(preload_entry, PRELOAD, k);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ": \t");
		const char *b = memrchr(p, '/', len);
		size_t name = len - (size_t)((b ? b + 1 : p) - p);

		if (len && !(name == blen && !memcmp(p + len - blen, base, blen))) {
			if (k + len + 2 > sizeof(preload_entry))
				break; /* longer than the loader reads anyway */
			if (k > sizeof(PRELOAD) - 1)
				preload_entry[k++] = ':';
			memcpy(preload_entry + k, p, len);
			k += len;
		}
		p += len;
		p += strspn(p, ": \t");
	}
	preload_entry[k] = '\0';
	return k > sizeof(PRELOAD) - 1 ? preload_entry : NULL;
}

void rtl_children_start(void)
{
	static const char marker;
	Dl_info di;
	size_t i, kept = 0;
	int on = 0;

	for (i = 0; environ && environ[i]; i++)
		on |= !strcmp(environ[i], FLAG "1");
	if (!on || !dladdr(&marker, &di) || !di.dli_fname)
		return;
	/* The entries kept move down; the strings stay where they are, so
	 * what rtl read from them at start stays valid. */
	for (i = 0; environ[i]; i++) {
		char *e = environ[i];

		if (!strncmp(e, "RTL_", 4) && strncmp(e, SECCOMP, sizeof(SECCOMP) - 1))
			continue;
		if (!strncmp(e, PRELOAD, sizeof(PRELOAD) - 1) &&
		    !(e = without_self(e + sizeof(PRELOAD) - 1, di.dli_fname)))
			continue;
		environ[kept++] = e;
	}
	environ[kept] = NULL;
}
