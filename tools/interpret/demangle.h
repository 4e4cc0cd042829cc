/* C++ names as people read them (demangle.c): the report keeps the
 * symbol as the loaded file has it (what a rule's site glob matches) and
 * adds the demangled form beside it for display. */
#ifndef RTLCTL_DEMANGLE_H
#define RTLCTL_DEMANGLE_H

#include <stddef.h>

/* name as symbols.c shows it ("module!symbol", "module!symbol+0xOFF",
 * "module!+0xOFF") with its symbol demangled, into out (len bytes, always
 * terminated); a symbol that is not a mangled C++ name (or a build without
 * libstdc++) stays as it is. Returns out. */
const char *rtl_demangle(const char *name, char *out, size_t len);

/* A demangled name shortened for a table (docs/report.md, "Names"): the
 * standard library's std::string under that name, and every template's
 * arguments elided ("std::vector<>::_M_realloc_insert<>(...)"); a name
 * with unbalanced brackets stays whole. Returns out (len bytes, always
 * terminated). */
#define RTL_NAME_SHOWN_MAX 4096
const char *rtl_short_name(const char *name, char *out, size_t len);

#endif
