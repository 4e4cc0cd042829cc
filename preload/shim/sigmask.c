/* The program's SIGSEGV mask, kept apart from the kernel's (and its SIGBUS
 * mask where rtl takes SIGBUS: page-table protection, core/prot/prot.h).
 *
 * A region trap is a synchronous SIGSEGV (or SIGBUS); the kernel delivers
 * one that is blocked by resetting the action to the default: the process
 * dies. So once rtl runs, the kernel's mask never holds SIGSEGV, whatever
 * the program asks (sigprocmask, pthread_sigmask, sigsuspend, a handler's
 * sa_mask, a new thread's attributes), and this file keeps, per thread,
 * the bit the program believes in (`blocked`) and everything that follows
 * from it:
 *  - the program reads its mask back exactly (old sets, sigpending);
 *  - a SIGSEGV another process (or the program itself) sends while the
 *    program blocks it is held here and sent again, with its siginfo, when
 *    the program unblocks it;
 *  - a fault that is not rtl's while the program blocks SIGSEGV gets the
 *    default action, as the kernel would give it (the trap path asks
 *    blocked_hook).
 * A handler's run changes the bit as the kernel changes the mask (relay.c
 * calls rtl_sigmask_enter/leave). A handler left by siglongjmp never
 * returns: its record (a frame) is dropped when the stack shows it has
 * been left, and the bit becomes what it was when the handler began.
 *
 * SIGBUS, where rtl takes it, is kept out exactly as SIGSEGV is, a sent one
 * held too; what follows says SIGSEGV for both.
 *
 * SIGSYS is kept out of the kernel's mask the same way (the seccomp
 * filter's traps are synchronous too, interpose/sigsys.c), with only the
 * program's bit kept, through handlers, threads and exec as SIGSEGV's: a
 * SIGSYS sent while the program blocks it is not held (docs/signals.md,
 * "Signal masks").
 *
 * Everything here may run in a signal handler (the trap path's hook, a
 * mask call in the program's handler): no malloc, no locks. */
#include "preload/shim/sigmask.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "core/trap/hooks.h"
#include "preload/shim/next.h"
#include "preload/shim/relay.h"

#define API __attribute__((visibility("default")))
#define MAX_FRAMES 32

static _Atomic int on;

/* ---- the program's bit, and the handlers it is inside of ---- */

struct frame {
	uintptr_t sp;             /* in the relaying function's own frame */
	uintptr_t alt_lo, alt_hi; /* the alternate stack it ran on, or 0 */
	int saved;                /* the bits when the handler began */
};

/* The program's bits for the signals kept out of the kernel's mask. */
static RTL_TLS int blocked;
static RTL_TLS struct frame frames[MAX_FRAMES];
static RTL_TLS int nframes;
static RTL_TLS uintptr_t alt_lo, alt_hi;     /* the thread's alternate stack */
static RTL_TLS unsigned long handled, holds; /* for sigsuspend */

int rtl_sigmask_on(void)
{
	return atomic_load_explicit(&on, memory_order_relaxed);
}

/* SIGBUS is kept out too: rtl takes it (set at start). */
static int bus_hidden;

/* The kept-out signals, their bits, and which are held while blocked. */
static const struct {
	int sig, bit;
} kept[] = {
	{ SIGSEGV, RTL_HIDE_SEGV },
	{ SIGSYS, RTL_HIDE_SYS },
	{ SIGBUS, RTL_HIDE_BUS },
};
#define NKEPT (bus_hidden ? 3 : 2)

int rtl_sigmask_bit(int sig)
{
	for (int i = 0; i < NKEPT; i++)
		if (kept[i].sig == sig)
			return kept[i].bit;
	return 0;
}

int rtl_sigmask_bits(const sigset_t *set)
{
	int bits = 0;

	for (int i = 0; i < NKEPT; i++)
		if (sigismember(set, kept[i].sig) == 1)
			bits |= kept[i].bit;
	return bits;
}

void rtl_sigmask_add(sigset_t *set, int bits)
{
	for (int i = 0; i < NKEPT; i++)
		if (bits & kept[i].bit)
			sigaddset(set, kept[i].sig);
}

void rtl_sigmask_del(sigset_t *set)
{
	for (int i = 0; i < NKEPT; i++)
		sigdelset(set, kept[i].sig);
}

