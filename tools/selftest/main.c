/* rtl-selftest: run rtl's checks on this CPU and these libraries, each in a
 * child of its own, and say what passed. rtlctl selftest runs it once per
 * glibc string variant the CPU has (see --list-variants). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/selftest/selftest.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: rtl-selftest [--list-variants | --list] [--full] [CHECK...]\n");
}

/* Run one check in a child; the report comes back through shared memory,
 * so that a crash still says which case ran. 0 if it passed. */
static int run_one(const struct st_check *c)
{
	struct shared {
		struct st_report r;
		char progress[240];
	} *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
	             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status, ok;
	pid_t pid;

	if (sh == MAP_FAILED) {
		perror("rtl-selftest: mmap");
		return -1;
	}
	memset(sh, 0, sizeof(*sh));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		sh->r.progress = sh->progress;
		sh->r.progress_len = sizeof(sh->progress);
		c->run(&sh->r);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		perror("rtl-selftest: fork");
		return -1;
	}
	ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && !sh->r.failed;
	if (ok)
		printf("ok     %-20s %u cases, %llu traps\n", c->name, sh->r.cases,
		       (unsigned long long)sh->r.traps);
	else if (WIFSIGNALED(status))
		printf("FAIL   %-20s killed by signal %d (%s) in: %s\n", c->name,
		       WTERMSIG(status), strsignal(WTERMSIG(status)), sh->progress);
	else if (sh->r.failed)
		printf("FAIL   %-20s %u of %u cases: first: %s\n", c->name,
		       sh->r.failed, sh->r.cases, sh->r.first);
	else
		printf("FAIL   %-20s exit status %d\n", c->name, WEXITSTATUS(status));
	munmap(sh, sizeof(*sh));
	return ok ? 0 : -1;
}

static int wanted(const char *name, int argc, char **argv)
{
	if (optind == argc)
		return 1;
	for (int i = optind; i < argc; i++) {
		size_t n = strlen(argv[i]);
		/* "sweep" selects every sweep/... check. */
		if (!strcmp(name, argv[i]) ||
		    (!strncmp(name, argv[i], n) && name[n] == '/'))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "list-variants", no_argument, NULL, 'V' },
		{ "list", no_argument, NULL, 'l' },
		{ "full", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, passed = 0, failed = 0, skipped = 0;
	char line[256];

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'V': {
			struct st_variant v[8];
			int n = st_variants(v, 8);
			for (int i = 0; i < n; i++)
				printf("%s\t%s\n", v[i].name, v[i].tunables);
			return 0;
		}
		case 'l':
			for (int i = 0; i < st_nchecks; i++)
				printf("%-20s %s\n", st_checks[i].name, st_checks[i].what);
			return 0;
		case 'f':
			st_full = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	printf("glibc picked:");
	for (int i = 0; st_functions[i]; i++) {
		st_describe(st_functions[i], line, sizeof(line));
		printf(" %s", line);
	}
	printf("\n");
	for (int i = 0; i < st_nchecks; i++) {
		const struct st_check *ck = &st_checks[i];
		if (!wanted(ck->name, argc, argv))
			continue;
		if (ck->available && !ck->available()) {
			printf("skip   %-20s (this CPU cannot run it)\n", ck->name);
			skipped++;
			continue;
		}
		if (run_one(ck) == 0)
			passed++;
		else
			failed++;
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
