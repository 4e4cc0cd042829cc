/* A path name in a malloc'd block that crosses from one page into the
 * next, handed to open() after a pause in which a policy's epoch takes
 * the block's pages back: the kernel must read the whole name. The system
 * call's wrapper is told only where the name starts (its length is the
 * kernel's business); under the page mechanism it once granted the first
 * page alone, and every open failed with EFAULT ("bash: script: Bad
 * address" under epoch = 1ms). Prints how many of 20 opens failed.
 *
 * name_across_pages threads: two threads open names in small blocks that
 * share pages, 50000 times each, while the epoch takes the pages back:
 * the page mechanism's check of a page raced with the epoch changing it
 * (one open in a thousand failed with EFAULT). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OPENS 50000

static _Atomic long threads_failed;

static void *opener(void *arg)
{
	char *names[8];

	(void)arg;
	for (int k = 0; k < 8; k++) {
		if (!(names[k] = malloc(48)))
			abort();
		strcpy(names[k], "/dev/null");
	}
	for (long i = 0; i < OPENS; i++) {
		int fd = open(names[i % 8], O_RDONLY);
		if (fd < 0)
			threads_failed++;
		else
			close(fd);
	}
	return NULL;
}

static int in_threads(void)
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, opener, NULL) != 0)
			abort(); /* no threads would be no race: not a pass */
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%ld of %d opens failed\n", (long)threads_failed, 2 * OPENS);
	return threads_failed != 0;
}

int main(int argc, char **argv)
{
	int failed = 0;

	if (argc > 1 && strcmp(argv[1], "threads") == 0)
		return in_threads();

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
