/* Every system call on rtl's memory (sigsys.h). The seccomp filter
 * (seccomp_filter.c) traps a call that hands the kernel a pointer into
 * rtl's memory; this handler resolves each such buffer as a trap would
 * (access.c: the core for the views, the preload for its aliases and
 * slots), pins it so that no epoch re-protects it while the call runs,
 * makes the call itself from the trampoline, which the filter lets
 * through, and leaves the result in the interrupted context. Pointers
 * inside structures (iovecs, message headers, argument vectors) are
 * followed for the calls that take them (systable.h).
 *
 * Runs in a signal handler: no malloc, no stdio, no lock the interrupted
 * code may hold; the program's memory is read with process_vm_readv. */
#include "interpose/sigsys.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "interpose/access.h"
#include "interpose/seccomp_filter.h"
#include "interpose/systable.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp trap (asm-generic/siginfo.h) */
#endif

#define MAX_FILTER 4096
#define MAX_PINS 32
#define MAX_NESTED 64 /* iovec entries, argv strings followed per call */

/* The trampoline: (nr, a0, ..., a5) -> the raw call, the one place rtl's
 * own system calls come from while the filter is on. Its code is copied to
 * a page at a fixed place (TRAMPOLINE) so that the filter a program passes
 * on to the programs it execs lets their rtl's calls through too. */
__asm__(".pushsection .text\n"
        ".balign 64\n"
        ".hidden rtl_trampoline_start\n"
        ".hidden rtl_trampoline_end\n"
        ".type rtl_trampoline_start, @function\n"
        "rtl_trampoline_start:\n"
        "\tmov %rdi, %rax\n"
        "\tmov %rsi, %rdi\n"
        "\tmov %rdx, %rsi\n"
        "\tmov %rcx, %rdx\n"
        "\tmov %r8, %r10\n"
        "\tmov %r9, %r8\n"
        "\tmov 8(%rsp), %r9\n"
        "\tsyscall\n"
        "\tret\n"
        "rtl_trampoline_end:\n"
        ".size rtl_trampoline_start, . - rtl_trampoline_start\n"
        ".popsection\n");
extern const char rtl_trampoline_start[], rtl_trampoline_end[];

/* A page below rtl's home (views.h), the same in every process. */
#define TRAMPOLINE (RTL_HOME - 2 * 4096)

typedef long (*call_fn)(long, long, long, long, long, long, long);
static _Atomic(call_fn) trampoline = (call_fn)(uintptr_t)rtl_trampoline_start;

long rtl_sigsys_call(long nr, long a0, long a1, long a2, long a3, long a4,
                     long a5)
{
	return atomic_load_explicit(&trampoline, memory_order_relaxed)(
	        nr, a0, a1, a2, a3, a4, a5);
}

/* The trampoline's code at TRAMPOLINE, read and execute only; NULL if that
 * place is taken. */
static void *place_trampoline(size_t len)
{
	void *p = !RTL_HOME ? MAP_FAILED
	                    : mmap((void *)TRAMPOLINE, 4096, PROT_READ | PROT_WRITE,
	                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
	                           -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (p != (void *)TRAMPOLINE) {
		munmap(p, 4096);
		return NULL;
	}
	memcpy(p, rtl_trampoline_start, len);
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC) < 0) {
		munmap(p, 4096);
		return NULL;
	}
	return p;
}

static _Atomic int installed;
static struct sigaction program; /* the program's own SIGSYS action */
static rtl_sigaction_fn real_sigaction;
static _Atomic uint64_t n_calls, n_buffers, n_refused;

/* ---- one call's buffers ---- */

struct call {
	long nr;
	long a[6];
	struct pinned {
		const void *p;
		size_t len;
		int write;
	} pins[MAX_PINS];
	int npins;
};

static void pin(struct call *c, const void *p, size_t len, int write)
{
	if (c->npins == MAX_PINS)
		return; /* past 32 buffers: the rest unpinned (an epoch may win) */
	rtl_access_pin(p, 1);
	c->pins[c->npins++] = (struct pinned){ p, len, write };
}

static void unpin_all(struct call *c)
{
	for (int i = 0; i < c->npins; i++)
		rtl_access_pin(c->pins[i].p, -1);
	c->npins = 0;
}

/* The kernel said EFAULT: whether a buffer's pages were behind its
 * record and have been set again (rtl_access_repair), so the call may be
 * made once more. A call that fails with EFAULT has had no effect. */
