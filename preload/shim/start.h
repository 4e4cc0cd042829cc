/* Start and end of the preload (start.c). */
#ifndef RTL_PRELOAD_START_H
#define RTL_PRELOAD_START_H

/* Set once selection has started: the shim may ask the engine. */
extern _Atomic int rtl_preload_on;

#endif
