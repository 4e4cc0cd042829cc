/* Source lines of a run's instruction addresses, after it ended, with
 * elfutils' libdwfl: the module's DWARF, or its separate debug info
 * (/usr/lib/debug, by build id; debuginfod when DEBUGINFOD_URLS is set,
 * as for every elfutils tool), with the functions inlined at the address.
 * Names of functions are symbols.c's (the loaded file's symbol tables,
 * what site globs match), but for a site in code inlined from the
 * program's own function, named here after it (rtl_source_site). */
#include "tools/interpret/symbols.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *debuginfo_path;

static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Without DEBUGINFOD_URLS, separate debug files by build id only (Debian's
 * -dbgsym packages, /usr/lib/debug/.build-id): the standard search loads
 * libdebuginfod and its thirty libraries even when it has no server to
 * ask, which tripled the time rtlctl took for a report. */
static const Dwfl_Callbacks offline_local = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_build_id_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Every module as the program had it loaded, on first use. */
static Dwfl *session(struct rtl_modules *mods)
{
	Dwfl *d;

	if (mods->dwfl || mods->dwfl_failed)
		return mods->dwfl;
	const char *urls = getenv("DEBUGINFOD_URLS");

	d = dwfl_begin(urls && *urls ? &offline : &offline_local);
	if (!d) {
		mods->dwfl_failed = 1;
		return NULL;
	}
	dwfl_report_begin(d);
	for (size_t i = 0; i < mods->n; i++)
		dwfl_report_elf(d, mods->m[i].name, mods->m[i].path, -1,
		                mods->m[i].bias, false);
	dwfl_report_end(d, NULL, NULL);
	mods->dwfl = d;
	return d;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The name a DIE's function has in the source (through its abstract
 * origin, for an inlined instance). */
static const char *function_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));

	return n ? n : "?";
}

static size_t add(char *out, size_t len, size_t at, const char *fmt, const char *s,
                  const char *file, int line)
{
	int n;

	if (at >= len)
		return at;
	n = snprintf(out + at, len - at, fmt, s, file, line);
	return n < 0 ? at : at + (size_t)n;
}

/* The scopes around address at (module-relative), innermost first, as
 * they nest in the code: dwarf_getscopes continues an inlined function's
 * chain in its abstract definition, dwarf_getscopes_die from the innermost
 * DIE goes through the functions it was inlined into (as eu-addr2line
 * -i). */
static int scopes_at(Dwarf_Die *cu, Dwarf_Addr at, Dwarf_Die **scopes)
{
	Dwarf_Die inner;
	int n = dwarf_getscopes(cu, at, scopes);

	if (n <= 0)
		return n;
	inner = (*scopes)[0];
	free(*scopes);
	*scopes = NULL;
	return dwarf_getscopes_die(&inner, scopes);
}

/* What the debug information says of the code at return address ip (the
 * call at ip - 1): its file and line, and the scopes around it (scopes_at;
 * free them), with the CU's file table for their DW_AT_call_file. */
struct place {
	const char *file;
	int line;
	Dwarf_Die *scopes;
	int n;
	Dwarf_Files *files;
};

/* 0, or -1 without a line for ip (nothing to free then). */
static int place_of(struct rtl_modules *mods, uint64_t ip, struct place *p)
{
	Dwfl *d = session(mods);
	uint64_t at = ip - 1;
	Dwfl_Module *mod = d ? dwfl_addrmodule(d, at) : NULL;
	Dwfl_Line *l = mod ? dwfl_module_getsrc(mod, at) : NULL;
	Dwarf_Addr bias;
	Dwarf_Die *cu;

	*p = (struct place){ 0 };
	if (!l || !(p->file = dwfl_lineinfo(l, NULL, &p->line, NULL, NULL, NULL)))
		return -1;
	cu = dwfl_module_addrdie(mod, at, &bias);
	p->n = cu ? scopes_at(cu, at - bias, &p->scopes) : 0;
	if (cu)
		dwarf_getsrcfiles(cu, &p->files, NULL);
	return 0;
}

