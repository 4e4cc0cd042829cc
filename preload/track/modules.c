/* The module map: two snapshots, one current, so that the writer (maybe a
 * signal handler) always reads a whole one while a refresh fills the
 * other. Refreshes are serialised by a spin lock and never run in a
 * handler. */
#include "preload/track/modules.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/util/lock.h"
#include "preload/engine/loader.h"
#include "preload/track/format.h"
#include "preload/track/raw.h"

#define MAX_MODULES 256
#define NAME_MAX_LEN 256

struct module {
	uintptr_t bias, lo, hi;
	char path[NAME_MAX_LEN];
};

struct snapshot {
	int n;
	struct module m[MAX_MODULES];
};

static struct snapshot snaps[2];
static _Atomic int cur;
static struct rtl_lock refreshing = RTL_LOCK_INIT;
static char exe[NAME_MAX_LEN];

static int add(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct snapshot *s = arg;
	struct module *m;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const char *name;
	size_t len;

	(void)size;
	if (s->n == MAX_MODULES)
		return 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (lo >= hi)
		return 0; /* no text: the vDSO's is there, but nothing allocates */
	m = &s->m[s->n++];
	m->bias = info->dlpi_addr;
	m->lo = lo;
	m->hi = hi;
	/* The executable has no name here: its file is /proc/self/exe. */
	name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : exe;
	len = strnlen(name, sizeof(m->path) - 1);
	memcpy(m->path, name, len);
	m->path[len] = '\0';
	return 0;
}

void rtl_modules_refresh(void)
{
	struct snapshot *s;

	if (!exe[0]) {
		ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[len > 0 ? len : 0] = '\0';
	}
	/* The gate around the lock as well as the loader's call: a fork
	 * never finds the refresh lock held (loader.h). */
	rtl_loader_enter();
	if (rtl_lock_acquire(&refreshing) == 0) {
		s = &snaps[!atomic_load_explicit(&cur, memory_order_relaxed)];
		s->n = 0;
		dl_iterate_phdr(add, s);
		atomic_store_explicit(&cur, s == &snaps[1], memory_order_release);
		rtl_lock_release(&refreshing);
	}
	rtl_loader_leave();
}

void rtl_modules_cover(uintptr_t ip)
{
	const struct snapshot *s =
	        &snaps[atomic_load_explicit(&cur, memory_order_acquire)];

	for (int i = 0; i < s->n; i++)
		if (ip - s->m[i].lo < s->m[i].hi - s->m[i].lo)
			return;
	rtl_modules_refresh();
}

void rtl_modules_write(void)
{
	const struct snapshot *s =
	        &snaps[atomic_load_explicit(&cur, memory_order_acquire)];

	for (int i = 0; i < s->n; i++) {
		const struct module *m = &s->m[i];
		const char *base = strrchr(m->path, '/');

		rtl_raw_start(RTL_TRACK_MODULE);
		rtl_raw_u64(m->bias);
		rtl_raw_u64(m->lo);
		rtl_raw_u64(m->hi);
		rtl_raw_str(m->path);
		/* The executable shows as the program's name, as %e does. */
		rtl_raw_str(m->path == exe || !strcmp(m->path, exe)
		                    ? program_invocation_short_name
		            : base ? base + 1
		                   : m->path);
		rtl_raw_end();
	}
}
