/* Fork isolation: after fork, the child sees its parent's heap as of the
 * fork and keeps its own writes; neither side sees the other's writes made
 * after it. With "where" as argument, first says for each block whether it
 * is a region in rtl's views (asked through dlsym, so that the program runs
 * without rtl too). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rtl/region.h>

static const size_t sizes[] = { 24, 200, 5000, 100000, 3u << 20 };
#define N (sizeof(sizes) / sizeof(sizes[0]))

static int all(char **b, char c)
{
	for (size_t i = 0; i < N; i++)
		for (size_t j = 0; j < sizes[i]; j += 7)
			if (b[i][j] != c || b[i][sizes[i] - 1] != c)
				return 0;
	return 1;
}

static void set(char **b, char c)
{
	for (size_t i = 0; i < N; i++)
		memset(b[i], c, sizes[i]);
}

static void where(char **b)
{
	int (*find)(const void *, struct region_info *);
	struct region_info r;

	*(void **)&find = dlsym(RTLD_DEFAULT, "region_find");

	for (size_t i = 0; i < N; i++)
		printf("block of %zu: %s\n", sizes[i],
		       find && find(b[i], &r) == 0 && r.size == sizes[i]
		               ? "region"
		               : "not a region");
}

/* One round: fork, cross writes, check both sides. 0 if isolated. */
static int round_trip(char **b, char before)
{
	int up[2], down[2], st;
	char c;
	pid_t pid;

	if (pipe(up) < 0 || pipe(down) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char *mine = malloc(70000);
		if (!all(b, before) || !mine)
			_exit(10);
		set(b, 'c');
		memset(mine, 'm', 70000);
		if (write(up[1], "w", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(11);
		/* The parent wrote 'P' meanwhile. */
		if (!all(b, 'c') || mine[69999] != 'm')
			_exit(12);
		for (size_t i = 0; i < N; i++)
			free(b[i]);
		free(mine);
		_exit(0);
	}
	if (read(up[0], &c, 1) != 1 || !all(b, before))
		return 2; /* the child's writes must not show here */
	set(b, 'P');
	if (write(down[1], "w", 1) != 1 || waitpid(pid, &st, 0) != pid)
		return 3;
	close(up[0]), close(up[1]), close(down[0]), close(down[1]);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return 4;
	return all(b, 'P') ? 0 : 5;
}

int main(int argc, char **argv)
{
	char *b[N];

	for (size_t i = 0; i < N; i++)
		if (!(b[i] = malloc(sizes[i])))
			return 1;
	if (argc > 1 && !strcmp(argv[1], "where"))
		where(b);
	set(b, 'p');
	printf("first fork: %s\n", round_trip(b, 'p') ? "shared" : "isolated");
	printf("second fork: %s\n", round_trip(b, 'P') ? "shared" : "isolated");
	for (size_t i = 0; i < N; i++)
		free(b[i]);
	return 0;
}
