/* Signal-safe diagnostic formatting. Runs in the trap handler on the way to
 * a SIGSEGV death: keep it to stack buffers and write(2). */
#define UNW_LOCAL_ONLY
#include "diag.h"

#include <libunwind.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"

void rtl_diag_str(struct rtl_diag *d, const char *s)
{
	while (*s) {
		if (d->n == sizeof(d->buf))
			rtl_diag_flush(d);
		d->buf[d->n++] = *s++;
	}
}

void rtl_diag_hex(struct rtl_diag *d, uint64_t v)
{
	char tmp[RTL_FMT_MAX];

	rtl_diag_str(d, rtl_fmt_hex(v, tmp));
}

void rtl_diag_dec(struct rtl_diag *d, uint64_t v)
{
	char tmp[RTL_FMT_MAX];

	rtl_diag_str(d, rtl_fmt_dec(v, tmp));
}

void rtl_diag_backtrace(struct rtl_diag *d, ucontext_t *uc)
{
	unw_cursor_t cur;
	int depth = 0;

	if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0) {
		rtl_diag_str(d, "rtl:     (no backtrace)\n");
		return;
	}
	do {
		unw_word_t ip = 0, off = 0;
		char name[128];

		unw_get_reg(&cur, UNW_REG_IP, &ip);
		rtl_diag_str(d, "rtl:     #");
		rtl_diag_dec(d, (uint64_t)depth);
		rtl_diag_str(d, " ");
		rtl_diag_hex(d, ip);
		if (unw_get_proc_name(&cur, name, sizeof(name), &off) == 0) {
			rtl_diag_str(d, " ");
			rtl_diag_str(d, name);
			rtl_diag_str(d, "+");
			rtl_diag_hex(d, off);
		}
		rtl_diag_str(d, "\n");
	} while (++depth < 32 && unw_step(&cur) > 0);
}

void rtl_diag_flush(struct rtl_diag *d)
{
	unsigned done = 0;
	while (done < d->n) {
		ssize_t w = write(STDERR_FILENO, d->buf + done, d->n - done);
		if (w <= 0)
			break;
		done += (unsigned)w;
	}
	d->n = 0;
}
