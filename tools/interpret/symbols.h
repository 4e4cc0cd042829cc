/* Naming instruction addresses of a run after it ended, from its module
 * map (symbols.c): the one place rtlctl symbolises, so that a better
 * reader (libdw, with inlines and source lines) replaces one function. */
#ifndef RTLCTL_SYMBOLS_H
#define RTLCTL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* One loaded object of the run: its text spans [lo, hi); an address a in
 * it is a - bias in its file. */
struct rtl_module {
	uint64_t bias, lo, hi;
	char *path; /* its file, as the program had it */
	char *name; /* what to show: the file's base name, the program's own */
	void *syms; /* its symbol table, read on first use */
};

struct rtl_modules {
	struct rtl_module *m;
	size_t n, cap;
	void *dwfl;      /* their debug information (sources.c), on first use */
	int dwfl_failed; /* libdwfl could not start: no source lines */
};

/* Add a module (copies the strings). -1 if out of memory. */
int rtl_modules_add(struct rtl_modules *mods, uint64_t bias, uint64_t lo,
                    uint64_t hi, const char *path, const char *name);
void rtl_modules_free(struct rtl_modules *mods);

/* "module!function" (with_offset: "module!function+0xOFF"), or
 * "module!+0xOFF" when no symbol covers the address, for a return
 * address ip (the call is at ip - 1). The symbol tables of the module's
 * file (.symtab, else .dynsym) decide, as the program had them loaded. */
void rtl_symbolise(struct rtl_modules *mods, uint64_t ip, int with_offset,
                   char *out, size_t len);

/* Where in the source the code at return address ip is (sources.c):
 * "file.c:LINE", and when it lies in inlined calls, innermost first,
 * " (inlined_fn) < caller.c:LINE" for each. -1 (out untouched) without
 * debug information for it: the module's own, its separate debug file, or
 * debuginfod's. */
int rtl_source_line(struct rtl_modules *mods, uint64_t ip, char *out, size_t len);
/* The site a return address ip in module (its name as symbols.c shows
 * it) is charged to, from debug information (sources.c): when the call
 * lies in code inlined from functions, the innermost of them that
 * is_wrapper(name, arg) says is no allocator's wrapper, as
 * "module!linkage_name", into name (1), or the symbol's own function (0,
 * name untouched); in line, "file.c:LINE" of the call in that function.
 * -1 without debug information for it. */
#define RTL_SYMBOL_NAME_MAX 1024
int rtl_source_site(struct rtl_modules *mods, uint64_t ip, const char *module,
                    int (*is_wrapper)(const char *name, void *arg), void *arg,
                    char *name, size_t nlen, char *line, size_t llen);
/* The functions inlined at return address ip (sources.c), innermost
 * first, each by its linkage name (as a symbol table has it), to fn: how
 * many, or -1 without debug information for it. */
int rtl_source_inlines(struct rtl_modules *mods, uint64_t ip,
                       void (*fn)(void *arg, const char *linkage_name), void *arg);
void rtl_sources_free(struct rtl_modules *mods);

#endif
