/* main leaves with pthread_exit while a worker still runs: the process
 * ends when the worker does (it hung under the preload when a report was
 * configured). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *worker(void *arg)
{
	char *p = malloc(100);

	usleep(100 * 1000);
	p[0] = 1;
	printf("worker done\n");
	fflush(stdout);
	free(p);
	return arg;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	pthread_exit(NULL);
}
