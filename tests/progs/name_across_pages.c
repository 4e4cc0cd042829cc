/* A path name in a malloc'd block that crosses from one page into the
 * next, handed to open() after a pause in which a policy's epoch takes
 * the block's pages back: the kernel must read the whole name. The system
 * call's wrapper is told only where the name starts (its length is the
 * kernel's business); under the page mechanism it once granted the first
 * page alone, and every open failed with EFAULT ("bash: script: Bad
 * address" under epoch = 1ms). Prints how many of 20 opens failed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	int failed = 0;

	for (int i = 0; i < 20; i++) {
		char *block = malloc(8192);
		char *name = block + 4096 - 5 - i % 3; /* across the boundary */
		int fd;

		if (!block)
			return 2;
		strcpy(name, "/dev/null");
		usleep(3000);
		fd = open(name, O_RDONLY);
		if (fd < 0) {
			perror("open");
			failed++;
		} else {
			close(fd);
		}
		free(block);
	}
	printf("%d of 20 opens failed\n", failed);
	return failed != 0;
}
