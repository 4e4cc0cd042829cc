/* fork while a process allocates its first blocks: under the preload the
 * first selected block starts the allocator behind the blocks (and its fork
 * handlers), so a fork may meet that start in another thread, or run it in
 * a fork handler of the program's own.
 *
 * usage: fork_first_block threads [ROUNDS]
 *          ROUNDS times: 4 threads start allocating and freeing batches of
 *          blocks at once, while the main thread forks 8 children that
 *          allocate, fill and check blocks of their own
 *        fork_first_block prepare
 *          the process's first block is allocated in its own fork prepare
 *          handler; parent and child then allocate and check blocks
 * Prints what it did; exit status 1 on a wrong byte or a child that failed.
 * A deadlock is a hang: the test that runs it has a time limit. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 4
#define FORKS 8
#define BATCH 300 /* past a thread cache's bins: the arenas' locks too */
#define SIZE 64
#define LARGE (128 << 10) /* every 16th block: no thread cache at all */

static atomic_int go, done;

/* Allocates, fills, checks and frees n blocks: 0, or 1 on a wrong byte. */
static int batch(int n, unsigned char seed)
{
	unsigned char *b[BATCH];
	int bad = 0;

	for (int i = 0; i < n; i++) {
		size_t size = i % 16 ? SIZE : LARGE;

		b[i] = malloc(size);
		if (!b[i])
			return 1;
		memset(b[i], (unsigned char)(seed + i), SIZE);
		b[i][size - 1] = (unsigned char)(seed + i);
	}
	for (int i = 0; i < n; i++) {
		size_t size = i % 16 ? SIZE : LARGE;

		bad |= b[i][0] != (unsigned char)(seed + i) ||
		       b[i][size - 1] != (unsigned char)(seed + i);
		free(b[i]);
	}
	return bad;
}

static void *worker(void *arg)
{
	int bad = 0;

	while (!atomic_load(&go))
		;
	while (!atomic_load(&done))
		bad |= batch(BATCH, (unsigned char)(uintptr_t)arg);
	return (void *)(uintptr_t)bad;
}

/* A child that allocates and checks, and exits with what it found. */
static int forked_child_ok(pid_t pid)
{
	int st;

	if (pid == 0)
		_exit(batch(BATCH, 7) | batch(BATCH, 9));
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       WEXITSTATUS(st) == 0;
}

static int threads(int rounds)
{
	int failed = 0;

	for (int r = 0; r < rounds; r++) {
		pid_t p = fork();

		/* Each round in a fresh process: its first block is yet to come. */
		if (p == 0) {
			pthread_t t[THREADS];
			int lost = 0;

			for (long i = 0; i < THREADS; i++)
				pthread_create(&t[i], NULL, worker, (void *)i);
			atomic_store(&go, 1);
			for (int f = 0; f < FORKS; f++)
				lost += !forked_child_ok(fork());
			atomic_store(&done, 1);
			for (int i = 0; i < THREADS; i++) {
				void *v;

				pthread_join(t[i], &v);
				lost += v != NULL;
			}
			exit(lost ? 1 : 0); /* its exit handlers run: a report */
		}
		failed += !forked_child_ok(p);
	}
	printf("threads: %d rounds of %d forks, %d failed\n", rounds, FORKS, failed);
	return failed != 0;
}

static void *first;

static void prepare_allocates(void)
{
	if (!first)
		first = malloc(SIZE);
}

static int prepare(void)
{
	int ok;

	pthread_atfork(prepare_allocates, NULL, NULL);
	ok = forked_child_ok(fork());
	ok = ok && first && batch(BATCH, 3) == 0;
	ok = ok && forked_child_ok(fork());
	printf("prepare: first block in the fork handler, children %s\n",
	       ok ? "ok" : "FAILED");
	free(first);
	return !ok;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc >= 2 && strcmp(argv[1], "threads") == 0)
		return threads(argc > 2 ? atoi(argv[2]) : 10);
	if (argc == 2 && strcmp(argv[1], "prepare") == 0)
		return prepare();
	fprintf(stderr, "usage: fork_first_block threads [ROUNDS] | prepare\n");
	return 2;
}
