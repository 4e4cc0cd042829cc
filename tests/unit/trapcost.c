/* Not a test: measures what a trap costs, for docs/decoder.md. A bare
 * SIGSEGV round trip that moves a register (the floor), rtl's stale trap
 * (lookup, decode cache hit, swizzle, derived-address check, no handler),
 * a handled trap with region_protect, and a decode miss with look-ahead.
 * Run: build/tests/unit/trapcost */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>

#include "decoder/decoder.h"
#include "tests/unit/helpers.h"

#define N 200000

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static char *none_page, *ro_page;

/* The floor: what any SIGSEGV-based scheme pays, plus one register move. */
static void bare_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	(void)sig, (void)si;
	uc->uc_mcontext.gregs[REG_RDI] += ro_page - none_page;
}

static double bare(void)
{
	struct sigaction sa, old;
	double t0;
	int fd = memfd_create("bare", 0);

	ftruncate(fd, 4096);
	none_page = mmap(NULL, 4096, PROT_NONE, MAP_SHARED, fd, 0);
	ro_page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = bare_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, &old);
	t0 = now_ns();
	for (int i = 0; i < N; i++) {
		char *p = none_page;
		char v;
		__asm__ volatile("movb (%1), %0"
		                 : "=r"(v), "+D"(p)
		                 :
		                 : "memory");
	}
	t0 = (now_ns() - t0) / N;
	sigaction(SIGSEGV, &old, NULL);
	return t0;
}

static double stale(void)
{
	char *x = region_alloc(64, &x), *volatile stale_p;
	double t0;

	region_protect(x, PROT_NONE);
	stale_p = *(char *volatile *)&x;
	region_protect(x, PROT_READ | PROT_WRITE);
	t0 = now_ns();
	for (int i = 0; i < N; i++) {
		char *p = stale_p;
		char v;
		__asm__ volatile("movb (%1), %0"
		                 : "=r"(v), "+D"(p)
		                 :
		                 : "memory");
	}
	t0 = (now_ns() - t0) / N;
	if (stats().stale_traps != N)
		printf("(stale traps: %llu, expected %d)\n",
		       (unsigned long long)stats().stale_traps, N);
	return t0;
}

static double handled(void)
{
	char *x = region_alloc(64, &x);
	double t0;

	region_handler(x, grant_handler);
	t0 = now_ns();
	for (int i = 0; i < N; i++) {
		region_protect(x, PROT_NONE);
		peek(*(char *volatile *)&x);
	}
	return (now_ns() - t0) / N;
}

static double protect_only(void)
{
	char *x = region_alloc(64, &x);
	double t0 = now_ns();

	for (int i = 0; i < N; i++) {
		region_protect(x, PROT_NONE);
		region_protect(x, PROT_READ);
	}
	return (now_ns() - t0) / N / 2;
}

/* Decode misses: every instruction of glibc's memcmp once, look-ahead
 * included (this copy of the decoder has its own cold cache). */
static double misses(int *count)
{
	const uint8_t *p = dlsym(RTLD_DEFAULT, "memcmp");
	double t0;

	rtl_decoder_init();
	*count = 0;
	t0 = now_ns();
	for (int n = 0; n < 300; n++) {
		struct rtl_insn in;
		if (rtl_decode((uint64_t)p, &in) < 0)
			break;
		p += in.len;
		++*count;
	}
	return (now_ns() - t0) / *count;
}

/* The decode-cache hit and the derived-address check, as a trap does them
 * (without the signal), on memcmp's first vector load. */
#include "decoder/derive.h"

static enum rtl_where outside(uint64_t a, void *arg)
{
	(void)a, (void)arg;
	return RTL_AT_OBJECT;
}

static void inner(double *hit, double *fix, int *forms)
{
	uint64_t pc = (uint64_t)dlsym(RTLD_DEFAULT, "memcmp");
	uint64_t old[RTL_NGPR] = { 0 }, gpr[RTL_NGPR];
	struct rtl_insn in;
	struct rtl_move mv = { 0x10000000, 0x10001000, 0x10000800, 1ll << 36,
		               outside, NULL };
	double t0;

	/* memcmp's second instruction pair: vpcmpeqb ymm1, ymm1, [rdi] */
	rtl_decode(pc, &in);
	pc += in.len;
	rtl_decode(pc, &in);
	pc += in.len;
	rtl_decode(pc, &in);
	*forms = in.nlater;
	t0 = now_ns();
	for (int i = 0; i < N; i++)
		rtl_decode(pc, &in);
	*hit = (now_ns() - t0) / N;
	old[7] = 0x10000010; /* rdi in the span */
	old[6] = 0x55550000; /* rsi elsewhere */
	old[2] = 100;        /* rdx a length */
	t0 = now_ns();
	for (int i = 0; i < N; i++) {
		memcpy(gpr, old, sizeof(gpr));
		gpr[7] += 1ull << 36;
		rtl_derive_fix(&in, &in.mem[0], &mv, old, gpr);
	}
	*fix = (now_ns() - t0) / N;
}

int main(void)
{
	int n;
	double b = bare(), s = stale(), h = handled(), pr = protect_only();
	double m = misses(&n);

	printf("bare SIGSEGV round trip + register move: %7.0f ns\n", b);
	printf("rtl stale trap (decode cache hit):        %7.0f ns\n", s);
	printf("rtl handled trap + region_protect x2:     %7.0f ns\n", h);
	printf("region_protect alone:                     %7.0f ns\n", pr);
	printf("decode miss with look-ahead (%d insns):  %7.0f ns\n", n, m);
	{
		double hit, fix;
		int forms;
		inner(&hit, &fix, &forms);
		printf("decode cache hit:                         %7.1f ns\n", hit);
		printf("derived-address check (%d later forms):   %7.1f ns\n",
		       forms, fix);
	}
	return 0;
}
