/* Allocators' wrappers (docs/policy.md, "Sites"): operator new, C++'s
 * std:: code, runtimes' allocation functions and the policy's site_skip.
 * An allocation made in one is charged to the first frame outside them
 * (site.c). */
#ifndef RTL_PRELOAD_WRAPPERS_H
#define RTL_PRELOAD_WRAPPERS_H

/* The longest site name site.c keeps ("module!symbol"). */
#define RTL_SITE_NAME_MAX 176

/* Whether the site named name ("module!symbol", as site.c names it) is a
 * wrapper: its name, or for a C++ symbol its demangled name (with and
 * without a template function's return type), matches a built-in glob or
 * one of the policy's site_skip. */
int rtl_site_is_wrapper(const char *name);

#endif
