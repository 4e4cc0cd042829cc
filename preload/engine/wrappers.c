/* Allocators' wrappers: whether an allocating site, by its name, is one
 * (wrappers.h). Runs in the allocation path, under the preload's guard
 * (the demangler's malloc is glibc's there), never in a signal handler. */
#include "preload/engine/wrappers.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "preload/engine/engine.h"

/* Allocators' wrappers (docs/policy.md, "Sites"): an allocation made
 * in one of these is charged to the first frame outside them. Matched
 * against "module!symbol" and, for a C++ symbol, "module!demangled" (with
 * and without a template function's return type). C++'s by mangled name:
 * whatever the demangler makes of them. */
static const char *const builtin_skip[] = {
	/* operator new, std::string and the containers */
	"libstdc++.so*!*",
	/* operator new and new[], linked in */
	"*!_Znw*",
	"*!_Zna*",
	/* std:: and __gnu_cxx:: code, instantiated anywhere */
	"*!_ZNSt*",
	"*!_ZNKSt*",
	"*!_ZSt*",
	"*!_ZN9__gnu_cxx*",
	"*!_ZNK9__gnu_cxx*",
	/* CPython */
	"*!PyObject_Malloc",
	"*!PyObject_Calloc",
	"*!PyObject_Realloc",
	"*!PyMem_*",
	"*!_PyObject_GC_*",
	"*!_PyObject_New*",
	"*!PyType_GenericAlloc",
	/* lua */
	"*!l_alloc",
	"*!luaM_*",
	/* GLib */
	"*!g_malloc*",
	"*!g_realloc*",
	"*!g_try_malloc*",
	"*!g_slice_*",
	/* gnulib */
	"*!xmalloc",
	"*!xcalloc",
	"*!xzalloc",
	"*!xrealloc",
	"*!xstrdup",
	"*!xmemdup",
};

static int skipped(const char *site)
{
	for (size_t i = 0; i < sizeof(builtin_skip) / sizeof(*builtin_skip); i++)
		if (rtl_policy_glob_matches(builtin_skip[i], site))
			return 1;
	for (int i = 0; i < rtl_engine.policy.nsite_skip; i++)
		if (rtl_policy_glob_matches(rtl_engine.policy.site_skip[i], site))
			return 1;
	return 0;
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* Whether the site named name ("module!symbol") is an allocator's
 * wrapper: as named, or demangled (with the C++ runtime's demangler, when
 * the program has one loaded: a program without it has no C++ names). */
int rtl_site_is_wrapper(const char *name)
{
	static demangle_fn demangle;
	static int looked;
	const char *bang = strchr(name, '!');
	char *d, out[RTL_SITE_NAME_MAX + 256];
	int status = -1, hit;

	if (skipped(name))
		return 1;
	if (!bang || strncmp(bang + 1, "_Z", 2))
		return 0;
	if (!looked) {
		*(void **)&demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		looked = 1;
	}
	if (!demangle || !(d = demangle(bang + 1, NULL, NULL, &status)) || status)
		return 0;
	snprintf(out, sizeof(out), "%.*s!%s", (int)(bang - name), name, d);
	hit = skipped(out);
	if (!hit) {
		/* "void std::f<int>(...)": a template function's return type
		 * first; a glob names the function. */
		size_t lead = strcspn(d, " <(");

		if (d[lead] == ' ') {
			snprintf(out, sizeof(out), "%.*s!%s", (int)(bang - name), name,
			         d + lead + 1);
			hit = skipped(out);
		}
	}
	free(d);
	return hit;
}
