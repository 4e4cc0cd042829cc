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

#endif
