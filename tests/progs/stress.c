/* 8 threads allocate, fill, check, resize and free blocks of many sizes
 * through every malloc-family call. Prints one checksum per thread,
 * computed from contents only: the output is the same with or without the
 * preload, and any lost or overlapping block changes it or exits 1. */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define SLOTS 256
#define ROUNDS 20000

struct slot {
	unsigned char *p;
	size_t size;
	unsigned char tag;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t pick_size(uint64_t *s)
{
	switch (rnd(s) % 8) {
	case 0: return rnd(s) % 16;
	case 1: return 4096 - 8 + rnd(s) % 16;
	case 2: return rnd(s) % 70000;
	default: return rnd(s) % 600;
	}
}

static int check(const struct slot *sl)
{
	for (size_t i = 0; i < sl->size; i++)
		if (sl->p[i] != (unsigned char)(sl->tag + i))
			return -1;
	return 0;
}

static void fill(struct slot *sl, size_t from)
{
	for (size_t i = from; i < sl->size; i++)
		sl->p[i] = (unsigned char)(sl->tag + i);
}

static void *run(void *arg)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull * ((uintptr_t)arg + 1), sum = 0;
	struct slot *slots = calloc(SLOTS, sizeof(*slots));

	for (int r = 0; r < ROUNDS; r++) {
		struct slot *sl = &slots[rnd(&seed) % SLOTS];
		size_t size = pick_size(&seed);
		unsigned op = rnd(&seed) % 6;

		if (sl->p) {
			if (check(sl) < 0 || malloc_usable_size(sl->p) < sl->size)
				exit(1);
			for (size_t i = 0; i < sl->size; i += 61)
				sum = sum * 31 + sl->p[i];
			if (op == 0) { /* grow or shrink, keeping the prefix */
				unsigned char *q = realloc(sl->p, size);
				if (!q && size)
					exit(1);
				sl->p = q;
				sl->size = size < sl->size ? size : sl->size;
				if (q && check(sl) < 0)
					exit(1);
				sl->size = size;
				if (q)
					fill(sl, 0);
				continue;
			}
			free(sl->p);
			sl->p = NULL;
			continue;
		}
		sl->tag = (unsigned char)rnd(&seed);
		sl->size = size;
		switch (op) {
		case 0:
			sl->p = calloc(1, size);
			for (size_t i = 0; i < size; i++)
				if (sl->p[i])
					exit(1);
			break;
		case 1:
			sl->p = aligned_alloc(256, (size + 255) & ~255ul);
			if ((uintptr_t)sl->p & 255)
				exit(1);
			break;
		case 2:
			if (posix_memalign((void **)&sl->p, 64, size) ||
			    (uintptr_t)sl->p & 63)
				exit(1);
			break;
		case 3:
			sl->p = memalign(4096, size);
			if ((uintptr_t)sl->p & 4095)
				exit(1);
			break;
		default: sl->p = malloc(size);
		}
		if (!sl->p)
			exit(1);
		fill(sl, 0);
	}
	for (int i = 0; i < SLOTS; i++) {
		if (slots[i].p && check(&slots[i]) < 0)
			exit(1);
		free(slots[i].p);
	}
	free(slots);
	return (void *)(uintptr_t)sum;
}

int main(void)
{
	pthread_t t[THREADS];
	void *sum;

	for (uintptr_t i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, run, (void *)i))
			return 1;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], &sum);
		printf("thread %d: %016llx\n", i, (unsigned long long)(uintptr_t)sum);
	}
	return 0;
}
