/* MultiView (Itzkovitz & Schuster's minipages): every object is reached
 * through an alias, a mapping of its own page(s) of a memfd at an address of
 * its own, protected with mprotect. Objects smaller than a page
 * share physical pages but not aliases. A privileged read-write mapping of
 * the whole memfd serves the trap figure. */
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "bench/appel_li.h"
#include "bench/arch.h"

struct mv {
	int fd;
	char *priv;  /* the whole memfd, read-write */
	char *area;  /* the aliases, one slot each */
	size_t k;    /* pages per alias */
	size_t slot; /* k pages and a guard page */
	size_t size; /* object size */
	int nobj;
	long i;    /* prot1: the object that is protected now */
	int armed; /* prot1: object i protected */
};

static struct mv *cur;

static size_t obj_off(const struct mv *m, long i)
{
	return (size_t)i * m->size;
}

static char *alias(const struct mv *m, long i)
{
	return m->area + (size_t)i * m->slot;
}

static char *obj(const struct mv *m, long i)
{
	return alias(m, i) + obj_off(m, i) % PAGE;
}

void *mv_seq_new(size_t size, int nobj)
{
	struct mv *m = calloc(1, sizeof(*m));
	size_t bytes = ((size_t)nobj * size + PAGE - 1) / PAGE * PAGE;

	m->size = size;
	m->nobj = nobj;
	m->k = size < PAGE ? 1 : size / PAGE;
	m->slot = (m->k + 1) * PAGE;
	m->fd = memfd_create("rtl-bench-multiview", 0);
	if (m->fd < 0 || ftruncate(m->fd, (off_t)bytes) < 0)
		abort();
	m->priv =
	        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	m->area = mmap(NULL, m->slot * nobj, PROT_NONE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->priv == MAP_FAILED || m->area == MAP_FAILED)
		abort();
	for (size_t p = 0; p < bytes; p += PAGE)
		m->priv[p] = 1;
	for (long i = 0; i < nobj; i++) {
		size_t page = obj_off(m, i) / PAGE * PAGE;
		if (mmap(alias(m, i), m->k * PAGE, PROT_READ | PROT_WRITE,
		         MAP_SHARED | MAP_FIXED, m->fd,
		         (off_t)page) == MAP_FAILED)
			abort();
		for (size_t j = 0; j < m->k; j++) /* populate the alias */
			(void)*(volatile char *)(alias(m, i) + j * PAGE);
	}
	return m;
}

static long index_of(const struct mv *m, const void *addr)
{
	return (long)((size_t)((const char *)addr - m->area) / m->slot);
}

static void protect(struct mv *m, long i, int prot)
{
	mprotect(alias(m, i), m->k * PAGE, prot);
}

/* ---- trap: find the object, point the register at its privileged view ---- */

void *mv_trap_new(void)
{
	struct mv *m = mv_seq_new(64, 1);
	protect(m, 0, PROT_NONE);
	return m;
}

static void trap_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	struct mv *m = cur;
	long i = index_of(m, si->si_addr);
	size_t in = (size_t)((char *)si->si_addr - obj(m, i));

	(void)sig;
	arch_set_pointer(uc, m->priv + obj_off(m, i) + in);
}

void mv_trap_begin(void *ctx)
{
	cur = ctx;
	segv_install(trap_handler);
}

void mv_trap(void *ctx)
{
	char *p = obj(ctx, 0);
	arch_read_byte(p);
}

/* ---- prot1 and protN ---- */

static void prot1_handler(int sig, siginfo_t *si, void *uc)
{
	struct mv *m = cur;
	long i = index_of(m, si->si_addr);

	(void)sig, (void)uc;
	protect(m, i, PROT_READ | PROT_WRITE);
	protect(m, i + 1 == m->nobj ? 0 : i + 1, PROT_NONE);
}

static void touch(const struct mv *m, long i)
{
	char *o = obj(m, i);
	for (long j = 0; j < touches(m->size); j++)
		(void)*(volatile char *)(o + j * PAGE);
}

void mv_prot1_begin(void *ctx)
{
	struct mv *m = ctx;

	if (!m->armed) {
		protect(m, m->i, PROT_NONE);
		m->armed = 1;
	}
	cur = m;
	segv_install(prot1_handler);
}

void mv_prot1(void *ctx)
{
	struct mv *m = ctx;

	touch(m, m->i);
	if (++m->i == m->nobj)
		m->i = 0;
}

static void protn_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	protect(cur, index_of(cur, si->si_addr), PROT_READ | PROT_WRITE);
}

void mv_protn_begin(void *ctx)
{
	cur = ctx;
	segv_install(protn_handler);
}

/* One mprotect over all the aliases (guard pages included, they stay
 * PROT_NONE): MultiView's best case, as for VM. */
void mv_protn(void *ctx)
{
	struct mv *m = ctx;

	mprotect(m->area, m->slot * m->nobj, PROT_NONE);
	for (long i = 0; i < m->nobj; i++)
		touch(m, i);
}
