/* TAP runner: forks one child per test, reports ok / not ok with the cause. */
#include "tests/unit/test.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TESTS 256
#define TIMEOUT_S 120

static struct {
	const char *name;
	test_fn fn;
} tests[MAX_TESTS];
static int ntests;

void test_register(const char *name, test_fn fn)
{
	if (ntests < MAX_TESTS) {
		tests[ntests].name = name;
		tests[ntests].fn = fn;
		ntests++;
	}
}

int test_died_of(int status, int sig)
{
	return WIFSIGNALED(status) && WTERMSIG(status) == sig;
}

int test_run_captured(test_fn fn, char *err, size_t errsize)
{
	int fds[2], status;
	size_t got = 0;
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		fn();
		_exit(0);
	}
	close(fds[1]);
	for (;;) {
		ssize_t n = read(fds[0], err + got, errsize - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == errsize - 1)
			break;
	}
	err[got] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	return status;
}

int main(int argc, char **argv)
{
	int failed = 0, planned = 0;
	const char *only = argc > 1 ? argv[1] : NULL;

	for (int i = 0; i < ntests; i++)
		if (!only || strcmp(only, tests[i].name) == 0)
			planned++;
	printf("1..%d\n", planned);
	fflush(stdout);
	for (int i = 0, n = 0; i < ntests; i++) {
		int status;
		pid_t pid;

		if (only && strcmp(only, tests[i].name) != 0)
			continue;
		n++;
		pid = fork();
		if (pid == 0) {
			alarm(TIMEOUT_S);
			tests[i].fn();
			fflush(NULL);
			_exit(0);
		}
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok %d - %s\n", n, tests[i].name);
		} else {
			failed++;
			if (WIFSIGNALED(status))
				printf("not ok %d - %s # killed by signal %d\n", n,
				       tests[i].name, WTERMSIG(status));
			else
				printf("not ok %d - %s # exit %d\n", n, tests[i].name,
				       WEXITSTATUS(status));
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}
