/* Two regions that revoke each other between two live neighbours (see
 * pair.h). */
#include "tools/selftest/pair.h"
#include "tools/selftest/selftest.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rtl/region.h>

#define RW (PROT_READ | PROT_WRITE)
#define FILL 0x5a

enum { NB0,
       SRC,
       DST,
       NB1 };

const struct st_layout st_layouts[] = {
	{ 131071, 0 },
	{ 131071, 1 },
	{ 70000, 0 },
	{ 70000, 1 },
};
const int st_nlayouts = sizeof(st_layouts) / sizeof(st_layouts[0]);

static char *reg[4]; /* bound pointers */
static size_t reg_size;
static _Atomic int neighbour_traps;

static char *now(char **bp)
{
	return *(char *volatile *)bp;
}

char *st_src(void)
{
	return now(&reg[SRC]);
}

char *st_dst(void)
{
	return now(&reg[DST]);
}

static void ping_pong(rtl_trap_t *t)
{
	int me = (int)(intptr_t)t->data;

	region_protect(t->addr, t->write ? RW : PROT_READ);
	region_protect(now(&reg[me == SRC ? DST : SRC]), PROT_NONE);
}

static char neighbour_what[96];

static void neighbour(rtl_trap_t *t)
{
	if (!neighbour_traps++)
		snprintf(neighbour_what, sizeof(neighbour_what),
		         "%s at offset %zu of the neighbour %s the %s",
		         t->write ? "write" : "read", t->offset,
		         (intptr_t)t->data == NB0 ? "before" : "after",
		         (intptr_t)t->data == NB0 ? "first operand" : "second operand");
	region_protect(t->addr, t->write ? RW : PROT_READ);
}

static int setup(const struct st_layout *l)
{
	int order[4] = { NB0, SRC, DST, NB1 };

	if (l->dst_first) {
		order[1] = DST;
		order[2] = SRC;
	}
	reg_size = l->size;
	neighbour_traps = 0;
	for (int k = 0; k < 4; k++) {
		int i = order[k];
		reg[i] = region_alloc(l->size, &reg[i]);
		if (!reg[i])
			return -1;
		region_set_data(reg[i], (void *)(intptr_t)i);
		region_handler(reg[i], i == SRC || i == DST ? ping_pong : neighbour);
		memset(reg[i], FILL, l->size);
		if (i == NB0 || i == NB1)
			region_protect(reg[i], PROT_NONE);
	}
	return 0;
}

int st_pair_setup(const struct st_layout *l, struct st_report *r)
{
	if (setup(l) == 0)
		return 0;
	st_fail(r, "region_alloc(%zu) failed", l->size);
	st_pair_teardown();
	return -1;
}

void st_pair_teardown(void)
{
	for (int i = 0; i < 4; i++) {
		if (reg[i])
			region_free(now(&reg[i]));
		reg[i] = NULL;
	}
}

void st_pair_load(const char *o0, const char *o1, size_t len)
{
	region_protect(now(&reg[SRC]), RW);
	memcpy(now(&reg[SRC]), o0, len);
	region_protect(now(&reg[DST]), RW);
	memcpy(now(&reg[DST]), o1, len);
	region_protect(now(&reg[SRC]), PROT_NONE);
	region_protect(now(&reg[DST]), PROT_NONE);
}

const char *st_pair_differs(const char *o0, const char *o1, size_t len)
{
	const char *why = NULL;

	region_protect(now(&reg[SRC]), PROT_READ);
	region_protect(now(&reg[DST]), PROT_READ);
	if (memcmp(now(&reg[DST]), o1, len) != 0)
		why = "destination";
	else if (memcmp(now(&reg[SRC]), o0, len) != 0)
		why = "source";
	return why;
}

int st_pair_neighbour_traps(void)
{
	return neighbour_traps;
}

const char *st_pair_neighbour_trap(void)
{
	return neighbour_traps ? neighbour_what : NULL;
}

int st_pair_neighbours_intact(void)
{
	int ok = 1;

	for (int i = NB0; i <= NB1; i += NB1 - NB0) {
		const char *p;
		region_protect(now(&reg[i]), PROT_READ);
		p = now(&reg[i]);
		for (size_t k = 0; k < reg_size && ok; k++)
			ok = p[k] == FILL;
		region_protect(now(&reg[i]), PROT_NONE);
	}
	return ok;
}
