/* The module map (modules.c): where each loaded object's text lies and
 * which file it came from, so that rtlctl can name instruction addresses
 * outside the program. Taken with dl_iterate_phdr (not in a signal
 * handler); written from the last snapshot (also in one). */
#ifndef RTL_MODULES_H
#define RTL_MODULES_H

#include <stdint.h>

/* Take a fresh snapshot. Not from a signal handler. */
void rtl_modules_refresh(void);
/* Refresh if ip lies in no module of the snapshot (an object loaded
 * since). Not from a signal handler. */
void rtl_modules_cover(uintptr_t ip);
/* One RTL_TRACK_MODULE record each. Signal handler. */
void rtl_modules_write(void);

#endif