static int repaired(struct call *c)
{
	int any = 0;

	for (int i = 0; i < c->npins; i++)
		any |= rtl_access_repair(c->pins[i].p, c->pins[i].len, c->pins[i].write);
	return any;
}

/* Resolve [p, p + len) for a write or a read: the address to give the
 * kernel (p itself when rtl's memory is not involved), or NULL (EFAULT). */
static void *buffer(struct call *c, const void *p, size_t len, int write)
{
	void *k;

	if (!p || !rtl_access_in_views(p, len ? len : 1))
		return (void *)p;
	if (len > ((size_t)1 << 30))
		len = 1; /* a length the call will refuse anyway */
	/* Pinned first: no epoch can re-protect it between the grant and
	 * the call. */
	pin(c, p, len ? len : 1, write);
	k = rtl_access_resolve(p, len ? len : 1, write);
	if (!k)
		return NULL;
	atomic_fetch_add_explicit(&n_buffers, 1, memory_order_relaxed);
	return k;
}

/* Copy n bytes of the program's memory at p (resolved for a read first if
 * it is rtl's); -1 if it cannot be read. */
static int peek(struct call *c, const void *p, void *out, size_t n)
{
	struct iovec local = { out, n }, remote;

	if (!(remote.iov_base = buffer(c, p, n, 0)))
		return -1;
	remote.iov_len = n;
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n
	               ? 0
	               : -1;
}

/* An iovec array at arg i, count in arg i + 1: each buffer resolved. When
 * one moved (a swizzled region's RW view), the kernel gets a copy of the
 * array with the new addresses (in *copy, if it holds the count). */
static int nested_iov(struct call *c, int i, int write, struct iovec *copy)
{
	const struct iovec *v = (const struct iovec *)c->a[i];
	long n = c->a[i + 1];
	int moved = 0;

	if (!v || n <= 0 || n > MAX_NESTED)
		return 0; /* the kernel will answer */
	if (peek(c, v, copy, (size_t)n * sizeof(*v)) < 0)
		return 0;
	for (long k = 0; k < n; k++) {
		void *b = buffer(c, copy[k].iov_base, copy[k].iov_len, write);
		if (!b)
			return -1;
		moved |= b != copy[k].iov_base;
		copy[k].iov_base = b;
	}
	if (moved)
		c->a[i] = (long)copy;
	return 0;
}

/* A msghdr at arg i: its name, control data and iovecs resolved (the
 * kernel writes them for recvmsg). Moved buffers are not handed over in a
 * copy here (a swizzle region's header would need its fields copied
 * back): they are granted, and the kernel reaches them where they are. */
static int nested_msg(struct call *c, const struct msghdr *m, int write)
{
	struct msghdr h;
	struct iovec iov[MAX_NESTED];

	if (!m || peek(c, m, &h, sizeof(h)) < 0)
		return 0;
	if (!buffer(c, h.msg_name, h.msg_namelen, write) ||
	    !buffer(c, h.msg_control, h.msg_controllen, write))
		return -1;
	if (!h.msg_iov || h.msg_iovlen == 0 || h.msg_iovlen > MAX_NESTED ||
	    peek(c, h.msg_iov, iov, h.msg_iovlen * sizeof(*iov)) < 0)
		return 0;
	for (size_t k = 0; k < h.msg_iovlen; k++)
		if (!buffer(c, iov[k].iov_base, iov[k].iov_len, write))
			return -1;
	return 0;
}

/* A NULL-terminated vector of strings (execve's argv and envp). */
static int nested_strv(struct call *c, const char *const *v)
{
	for (int k = 0; v && k < MAX_NESTED; k++) {
		const char *s;
		if (peek(c, &v[k], &s, sizeof(s)) < 0 || !s)
			return 0;
		if (!buffer(c, s, 1, 0))
			return -1;
	}
	return 0;
}

static int reads_into_iov(const char *name)
{
	return !strncmp(name, "read", 4) || !strncmp(name, "pread", 5);
}

/* Every pointer argument of the call resolved; -1 (EFAULT) if one is
 * refused. copy: room for one iovec array. */
