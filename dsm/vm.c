/* The page mechanism (the VM version): a shared heap of 4 KiB pages protected
 * with mprotect, traps caught by our own SIGSEGV handler. The heap is a memfd
 * mapped twice: the application's view, protected page by page, and a system
 * view that is always writable, through which diffs are made and applied
 * without opening the application's pages. Twins live in a third mapping.
 *
 * The SIGSEGV handler runs in a signal handler: it calls only dsm_fault and
 * passes every other fault to the handler installed before it (rtl's, which
 * passes on in turn), or lets the default action kill the process. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "dsm/internal.h"
#include "dsm/pagediff.h"
#include "examples/fault.h"

#define PAGE ((size_t)sysconf(_SC_PAGESIZE))

static struct {
	int ready;
	uint8_t *app, *sys, *twins;
	size_t size, used;
	uint32_t *page_unit; /* unit id + 1, 0 for none */
	struct sigaction prev;
} vm;

static void pass_on(int sig, siginfo_t *si, void *uc)
{
	struct sigaction prev = vm.prev;

	if (prev.sa_handler == SIG_DFL || prev.sa_handler == SIG_IGN) {
		/* Die the death the program would have died: the fault comes
		 * back when the instruction runs again. */
		sigaction(sig, &prev, NULL);
		if (si->si_code <= 0)
			raise(sig);
		return;
	}
	if (prev.sa_flags & SA_SIGINFO)
		prev.sa_sigaction(sig, si, uc);
	else
		prev.sa_handler(sig);
}

static void on_sigsegv(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	uintptr_t a = (uintptr_t)si->si_addr, off = a - (uintptr_t)vm.app;
	uint32_t id;

	if (si->si_code > 0 && vm.app && off < vm.size &&
	    (id = vm.page_unit[off / PAGE]) != 0) {
		dsm_fault(dsm_unit(id - 1), fault_was_write(ucv, si->si_addr));
	} else {
		pass_on(sig, si, ucv);
	}
	errno = saved;
}

static size_t heap_size(void)
{
	const char *s = getenv("DSM_HEAP_SIZE");
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return (size_t)1 << 30;
	v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k')
		v <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		v <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		v <<= 30, end++;
	if (*end || v < PAGE || v > (1ull << 40))
		dsm_die("DSM_HEAP_SIZE=%s is not a size between 4K and 1T", s);
	return (size_t)((v + PAGE - 1) / PAGE * PAGE);
}

int dsm_vm_init(void)
{
	struct sigaction sa;
	int fd;

	if (vm.ready)
		return 0;
	vm.size = heap_size();
	fd = memfd_create("dsm-heap", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)vm.size) < 0)
		return -1;
	vm.app = mmap(NULL, vm.size, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd,
	              0);
	vm.sys = mmap(NULL, vm.size, PROT_READ | PROT_WRITE,
	              MAP_SHARED | MAP_NORESERVE, fd, 0);
	vm.twins = mmap(NULL, vm.size, PROT_READ | PROT_WRITE,
	                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	vm.page_unit = mmap(NULL, vm.size / PAGE * sizeof(uint32_t),
	                    PROT_READ | PROT_WRITE,
	                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	close(fd);
	if (vm.app == MAP_FAILED || vm.sys == MAP_FAILED ||
	    vm.twins == MAP_FAILED || vm.page_unit == MAP_FAILED)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsegv;
	/* As rtl's: NODEFER so that rtl, called from here for its own faults,
	 * can take nested traps. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &vm.prev) < 0)
		return -1;
	vm.ready = 1;
	return 0;
}

void *dsm_vm_alloc(size_t size)
{
	size_t start, end;

	if (dsm_vm_init() < 0)
		return NULL;
	start = (vm.used + 15) & ~(size_t)15;
	if (size > vm.size - start) {
		errno = ENOMEM;
		return NULL;
	}
	end = start + size;
	for (size_t pg = start / PAGE; pg * PAGE < end; pg++) {
		struct unit *u;
		if (vm.page_unit[pg])
			continue;
		u = dsm_unit_new(&dsm_mech_page, vm.app + pg * PAGE,
		                 vm.sys + pg * PAGE, PAGE);
		if (!u)
			return NULL;
		vm.page_unit[pg] = u->id + 1;
	}
	vm.used = end;
	return vm.app + start;
}

/* ---- the mechanism (protect and twin_take run in the trap handler) ---- */

static void page_die(const char *what)
{
	static const char m[] =
	        "dsm: mprotect of a shared page failed (too many "
	        "mappings? raise vm.max_map_count)\n";
	ssize_t rc = write(2, m, sizeof(m) - 1);
	(void)rc;
	(void)what;
	MPI_Abort(MPI_COMM_WORLD, 3);
	_exit(3);
}

static void page_protect(struct unit *u, int prot)
{
	static const int p[] = { PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE };

	if (mprotect(u->addr, PAGE, p[prot]) < 0)
		page_die("mprotect");
}

static uint8_t *twin_of(struct unit *u)
{
	return vm.twins + ((uint8_t *)u->sys - vm.sys);
}

static void page_twin_take(struct unit *u)
{
	memcpy(twin_of(u), u->sys, PAGE);
}

static ssize_t page_encode(struct unit *u, void *buf, size_t cap)
{
	return pagediff_encode(u->sys, twin_of(u), PAGE, buf, cap);
}

static void page_twin_drop(struct unit *u)
{
	(void)u; /* the twin's page is reused at the next write trap */
}

static int page_apply(struct unit *u, const void *buf, size_t len)
{
	return pagediff_apply(u->sys, PAGE, buf, len);
}

static const void *page_contents(struct unit *u)
{
	return u->sys;
}

const struct mech dsm_mech_page = {
	.name = "page",
	.check_stale = 0, /* mprotect reaches every pointer and register */
	.protect = page_protect,
	.twin_take = page_twin_take,
	.encode = page_encode,
	.twin_drop = page_twin_drop,
	.apply = page_apply,
	.contents = page_contents,
};
