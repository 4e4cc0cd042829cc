/* The loaded objects' exported symbols by address (symindex.h).
 *
 * glibc's dladdr1 looks at every symbol of the object's dynamic symbol
 * table (those the hash table lists) and keeps the one that covers the
 * address with the highest address, the first among equals. This builds,
 * per object, the same candidates sorted by address, and a running maximum
 * of their ends, so that a lookup is a binary search and a short walk down
 * over the symbols that may still cover it. The answer is dladdr1's.
 *
 * Tables are built once per object and never freed or reused (a reader
 * may hold one); when an object is unloaded (dl_iterate_phdr's dlpi_subs
 * moves), the tables built before are no longer matched, and new ones are
 * built on demand. Where the lock is held elsewhere, the tables are full
 * or one cannot be built, dladdr1 answers. */
#include "preload/engine/symindex.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/util/lock.h"

#define MAX_OBJECTS 256

struct entry {
	uintptr_t addr, end; /* end: addr + size, or addr + 1 for size 0 */
	uint32_t order;      /* its place in the hash table's order */
	uint32_t sym;        /* its index in the symbol table */
};

struct table {
	const ElfW(Phdr) * phdr; /* the object's key, with its bias and */
	uintptr_t bias;
	unsigned long long subs; /* the unloads counted when it was built */
	const ElfW(Sym) * symtab;
	const char *strtab;
	struct entry *e;
	uintptr_t *maxend; /* maxend[i]: the largest end of e[0..i] */
	uint32_t n;
	int failed, has_symtab;
	_Atomic int ready; /* built (or failed): only then read */
};

static struct rtl_lock lock = RTL_LOCK_INIT;
static struct table tables[MAX_OBJECTS];
static int ntables;

struct found {
	uintptr_t at;
	struct dl_phdr_info info;
	uintptr_t base;
	unsigned long long subs;
	int hit;
};

/* The object whose loaded segments hold f->at. */
static int find(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found *f = arg;
	uintptr_t base = UINTPTR_MAX, page = (uintptr_t)getpagesize() - 1;
	int hit = 0;

	(void)size;
	f->subs = info->dlpi_subs;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		/* dladdr's base: the first segment's page (the loader's
		 * l_map_start). */
		if ((lo & ~page) < base)
			base = lo & ~page;
		if (f->at >= lo && f->at < lo + ph->p_memsz)
			hit = 1;
	}
	if (!hit)
		return 0;
	f->info = *info;
	f->base = base;
	f->hit = 1;
	return 1;
}

/* A dynamic entry's address: the loader relocates most in place; the
 * vDSO's are left as linked. */
static uintptr_t dyn_addr(uintptr_t ptr, uintptr_t bias)
{
	return ptr < bias ? ptr + bias : ptr;
}

/* How many symbols the GNU hash table lists, and from which index. */
static uint32_t gnu_hash_end(const uint32_t *gh, uint32_t *first)
{
	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom = gh[2], last = 0;
	const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)&gh[4] + bloom);
	const uint32_t *chain = buckets + nbuckets;

	*first = symoffset;
	for (uint32_t b = 0; b < nbuckets; b++)
		if (buckets[b] > last)
			last = buckets[b];
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

/* Address ascending; among equals the later in hash order first, so that a
 * walk down meets the earlier first. */
static int by_addr(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order > y->order ? -1 : x->order < y->order;
}

/* Whether the object's file has a section of type SHT_SYMTAB: looking
 * there for a static function's name costs a read of the whole file's
 * map, in vain where it was stripped. */
static int file_has_symtab(const char *path)
{
	int fd = open(*path ? path : "/proc/self/exe", O_RDONLY | O_CLOEXEC), found = 0;
	ElfW(Ehdr) eh;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_shentsize == sizeof(ElfW(Shdr)))
		for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
			ElfW(Shdr) sh;

			if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + i * sizeof(sh))) !=
			    (ssize_t)sizeof(sh))
				break;
			found = sh.sh_type == SHT_SYMTAB;
		}
	close(fd);
	return found;
}

