/* Demangling with libstdc++'s __cxa_demangle (the demangler gcc's own
 * tools and perf use), for names symbols.c made. Only symbols that start
 * with _Z are demangled: __cxa_demangle also reads type codes ("i" is
 * "int"), and a C function called i must stay i. */
#include "tools/interpret/demangle.h"

#include <ctype.h>
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

/* What people write for the standard library's long spellings. */
static const struct {
	const char *full, *shown;
} aliases[] = {
	{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
	  "std::string" },
	{ "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
	  "std::string" },
	{ "std::__cxx11::", "std::" },
};

/* Whether the '<' at s[at] is part of an operator's name (operator<,
 * operator<<, operator<=, operator<=>), not a template's arguments. */
static int operator_lt(const char *s, size_t at)
{
	static const char op[] = "operator";
	size_t k = sizeof(op) - 1;

	if (at >= 1 && s[at - 1] == '<')
		at--; /* the second '<' of operator<< */
	if (at < k || strncmp(s + at - k, op, k))
		return 0;
	/* "operator" as a word: not the end of unary_operator<T> */
	at -= k;
	return at == 0 || !(isalnum((unsigned char)s[at - 1]) || s[at - 1] == '_');
}

const char *rtl_short_name(const char *name, char *out, size_t len)
{
	char tmp[RTL_NAME_SHOWN_MAX];
	size_t n = 0, i = 0, depth = 0;
	long parens = 0;

	if (!len)
		return out;
	/* The aliases first, as often as they occur. */
	while (name[i] && n + 1 < sizeof(tmp)) {
		size_t a;

		for (a = 0; a < sizeof(aliases) / sizeof(*aliases); a++) {
			size_t fl = strlen(aliases[a].full), sl = strlen(aliases[a].shown);

			if (!strncmp(name + i, aliases[a].full, fl) && n + sl + 1 < sizeof(tmp)) {
				memcpy(tmp + n, aliases[a].shown, sl);
				n += sl;
				i += fl;
				break;
			}
		}
		if (a == sizeof(aliases) / sizeof(*aliases))
			tmp[n++] = name[i++];
	}
	tmp[n] = '\0';
	if (name[i]) { /* too long to rewrite: as it is */
		snprintf(out, len, "%s", name);
		return out;
	}
	/* Then every template's arguments: "<>". */
	n = 0;
	for (i = 0; tmp[i]; i++) {
		char c = tmp[i];

		if (c == '<' && (depth || !operator_lt(tmp, i))) {
			if (!depth++ && n + 2 < len) {
				out[n++] = '<';
				out[n++] = '>';
			}
			continue;
		}
		/* An expression among the arguments: its '>' closes nothing. */
		if (depth && (c == '(' || c == ')')) {
			parens += c == '(' ? 1 : -1;
			continue;
		}
		if (c == '>' && depth && !parens) {
			depth--;
			continue;
		}
		if (!depth && n + 1 < len)
			out[n++] = c;
	}
	out[n] = '\0';
	if (depth) /* unbalanced: not a name this understands */
		snprintf(out, len, "%s", name);
	return out;
}
