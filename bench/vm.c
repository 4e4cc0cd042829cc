/* VM: the Appel-Li sequences on page protection (mprotect + SIGSEGV), and
 * the floor: a signal round trip whose handler only rewrites a register.
 * An object of K pages is K page sequences: K traps, K unprotects. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "bench/appel_li.h"
#include "bench/arch.h"

static struct sigaction saved;

void segv_install(void (*h)(int, siginfo_t *, void *))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = h;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &saved);
}

void segv_end(void *ctx)
{
	(void)ctx;
	sigaction(SIGSEGV, &saved, NULL);
}

static void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		abort();
	return p;
}

/* ---- the floor ---- */

struct vm_trap {
	char *none, *rw;
};

static struct vm_trap *floor_cur;

static void floor_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)sig, (void)si;
	arch_set_pointer(uc, floor_cur->rw);
}

void *vm_trap_new(void)
{
	struct vm_trap *c = calloc(1, sizeof(*c));
	c->none = map_anon(PAGE, PROT_NONE);
	c->rw = map_anon(PAGE, PROT_READ | PROT_WRITE);
	c->rw[0] = 1;
	return c;
}

void vm_trap_begin(void *ctx)
{
	floor_cur = ctx;
	segv_install(floor_handler);
}

void vm_trap(void *ctx)
{
	char *p = ((struct vm_trap *)ctx)->none;
	arch_read_byte(p);
}

/* ---- prot1 and protN ---- */

struct vm_seq {
	char *area;
	size_t k;      /* pages per object */
	size_t npages; /* k * nobj */
	int nobj;
	long i;    /* prot1: the object that is protected now */
	int armed; /* prot1: object i protected */
};

static struct vm_seq *seq_cur;

void *vm_seq_new(size_t size, int nobj)
{
	struct vm_seq *v = calloc(1, sizeof(*v));

	v->k = size / PAGE;
	v->nobj = nobj;
	v->npages = v->k * nobj;
	v->area = map_anon(v->npages * PAGE, PROT_READ | PROT_WRITE);
	for (size_t p = 0; p < v->npages; p++)
		v->area[p * PAGE] = 1; /* populated, as a program's data is */
	return v;
}

/* Unprotect the faulting page, protect the same page of the next object. */
static void prot1_handler(int sig, siginfo_t *si, void *uc)
{
	struct vm_seq *v = seq_cur;
	size_t pg = (size_t)((char *)si->si_addr - v->area) / PAGE;
	size_t next = pg + v->k;

	(void)sig, (void)uc;
	if (next >= v->npages)
		next -= v->npages;
	mprotect(v->area + pg * PAGE, PAGE, PROT_READ | PROT_WRITE);
	mprotect(v->area + next * PAGE, PAGE, PROT_NONE);
}

void vm_prot1_begin(void *ctx)
{
	struct vm_seq *v = ctx;

	if (!v->armed) {
		mprotect(v->area + v->i * v->k * PAGE, v->k * PAGE, PROT_NONE);
		v->armed = 1;
	}
	seq_cur = v;
	segv_install(prot1_handler);
}

void vm_prot1(void *ctx)
{
	struct vm_seq *v = ctx;
	char *o = v->area + v->i * v->k * PAGE;

	for (size_t j = 0; j < v->k; j++)
		(void)*(volatile char *)(o + j * PAGE);
	if (++v->i == v->nobj)
		v->i = 0;
}

static void protn_handler(int sig, siginfo_t *si, void *uc)
{
	struct vm_seq *v = seq_cur;
	size_t pg = (size_t)((char *)si->si_addr - v->area) / PAGE;

	(void)sig, (void)uc;
	mprotect(v->area + pg * PAGE, PAGE, PROT_READ | PROT_WRITE);
}

void vm_protn_begin(void *ctx)
{
	seq_cur = ctx;
	segv_install(protn_handler);
}

/* Protect all N objects with one mprotect (cheaper than N calls, as the
 * paper notes), then reference every page. */
void vm_protn(void *ctx)
{
	struct vm_seq *v = ctx;

	mprotect(v->area, v->npages * PAGE, PROT_NONE);
	for (size_t p = 0; p < v->npages; p++)
		(void)*(volatile char *)(v->area + p * PAGE);
}
