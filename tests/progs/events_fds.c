/* events_fds N ROUNDS SLEEP_US MODE [FILE]: N blocks of 64 bytes, ROUNDS
 * rounds each writing every block and sleeping SLEEP_US (under a rule
 * with protect = read and an epoch, every round's writes trap again, and
 * with events = traps the preload streams them into its record file).
 * After half the rounds:
 *
 *   close FILE  closes every descriptor above 2, as daemons do, then opens
 *               FILE 32 times (one of them takes the number the record
 *               file had) and writes a line to each after every later
 *               round: FILE must end up holding those lines only
 *   exec        execs /bin/true: the image that goes leaves no record file
 *
 * Prints the blocks' sum. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FDS 32

int main(int argc, char **argv)
{
	long n, rounds, sum = 0;
	unsigned sleep_us;
	int fds[FDS], nfds = 0;
	char **b;

	if (argc < 5 || (!strcmp(argv[4], "close") && argc != 6)) {
		fprintf(stderr, "usage: events_fds N ROUNDS SLEEP_US close FILE | exec\n");
		return 2;
	}
	n = atol(argv[1]);
	rounds = atol(argv[2]);
	sleep_us = (unsigned)atol(argv[3]);
	b = calloc((size_t)n, sizeof(*b));
	for (long i = 0; i < n; i++)
		b[i] = calloc(1, 64);
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < n; i++)
			b[i][r % 64]++;
		usleep(sleep_us);
		if (r == rounds / 2 && !strcmp(argv[4], "exec")) {
			fflush(stdout);
			execl("/bin/true", "true", (char *)NULL);
			perror("execl");
			return 1;
		}
		if (r == rounds / 2) {
			for (int fd = 3; fd < 1024; fd++)
				close(fd);
			for (nfds = 0; nfds < FDS; nfds++) {
				fds[nfds] = open(argv[5], O_WRONLY | O_CREAT | O_APPEND, 0600);
				if (fds[nfds] < 0) {
					perror(argv[5]);
					return 1;
				}
			}
		}
		for (int k = 0; k < nfds; k++)
			dprintf(fds[k], "round %ld fd %d\n", r, fds[k]);
	}
	for (long i = 0; i < n; i++)
		for (int k = 0; k < 64; k++)
			sum += b[i][k];
	printf("sum %ld\n", sum);
	return 0;
}
