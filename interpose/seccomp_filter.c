/* The seccomp filter of the system-call mechanism (sigsys.h): a classic BPF
 * program, built once at start from the system-call table, that returns
 * SECCOMP_RET_TRAP for a call with a pointer argument into rtl's memory
 * and lets everything else through, the calls rtl makes itself from its
 * trampoline page first. A binary search over the call numbers that take
 * pointers keeps a call's cost to a few dozen BPF instructions.
 *
 * Never runs in a signal handler; writes into the caller's buffer only. */
#include "interpose/seccomp_filter.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "interpose/systable.h"

#define ARG_HI(i) ((uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i) + 4))
#define IP_LO ((uint32_t)offsetof(struct seccomp_data, instruction_pointer))
#define IP_HI (IP_LO + 4)
#define NR ((uint32_t)offsetof(struct seccomp_data, nr))
#define ARCH ((uint32_t)offsetof(struct seccomp_data, arch))

struct builder {
	struct sock_filter *f;
	int n, max;
	int overflow;
	const struct rtl_filter_spec *spec;
	int calls[RTL_NSYSCALLS]; /* the call numbers to check, sorted */
	int ncalls;
};

static int emit(struct builder *b, uint16_t code, uint32_t k, uint8_t jt,
                uint8_t jf)
{
	if (b->n == b->max) {
		b->overflow = 1;
		return b->n;
	}
	b->f[b->n] = (struct sock_filter){ code, jt, jf, k };
	return b->n++;
}

static void stmt(struct builder *b, uint16_t code, uint32_t k)
{
	emit(b, code, k, 0, 0);
}

/* The calls whose pointers are checked: every one with a pointer argument
 * that rtl can make itself from a signal handler. The others (the signal
 * mask and frame, new threads and processes, exec, exit, what the kernel
 * keeps for later) pass: see docs/syscalls.md, "Every call". By number,
 * not by the table's names: every process under the preload builds the
 * filter (its length is in the signature a child compares), and thirty
 * string comparisons for each of the table's calls made a fifth of the
 * instructions of a process's start (callgrind on /bin/true). */
static const int passed[] = {
	SYS_rt_sigaction,
	SYS_rt_sigprocmask,
	SYS_rt_sigsuspend,
	SYS_rt_sigreturn,
	SYS_sigaltstack,
	SYS_rt_sigtimedwait,
	SYS_rt_sigqueueinfo,
	SYS_rt_tgsigqueueinfo,
	SYS_clone,
	SYS_clone3,
	SYS_fork,
	SYS_vfork,
	SYS_exit,
	SYS_exit_group,
	SYS_set_tid_address,
	SYS_set_robust_list,
	SYS_rseq,
	SYS_arch_prctl,
	SYS_seccomp,
	SYS_prctl,
	SYS_io_uring_setup,
	SYS_io_uring_register,
	/* posix_spawn's child resets every handler before it execs: a trap
	 * there would kill it. The preload grants the arguments of the exec
	 * family and posix_spawn beforehand (preload/shim/exec.c). */
	SYS_execve,
	SYS_execveat,
};

/* is_passed: bit nr set for each call of passed[]. */
static int checked(int nr, const uint64_t *is_passed)
{
	const struct rtl_syscall *c = &rtl_systable[nr];

	if (!c->name || c->nargs == RTL_SC_UNKNOWN || !c->ptr)
		return 0;
	return !(is_passed[nr / 64] >> (nr % 64) & 1);
}

/* One range check on the A register's high word: A in [lo, lo + len) of
 * 4 GiB units traps. */
static void check_range(struct builder *b, int arg, uint32_t hi_lo,
                        uint32_t hi_len)
{
	if (!hi_len)
		return;
	stmt(b, BPF_LD | BPF_W | BPF_ABS, ARG_HI(arg));
	stmt(b, BPF_ALU | BPF_SUB | BPF_K, hi_lo);
	emit(b, BPF_JMP | BPF_JGE | BPF_K, hi_len, 1, 0);
	stmt(b, BPF_RET | BPF_K, SECCOMP_RET_TRAP | RTL_SECCOMP_TAG);
}

/* The checks of call nr: each pointer argument against each range, then
 * let it through. */
static void checks(struct builder *b, int nr)
{
	const struct rtl_syscall *c = &rtl_systable[nr];

	for (int i = 0; i < 6; i++) {
		if (!(c->ptr >> i & 1))
			continue;
		for (int r = 0; r < RTL_FILTER_RANGES; r++)
			check_range(b, i, b->spec->range_hi[r], b->spec->range_len[r]);
	}
	stmt(b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}

/* calls[lo, hi) with the call number in A: a binary search. A far branch
 * is a jump over an unconditional one (jt, jf are 8 bits, ja 32). */
static void search(struct builder *b, int lo, int hi)
{
	int mid, at;

	if (hi - lo == 1) {
		emit(b, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)b->calls[lo], 1, 0);
		stmt(b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		checks(b, b->calls[lo]);
		return;
	}
	mid = (lo + hi) / 2;
	emit(b, BPF_JMP | BPF_JGE | BPF_K, (uint32_t)b->calls[mid], 0, 1);
	at = emit(b, BPF_JMP | BPF_JA, 0, 0, 0); /* to the upper half */
	search(b, lo, mid);
	if (!b->overflow)
		b->f[at].k = (uint32_t)(b->n - at - 1);
	search(b, mid, hi);
}

int rtl_filter_build(const struct rtl_filter_spec *spec, struct sock_filter *f,
                     int max)
{
	struct builder b = { .f = f, .max = max, .spec = spec };
	uint32_t tr_hi = (uint32_t)(spec->trampoline >> 32);
	uint32_t tr_lo = (uint32_t)spec->trampoline;
	uint64_t is_passed[RTL_NSYSCALLS / 64] = { 0 };

	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		if (passed[i] >= 0 && passed[i] < RTL_NSYSCALLS)
			is_passed[passed[i] / 64] |= (uint64_t)1 << (passed[i] % 64);
	for (int nr = 0; nr < RTL_NSYSCALLS; nr++)
		if (checked(nr, is_passed))
			b.calls[b.ncalls++] = nr;
	/* Other architectures' calls (a 32-bit int 0x80) pass. */
	stmt(&b, BPF_LD | BPF_W | BPF_ABS, ARCH);
	emit(&b, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	stmt(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	/* rtl's own calls, from the trampoline, pass. */
	stmt(&b, BPF_LD | BPF_W | BPF_ABS, IP_HI);
	emit(&b, BPF_JMP | BPF_JEQ | BPF_K, tr_hi, 0, 4);
	stmt(&b, BPF_LD | BPF_W | BPF_ABS, IP_LO);
	stmt(&b, BPF_ALU | BPF_SUB | BPF_K, tr_lo);
	emit(&b, BPF_JMP | BPF_JGE | BPF_K, spec->trampoline_len, 1, 0);
	stmt(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	stmt(&b, BPF_LD | BPF_W | BPF_ABS, NR);
	if (b.ncalls)
		search(&b, 0, b.ncalls);
	stmt(&b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	if (b.overflow) {
		errno = ENOSPC;
		return -1;
	}
	return b.n;
}
