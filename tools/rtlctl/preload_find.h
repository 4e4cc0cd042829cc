/* rtlctl run's preload: where it is (RTL_PRELOAD, else relative to rtlctl
 * itself, so a moved install still finds it) and whether it loads, asked
 * before the program starts: otherwise ld.so says "cannot be preloaded",
 * ignores it and the program runs without rtl. */
#ifndef RTL_PRELOAD_FIND_H
#define RTL_PRELOAD_FIND_H

#include <stddef.h>

/* The preload's absolute path into out: $RTL_PRELOAD (a relative one made
 * absolute: the program may change folders before it execs a child), else
 * the build tree's ../preload/ or the install's libdir, both relative to
 * rtlctl's own folder. 0, or -1 with the names tried in out. */
int preload_find(char *out, size_t len);

/* Whether the dynamic loader can load the library at path with its
 * dependencies (ld.so --list: it maps them and runs none of their code).
 * 0, or -1 with the loader's reason in why. */
int preload_check(const char *path, char *why, size_t len);

#endif
