/* Symbolisation with libelf: each module's function symbols (.symtab and
 * .dynsym: static functions too, if the file is not stripped), sorted
 * once, then a binary search per address. A file that cannot be read
 * names nothing: its addresses show as module!+0xOFF. */
#include "tools/interpret/symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sym {
	uint64_t value, size;
	char *name;
};

struct symtab {
	struct sym *s;
	size_t n;
};

int rtl_modules_add(struct rtl_modules *mods, uint64_t bias, uint64_t lo,
                    uint64_t hi, const char *path, const char *name)
{
	struct rtl_module *m;

	if (mods->n == mods->cap) {
		size_t cap = mods->cap ? 2 * mods->cap : 16;
		struct rtl_module *grown = realloc(mods->m, cap * sizeof(*grown));

		if (!grown)
			return -1;
		mods->m = grown;
		mods->cap = cap;
	}
	m = &mods->m[mods->n];
	*m = (struct rtl_module){ bias, lo, hi, strdup(path), strdup(name), NULL };
	if (!m->path || !m->name) {
		free(m->path);
		free(m->name);
		return -1;
	}
	mods->n++;
	return 0;
}

static void symtab_free(struct symtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i].name);
	free(t->s);
	free(t);
}

void rtl_modules_free(struct rtl_modules *mods)
{
	for (size_t i = 0; i < mods->n; i++) {
		free(mods->m[i].path);
		free(mods->m[i].name);
		symtab_free(mods->m[i].syms);
	}
	free(mods->m);
	rtl_sources_free(mods);
	*mods = (struct rtl_modules){ 0 };
}

static int by_value(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	/* Among aliases, the one with a size, then the first name. */
	if ((x->size != 0) != (y->size != 0))
		return x->size ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int add_sym(struct symtab *t, size_t *cap, uint64_t value, uint64_t size,
                   const char *name)
{
	if (t->n == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		struct sym *grown = realloc(t->s, c * sizeof(*grown));

		if (!grown)
			return -1;
		t->s = grown;
		*cap = c;
	}
	t->s[t->n].name = strdup(name);
	if (!t->s[t->n].name)
		return -1;
	t->s[t->n].value = value;
	t->s[t->n].size = size;
	t->n++;
	return 0;
}

/* The function symbols of section scn (a symbol table). */
static int read_section(Elf *e, Elf_Scn *scn, GElf_Shdr *sh, struct symtab *t,
                        size_t *cap)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type;

		if (!gelf_getsym(d, (int)i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !s.st_value ||
		    s.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (name && *name && add_sym(t, cap, s.st_value, s.st_size, name) < 0)
			return -1;
	}
	return 0;
}

static struct symtab *load(const char *path)
{
	struct symtab *t = calloc(1, sizeof(*t));
	int fd = open(path, O_RDONLY | O_CLOEXEC), have_symtab = 0;
	size_t cap = 0;
	Elf *e = NULL;
	Elf_Scn *scn = NULL;

	if (!t || fd < 0 || elf_version(EV_CURRENT) == EV_NONE ||
	    !(e = elf_begin(fd, ELF_C_READ, NULL)))
		goto done;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			have_symtab = 1;
			read_section(e, scn, &sh, t, &cap);
		}
	}
	/* Stripped: the dynamic symbols, as dladdr would see them. */
	while (!have_symtab && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			read_section(e, scn, &sh, t, &cap);
	}
	qsort(t->s, t->n, sizeof(*t->s), by_value);
done:
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return t;
}

/* The symbol covering a (a file address), or NULL. */
static const struct sym *find(const struct symtab *t, uint64_t a)
{
	size_t lo = 0, hi = t ? t->n : 0;
	const struct sym *s;

	while (lo < hi) { /* the last symbol with value <= a */
		size_t mid = lo + (hi - lo) / 2;

		if (t->s[mid].value <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &t->s[lo - 1];
	while (s > t->s && s[-1].value == s->value)
		s--; /* the first of its aliases: sorted to prefer a size */
	return s->size == 0 || a - s->value < s->size ? s : NULL;
}

void rtl_symbolise(struct rtl_modules *mods, uint64_t ip, int with_offset,
                   char *out, size_t len)
{
	uint64_t at = ip - 1;
	struct rtl_module *m = NULL;
	const struct sym *s;

	for (size_t i = 0; i < mods->n; i++)
		if (at - mods->m[i].lo < mods->m[i].hi - mods->m[i].lo)
			m = &mods->m[i];
	if (!m) {
		snprintf(out, len, "?!+0x%llx", (unsigned long long)at);
		return;
	}
	if (!m->syms)
		m->syms = load(m->path);
	s = find(m->syms, at - m->bias);
	if (!s)
		snprintf(out, len, "%s!+0x%llx", m->name,
		         (unsigned long long)(at - m->bias));
	else if (with_offset)
		snprintf(out, len, "%s!%s+0x%llx", m->name, s->name,
		         (unsigned long long)(at - m->bias - s->value));
	else
		snprintf(out, len, "%s!%s", m->name, s->name);
}