#define bits_of rtl_sigmask_bits
#define add_bits rtl_sigmask_add
#define del_hidden rtl_sigmask_del

static uintptr_t uc_sp(const ucontext_t *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.sp;
#else
#error "the stack pointer of a signal frame on this architecture"
#endif
}

/* The thread's alternate stack, as the kernel describes it in a frame. */
static void note_altstack(const ucontext_t *uc)
{
	if (uc->uc_stack.ss_flags & SS_DISABLE) {
		alt_lo = alt_hi = 0;
		return;
	}
	alt_lo = (uintptr_t)uc->uc_stack.ss_sp;
	alt_hi = alt_lo + uc->uc_stack.ss_size;
}

/* Whether the handler of f has been left, seen from the stack address cur
 * (stacks grow down: anything still inside it runs below f->sp). */
static int left(const struct frame *f, uintptr_t cur)
{
	int cur_alt = alt_hi && cur >= alt_lo && cur < alt_hi;

	if (f->alt_hi) /* it ran on the alternate stack */
		return cur < f->alt_lo || cur >= f->alt_hi || cur > f->sp;
	if (cur_alt)
		return 0; /* on another stack than f: it cannot be told; keep f */
	return cur > f->sp;
}

/* Drop the handlers left by a jump; the bits are what they were when the
 * outermost of them began (siglongjmp restores the mask of sigsetjmp,
 * which is that one as a rule). */
static void drop_left(uintptr_t cur)
{
	while (nframes > 0 && left(&frames[nframes - 1], cur)) {
		nframes--;
		blocked = frames[nframes].saved;
	}
}

/* ---- SIGSEGVs (and SIGBUSes) held while the program blocks them ---- */

/* The held signals, by index: SIGSEGV, SIGBUS. */
enum { H_SEGV,
       H_BUS,
       NHELD };
static const int held_sig[NHELD] = { SIGSEGV, SIGBUS };
static const int held_bit[NHELD] = { RTL_HIDE_SEGV, RTL_HIDE_BUS };

/* A standard signal is pending at most once per thread (sent to the
 * thread: tgkill, raise) and once per process (kill, sigqueue). */
static RTL_TLS siginfo_t held_thread[NHELD];
static RTL_TLS int thread_has[NHELD];
static siginfo_t held_process[NHELD];
static _Atomic int process_has[NHELD]; /* 0 none, 1 being written, 2 held */

static int held_index(int sig)
{
	return sig == SIGBUS ? H_BUS : H_SEGV;
}

static void hold(const siginfo_t *si)
{
	int i = held_index(si->si_signo), none = 0;

	holds++;
	if (si->si_code == SI_TKILL) {
		if (!thread_has[i])
			held_thread[i] = *si;
		thread_has[i] = 1;
		return;
	}
	if (atomic_compare_exchange_strong(&process_has[i], &none, 1)) {
		held_process[i] = *si;
		atomic_store(&process_has[i], 2);
	}
	/* else one is pending already: the kernel merges them too */
}

static int held(int i)
{
	return thread_has[i] || atomic_load(&process_has[i]) == 2;
}

/* The held signals, as bits. */
static int any_held(void)
{
	int bits = 0;

	for (int i = 0; i < NHELD; i++)
		if (held(i))
			bits |= held_bit[i];
	return bits;
}

/* Send it again, to this thread, as it came (rt_tgsigqueueinfo keeps the
 * siginfo: its code, pid and uid). The kernel's mask lets it in at once. */
static void resend(int sig, siginfo_t *si)
{
	syscall(SYS_rt_tgsigqueueinfo, getpid(), gettid(), sig, si);
}

/* The program no longer blocks the held signals it does not block now:
 * what waited for that comes now. */
static void release(void)
{
	int e = errno;
	siginfo_t si;

	for (int i = 0; i < NHELD; i++) {
		int full = 2;

		if (blocked & held_bit[i])
			continue;
		if (thread_has[i]) {
			si = held_thread[i];
			thread_has[i] = 0;
			resend(held_sig[i], &si);
		}
		if (atomic_load(&process_has[i]) == 2) {
			si = held_process[i];
			if (atomic_compare_exchange_strong(&process_has[i], &full, 0))
				resend(held_sig[i], &si);
		}
	}
	errno = e;
}

