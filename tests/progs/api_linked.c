/* A program linked with -lrtl, run under the preload too: one rtl per
 * process, so a block the preload made a region is one for the program's
 * own region calls. */
#include <stdio.h>
#include <stdlib.h>

#include <rtl/region.h>

int main(void)
{
	char *p = malloc(1000);
	char *r = region_alloc(64, &r);

	printf("region_alloc: %s\n", r ? "ok" : "failed");
	printf("malloc'd block is a region: %s\n",
	       region_protect(p, PROT_READ | PROT_WRITE) == 0 ? "yes" : "no");
	region_free(r);
	free(p);
	return 0;
}
