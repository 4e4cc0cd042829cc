/* RT: the Appel-Li sequences on rtl regions, each with one bound pointer.
 * Basic: PROT_NONE and read traps. Update: PROT_READ and write traps, the
 * read-write -> read-only -> read-write cycle for which the paper copied the
 * region into its read-only area between two mprotects; rtl's views share
 * one physical copy, so the cycle costs what the basic one does. */
#include <rtl/region.h>
#include <stdlib.h>

#include "bench/appel_li.h"
#include "bench/arch.h"

struct rt {
	int update;
	int low; /* the protection a sequence lowers to */
	size_t size;
	int nobj;
	char **p;  /* bound pointers, p[i] to region i */
	long i;    /* prot1: the region that is protected now */
	int armed; /* handlers set (and for prot1, region i protected) */
	struct slot *slots;
};

struct slot {
	struct rt *rt;
	long idx;
};

static struct rt *rt_new(size_t size, int nobj, int update)
{
	struct rt *c = calloc(1, sizeof(*c));

	c->update = update;
	c->low = update ? PROT_READ : PROT_NONE;
	c->size = size;
	c->nobj = nobj;
	c->p = calloc(nobj, sizeof(char *));
	c->slots = calloc(nobj, sizeof(struct slot));
	for (int i = 0; i < nobj; i++) {
		if (!region_alloc(size, &c->p[i]))
			abort();
		c->slots[i] = (struct slot){ c, i };
		region_set_data(c->p[i], &c->slots[i]);
		for (long j = 0; j < touches(size); j++)
			c->p[i][j * PAGE] = 1; /* populated */
	}
	return c;
}

static void set_handlers(struct rt *c, region_handler_t h)
{
	for (int i = 0; i < c->nobj; i++)
		region_handler(c->p[i], h);
}

/* The reference that traps: a read (basic) or a write (update). */
static inline void touch(const struct rt *c, char *const volatile *pp, long val)
{
	for (long j = 0; j < touches(c->size); j++) {
		char *o = *pp + j * PAGE;
		if (c->update)
			*(volatile char *)o = (char)val;
		else
			(void)*(volatile char *)o;
	}
}

/* ---- trap ---- */

static void grant(rtl_trap_t *t)
{
	region_protect(t->addr, PROT_READ | PROT_WRITE);
}

void *rt_trap_new(int update)
{
	struct rt *c = rt_new(PAGE, 1, update);
	set_handlers(c, grant);
	return c;
}

/* Protect, then trap on the same instruction as the floor; the handler
 * unprotects (swizzling the bound pointer and the register). */
void rt_trap(void *ctx)
{
	struct rt *c = ctx;
	char *p;

	region_protect(c->p[0], c->low);
	p = *(char *volatile *)&c->p[0];
	if (c->update)
		arch_write_byte(p);
	else
		arch_read_byte(p);
}

void rt_protect(void *ctx)
{
	struct rt *c = ctx;

	region_protect(c->p[0], c->low);
	region_protect(c->p[0], PROT_READ | PROT_WRITE);
}

/* ---- prot1 and protN ---- */

void *rt_seq_new(size_t size, int nobj, int update)
{
	return rt_new(size, nobj, update);
}

static void prot1_handler(rtl_trap_t *t)
{
	struct slot *s = t->data;
	struct rt *c = s->rt;
	long next = s->idx + 1 == c->nobj ? 0 : s->idx + 1;

	region_protect(t->addr, PROT_READ | PROT_WRITE);
	region_protect(c->p[next], c->low);
}

void rt_prot1_begin(void *ctx)
{
	struct rt *c = ctx;

	if (c->armed)
		return;
	set_handlers(c, prot1_handler);
	region_protect(c->p[c->i], c->low);
	c->armed = 1;
}

void rt_prot1(void *ctx)
{
	struct rt *c = ctx;

	touch(c, &c->p[c->i], c->i);
	if (++c->i == c->nobj)
		c->i = 0;
}

static void protn_handler(rtl_trap_t *t)
{
	region_protect(t->addr, PROT_READ | PROT_WRITE);
}

void rt_protn_begin(void *ctx)
{
	struct rt *c = ctx;

	if (c->armed)
		return;
	set_handlers(c, protn_handler);
	c->armed = 1;
}

void rt_protn(void *ctx)
{
	struct rt *c = ctx;

	for (int i = 0; i < c->nobj; i++)
		region_protect(c->p[i], c->low);
	for (int i = 0; i < c->nobj; i++)
		touch(c, &c->p[i], i);
}
