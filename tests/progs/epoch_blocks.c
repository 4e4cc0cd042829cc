/* epoch_blocks N ROUNDS SLEEP_US [ALTSTACK]: N blocks of 64 bytes live at
 * once, then ROUNDS rounds, each writing every block and sleeping
 * SLEEP_US: under a rule with protect = read and an epoch, each round's
 * writes trap again on the blocks an epoch protected since. With ALTSTACK,
 * an alternate signal stack of that many bytes malloc'd first (ruby keeps
 * one of 16 KiB): rtl's trap handler runs there. Prints the blocks' sum,
 * which must not depend on the preload. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n, rounds, sum = 0;
	unsigned sleep_us;
	char **b;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: epoch_blocks N ROUNDS SLEEP_US [ALTSTACK]\n");
		return 2;
	}
	if (argc == 5) {
		stack_t ss = { .ss_size = (size_t)atol(argv[4]) };

		if (!(ss.ss_sp = malloc(ss.ss_size)) || sigaltstack(&ss, NULL) < 0) {
			perror("sigaltstack");
			return 2;
		}
	}
	n = atol(argv[1]);
	rounds = atol(argv[2]);
	sleep_us = (unsigned)atol(argv[3]);
	if (n <= 0 || !(b = calloc((size_t)n, sizeof(*b))))
		return 2;
	for (long i = 0; i < n; i++)
		if (!(b[i] = calloc(1, 64)))
			return 2;
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < n; i++)
			b[i][r % 64] = (char)(i + r);
		usleep(sleep_us);
	}
	for (long i = 0; i < n; i++) {
		for (int k = 0; k < 64; k++)
			sum += b[i][k];
		free(b[i]);
	}
	printf("sum %ld\n", sum);
	return 0;
}
