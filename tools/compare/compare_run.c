/* rtlctl compare's runs: one policy file per mechanism, the program run
 * once without rtl and once per mechanism with the same input, its
 * outputs kept, and whether they are all the reference's. The files the
 * program writes (--outputs) start every run as they were before the
 * first, and are left as the run without rtl left them. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy/policy.h"
#include "tools/compare/compare.h"
#include "tools/rtlctl/launch.h"

/* ---- policies ---- */

static int write_policy(const struct rtl_policy *p, const char *path)
{
	FILE *f = fopen(path, "wx");

	if (!f) {
		fprintf(stderr, "rtlctl compare: %s: %s\n", path, strerror(errno));
		return -1;
	}
	rtl_policy_write(p, f);
	return fclose(f) == 0 ? 0 : -1;
}

int compare_tracks(const struct rtl_policy *p)
{
	for (int k = 0; k < p->nrules; k++)
		if (p->rules[k].on_write & RTL_ACT_DIRTY)
			return 1;
	return 0;
}

/* The written run's policy: auto, and each dirty rule's writes seen by the
 * kernel alone (the preload puts such blocks on written bits, engine.c). */
static void written_policy(struct rtl_policy *p)
{
	p->mechanism = RTL_MECH_AUTO;
	for (int k = 0; k < p->nrules; k++) {
		p->rules[k].mechanism = RTL_MECH_AUTO;
		if (p->rules[k].on_write & RTL_ACT_DIRTY)
			p->rules[k].on_write &= ~(unsigned)(RTL_ACT_COUNT | RTL_ACT_LOG |
			                                    RTL_ACT_BACKTRACE | RTL_ACT_ABORT);
	}
}

int compare_policies(struct compare *c)
{
	static struct rtl_policy base, p;
	struct rtl_policy_errors errs;

	if (c->config ? rtl_policy_load(c->config, &base, &errs) < 0
	              : rtl_policy_load_builtin(&base) < 0) {
		fputs(errs.text, stderr);
		return -1;
	}
	for (int i = 0; i < c->nruns; i++) {
		struct compare_run *run = &c->runs[i];

		if (run->mechanism == COMPARE_NONE)
			continue;
		p = base;
		if (run->mechanism == COMPARE_WRITTEN) {
			written_policy(&p);
		} else if (run->mechanism != COMPARE_POLICY) {
			p.mechanism = run->mechanism;
			for (int k = 0; k < p.nrules; k++)
				p.rules[k].mechanism = run->mechanism;
		}
		snprintf(run->policy, sizeof(run->policy), "%s/policy.%s.ini", c->dir,
		         run->name);
		snprintf(run->report, sizeof(run->report), "%s/%s.json", c->dir,
		         run->name);
		snprintf(run->run_dir, sizeof(run->run_dir), "%s/%s.records", c->dir,
		         run->name);
		if (mkdir(run->run_dir, 0700) < 0) {
			fprintf(stderr, "rtlctl compare: %s: %s\n", run->run_dir,
			        strerror(errno));
			return -1;
		}
		if (write_policy(&p, run->policy) < 0)
			return -1;
		/* A policy valid as given may not be with another mechanism
		 * (an epoch under swizzle). */
		if (rtl_policy_load(run->policy, &p, &errs) < 0) {
			fprintf(stderr, "rtlctl compare: the policy is not valid with mechanism %s:\n%s",
			        run->name, errs.text);
			return -1;
		}
	}
	return 0;
}

/* ---- files ---- */

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	ssize_t n;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	while (out >= 0 && (n = read(in, buf, sizeof(buf))) >= 0) {
		if (n == 0) {
			rc = 0;
			break;
		}
		if (write(out, buf, (size_t)n) != n)
			break;
	}
	close(in);
	if (out >= 0 && close(out) < 0)
		rc = -1;
	return rc;
}