static int build(struct table *t, const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;
	const uint32_t *gnu = NULL, *sysv = NULL;
	uint32_t first = 0, end = 0, n = 0;
	int sysv_only;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn_addr(dyn->d_un.d_ptr, info->dlpi_addr);

		if (dyn->d_tag == DT_SYMTAB)
			t->symtab = (const ElfW(Sym) *)p;
		else if (dyn->d_tag == DT_STRTAB)
			t->strtab = (const char *)p;
		else if (dyn->d_tag == DT_GNU_HASH)
			gnu = (const uint32_t *)p;
		else if (dyn->d_tag == DT_HASH)
			sysv = (const uint32_t *)p;
	}
	if (!t->symtab || !t->strtab || (!gnu && !sysv))
		return -1;
	/* glibc's lookup walks the GNU table where there is one, else the
	 * SysV one's whole symbol table. */
	if ((sysv_only = !gnu))
		end = sysv[1];
	else
		end = gnu_hash_end(gnu, &first);
	if (end > first && !(t->e = malloc((end - first) * sizeof(*t->e))))
		return -1;
	for (uint32_t i = first; i < end; i++) {
		const ElfW(Sym) *s = &t->symtab[i];

		/* dladdr's candidates: global or weak (the GNU table lists no
		 * others), not TLS, defined (or with a value), not absolute. */
		if ((sysv_only && ELF64_ST_BIND(s->st_info) != STB_GLOBAL &&
		     ELF64_ST_BIND(s->st_info) != STB_WEAK) ||
		    ELF64_ST_TYPE(s->st_info) == STT_TLS ||
		    (s->st_shndx == SHN_UNDEF && s->st_value == 0) || s->st_shndx == SHN_ABS)
			continue;
		t->e[n].addr = info->dlpi_addr + s->st_value;
		t->e[n].end = t->e[n].addr +
		              (s->st_shndx == SHN_UNDEF || s->st_size == 0 ? 1 : s->st_size);
		t->e[n].order = i - first;
		t->e[n].sym = i;
		n++;
	}
	qsort(t->e, n, sizeof(*t->e), by_addr);
	if (n && !(t->maxend = malloc(n * sizeof(*t->maxend))))
		return -1;
	for (uint32_t i = 0; i < n; i++)
		t->maxend[i] = i && t->maxend[i - 1] > t->e[i].end ? t->maxend[i - 1] : t->e[i].end;
	t->n = n;
	return 0;
}

/* The table of the object found, built if new; NULL if none can be had now
 * (lock busy, tables full, the object's tables unreadable). */
static struct table *table_of(const struct found *f)
{
	struct table *t = NULL;

	if (rtl_lock_try(&lock) < 0)
		return NULL;
	for (int i = 0; i < ntables; i++)
		if (tables[i].phdr == f->info.dlpi_phdr && tables[i].bias == f->info.dlpi_addr &&
		    tables[i].subs == f->subs)
			t = &tables[i];
	if (!t && ntables < MAX_OBJECTS) {
		t = &tables[ntables++];
		t->phdr = f->info.dlpi_phdr;
		t->bias = f->info.dlpi_addr;
		t->subs = f->subs;
		t->failed = build(t, &f->info) < 0;
		t->has_symtab = file_has_symtab(f->info.dlpi_name ? f->info.dlpi_name : "");
		atomic_store_explicit(&t->ready, 1, memory_order_release);
	}
	rtl_lock_release(&lock);
	return t && atomic_load_explicit(&t->ready, memory_order_acquire) && !t->failed ? t
	                                                                                : NULL;
}

void rtl_symindex_forked(void)
{
	/* A thread building a table did not come along: its table is left
	 * unread (another is built for the object), the lock free again. */
	for (int i = 0; i < ntables; i++)
		if (!atomic_load_explicit(&tables[i].ready, memory_order_acquire)) {
			tables[i].failed = 1;
			tables[i].phdr = NULL;
			atomic_store_explicit(&tables[i].ready, 1, memory_order_release);
		}
	rtl_lock_reset(&lock);
}

static int from_dladdr(uintptr_t at, struct rtl_sym *out)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info di;

	if (!dladdr1((void *)at, &di, (void **)&sym, RTLD_DL_SYMENT))
		return -1;
	out->file = di.dli_fname ? di.dli_fname : "";
	out->base = (uintptr_t)di.dli_fbase;
	out->name = di.dli_sname;
	out->addr = (uintptr_t)di.dli_saddr;
	out->size = sym ? sym->st_size : 0;
	out->has_symtab = 1; /* not known: worth a look */
	return 0;
}

int rtl_symindex_lookup(uintptr_t at, struct rtl_sym *out)
{
	struct found f = { .at = at };
	const struct table *t;
	size_t lo = 0, hi;

	memset(out, 0, sizeof(*out));
	dl_iterate_phdr(find, &f);
	if (!f.hit)
		return from_dladdr(at, out);
	if (!(t = table_of(&f)))
		return from_dladdr(at, out);
	out->file = f.info.dlpi_name ? f.info.dlpi_name : "";
	out->base = f.base;
	out->has_symtab = t->has_symtab;
	/* The last entry at or below at, then down while one may cover it. */
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].addr <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && t->maxend[i] > at;) {
		if (t->e[i].end > at) {
			const ElfW(Sym) *s = &t->symtab[t->e[i].sym];

			out->name = t->strtab + s->st_name;
			out->addr = t->e[i].addr;
			out->size = s->st_size;
			break;
		}
	}
	return 0;
}