/* Where the inlined scope s was called from, in the next function out. */
static const char *call_site(const struct place *p, Dwarf_Die *s, int *line)
{
	Dwarf_Attribute a;
	Dwarf_Word cf = 0, cl = 0;
	const char *f = NULL;

	dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &a), &cf);
	dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &a), &cl);
	if (p->files)
		f = dwarf_filesrc(p->files, cf, NULL, NULL);
	*line = (int)cl;
	return f ? base_name(f) : "?";
}

int rtl_source_line(struct rtl_modules *mods, uint64_t ip, char *out, size_t len)
{
	struct place p;
	size_t w;

	if (place_of(mods, ip, &p) < 0)
		return -1;
	w = add(out, len, 0, "%s%s:%d", "", base_name(p.file), p.line);
	/* Inlined calls, innermost first: each is at the line above, and
	 * was called from its DW_AT_call_file:line in the next one out. */
	for (int i = 0; i < p.n; i++) {
		const char *caller;
		int cl;

		if (dwarf_tag(&p.scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		caller = call_site(&p, &p.scopes[i], &cl);
		w = add(out, len, w, " (%s) < %s:%d", function_name(&p.scopes[i]), caller, cl);
	}
	free(p.scopes);
	return 0;
}

/* The name a function's DIE has for the linker (through its abstract
 * origin), as a symbol table would have it; its source name for C. */
static const char *linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	return n ? n : function_name(die);
}

static int has_linkage_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	       dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a);
}

/* A function without a linkage name (gcc gives none to some inlined
 * constructors and to functions of no linkage) has only its bare name,
 * which no wrapper glob can tell: one declared in a system header
 * (libstdc++'s, glib's) is taken for a wrapper. */
static int in_system_header(Dwarf_Die *die)
{
	const char *f = dwarf_decl_file(die);

	return f && (!strncmp(f, "/usr/include/", 13) || !strncmp(f, "/usr/lib/gcc/", 13));
}

int rtl_source_site(struct rtl_modules *mods, uint64_t ip, const char *module,
                    int (*is_wrapper)(const char *name, void *arg), void *arg,
                    char *name, size_t nlen, char *line, size_t llen)
{
	struct place p;
	const char *in_file;
	int in_line, renamed = 0;

	if (place_of(mods, ip, &p) < 0)
		return -1;
	/* From the innermost function out: where the code is in each is the
	 * address's own line for the innermost, and for each one further out
	 * the line the one inside it was inlined from. */
	in_file = base_name(p.file);
	in_line = p.line;
	for (int i = 0; i < p.n; i++) {
		Dwarf_Die *s = &p.scopes[i];
		int tag = dwarf_tag(s);
		char full[RTL_SYMBOL_NAME_MAX];

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		snprintf(full, sizeof(full), "%s!%s", module, linkage_name(s));
		if (tag == DW_TAG_subprogram ||
		    !(has_linkage_name(s) ? is_wrapper(full, arg) : in_system_header(s))) {
			/* A subprogram is the symbol's function: its name stays. */
			if (tag == DW_TAG_inlined_subroutine) {
				snprintf(name, nlen, "%s", full);
				renamed = 1;
			}
			break;
		}
		in_file = call_site(&p, s, &in_line);
	}
	free(p.scopes);
	snprintf(line, llen, "%s:%d", in_file, in_line);
	return renamed;
}

int rtl_source_inlines(struct rtl_modules *mods, uint64_t ip,
                       void (*fn)(void *arg, const char *linkage_name), void *arg)
{
	Dwfl *d = session(mods);
	uint64_t at = ip - 1;
	Dwfl_Module *mod = d ? dwfl_addrmodule(d, at) : NULL;
	Dwarf_Addr bias;
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, at, &bias) : NULL, *scopes = NULL;
	int n = cu ? scopes_at(cu, at - bias, &scopes) : 0, k = 0;

	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			fn(arg, linkage_name(&scopes[i]));
			k++;
		}
	free(scopes);
	return cu ? k : -1;
}

void rtl_sources_free(struct rtl_modules *mods)
{
	if (mods->dwfl)
		dwfl_end(mods->dwfl);
	mods->dwfl = NULL;
}