static int resolve(struct call *c, struct iovec *copy)
{
	const struct rtl_syscall *sc = &rtl_systable[c->nr];

	for (int i = 0; i < 6; i++) {
		int write = sc->write >> i & 1;
		size_t len = sc->len[i] ? (size_t)c->a[sc->len[i] - 1] : 1;
		void *k;

		if (!(sc->ptr >> i & 1))
			continue;
		switch (sc->nest[i]) {
		case RTL_NEST_IOV:
			if (nested_iov(c, i, reads_into_iov(sc->name), copy) < 0)
				return -1;
			break;
		case RTL_NEST_MSG:
			if (nested_msg(c, (const struct msghdr *)c->a[i],
			               !strcmp(sc->name, "recvmsg")) < 0)
				return -1;
			break;
		case RTL_NEST_MMSG: {
			const struct mmsghdr *mm = (const struct mmsghdr *)c->a[i];
			long n = c->a[i + 1];
			for (long m = 0; mm && m < n && m < MAX_NESTED; m++)
				if (nested_msg(c, &mm[m].msg_hdr,
				               !strcmp(sc->name, "recvmmsg")) < 0)
					return -1;
			break;
		}
		case RTL_NEST_STRV:
			if (nested_strv(c, (const char *const *)c->a[i]) < 0)
				return -1;
			break;
		}
		/* The argument itself: the array or header too. */
		if (!c->a[i])
			continue;
		if (!(k = buffer(c, (const void *)c->a[i], len, write)))
			return -1;
		if (sc->nest[i] != RTL_NEST_IOV || c->a[i] != (long)copy)
			c->a[i] = (long)k;
	}
	return 0;
}

/* ---- the handler ---- */

/* A SIGSYS that is not rtl's: the program's action, or what the kernel
 * would have done (the default: the process dies of SIGSYS). */
static void pass_on(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a = program;

	if (a.sa_handler == SIG_IGN)
		return;
	if (a.sa_handler != SIG_DFL) {
		if (a.sa_flags & SA_SIGINFO)
			a.sa_sigaction(sig, si, uc);
		else
			a.sa_handler(sig);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.sa_handler = SIG_DFL;
	real_sigaction(SIGSYS, &a, NULL);
	rtl_sigsys_call(SYS_tgkill, getpid(), rtl_sigsys_call(SYS_gettid, 0, 0, 0, 0, 0, 0),
	                SIGSYS, 0, 0, 0);
}

static void on_sigsys(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	greg_t *g = uc->uc_mcontext.gregs;
	struct iovec copy[MAX_NESTED];
	int saved = errno;
	struct call c;
	long ret;

	if (si->si_code != SYS_SECCOMP || si->si_errno != RTL_SECCOMP_TAG ||
	    (unsigned)si->si_syscall >= RTL_NSYSCALLS) {
		pass_on(sig, si, ucv);
		errno = saved;
		return;
	}
	c.nr = si->si_syscall;
	c.a[0] = g[REG_RDI];
	c.a[1] = g[REG_RSI];
	c.a[2] = g[REG_RDX];
	c.a[3] = g[REG_R10];
	c.a[4] = g[REG_R8];
	c.a[5] = g[REG_R9];
	c.npins = 0;
	atomic_fetch_add_explicit(&n_calls, 1, memory_order_relaxed);
	if (resolve(&c, copy) < 0) {
		atomic_fetch_add_explicit(&n_refused, 1, memory_order_relaxed);
		ret = -EFAULT;
	} else {
		ret = rtl_sigsys_call(c.nr, c.a[0], c.a[1], c.a[2], c.a[3], c.a[4],
		                      c.a[5]);
		/* Twice at most: a repair each time, or the EFAULT is the
		 * program's. */
		for (int again = 0; ret == -EFAULT && again < 2 && repaired(&c); again++)
			ret = rtl_sigsys_call(c.nr, c.a[0], c.a[1], c.a[2], c.a[3],
			                      c.a[4], c.a[5]);
	}
	unpin_all(&c);
	g[REG_RAX] = ret;
	errno = saved;
}

/* ---- installing ---- */

/* The high words of [lo, lo + len): 4 GiB units. */
static void units(uintptr_t lo, size_t len, uint32_t *hi, uint32_t *n)
{
	if (!len) {
		*hi = *n = 0;
		return;
	}
	*hi = (uint32_t)(lo >> 32);
	*n = (uint32_t)(((lo + len - 1) >> 32) - (lo >> 32) + 1);
}

/* The filter's identity, for the programs this one execs. */
#define SIGNATURE_ENV "RTL_SECCOMP"

static int filter_len;

static void snprintf_spec(char *out, size_t len, const struct rtl_filter_spec *s)
{
	snprintf(out, len, "%x+%x:%x+%x:%llx:%d", s->range_hi[0], s->range_len[0],
	         s->range_hi[1], s->range_len[1], (unsigned long long)s->trampoline,
	         filter_len);
}

/* Whether this process already runs under a filter with signature sig
 * (the environment says so, and the kernel that there is a filter:
 * PR_GET_SECCOMP answers 2 under any, where /proc/self/status would cost
 * a file's opening and formatting in every process started). */
static int inherited(const char *sig)
{
	const char *env = secure_getenv(SIGNATURE_ENV);

	if (!env || strcmp(env, sig) != 0)
		return 0;
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 2;
}

#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif

/* The filter on every thread. SPEC_ALLOW: rtl's filter is no sandbox, so
 * the program keeps the speculative-store-bypass mitigation it had; a
 * kernel whose spec_store_bypass_disable is "seccomp" (the default before
 * Linux 5.16) would otherwise force it on, and every load of the program
 * would wait for older stores. EINVAL: a kernel before 4.17. */
static int set_filter(const struct sock_fprog *prog)
{
	/* TSYNC's failure is a positive thread ID, not -1. */
	long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
	                  SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_SPEC_ALLOW, prog);

	if (rc == -1 && errno == EINVAL)
		rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, prog);
	return rc == 0 ? 0 : -1;
}

