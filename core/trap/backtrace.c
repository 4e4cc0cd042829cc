/* The backtrace of an interrupted context (backtrace.h). Runs in the trap
 * handler on the way to a SIGSEGV death: stack buffers and write(2) only. */
#define UNW_LOCAL_ONLY
#include "core/trap/backtrace.h"

#include <libunwind.h>

void rtl_backtrace_write(struct rtl_line *l, ucontext_t *uc)
{
	unw_cursor_t cur;
	int depth = 0;

	if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0) {
		rtl_line_str(l, "rtl:     (no backtrace)\n");
		return;
	}
	do {
		unw_word_t ip = 0, off = 0;
		char name[128];

		unw_get_reg(&cur, UNW_REG_IP, &ip);
		rtl_line_str(l, "rtl:     #");
		rtl_line_dec(l, (uint64_t)depth);
		rtl_line_str(l, " ");
		rtl_line_hex(l, ip);
		if (unw_get_proc_name(&cur, name, sizeof(name), &off) == 0) {
			rtl_line_str(l, " ");
			rtl_line_str(l, name);
			rtl_line_str(l, "+");
			rtl_line_hex(l, off);
		}
		rtl_line_str(l, "\n");
	} while (++depth < 32 && unw_step(&cur) > 0);
}
