/* Demangling with libstdc++'s __cxa_demangle (the demangler gcc's own
 * tools and perf use), for names symbols.c made. Only symbols that start
 * with _Z are demangled: __cxa_demangle also reads type codes ("i" is
 * "int"), and a C function called i must stay i. */
#include "tools/interpret/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef RTL_HAVE_CXA_DEMANGLE
/* libstdc++'s, declared here: no C++ header in C. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static char *demangled(const char *symbol)
{
	int status = -1;
	char *d = __cxa_demangle(symbol, NULL, NULL, &status);

	if (status == 0 && d)
		return d;
	free(d);
	return NULL;
}
#else
static char *demangled(const char *symbol)
{
	(void)symbol;
	return NULL;
}
#endif

const char *rtl_demangle(const char *name, char *out, size_t len)
{
	const char *bang = strrchr(name, '!'), *sym = bang ? bang + 1 : name;
	const char *plus = strstr(sym, "+0x");
	size_t n = plus ? (size_t)(plus - sym) : strlen(sym);
	char *symbol, *d = NULL;

	snprintf(out, len, "%s", name);
	if (n < 2 || strncmp(sym, "_Z", 2) || !(symbol = strndup(sym, n)))
		return out;
	d = demangled(symbol);
	free(symbol);
	if (d)
		snprintf(out, len, "%.*s%s%s", (int)(sym - name), name, d, plus ? plus : "");
	free(d);
	return out;
}
