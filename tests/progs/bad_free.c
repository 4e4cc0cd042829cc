/* free() of a pointer the allocator never handed out: "middle" frees the
 * inside of a block, "region" a block of the program's own region_alloc.
 * Both must die of SIGABRT, as glibc's free does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtl/region.h>

int main(int argc, char **argv)
{
	char *volatile m = malloc(100);
	char *volatile r = region_alloc(100, NULL);
	char *volatile inside = m + 16;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "middle"))
		free(inside);
	else
		free(r);
	printf("survived\n");
	return 0;
}
