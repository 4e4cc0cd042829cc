/* The exec family, posix_spawn, system and popen: the kernel reads the
 * program's path, argument and environment strings when it execs, and the
 * seccomp filter lets execve through untrapped (posix_spawn's child resets
 * every signal handler first: a trap there would kill it). So the strings
 * and their vectors that lie in selected memory are granted for reading,
 * and pinned against epochs, before the call; released if it returns.
 * The new program inherits the mask the program believes in: SIGSEGV and
 * SIGSYS go into the kernel's for the call if the program blocks them
 * (sigmask.c).
 * Everything else passes to the next definition unchanged. */
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "interpose/access.h"
#include "preload/place/heap.h"
#include "preload/shim/sigmask.h"
#include "preload/track/events.h"

#define API __attribute__((visibility("default")))
#define MAX_PINNED 256
#define MAX_ARGS 4096 /* execl's arguments, on the stack */

extern char **environ;

struct pinned {
	const void *p[MAX_PINNED];
	int n;
};

/* Grant and pin the object holding p (a read); nothing if it is not
 * selected memory. */
static void hold(struct pinned *h, const void *p)
{
	if (!p || !rtl_heap_owns(p) || h->n == MAX_PINNED)
		return;
	rtl_access_pin(p, 1);
	h->p[h->n++] = p;
	rtl_access_resolve(p, 1, 0);
}

static void hold_vector(struct pinned *h, char *const *v)
{
	hold(h, v);
	for (int i = 0; v && v[i]; i++)
		hold(h, v[i]);
}

static void release(struct pinned *h)
{
	int e = errno;

	for (int i = 0; i < h->n; i++)
		rtl_access_pin(h->p[i], -1);
	h->n = 0;
	errno = e;
}

/* The next definition of name, found on first use (POSIX's way from
 * dlsym to a function: through the pointer's bytes). */
#define NEXT_FN(fn, name)                                \
	do {                                             \
		static void *cache_;                     \
		if (!cache_)                             \
			cache_ = dlsym(RTLD_NEXT, name); \
		*(void **)&(fn) = cache_;                \
	} while (0)

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

/* fn(path, argv, envp) with its strings granted and pinned, and the
 * program's mask in the kernel's for the call. */
static int held_exec(execve_fn fn, const char *path, char *const argv[],
                     char *const envp[])
{
	struct pinned h = { .n = 0 };
	int r, masked;

	hold(&h, path);
	hold_vector(&h, argv);
	hold_vector(&h, envp);
	masked = rtl_sigmask_exec_begin();
	rtl_events_exec(); /* this image's record is not written */
	r = fn(path, argv, envp);
	rtl_events_start(); /* it goes on: a file for its events again */
	rtl_sigmask_exec_end(masked);
	release(&h);
	return r;
}

API int execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn fn;

	NEXT_FN(fn, "execve");
	return held_exec(fn, path, argv, envp);
}

API int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execve_fn fn;

	NEXT_FN(fn, "execvpe");
	return held_exec(fn, file, argv, envp);
}

API int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

API int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct pinned h = { .n = 0 };
	int r, masked;

	fexecve_fn fn;

	NEXT_FN(fn, "fexecve");
	hold_vector(&h, argv);
	hold_vector(&h, envp);
	masked = rtl_sigmask_exec_begin();
	r = fn(fd, argv, envp);
	rtl_sigmask_exec_end(masked);
	release(&h);
	return r;
}

/* execl, execlp, execle: the list into a vector on the stack. */
static int collect(const char *arg0, va_list *ap, char **argv)
{
	int n = 0;

	argv[n++] = (char *)arg0;
	while (n < MAX_ARGS - 1 && (argv[n] = va_arg(*ap, char *)))
		n++;
	if (n == MAX_ARGS - 1) {
		errno = E2BIG;
		return -1;
	}
	argv[n] = NULL;
	return 0;
}

/* The list's vector, then the exec: execve (file: a path), execvpe (a
 * name looked up in PATH), with envp or the environment. */
static int exec_list(const char *file, int search, const char *arg, va_list *ap,
                     int with_envp)
{
	char *argv[MAX_ARGS], **envp = environ;

	if (collect(arg, ap, argv) < 0)
		return -1;
	if (with_envp)
		envp = va_arg(*ap, char **);
	return search ? execvpe(file, argv, envp) : execve(file, argv, envp);
}

/* execl, execlp, execle: the same list walk, by file or name, with or
 * without envp after the list. */
#define EXEC_LIST(name, search, with_envp)                        \
	API int name(const char *file, const char *arg, ...)      \
	{                                                         \
		va_list ap;                                       \
		int r;                                            \
                                                                  \
		va_start(ap, arg);                                \
		r = exec_list(file, search, arg, &ap, with_envp); \
		va_end(ap);                                       \
		return r;                                         \
	}

EXEC_LIST(execl, 0, 0)
EXEC_LIST(execlp, 1, 0)
EXEC_LIST(execle, 0, 1)

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

static int spawn(spawn_fn fn, pid_t *pid, const char *path,
                 const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[],
                 char *const envp[])
{
	struct pinned h = { .n = 0 };
	int r, masked;

	hold(&h, path);
	hold_vector(&h, argv);
	hold_vector(&h, envp);
	masked = rtl_sigmask_exec_begin();
	r = fn(pid, path, fa, attr, argv, envp);
	rtl_sigmask_exec_end(masked);
	release(&h);
	return r;
}

API int posix_spawn(pid_t *pid, const char *path,
                    const posix_spawn_file_actions_t *fa,
                    const posix_spawnattr_t *attr, char *const argv[],
                    char *const envp[])
{
	spawn_fn fn;

	NEXT_FN(fn, "posix_spawn");
	return spawn(fn, pid, path, fa, attr, argv, envp);
}

API int posix_spawnp(pid_t *pid, const char *file,
                     const posix_spawn_file_actions_t *fa,
                     const posix_spawnattr_t *attr, char *const argv[],
                     char *const envp[])
{
	spawn_fn fn;

	NEXT_FN(fn, "posix_spawnp");
	return spawn(fn, pid, file, fa, attr, argv, envp);
}

API int system(const char *command)
{
	struct pinned h = { .n = 0 };
	int r, masked;

	int (*fn)(const char *);

	NEXT_FN(fn, "system");
	hold(&h, command);
	hold_vector(&h, environ);
	masked = rtl_sigmask_exec_begin();
	r = fn(command);
	rtl_sigmask_exec_end(masked);
	release(&h);
	return r;
}

API FILE *popen(const char *command, const char *type)
{
	struct pinned h = { .n = 0 };
	FILE *f;
	int masked;

	FILE *(*fn)(const char *, const char *);

	NEXT_FN(fn, "popen");
	hold(&h, command);
	hold_vector(&h, environ);
	masked = rtl_sigmask_exec_begin();
	f = fn(command, type);
	rtl_sigmask_exec_end(masked);
	release(&h);
	return f;
}
