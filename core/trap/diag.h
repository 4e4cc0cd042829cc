/* Diagnostics written from a signal handler: a fixed buffer, write(2), and a
 * libunwind backtrace from the interrupted context. No stdio, no malloc. */
#ifndef RTL_DIAG_H
#define RTL_DIAG_H

#include <stdint.h>
#include <ucontext.h>

struct rtl_diag {
	char buf[1024]; /* flushed when full: small enough for an alternate stack */
	unsigned n;
};

void rtl_diag_str(struct rtl_diag *d, const char *s);
void rtl_diag_hex(struct rtl_diag *d, uint64_t v);
void rtl_diag_dec(struct rtl_diag *d, uint64_t v);
void rtl_diag_backtrace(struct rtl_diag *d, ucontext_t *uc);
void rtl_diag_flush(struct rtl_diag *d); /* to stderr */

#endif