/* Where output k of run name is kept ("initial" before the first run). */
static void kept(const struct compare *c, const char *name, int k, char *out,
                 size_t len)
{
	const char *file = c->outputs[k], *base = strrchr(file, '/');

	snprintf(out, len, "%s/outputs/%s/%d.%s", c->dir, name, k, base ? base + 1 : file);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* The output files as they were when run name ended (or were first). */
static void restore(const struct compare *c, const char *name)
{
	char path[PATH_MAX];

	for (int k = 0; c->outputs[k]; k++) {
		kept(c, name, k, path, sizeof(path));
		if (exists(path))
			copy_file(path, c->outputs[k]);
		else
			unlink(c->outputs[k]);
	}
}

static void keep(const struct compare *c, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/outputs/%s", c->dir, name);
	mkdir(path, 0700);
	for (int k = 0; c->outputs[k]; k++) {
		kept(c, name, k, path, sizeof(path));
		if (exists(c->outputs[k]))
			copy_file(c->outputs[k], path);
	}
}

/* ---- runs ---- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int open_at(const struct compare *c, const char *name, const char *ext,
                   int flags)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s%s", c->dir, name, ext);
	return open(path, flags | O_CLOEXEC, 0600);
}

static int run_one(struct compare *c, struct compare_run *run, const char *preload)
{
	int in = c->has_stdin ? open_at(c, "stdin", "", O_RDONLY)
	                      : open("/dev/null", O_RDONLY | O_CLOEXEC);
	int out = open_at(c, run->name, ".stdout", O_WRONLY | O_CREAT | O_EXCL);
	int err = open_at(c, run->name, ".stderr", O_WRONLY | O_CREAT | O_EXCL);
	pid_t parent = getpid(), pid;
	uint64_t t0;

	if (in < 0 || out < 0 || err < 0) {
		fprintf(stderr, "rtlctl compare: %s: cannot open its files in %s: %s\n",
		        run->name, c->dir, strerror(errno));
		return -1;
	}
	fflush(NULL);
	t0 = now_ns();
	pid = fork();
	if (pid == 0) {
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		launch_tie(parent);
		if (run->mechanism != COMPARE_NONE) {
			launch_env(preload, run->policy, run->report);
			setenv("RTL_RUN_DIR", run->run_dir, 1);
		}
		execvp(c->argv[0], c->argv);
		fprintf(stderr, "rtlctl compare: %s: %s\n", c->argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(in);
	close(out);
	close(err);
	if (pid < 0) {
		perror("rtlctl compare: fork");
		return -1;
	}
	run->pid = pid;
	while (waitpid(pid, &run->status, 0) < 0 && errno == EINTR)
		;
	run->wall_ns = now_ns() - t0;
	return 0;
}

int compare_run_all(struct compare *c, const char *preload)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/outputs", c->dir);
	if (c->outputs[0] && mkdir(path, 0700) < 0) {
		fprintf(stderr, "rtlctl compare: %s: %s\n", path, strerror(errno));
		return -1;
	}
	keep(c, "initial");
	for (int i = 0; i < c->nruns; i++) {
		struct compare_run *run = &c->runs[i];

		fprintf(stderr, "rtlctl compare: run %d of %d: %s\n", i + 1, c->nruns,
		        run->mechanism == COMPARE_NONE ? "without rtl" : run->name);
		restore(c, "initial");
		if (run_one(c, run, preload) < 0)
			return -1;
		keep(c, run->name);
	}
	restore(c, c->runs[0].name); /* as the program leaves them without rtl */
	return 0;
}

/* ---- the outputs, run by run ---- */

/* A file's bytes, or NULL (an empty buffer for a file that does not
 * exist: *n = 0, *missing = 1). Lines starting with "rtl: " are dropped
 * when filter: they are rtl's own (a log action, a diagnostic), not the
 * program's. */
