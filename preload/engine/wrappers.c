/* Allocators' wrappers: whether an allocating site, by its name, is one
 * (wrappers.h; the list is policy/wrappers.c's, shared with rtlctl). Runs in the allocation path, under the preload's guard
 * (the demangler's malloc is glibc's there), never in a signal handler. */
#include "preload/engine/wrappers.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "preload/engine/engine.h"

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* Whether the site named name ("module!symbol") is an allocator's
 * wrapper: as named, or demangled (with the C++ runtime's demangler, when
 * the program has one loaded: a program without it has no C++ names). */
int rtl_site_is_wrapper(const char *name)
{
	static demangle_fn demangle;
	static int looked;
	const char *bang = strchr(name, '!');
	char *d, out[RTL_POLICY_WRAPPER_NAME_MAX];
	int status = -1;

	if (!bang || strncmp(bang + 1, "_Z", 2))
		return rtl_policy_is_wrapper(&rtl_engine.policy, name, NULL);
	if (!looked) {
		*(void **)&demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		looked = 1;
	}
	if (!demangle || !(d = demangle(bang + 1, NULL, NULL, &status)) || status)
		return rtl_policy_is_wrapper(&rtl_engine.policy, name, NULL);
	snprintf(out, sizeof(out), "%.*s!%s", (int)(bang - name), name, d);
	free(d);
	return rtl_policy_is_wrapper(&rtl_engine.policy, name, out);
}
