/* sigaction and the signal() family, interposed (signals.c). */
#ifndef RTL_SIGNALS_H
#define RTL_SIGNALS_H

/* From now on, SIGSEGV actions go through rtl (the core has the real
 * sigaction). */
void rtl_signals_ready(void);

#endif
