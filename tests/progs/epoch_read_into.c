/* epoch_read_into ROUNDS: a thread frees and allocates blocks of mixed
 * sizes and writes them (under protect = read and an epoch: traps, and
 * epochs that lower them again, freed or not), while the main thread
 * allocates a block, writes it, then read(2)s a pipe into it. The kernel
 * must never answer EFAULT: a block the program may write, it may read
 * into. Prints the bytes read, which must not depend on the preload. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHURN 512
#define SIZES 20000

static atomic_int stop;

static void *churn(void *arg)
{
	char *b[CHURN] = { 0 };
	unsigned seed = 1;

	(void)arg;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < CHURN; i++) {
			size_t n = 16 + rand_r(&seed) % SIZES;

			if (b[i] && rand_r(&seed) % 2)
				continue;
			free(b[i]);
			if (!(b[i] = malloc(n)))
				abort();
			memset(b[i], i, n);
		}
	}
	for (int i = 0; i < CHURN; i++)
		free(b[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds, total = 0;
	unsigned seed = 7;
	pthread_t t;
	int fd[2];

	if (argc != 2 || (rounds = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: epoch_read_into ROUNDS\n");
		return 2;
	}
	if (pipe(fd) < 0 || pthread_create(&t, NULL, churn, NULL))
		return 2;
	for (long r = 0; r < rounds; r++) {
		size_t n = 16 + rand_r(&seed) % SIZES;
		char *in = malloc(n), *out = malloc(n);
		ssize_t got;

		if (!in || !out)
			return 2;
		memset(in, (int)r, n);
		memset(out, 0, n); /* written: the program may write it */
		if (write(fd[1], in, n) != (ssize_t)n)
			return 2;
		got = read(fd[0], out, n);
		if (got != (ssize_t)n) {
			fprintf(stderr, "round %ld: read of %zu bytes: %zd (%s)\n", r, n,
			        got, got < 0 ? strerror(errno) : "short");
			return 1;
		}
		total += got;
		free(in);
		free(out);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("read %ld\n", total);
	return 0;
}
