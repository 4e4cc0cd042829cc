/* A program that runs off the end of a malloc'd block, reading a byte per
 * page until the machine stops it (a scan for a terminator that is not
 * there). Without rtl it dies of SIGSEGV at the top of its heap; under the
 * preload it must die the same way, after a line from rtl, having
 * populated no more memory than rtl handed out (docs/mechanisms.md, "Exact
 * by default"). Prints the block's first byte so that its run does something.
 *
 * overrun SIZE down: the same scan off the block's start, downwards (a
 * pointer walked back past its buffer, or an address formed from two
 * pointers through different views). Without rtl it dies below the heap
 * within a few MiB. It gives up after 1 GiB and exits 3, so that a run
 * that populates memory on its way shows in the peak without taking the
 * machine with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096
#define DOWN_LIMIT ((size_t)1 << 30)

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : 100;
	int down = argc > 2 && strcmp(argv[2], "down") == 0;
	volatile char *p = malloc(size);
	unsigned long sum = 0;

	if (!p)
		return 1;
	p[0] = 'x';
	printf("first byte %c\n", p[0]);
	fflush(stdout);
	if (down) {
		for (size_t n = 0; n < DOWN_LIMIT; n += PAGE, p -= PAGE)
			sum += (unsigned char)*p;
		printf("read 1 GiB below the block without a fault\n");
		return 3;
	}
	for (;; p += PAGE)
		sum += (unsigned char)*p;
	return (int)sum; /* never */
}
