/* Finding rtlctl run's preload and asking the dynamic loader whether it
 * loads (preload_find.h). Nothing here is fixed when meson configures but
 * the relative path from rtlctl's folder to the preload's. */
#include "tools/rtlctl/preload_find.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef RTL_BIN_TO_PRELOAD
#define RTL_BIN_TO_PRELOAD "../lib/rtl"
#endif
#define PRELOAD_NAME "librtlpreload.so"

int preload_find(char *out, size_t len)
{
	static const char *const rel[] = { "../preload", RTL_BIN_TO_PRELOAD };
	const char *env = getenv("RTL_PRELOAD");
	char self[PATH_MAX], dir[PATH_MAX], tried[2 * PATH_MAX + 8] = "";
	ssize_t n;

	if (env && *env) {
		if (env[0] != '/' && realpath(env, out))
			return 0;
		snprintf(out, len, "%s", env);
		return access(out, R_OK);
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		snprintf(out, len, "/proc/self/exe (unreadable)");
		return -1;
	}
	self[n] = '\0';
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(out, len, "%s/%s/%s", dir, rel[i], PRELOAD_NAME);
		if (access(out, R_OK) == 0)
			return 0;
		size_t k = strlen(tried);
		snprintf(tried + k, sizeof(tried) - k, "%s%s", k ? ", " : "", out);
	}
	snprintf(out, len, "%s", tried);
	return -1;
}

/* The first object dl_iterate_phdr names is the program: its PT_INTERP. */
static int interp_of_first(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP)
			*(const char **)data =
			        (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return 1;
}

/* The dynamic loader rtlctl itself was started by: the one the program
 * (of the same machine) will be. */
static const char *loader(void)
{
	const char *ld = NULL;

	dl_iterate_phdr(interp_of_first, &ld);
	return ld;
}

/* Read what the child wrote to fd into why, keeping the first len - 1
 * bytes; then close fd. */
static void read_all(int fd, char *why, size_t len)
{
	size_t n = 0;
	char sink[512];

	for (;;) {
		char *to = n + 1 < len ? why + n : sink;
		size_t room = n + 1 < len ? len - 1 - n : sizeof(sink);
		ssize_t got = read(fd, to, room);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (to == why + n)
			n += (size_t)got;
	}
	why[n] = '\0';
	close(fd);
}

/* "PATH: error while loading shared libraries: REASON\n" -> "REASON". */
static void reason_only(char *why)
{
	static const char mark[] = "error while loading shared libraries: ";
	char *r = strstr(why, mark);

	if (r)
		memmove(why, r + strlen(mark), strlen(r + strlen(mark)) + 1);
	why[strcspn(why, "\n")] = '\0';
}

/* The ELF machine of the file at path (e_machine), or -1. */
static int elf_machine(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0)
		return -1;
	n = (int)read(fd, h, sizeof(h));
	close(fd);
	if (n != (int)sizeof(h) || memcmp(h, "\177ELF", 4) || h[5] != 1)
		return -1;
	return h[18] | h[19] << 8; /* little-endian, as both machines are */
}

int preload_check(const char *path, char *why, size_t len)
{
	const char *ld = loader();
	int fds[2], status, theirs = elf_machine(path);
	pid_t pid;

	why[0] = '\0';
	/* Another machine's preload (RTL_PRELOAD): the program runs under an
	 * emulator the command names (qemu-user), whose loader is the one to
	 * ask; this one cannot. */
	if (theirs >= 0 && theirs != elf_machine("/proc/self/exe"))
		return 0;
	if (!ld || pipe2(fds, O_CLOEXEC) < 0)
		return 0; /* nothing to ask: let the program's start show it */
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(fds[1], 2);
		execl(ld, ld, "--list", path, (char *)NULL);
		dprintf(2, "cannot run the dynamic loader %s: %s\n", ld, strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	read_all(fds[0], why, len);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	reason_only(why);
	if (!why[0])
		snprintf(why, len, "%s --list failed", ld);
	return -1;
}
