/* peakmem FILE -- CMD ARGS...: run CMD in a process group of its own and
 * write to FILE the peak over its run of the group's proportional set size
 * (Pss, KiB, from /proc/PID/smaps_rollup) and the seconds it took. Pss
 * counts a page mapped N times once in all: rtl maps its memory several
 * times (views, slots), which RSS would count again for every mapping.
 * The exit status is CMD's (128 + N if a signal ended it). */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long pss_of(long pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup", pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pss: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* The Pss of every process whose group is pgid. */
static long group_pss(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long sum = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		long pid = strtol(e->d_name, NULL, 10);
		if (pid <= 0)
			continue;
		if (getpgid((pid_t)pid) == pgid) {
			long k = pss_of(pid);
			if (k > 0)
				sum += k;
		}
	}
	closedir(d);
	return sum;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct timespec tick = { 0, 5 * 1000 * 1000 };
	long peak = 0;
	double t0 = now();
	pid_t pid;
	int st;
	FILE *out;

	if (argc < 4 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: peakmem FILE -- CMD ARGS...\n");
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		execvp(argv[3], argv + 3);
		perror(argv[3]);
		_exit(127);
	}
	setpgid(pid, pid);
	for (;;) {
		long k = group_pss(pid);
		if (k > peak)
			peak = k;
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		nanosleep(&tick, NULL);
	}
	if ((out = fopen(argv[1], "w"))) {
		fprintf(out, "%ld %.2f\n", peak, now() - t0);
		fclose(out);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
