/* The system-call wrappers of librtl-interpose (interpose/,
 * docs/syscalls.md), made visible to the program under LD_PRELOAD. The
 * loader's lookup order is the program, the preloaded objects, the
 * program's own dependencies (libc among them), and only then the preloaded
 * objects' dependencies (librtl-interpose): its `read` would come after
 * libc's and never be called. So the preload defines each wrapped name
 * itself and forwards to librtl-interpose's definition, found once in the
 * constructor (dlsym on its handle). One indirect call more per
 * wrapped call; nothing else. Each forwarder is as async-signal-safe as the
 * call it forwards once resolved (the constructor resolves them all). */
#include "preload/shim/forward.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

/* librtl-interpose's definition of name (else the next one: it was never
 * loaded). */
static void *find(const char *name)
{
	static void *lib;
	void *f = NULL;

	if (!lib)
		lib = dlopen("librtl-interpose.so.0", RTLD_NOW | RTLD_NOLOAD);
	if (lib)
		f = dlsym(lib, name);
	return f ? f : dlsym(RTLD_NEXT, name);
}

#define SLOT(ret, name, ...)                                         \
	static _Atomic(ret(*)(__VA_ARGS__)) fwd_##name;              \
	static ret (*get_##name(void))(__VA_ARGS__)                  \
	{                                                            \
		ret (*f)(__VA_ARGS__) = atomic_load_explicit(        \
		        &fwd_##name, memory_order_relaxed);          \
		if (!f) {                                            \
			*(void **)&f = find(#name);                  \
			atomic_store_explicit(&fwd_##name, f,        \
			                      memory_order_relaxed); \
		}                                                    \
		return f;                                            \
	}

/* Defined under an asm label: the headers rename some of these names
 * (pread to pread64 with 64-bit offsets) and both names are exported. */
#define DEF(ret, name, ...)                                 \
	API ret rtl_fwd_##name(__VA_ARGS__) __asm__(#name); \
	ret rtl_fwd_##name(__VA_ARGS__)

#define FWD1(ret, name, t1) \
	SLOT(ret, name, t1) \
	DEF(ret, name, t1 a1) { return get_##name()(a1); }
#define FWD2(ret, name, t1, t2) \
	SLOT(ret, name, t1, t2) \
	DEF(ret, name, t1 a1, t2 a2) { return get_##name()(a1, a2); }
#define FWD3(ret, name, t1, t2, t3)              \
	SLOT(ret, name, t1, t2, t3)              \
	DEF(ret, name, t1 a1, t2 a2, t3 a3)      \
	{                                        \
		return get_##name()(a1, a2, a3); \
	}
#define FWD4(ret, name, t1, t2, t3, t4)              \
	SLOT(ret, name, t1, t2, t3, t4)              \
	DEF(ret, name, t1 a1, t2 a2, t3 a3, t4 a4)   \
	{                                            \
		return get_##name()(a1, a2, a3, a4); \
	}
#define FWD5(ret, name, t1, t2, t3, t4, t5)               \
	SLOT(ret, name, t1, t2, t3, t4, t5)               \
	DEF(ret, name, t1 a1, t2 a2, t3 a3, t4 a4, t5 a5) \
	{                                                 \
		return get_##name()(a1, a2, a3, a4, a5);  \
	}
#define FWD6(ret, name, t1, t2, t3, t4, t5, t6)                  \
	SLOT(ret, name, t1, t2, t3, t4, t5, t6)                  \
	DEF(ret, name, t1 a1, t2 a2, t3 a3, t4 a4, t5 a5, t6 a6) \
	{                                                        \
		return get_##name()(a1, a2, a3, a4, a5, a6);     \
	}
#define FWD7(ret, name, t1, t2, t3, t4, t5, t6, t7)                     \
	SLOT(ret, name, t1, t2, t3, t4, t5, t6, t7)                     \
	DEF(ret, name, t1 a1, t2 a2, t3 a3, t4 a4, t5 a5, t6 a6, t7 a7) \
	{                                                               \
		return get_##name()(a1, a2, a3, a4, a5, a6, a7);        \
	}

typedef const struct iovec *iovp;
typedef struct sockaddr *__restrict sap;
typedef const struct sockaddr *csap;
typedef int fdpair[2];

FWD3(ssize_t, read, int, void *, size_t)
FWD4(ssize_t, pread, int, void *, size_t, off_t)
FWD4(ssize_t, pread64, int, void *, size_t, off_t)
FWD3(ssize_t, readv, int, iovp, int)
FWD4(ssize_t, preadv, int, iovp, int, off_t)
FWD4(ssize_t, preadv64, int, iovp, int, off_t)
FWD5(ssize_t, preadv2, int, iovp, int, off_t, int)
FWD3(ssize_t, write, int, const void *, size_t)
FWD4(ssize_t, pwrite, int, const void *, size_t, off_t)
FWD4(ssize_t, pwrite64, int, const void *, size_t, off_t)
FWD3(ssize_t, writev, int, iovp, int)
FWD4(ssize_t, pwritev, int, iovp, int, off_t)
FWD4(ssize_t, pwritev64, int, iovp, int, off_t)
FWD5(ssize_t, pwritev2, int, iovp, int, off_t, int)
FWD4(ssize_t, recv, int, void *, size_t, int)
FWD6(ssize_t, recvfrom, int, void *__restrict, size_t, int, sap,
     socklen_t *__restrict)
FWD3(ssize_t, recvmsg, int, struct msghdr *, int)
FWD4(ssize_t, send, int, const void *, size_t, int)
FWD6(ssize_t, sendto, int, const void *, size_t, int, csap, socklen_t)
FWD3(ssize_t, sendmsg, int, const struct msghdr *, int)
FWD3(ssize_t, getdents64, int, void *, size_t)
FWD2(int, fstat, int, struct stat *)
FWD2(int, fstat64, int, struct stat64 *)
FWD2(int, stat, const char *__restrict, struct stat *__restrict)
FWD2(int, stat64, const char *__restrict, struct stat64 *__restrict)
FWD2(int, lstat, const char *__restrict, struct stat *__restrict)
FWD2(int, lstat64, const char *__restrict, struct stat64 *__restrict)
FWD4(int, fstatat, int, const char *__restrict, struct stat *__restrict, int)
FWD4(int, fstatat64, int, const char *__restrict, struct stat64 *__restrict,
     int)
FWD5(int, statx, int, const char *__restrict, int, unsigned int,
     struct statx *__restrict)
FWD3(ssize_t, getrandom, void *, size_t, unsigned int)
FWD2(int, sigaltstack, const stack_t *, stack_t *)
FWD2(int, clock_gettime, clockid_t, struct timespec *)
FWD2(int, gettimeofday, struct timeval *__restrict, void *__restrict)
FWD1(int, pipe, fdpair)
FWD2(int, pipe2, fdpair, int)
FWD4(int, socketpair, int, int, int, fdpair)
FWD3(int, poll, struct pollfd *, nfds_t, int)
FWD4(int, ppoll, struct pollfd *, nfds_t, const struct timespec *,
     const sigset_t *)
FWD5(int, select, int, fd_set *__restrict, fd_set *__restrict,
     fd_set *__restrict, struct timeval *__restrict)
FWD6(int, pselect, int, fd_set *__restrict, fd_set *__restrict,
     fd_set *__restrict, const struct timespec *__restrict,
     const sigset_t *__restrict)
FWD4(int, epoll_wait, int, struct epoll_event *, int, int)
FWD5(int, epoll_pwait, int, struct epoll_event *, int, int, const sigset_t *)
FWD4(size_t, fread, void *__restrict, size_t, size_t, FILE *__restrict)
FWD4(size_t, fread_unlocked, void *__restrict, size_t, size_t, FILE *__restrict)
FWD4(size_t, fwrite, const void *__restrict, size_t, size_t, FILE *__restrict)
FWD4(size_t, fwrite_unlocked, const void *__restrict, size_t, size_t,
     FILE *__restrict)
FWD2(char *, getcwd, char *, size_t)
FWD3(ssize_t, readlink, const char *__restrict, char *__restrict, size_t)
FWD4(ssize_t, readlinkat, int, const char *__restrict, char *__restrict, size_t)
/* The _FORTIFY_SOURCE forms (interpose/sys_fortify.c). */
FWD4(ssize_t, __read_chk, int, void *, size_t, size_t)
FWD5(ssize_t, __pread_chk, int, void *, size_t, off_t, size_t)
FWD5(ssize_t, __pread64_chk, int, void *, size_t, off_t, size_t)
FWD5(ssize_t, __recv_chk, int, void *, size_t, size_t, int)
FWD7(ssize_t, __recvfrom_chk, int, void *__restrict, size_t, size_t, int, sap,
     socklen_t *__restrict)
FWD5(size_t, __fread_chk, void *__restrict, size_t, size_t, size_t,
     FILE *__restrict)
FWD5(size_t, __fread_unlocked_chk, void *__restrict, size_t, size_t, size_t,
     FILE *__restrict)
FWD3(char *, __getcwd_chk, char *, size_t, size_t)
FWD4(ssize_t, __readlink_chk, const char *__restrict, char *__restrict, size_t,
     size_t)
FWD5(ssize_t, __readlinkat_chk, int, const char *__restrict, char *__restrict,
     size_t, size_t)
FWD4(int, __poll_chk, struct pollfd *, nfds_t, int, size_t)
FWD5(int, __ppoll_chk, struct pollfd *, nfds_t, const struct timespec *,
     const sigset_t *, size_t)

void rtl_forward_resolve(void)
{
	get_read();
	get_pread();
	get_pread64();
	get_readv();
	get_preadv();
	get_preadv64();
	get_preadv2();
	get_write();
	get_pwrite();
	get_pwrite64();
	get_writev();
	get_pwritev();
	get_pwritev64();
	get_pwritev2();
	get_recv();
	get_recvfrom();
	get_recvmsg();
	get_send();
	get_sendto();
	get_sendmsg();
	get_getdents64();
	get_fstat();
	get_fstat64();
	get_stat();
	get_stat64();
	get_lstat();
	get_lstat64();
	get_fstatat();
	get_fstatat64();
	get_statx();
	get_getrandom();
	get_sigaltstack();
	get_clock_gettime();
	get_gettimeofday();
	get_pipe();
	get_pipe2();
	get_socketpair();
	get_poll();
	get_ppoll();
	get_select();
	get_pselect();
	get_epoll_wait();
	get_epoll_pwait();
	get_fread();
	get_fread_unlocked();
	get_fwrite();
	get_fwrite_unlocked();
	get_getcwd();
	get_readlink();
	get_readlinkat();
	get___read_chk();
	get___pread_chk();
	get___pread64_chk();
	get___recv_chk();
	get___recvfrom_chk();
	get___fread_chk();
	get___fread_unlocked_chk();
	get___getcwd_chk();
	get___readlink_chk();
	get___readlinkat_chk();
	get___poll_chk();
	get___ppoll_chk();
}