static void add_held(sigset_t *set)
{
	add_bits(set, any_held());
}

/* The trap path's question (hooks.h): does the program block this
 * SIGSEGV (or SIGBUS) in this thread? A sent one is held then. */
static int blocked_hook(const siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	note_altstack(uc);
	drop_left(uc_sp(uc));
	if (!(blocked & rtl_sigmask_bit(si->si_signo)))
		return 0;
	if (si->si_code <= 0)
		hold(si);
	return 1;
}

/* ---- handlers ---- */

int rtl_sigmask_enter(void *ucv, uintptr_t sp, int bits)
{
	ucontext_t *uc = ucv;
	int token;

	note_altstack(uc);
	drop_left(uc_sp(uc));
	token = nframes;
	if (nframes < MAX_FRAMES) {
		struct frame *f = &frames[nframes++];
		int alt = alt_hi && sp >= alt_lo && sp < alt_hi;

		f->sp = sp;
		f->alt_lo = alt ? alt_lo : 0;
		f->alt_hi = alt ? alt_hi : 0;
		f->saved = blocked;
	}
	/* The mask sigreturn restores is the program's: it may read it in
	 * the frame, or change it there. */
	add_bits(&uc->uc_sigmask, blocked);
	blocked |= bits;
	handled++;
	return token;
}

void rtl_sigmask_leave(void *ucv, int token)
{
	ucontext_t *uc = ucv;

	if (token < nframes)
		nframes = token;
	blocked = bits_of(&uc->uc_sigmask);
	del_hidden(&uc->uc_sigmask);
	release();
}

/* ---- the mask calls ---- */

typedef int (*mask_fn)(int, const sigset_t *, sigset_t *);

/* sigprocmask and pthread_sigmask: errors as real reports them (-1 with
 * errno, or the error number). */
static int change(int how, const sigset_t *set, sigset_t *old, mask_fn real)
{
	int was, want, r;
	sigset_t s;

	if (!atomic_load_explicit(&on, memory_order_relaxed))
		return real(how, set, old);
	drop_left((uintptr_t)__builtin_frame_address(0));
	was = want = blocked;
	if (set) {
		int bits = bits_of(set);

		s = *set; /* old may be set */
		if (how == SIG_BLOCK)
			want = was | bits;
		else if (how == SIG_UNBLOCK)
			want = was & ~bits;
		else if (how == SIG_SETMASK)
			want = bits;
		del_hidden(&s);
	}
	r = real(how, set ? &s : NULL, old);
	if (r != 0)
		return r;
	if (old)
		add_bits(old, was);
	blocked = want;
	if (was & ~want)
		release();
	return 0;
}

/* Before the constructor has resolved the next definitions (another
 * library's constructor): the system call itself. */
static int raw_mask(int how, const sigset_t *set, sigset_t *old)
{
	return syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) == 0 ? 0 : -1;
}

static mask_fn next_mask(int pthread)
{
	const struct rtl_next *n = rtl_next();

	if (!n)
		return raw_mask;
	return pthread ? n->pthread_sigmask : n->sigprocmask;
}

API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return change(how, set, old, next_mask(0));
}

API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return change(how, set, old, next_mask(1));
}

API int sigpending(sigset_t *set)
{
	const struct rtl_next *n = rtl_next();
	int r = n ? n->sigpending(set) : (int)syscall(SYS_rt_sigpending, set, _NSIG / 8);

	if (r == 0 && atomic_load_explicit(&on, memory_order_relaxed))
		add_held(set);
	return r;
}

/* sigsuspend waits with mask in place; only a signal the mask lets in
 * (and whose handler runs) ends it. A SIGSEGV held because mask blocks it
 * would wake the kernel's wait, so the wait goes on then; one held from
 * before that mask lets in ends it at once, as the kernel would. */
