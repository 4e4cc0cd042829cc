/* Dies of a NULL dereference: SIGSEGV, with or without the preload. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char *volatile q = NULL;
	char *p = malloc(100); /* a region under the preload */

	p[0] = 'x';
	printf("about to crash\n");
	fflush(stdout);
	return q[16] + p[0];
}