int rtl_sigsys_install(rtl_sigaction_fn sigaction_fn)
{
	char sig[128];
	static struct sock_filter f[MAX_FILTER];
	struct rtl_filter_spec spec;
	struct sock_fprog prog;
	struct sigaction sa;
	void *page;
	int n;

	if (atomic_load(&installed))
		return 0;
	real_sigaction = sigaction_fn;
	units(rtl_views.base, RTL_NVIEWS * rtl_views.size, &spec.range_hi[0],
	      &spec.range_len[0]);
	units(rtl_access_extra.lo, rtl_access_extra.len, &spec.range_hi[1],
	      &spec.range_len[1]);
	spec.trampoline_len = (uint32_t)(rtl_trampoline_end - rtl_trampoline_start);
	page = place_trampoline(spec.trampoline_len);
	spec.trampoline = page ? (uintptr_t)page : (uintptr_t)rtl_trampoline_start;
	if ((spec.trampoline >> 32) !=
	    ((spec.trampoline + spec.trampoline_len) >> 32)) {
		errno = EINVAL; /* across a 4 GiB boundary: never, but say so */
		return -1;
	}
	atomic_store(&trampoline, (call_fn)spec.trampoline);
	n = rtl_filter_build(&spec, f, MAX_FILTER);
	if (n < 0)
		return -1;
	filter_len = n;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	/* NODEFER: a call made in a handler of the program's, while this one
	 * runs, must trap again rather than kill (a blocked SIGSYS does). */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (real_sigaction(SIGSYS, &sa, &program) < 0)
		return -1;
	prog.len = (unsigned short)n;
	prog.filter = f;
	snprintf_spec(sig, sizeof(sig), &spec);
	/* A parent under rtl that exec'd this program passed on the same
	 * filter (the same ranges and trampoline page): one is enough, and
	 * each more costs every call and counts against the kernel's limit
	 * on a process's filters. */
	if (inherited(sig)) {
		atomic_store(&installed, 1);
		return 0;
	}
	/* Without CAP_SYS_ADMIN the kernel wants no_new_privs first. */
	if (set_filter(&prog) != 0 &&
	    (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	     set_filter(&prog) != 0)) {
		int e = errno;
		real_sigaction(SIGSYS, &program, NULL);
		errno = e;
		return -1;
	}
	setenv(SIGNATURE_ENV, sig, 1);
	atomic_store(&installed, 1);
	return 0;
}

int rtl_sigsys_on(void)
{
	return atomic_load(&installed);
}

int rtl_sigsys_sigaction(const struct sigaction *act, struct sigaction *old)
{
	if (old)
		*old = program;
	if (act)
		program = *act;
	return 0;
}

void rtl_sigsys_stats(struct rtl_sigsys_stats *out)
{
	out->calls = atomic_load(&n_calls);
	out->buffers = atomic_load(&n_buffers);
	out->refused = atomic_load(&n_refused);
}
