/* Backtraces and events of traps (trace.c): raw instruction addresses and
 * numbers in preallocated tables, filled by the trap handler; names come
 * later, outside the program. */
#ifndef RTL_TRACE_H
#define RTL_TRACE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "preload/engine/record.h"

int rtl_trace_init(void);
void rtl_trace_backtrace(int rule, int write); /* signal handler */
void rtl_trace_event(const struct rtl_rec *rec, size_t offset, int write);

struct rtl_stack {
	_Atomic uint64_t hash; /* 0 free */
	_Atomic int ready;
	uint8_t write, n;
	uint16_t rule;
	_Atomic uint64_t count;
	uintptr_t ip[16];
};
const struct rtl_stack *rtl_trace_stack(uint32_t i); /* NULL past the end */
uint64_t rtl_trace_stacks_dropped(void);
void rtl_trace_forked(void);

#endif