API int sigsuspend(const sigset_t *mask)
{
	const struct rtl_next *n = rtl_next();
	int was, want, r;
	sigset_t s;

	if (!n || !atomic_load_explicit(&on, memory_order_relaxed))
		return n ? n->sigsuspend(mask) : (int)syscall(SYS_rt_sigsuspend, mask, _NSIG / 8);
	drop_left((uintptr_t)__builtin_frame_address(0));
	s = *mask;
	want = bits_of(&s);
	del_hidden(&s);
	was = blocked;
	if (any_held() & ~want) {
		sigset_t saved;

		n->pthread_sigmask(SIG_SETMASK, &s, &saved);
		blocked = want;
		release();
		blocked = was;
		n->pthread_sigmask(SIG_SETMASK, &saved, NULL);
		errno = EINTR;
		return -1;
	}
	for (;;) {
		unsigned long h = handled, k = holds;

		blocked = want;
		r = n->sigsuspend(&s);
		blocked = was;
		if (handled != h || holds == k)
			break;
	}
	release();
	return r;
}

/* ---- threads ---- */

/* A thread starts with its creator's mask, or its attributes': the
 * kernel's without SIGSEGV, the program's bit as the program set it. */
struct start {
	void *(*fn)(void *);
	void *arg;
	int bits; /* the program's bits in the new thread */
};

static void *start_blocked(void *p)
{
	struct start st = *(struct start *)p;
	sigset_t hidden;

	rtl_next()->free(p);
	sigemptyset(&hidden);
	add_bits(&hidden, RTL_HIDE_ALL);
	rtl_next()->pthread_sigmask(SIG_UNBLOCK, &hidden, NULL);
	blocked = st.bits;
	return st.fn(st.arg);
}

API int pthread_create(pthread_t *t, const pthread_attr_t *attr,
                       void *(*fn)(void *), void *arg)
{
	static _Atomic(void *) next_create;
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	void *sym = atomic_load(&next_create);
	struct start *st;
	sigset_t am;
	int bits, r;

	if (!sym) {
		sym = dlsym(RTLD_NEXT, "pthread_create");
		if (!sym)
			return ENOSYS;
		atomic_store(&next_create, sym);
	}
	*(void **)&real = sym; /* POSIX's way from dlsym to a function */
	if (!atomic_load_explicit(&on, memory_order_relaxed))
		return real(t, attr, fn, arg);
	drop_left((uintptr_t)__builtin_frame_address(0));
	if (attr && pthread_attr_getsigmask_np(attr, &am) == 0)
		bits = bits_of(&am);
	else
		bits = blocked;
	if (!bits)
		return real(t, attr, fn, arg);
	st = rtl_next()->malloc(sizeof(*st));
	if (!st)
		return EAGAIN;
	st->fn = fn;
	st->arg = arg;
	st->bits = bits;
	r = real(t, attr, start_blocked, st);
	if (r)
		rtl_next()->free(st);
	return r;
}

/* ---- exec ---- */

int rtl_sigmask_exec_begin(void)
{
	sigset_t set;

	if (!atomic_load_explicit(&on, memory_order_relaxed))
		return 0;
	drop_left((uintptr_t)__builtin_frame_address(0));
	if (!blocked)
		return 0;
	sigemptyset(&set);
	add_bits(&set, blocked);
	rtl_next()->pthread_sigmask(SIG_BLOCK, &set, NULL);
	return blocked;
}

void rtl_sigmask_exec_end(int begun)
{
	sigset_t set;
	int e = errno;

	if (!begun)
		return;
	sigemptyset(&set);
	add_bits(&set, begun);
	rtl_next()->pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	errno = e;
}

/* ---- start ---- */

static void forget_held(void)
{
	for (int i = 0; i < NHELD; i++) {
		thread_has[i] = 0; /* the kernel clears a child's pending signals */
		atomic_store(&process_has[i], 0);
	}
}

void rtl_sigmask_start(void)
{
	const struct rtl_next *n = rtl_next();
	sigset_t cur, hidden;

	/* SIGBUS too where rtl takes it (rtl_prot_start ran before). */
	bus_hidden = rtl_traps_signal(SIGBUS);
	/* An exec'd program may start with SIGSEGV or SIGSYS blocked. */
	n->pthread_sigmask(SIG_BLOCK, NULL, &cur);
	blocked = bits_of(&cur);
	sigemptyset(&hidden);
	add_bits(&hidden, RTL_HIDE_ALL);
	n->pthread_sigmask(SIG_UNBLOCK, &hidden, NULL);
	pthread_atfork(NULL, NULL, forget_held);
	rtl_hook_blocked(blocked_hook);
	atomic_store(&on, 1);
	rtl_relay_start();
}
