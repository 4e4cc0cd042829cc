/* Written from DESIGN.md's API contract alone: the paper's Tables 2 and 3.
 * Built by tests/bats/contract.bats with nothing but the public header and
 * the library, as a user would build it. Prints one line per step. */
#include <rtl/region.h>
#include <stdio.h>

static volatile int traps;

static void reg_handler(rtl_trap_t *t)
{
	traps++;
	if (t->write)
		region_protect(t->addr, PROT_READ | PROT_WRITE);
	else
		region_protect(t->addr, PROT_READ);
}

int main(void)
{
	volatile char *x;
	int a;

	x = region_alloc(1000, &x);
	if (!x)
		return 1;
	region_handler((char *)x, reg_handler);
	region_protect((char *)x, PROT_READ);
	a = x[0];
	printf("read x[0]=%d traps=%d\n", a, traps);
	x[1] = 1;
	printf("write x[1] traps=%d\n", traps);
	x[2] = 2;
	printf("write x[2] traps=%d\n", traps);
	region_protect((char *)x, PROT_NONE);
	a = x[1] + x[2];
	printf("read after PROT_NONE sum=%d traps=%d\n", a, traps);
	return region_free((char *)x);
}
