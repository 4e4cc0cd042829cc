/* waitpid into a malloc'd status (gcc's driver does): the kernel writes
 * the status through the program's pointer. Prints what it got. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int *status = malloc(64);
	struct rusage *ru = malloc(sizeof(*ru));
	pid_t pid = fork();

	if (pid == 0)
		_exit(42);
	if (wait4(pid, status, 0, ru) != pid) {
		perror("wait4");
		return 1;
	}
	printf("child exited %d, rusage %s\n", WEXITSTATUS(*status),
	       ru->ru_maxrss > 0 ? "filled" : "empty");
	free(ru);
	free(status);
	return 0;
}
