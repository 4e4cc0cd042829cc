/* A program not linked with rtl that finds the region API at run time
 * (dlsym): under LD_PRELOAD=librtlpreload.so alone it must be there, and
 * work: a region, a handler, a trap. */
#include <dlfcn.h>
#include <stdio.h>

#include <rtl/region.h>

static volatile int calls; /* changed by a trap the compiler cannot see */
static int (*protect)(void *, int);

static void grant(rtl_trap_t *t)
{
	calls++;
	protect(t->addr, PROT_READ | PROT_WRITE);
}

int main(void)
{
	void *(*alloc)(size_t, void *);
	int (*handler)(void *, region_handler_t);
	char *volatile x; /* reloaded after region_protect moves it */

	/* POSIX's way to a function from dlsym: through its bytes. */
	*(void **)&alloc = dlsym(RTLD_DEFAULT, "region_alloc");
	*(void **)&handler = dlsym(RTLD_DEFAULT, "region_handler");
	*(void **)&protect = dlsym(RTLD_DEFAULT, "region_protect");
	if (!alloc || !handler || !protect) {
		printf("region API: not found\n");
		return 0;
	}
	x = alloc(100, (void *)&x);
	if (!x || handler((void *)x, grant) < 0 ||
	    protect((void *)x, PROT_NONE) < 0)
		return 1;
	x[5] = 42;
	printf("region API: found; traps %d, value %d\n", calls, x[5]);
	return 0;
}
