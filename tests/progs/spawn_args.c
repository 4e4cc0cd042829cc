/* Argument and environment strings in malloc'd memory handed to execve,
 * execl, execlp, execle, posix_spawn and system, as tar and make hand
 * theirs: each child prints what it was given. */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char *dup_str(const char *s)
{
	char *p = malloc(strlen(s) + 1);
	strcpy(p, s);
	return p;
}

int main(void)
{
	char **argv = malloc(4 * sizeof(char *)), **envp = malloc(2 * sizeof(char *));
	int st;
	pid_t pid;

	argv[0] = dup_str("/bin/echo");
	argv[1] = dup_str("spawned");
	argv[2] = dup_str("with malloc'd arguments");
	argv[3] = NULL;
	envp[0] = dup_str("RTL_TEST_VAR=from-a-malloced-string");
	envp[1] = NULL;
	fflush(stdout);
	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &st, 0) != pid)
		printf("posix_spawn failed\n");
	fflush(stdout);
	if ((pid = fork()) == 0) {
		execve(argv[0], argv, envp);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	printf("execve: exit %d\n", WEXITSTATUS(st));
	fflush(stdout);
	if ((pid = fork()) == 0) {
		execl(argv[0], argv[0], argv[1], "by execl", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	if ((pid = fork()) == 0) {
		execlp("echo", "echo", argv[1], "by execlp", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	if ((pid = fork()) == 0) {
		execle("/usr/bin/env", "env", (char *)NULL, envp);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	printf("execl, execlp, execle: exit %d\n", WEXITSTATUS(st));
	fflush(stdout);
	st = system(dup_str("echo from system"));
	printf("system: exit %d\n", WEXITSTATUS(st));
	return 0;
}
