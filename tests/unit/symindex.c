/* The preload's symbol index on its own (preload/engine/symindex.c, linked
 * in from source): at every address of the loaded objects' code, sampled,
 * it names what dladdr1 names, and an address in no object is refused. */
#include <dlfcn.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "preload/engine/symindex.h"
#include "tests/unit/test.h"

struct tally {
	long addresses, named, differ;
};

/* One address against dladdr1: the same symbol (or none), base and size. */
static void compare(uintptr_t at, struct tally *t)
{
	const ElfW(Sym) *sym = NULL;
	struct rtl_sym got;
	Dl_info di;
	int ok = dladdr1((void *)at, &di, (void **)&sym, RTLD_DL_SYMENT);

	t->addresses++;
	if (rtl_symindex_lookup(at, &got) < 0) {
		t->differ += ok != 0;
		return;
	}
	if (!ok || (uintptr_t)di.dli_fbase != got.base || !di.dli_sname != !got.name ||
	    (got.name && (strcmp(got.name, di.dli_sname) || got.addr != (uintptr_t)di.dli_saddr ||
	                  got.size != sym->st_size))) {
		if (t->differ++ < 5)
			printf("# %#lx: dladdr1 %s at %p, the index %s at %#lx\n", (unsigned long)at,
			       di.dli_sname ? di.dli_sname : "(none)", di.dli_saddr,
			       got.name ? got.name : "(none)", (unsigned long)got.addr);
		return;
	}
	t->named += got.name != NULL;
}

/* Every 61st byte of each object's executable segments (all of the
 * program's, libc's, libm's and the loader's code, and the vDSO's). */
static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			for (uintptr_t a = lo; a < lo + ph->p_memsz; a += 61)
				compare(a, arg);
	}
	return 0;
}

TEST(every_sampled_code_address_is_named_as_dladdr1_names_it)
{
	struct tally t = { 0, 0, 0 };
	volatile double x = 2.0;

	CHECK(sqrt(x) > 1.0); /* libm loaded and used */
	dl_iterate_phdr(each_object, &t);
	printf("# %ld addresses, %ld named\n", t.addresses, t.named);
	CHECK(t.addresses > 20000); /* libc's code alone is over 1 MB */
	CHECK(t.named > t.addresses / 4);
	CHECK_EQ(t.differ, 0);
}

TEST(exported_functions_are_named_by_their_own_address)
{
	struct rtl_sym s;

	CHECK(rtl_symindex_lookup((uintptr_t)&pthread_create + 1, &s) == 0);
	CHECK(s.name && strstr(s.name, "pthread_create"));
	CHECK(s.addr == (uintptr_t)&pthread_create);
	CHECK(strstr(s.file, "libc.so"));
}

static __attribute__((noinline)) int not_exported(int x)
{
	return x * 3 + 1;
}

/* A static function has no exported name; the test's own file keeps its
 * full symbol table (meson does not strip), which names it. */
TEST(a_static_function_is_unnamed_and_its_file_said_to_have_a_symtab)
{
	struct rtl_sym s;
	int (*volatile f)(int) = not_exported;

	CHECK(f(1) == 4);
	CHECK(rtl_symindex_lookup((uintptr_t)f + 1, &s) == 0);
	CHECK(!s.name || strcmp(s.name, "not_exported"));
	CHECK_EQ(s.has_symtab, 1);
}

TEST(an_address_in_no_object_is_refused)
{
	struct rtl_sym s;
	void *anon = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(anon != MAP_FAILED);
	CHECK_EQ(rtl_symindex_lookup((uintptr_t)anon, &s), -1);
	CHECK(!s.name);
}

struct sweep {
	struct tally t;
};

static void *sweep(void *arg)
{
	dl_iterate_phdr(each_object, &((struct sweep *)arg)->t);
	return NULL;
}

/* Threads that look up at once (the first builds each object's table
 * while the others ask) all get dladdr1's answers. */
TEST(threads_looking_up_at_once_get_the_same_answers)
{
	struct sweep s[4];
	pthread_t th[4];

	memset(s, 0, sizeof(s));
	for (int i = 0; i < 4; i++)
		CHECK(pthread_create(&th[i], NULL, sweep, &s[i]) == 0);
	for (int i = 0; i < 4; i++) {
		CHECK(pthread_join(th[i], NULL) == 0);
		CHECK_EQ(s[i].t.differ, 0);
		CHECK(s[i].t.named > 0);
	}
}
