/* A program that runs off the end of a malloc'd block, reading a byte per
 * page until the machine stops it (a scan for a terminator that is not
 * there). Without rtl it dies of SIGSEGV at the top of its heap; under the
 * preload it must die the same way, after a line from rtl, having
 * populated no more memory than rtl handed out (docs/preload.md, "Bounded
 * memory"). Prints the block's first byte so that its run does something. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;
	volatile char *p = malloc(size);
	unsigned long sum = 0;

	if (!p)
		return 1;
	p[0] = 'x';
	printf("first byte %c\n", p[0]);
	fflush(stdout);
	for (;; p += 4096)
		sum += (unsigned char)*p;
	return (int)sum; /* never */
}
