/* A program to run setuid under the preload (tests/bats/security.bats):
 * allocates, writes and frees a few blocks and says whether it runs in
 * secure-execution mode (AT_SECURE), so that the test knows its setup
 * holds. Linked against librtlpreload.so by the test itself: the loader
 * ignores LD_PRELOAD paths in a setuid process, DT_NEEDED it follows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

int main(void)
{
	unsigned long sum = 0;

	for (int i = 0; i < 100; i++) {
		char *p = malloc(64);
		if (!p)
			return 1;
		memset(p, i, 64);
		sum += (unsigned char)p[63];
		free(p);
	}
	printf("secure %lu, sum %lu\n", getauxval(AT_SECURE), sum);
	return 0;
}
