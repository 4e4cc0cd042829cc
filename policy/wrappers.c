/* Allocators' wrappers (docs/policy.md, "Sites"): an allocation made in
 * one of these is charged to the first frame outside them. The preload
 * asks as a program allocates (preload/engine/wrappers.c), rtlctl as it
 * names a site from debug information (inlined functions): one list, so
 * that both agree. No allocation, no I/O. */
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

/* Matched against "module!symbol" and, for a C++ symbol,
 * "module!demangled" (with and without a template function's return
 * type). C++'s by mangled name: whatever the demangler makes of them. */
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
	/* CPython: the public allocators, pymalloc's and the debug hooks'
	 * (_PyMem_Debug*, _PyMem_Raw*), the object allocators on them */
	"*!PyObject_Malloc",
	"*!PyObject_Calloc",
	"*!PyObject_Realloc",
	"*!_PyObject_Malloc",
	"*!_PyObject_Calloc",
	"*!_PyObject_Realloc",
	"*!PyMem_*",
	"*!_PyMem_*",
	"*!_PyObject_GC_*",
	"*!gc_alloc",
	"*!_PyObject_New*",
	"*!PyType_GenericAlloc",
	"*!_PyType_AllocNoTrack",
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

static int skipped(const struct rtl_policy *p, const char *site)
{
	for (size_t i = 0; i < sizeof(builtin_skip) / sizeof(*builtin_skip); i++)
		if (rtl_policy_glob_matches(builtin_skip[i], site))
			return 1;
	for (int i = 0; p && i < p->nsite_skip; i++)
		if (rtl_policy_glob_matches(p->site_skip[i], site))
			return 1;
	return 0;
}

int rtl_policy_is_wrapper(const struct rtl_policy *p, const char *name,
                          const char *demangled)
{
	const char *bang = demangled ? strchr(demangled, '!') : NULL;
	size_t lead;

	if (skipped(p, name))
		return 1;
	if (!bang)
		return 0;
	if (skipped(p, demangled))
		return 1;
	/* "void std::f<int>(...)": a template function's return type first;
	 * a glob names the function. */
	lead = strcspn(bang + 1, " <(");
	if (bang[1 + lead] == ' ') {
		char out[RTL_POLICY_WRAPPER_NAME_MAX];

		snprintf(out, sizeof(out), "%.*s!%s", (int)(bang - demangled), demangled,
		         bang + 1 + lead + 1);
		return skipped(p, out);
	}
	return 0;
}