static char *load(const char *path, int filter, size_t *n, int *missing)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL, *line = NULL;
	size_t cap = 0, len = 0;
	ssize_t got;

	*n = 0;
	*missing = !f;
	if (!f)
		return calloc(1, 1);
	while ((got = getline(&line, &cap, f)) > 0) {
		char *grown;

		if (filter && !strncmp(line, "rtl: ", 5))
			continue;
		if (!(grown = realloc(buf, len + (size_t)got + 1)))
			break;
		buf = grown;
		memcpy(buf + len, line, (size_t)got);
		len += (size_t)got;
	}
	free(line);
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	*n = len;
	return buf;
}

/* The line of buf holding byte at, cut to fit out. */
static void line_at(const char *buf, size_t n, size_t at, char *out, size_t len)
{
	size_t s = at, e = at;

	while (s > 0 && buf[s - 1] != '\n')
		s--;
	while (e < n && buf[e] != '\n')
		e++;
	snprintf(out, len, "%.*s", (int)(e - s < 120 ? e - s : 120), buf + s);
}

/* Whether what run left in a (ext of run's name, or output k) is the
 * reference's; if not, says how into c->difference. */
static int same(struct compare *c, const struct compare_run *run, const char *what,
                const char *ref_path, const char *path, int filter)
{
	size_t n1, n2, at = 0, line = 1;
	int miss1, miss2, ok;
	char *a = load(ref_path, filter, &n1, &miss1), *b = load(path, filter, &n2, &miss2);
	char la[128], lb[128];

	while (at < n1 && at < n2 && a[at] == b[at])
		line += a[at++] == '\n';
	ok = a && b && miss1 == miss2 && n1 == n2 && at == n1;
	if (!ok && miss1 != miss2) {
		snprintf(c->difference, sizeof(c->difference), "%s: %s %s (without rtl: %s)",
		         run->name, what, miss2 ? "was not written" : "was written",
		         miss1 ? "not written" : "written");
	} else if (!ok && a && b) {
		line_at(a, n1, at, la, sizeof(la));
		line_at(b, n2, at, lb, sizeof(lb));
		snprintf(c->difference, sizeof(c->difference),
		         "%s: %s differs at line %zu: '%s' (without rtl: '%s')", run->name, what,
		         line, lb, la);
	}
	free(a);
	free(b);
	return ok;
}

static void describe_status(int status, char *out, size_t len)
{
	if (WIFEXITED(status))
		snprintf(out, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, len, "signal %d", WTERMSIG(status));
	else
		snprintf(out, len, "status 0x%x", status);
}

void compare_outputs(struct compare *c)
{
	const struct compare_run *ref = &c->runs[0];
	char a[PATH_MAX], b[PATH_MAX], what[PATH_MAX + 16];

	c->identical = 1;
	for (int i = 1; i < c->nruns && c->identical; i++) {
		const struct compare_run *run = &c->runs[i];

		if (run->status != ref->status) {
			char s1[32], s2[32];

			describe_status(ref->status, s1, sizeof(s1));
			describe_status(run->status, s2, sizeof(s2));
			snprintf(c->difference, sizeof(c->difference), "%s: %s (without rtl: %s)",
			         run->name, s2, s1);
			c->identical = 0;
			break;
		}
		for (int k = 0; k < 2 && c->identical; k++) {
			const char *ext = k ? ".stderr" : ".stdout";

			snprintf(a, sizeof(a), "%s/%s%s", c->dir, ref->name, ext);
			snprintf(b, sizeof(b), "%s/%s%s", c->dir, run->name, ext);
			c->identical = same(c, run, ext + 1, a, b, k == 1);
		}
		for (int k = 0; c->outputs[k] && c->identical; k++) {
			kept(c, ref->name, k, a, sizeof(a));
			kept(c, run->name, k, b, sizeof(b));
			snprintf(what, sizeof(what), "file %s", c->outputs[k]);
			c->identical = same(c, run, what, a, b, 0);
		}
	}
}
