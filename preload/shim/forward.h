/* The forwarders to librtl-interpose's system-call wrappers (forward.c). */
#ifndef RTL_FORWARD_H
#define RTL_FORWARD_H

/* Resolve every forwarder now, in the constructor: none is then resolved
 * in a signal handler or while the program holds the loader's lock. */
void rtl_forward_resolve(void);

#endif
