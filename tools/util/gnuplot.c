/* gnuplot as a child reading its script on a pipe; it writes the file. */
#include "tools/util/gnuplot.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *gnuplot_terminal(const char *out)
{
	const char *dot = strrchr(out, '.');

	if (!dot)
		return NULL;
	if (!strcmp(dot, ".png"))
		return "pngcairo size 1000,760 font 'sans,10' noenhanced";
	if (!strcmp(dot, ".svg"))
		return "svg size 1000,760 font 'sans,10' noenhanced";
	return NULL;
}

FILE *gnuplot_start(const char *who, pid_t *pid)
{
	int fds[2];
	FILE *gp;

	if (pipe(fds) < 0 || (*pid = fork()) < 0) {
		fprintf(stderr, "%s: %s\n", who, strerror(errno));
		return NULL;
	}
	if (*pid == 0) {
		dup2(fds[0], 0);
		close(fds[0]);
		close(fds[1]);
		execlp("gnuplot", "gnuplot", (char *)NULL);
		fprintf(stderr, "%s needs gnuplot (Debian: gnuplot-nox): %s\n", who,
		        strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	signal(SIGPIPE, SIG_IGN); /* gnuplot missing: its end is closed */
	if (!(gp = fdopen(fds[1], "w"))) {
		close(fds[1]);
		fprintf(stderr, "%s: %s\n", who, strerror(errno));
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return gp;
}

int gnuplot_finish(FILE *gp, pid_t pid, const char *who)
{
	int status;

	fclose(gp);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) == 127)
		return -1; /* the child said why */
	if (WEXITSTATUS(status)) {
		fprintf(stderr, "%s: gnuplot failed (exit %d)\n", who, WEXITSTATUS(status));
		return -1;
	}
	return 0;
}

const char *gnuplot_label(const char *s, char *buf)
{
	size_t n = 0;

	for (; s && *s && n + 1 < GNUPLOT_LABEL; s++)
		buf[n++] = (strchr("!._+-:/", *s) || (*s >= '0' && *s <= '9') ||
		            (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))
		                   ? *s
		                   : '_';
	buf[n] = '\0';
	return buf;
}

void gnuplot_quoted(const char *s, FILE *gp)
{
	fputc('\'', gp);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', gp);
		fputc(*s, gp);
	}
	fputc('\'', gp);
}
