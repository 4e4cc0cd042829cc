/* Known allocation counts from threads, for the report's striped counters
 * (preload/engine/tally.c). First one thread alone keeps PEAK blocks live
 * at once and frees them. Then THREADS producers each make N blocks of
 * SIZE bytes and hand them to a consumer thread, which frees them: every
 * block is made in one thread and freed in another. Each producer keeps
 * its last KEEP blocks, never freed. So the report must say:
 *   selected = PEAK + THREADS * N, bytes = SIZE * that,
 *   live = THREADS * KEEP, regions_peak >= PEAK,
 * and the one site (new_block) made all of them.
 * Usage: handoff THREADS N SIZE PEAK KEEP */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 64

static size_t size;
static long n, keep;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void *ring[RING];
	unsigned head, tail;
	int producers;
} q = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, 0, 0, 0 };

__attribute__((noinline)) static void *new_block(void)
{
	char *p = malloc(size);

	if (!p) {
		perror("malloc");
		exit(1);
	}
	memset(p, 7, size);
	return p;
}

static void put(void *p)
{
	pthread_mutex_lock(&q.lock);
	while (q.head - q.tail == RING)
		pthread_cond_wait(&q.cond, &q.lock);
	q.ring[q.head++ % RING] = p;
	pthread_cond_broadcast(&q.cond);
	pthread_mutex_unlock(&q.lock);
}

static void *producer(void *arg)
{
	(void)arg;
	for (long i = 0; i < n; i++) {
		void *p = new_block();

		if (i < n - keep)
			put(p);
	}
	pthread_mutex_lock(&q.lock);
	q.producers--;
	pthread_cond_broadcast(&q.cond);
	pthread_mutex_unlock(&q.lock);
	return NULL;
}

static void *consumer(void *arg)
{
	long *freed = arg;

	pthread_mutex_lock(&q.lock);
	for (;;) {
		while (q.head == q.tail && q.producers)
			pthread_cond_wait(&q.cond, &q.lock);
		if (q.head == q.tail)
			break;
		free(q.ring[q.tail++ % RING]);
		(*freed)++;
		pthread_cond_broadcast(&q.cond);
	}
	pthread_mutex_unlock(&q.lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads;
	long peak, freed = 0;
	void **held;
	pthread_t *t, c;

	if (argc != 6) {
		fprintf(stderr, "usage: handoff THREADS N SIZE PEAK KEEP\n");
		return 2;
	}
	threads = atoi(argv[1]);
	n = atol(argv[2]);
	size = strtoul(argv[3], NULL, 0);
	peak = atol(argv[4]);
	keep = atol(argv[5]);
	held = calloc((size_t)peak, sizeof(*held));
	t = calloc((size_t)threads, sizeof(*t));
	for (long i = 0; i < peak; i++)
		held[i] = new_block();
	for (long i = 0; i < peak; i++)
		free(held[i]);
	q.producers = threads;
	pthread_create(&c, NULL, consumer, &freed);
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, producer, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	pthread_join(c, NULL);
	printf("handed off and freed %ld blocks\n", freed);
	return 0;
}
