/* Threads read a file with pread into malloc'd buffers, over and over,
 * while an epoch re-protects those buffers: a call must never see them
 * unwritable (sqlite's "disk I/O error", perl's half counts). Prints the
 * reads that failed and a checksum. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 4
#define BLOCK 512

static int fd;
static long rounds;
static _Atomic long failed, sum;

static void *reader(void *arg)
{
	char *buf = malloc(BLOCK);
	long s = 0;

	for (long i = 0; i < rounds; i++) {
		off_t at = (off_t)((i * 7 + (long)(intptr_t)arg) % 64) * BLOCK;
		if (pread(fd, buf, BLOCK, at) != BLOCK)
			failed++;
		else
			s += buf[i % BLOCK];
	}
	sum += s;
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	char block[BLOCK];

	rounds = argc > 1 ? atol(argv[1]) : 20000;
	fd = open("pread_epoch.tmp", O_CREAT | O_RDWR | O_TRUNC, 0644);
	for (int i = 0; i < 64; i++) {
		memset(block, 'a' + i % 26, sizeof(block));
		write(fd, block, sizeof(block));
	}
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, reader, (void *)(intptr_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	unlink("pread_epoch.tmp");
	printf("%ld reads failed, checksum %ld\n", (long)failed, (long)sum);
	return failed != 0;
}
