/* The loaded objects' exported symbols by address (symindex.c): what
 * dladdr1 answers, from a table per object sorted by address and built at
 * the object's first lookup. dladdr scans every symbol of the object on
 * each call, 28,000 of them in gcc's cc1: naming the sites of such a
 * program's allocations took a third of its time. Not in a signal
 * handler; allocates (glibc's malloc under the preload's guard). */
#ifndef RTL_SYMINDEX_H
#define RTL_SYMINDEX_H

#include <stddef.h>
#include <stdint.h>

struct rtl_sym {
	const char *file; /* the object's path, "" for the program */
	uintptr_t base;   /* where the object's first segment is mapped */
	const char *name; /* NULL where no exported symbol covers the address */
	uintptr_t addr;   /* the symbol's address */
	size_t size;      /* its size (0: a symbol of no size, at addr) */
	int has_symtab;   /* the object's file has a full symbol table, which
	                     names its static functions too (0: stripped, as
	                     Debian's binaries are, or not a file) */
};

/* As dladdr1(at, ..., RTLD_DL_SYMENT) would: the object holding at and the
 * exported symbol covering it, the highest such, the first in the object's
 * hash order among equals. 0, or -1 where no object holds at. */
int rtl_symindex_lookup(uintptr_t at, struct rtl_sym *out);

/* In a forked child, from the preload's fork handler. */
void rtl_symindex_forked(void);

#endif
