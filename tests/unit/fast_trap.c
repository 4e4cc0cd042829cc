/* The trap's fast path (core/trap/trap.c): an instruction whose decode is
 * cached traps in the signal frame itself, and every way out of the common
 * case ends as the general path would. Each test traps one instruction in
 * a loop: the first trap decodes it (general path), the others start on
 * the fast path, which fast_traps counts. */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/start/stats.h"
#include "core/trap/hooks.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

#define ROUNDS 50

static uint64_t fast_traps(void)
{
	return RTL_STATS_SUM(fast_traps);
}

/* One load and one store, each a plain instruction (base + displacement,
 * nothing after it forms an address), in assembly: compiled, the access
 * may be indexed, or followed by the frame's own loads (a sanitizer's
 * build), and such an instruction is the general path's. */
unsigned char fast_load(const char *p);
void fast_store(char *p, unsigned char v);
#if defined(__x86_64__)
__asm__(".text\n"
        ".type fast_load, @function\n"
        "fast_load: movzbl (%rdi), %eax\n ret\n"
        ".size fast_load, .-fast_load\n"
        ".type fast_store, @function\n"
        "fast_store: movb %sil, (%rdi)\n ret\n"
        ".size fast_store, .-fast_store\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".type fast_load, %function\n"
        "fast_load: ldrb w0, [x0]\n ret\n"
        ".size fast_load, .-fast_load\n"
        ".type fast_store, %function\n"
        "fast_store: strb w1, [x0]\n ret\n"
        ".size fast_store, .-fast_store\n");
#endif

/* A read and a write trapping again and again: fast, and counted as a
 * trap, a decode-cache hit and a handler call each. */
TEST(a_repeated_trap_takes_the_fast_path)
{
	char *x = region_alloc(64, &x);
	struct region_stats s0, s1;
	uint64_t f0;

	CHECK(x != NULL);
	region_handler(x, grant_handler);
	s0 = stats();
	f0 = fast_traps();
	for (int i = 0; i < ROUNDS; i++) {
		region_protect(x, PROT_NONE);
		fast_store(x + i % 64, (unsigned char)i);
		CHECK_EQ(fast_load(x + i % 64), (unsigned char)i);
		region_protect(x, PROT_NONE);
		CHECK_EQ(fast_load(x + i % 64), (unsigned char)i);
	}
	s1 = stats();
	CHECK_EQ(h_calls, 2 * ROUNDS);
	CHECK_EQ(h_writes, ROUNDS);
	CHECK(fast_traps() - f0 >= 2 * ROUNDS - 2);
	CHECK_EQ(s1.traps - s0.traps, 2 * ROUNDS);
	CHECK_EQ(s1.handler_calls - s0.handler_calls, 2 * ROUNDS);
	/* One decode lookup a trap, a hit but for the first of each. */
	CHECK_EQ(s1.decode_hits - s0.decode_hits + s1.decode_misses - s0.decode_misses,
	         2 * ROUNDS);
	CHECK(s1.decode_hits - s0.decode_hits >= 2 * ROUNDS - 2);
	/* The last read's grant left the region read-only: a write traps. */
	poke(x, 1);
	CHECK_EQ(h_writes, ROUNDS + 1);
}

/* A stale pointer (the region allows the access already) and a region
 * with no handler are the general path's: nothing on the fast one. */
TEST(a_stale_pointer_is_left_to_the_general_path)
{
	char *x = region_alloc(64, &x), *stale;
	uint64_t f0;

	CHECK(x != NULL);
	region_handler(x, grant_handler);
	f0 = fast_traps();
	for (int i = 0; i < ROUNDS; i++) {
		region_protect(x, PROT_NONE);
		stale = *(char *volatile *)&x;
		region_protect(x, RW);
		CHECK_EQ(peek(stale), 0);
	}
	CHECK_EQ(h_calls, 0);
	CHECK_EQ(stats().stale_traps, ROUNDS);
	CHECK_EQ(fast_traps() - f0, 0);
}

/* The fault filter (the preload's: a range the program protected itself)
 * is asked once a fault, whichever path takes it: a stale pointer the fast
 * path declines late, a trap it takes. */
static _Atomic int filter_calls;
static int count_only(void *addr, int write)
{
	(void)addr;
	(void)write;
	filter_calls++;
	return 0;
}

TEST(a_fault_filter_is_asked_once_a_fault)
{
	char *x = region_alloc(64, &x), *stale;

	CHECK(x != NULL);
	region_handler(x, grant_handler);
	rtl_hook_fault_filter(count_only);
	for (int i = 0; i < ROUNDS; i++) {
		region_protect(x, PROT_NONE);
		stale = *(char *volatile *)&x;
		region_protect(x, RW);
		CHECK_EQ(fast_load(stale), 0);
	}
	CHECK_EQ(filter_calls, ROUNDS);
	for (int i = 0; i < ROUNDS; i++) {
		region_protect(x, PROT_NONE);
		fast_store(x + 1, 1);
	}
	CHECK_EQ(filter_calls, 2 * ROUNDS);
	CHECK_EQ(h_calls, ROUNDS);
	rtl_hook_fault_filter(NULL);
}

/* MAP2 from the handler: region_protect_ptr moves one pointer and the
 * registers of its view, and leaves the region mixed; the trap leaves the
 * fast path and ends resolved. */
static char *mixed_x;
static void grant_by_pointer(rtl_trap_t *t)
{
	h_calls++;
	CHECK_EQ(region_protect_ptr(&mixed_x, t->write ? RW : PROT_READ), 0);
}

TEST(a_handler_using_region_protect_ptr_ends_resolved)
{
	struct region_stats s0, s1;
	uint64_t f0;

	mixed_x = region_alloc(64, &mixed_x);
	CHECK(mixed_x != NULL);
	region_handler(mixed_x, grant_by_pointer);
	s0 = stats();
	f0 = fast_traps();
	for (int i = 0; i < ROUNDS; i++) {
		region_protect(mixed_x, PROT_NONE);
		fast_store(mixed_x + 3, (unsigned char)i);
		CHECK_EQ(mixed_x[3], (char)i);
	}
	s1 = stats();
	CHECK_EQ(h_calls, ROUNDS);
	CHECK(fast_traps() - f0 >= ROUNDS - 1);
	/* Leaving the fast path decodes again, counted once: as a trap that
	 * never took it. */
	CHECK_EQ(s1.traps - s0.traps, ROUNDS);
	CHECK_EQ(s1.handler_calls - s0.handler_calls, ROUNDS);
	CHECK_EQ(s1.decode_hits - s0.decode_hits + s1.decode_misses - s0.decode_misses,
	         ROUNDS);
}

/* A handler that touches another protected region: the nested trap takes
 * the fast path too, and each trap resumes in its own frame. */
static char *outer_x, *inner_y;
static void grant_inner(rtl_trap_t *t)
{
	h_reads++;
	region_protect(t->addr, PROT_READ);
}

static void read_inner_then_grant(rtl_trap_t *t)
{
	h_calls++;
	CHECK_EQ(fast_load(inner_y + 1), 7);
	region_protect(t->addr, RW);
}

TEST(nested_traps_take_the_fast_path)
{
	uint64_t f0;

	outer_x = region_alloc(64, &outer_x);
	inner_y = region_alloc(128, &inner_y);
	CHECK(outer_x && inner_y);
	inner_y[1] = 7;
	region_handler(outer_x, read_inner_then_grant);
	region_handler(inner_y, grant_inner);
	f0 = fast_traps();
	for (int i = 0; i < ROUNDS; i++) {
		region_protect(inner_y, PROT_NONE);
		region_protect(outer_x, PROT_NONE);
		fast_store(outer_x + 2, (unsigned char)(i + 1));
		CHECK_EQ(outer_x[2], (char)(i + 1));
	}
	CHECK_EQ(h_calls, ROUNDS);
	CHECK_EQ(h_reads, ROUNDS);
	CHECK(fast_traps() - f0 >= 2 * ROUNDS - 2);
}

/* A handler that refuses, on the fast path: the trap dies as on the
 * general one, with the decoded instruction in its message. */
static int refuse_after;
static char *refused_x;
static void grant_then_refuse(rtl_trap_t *t)
{
	if (refuse_after-- > 0)
		region_protect(t->addr, PROT_READ);
}

static void refused_on_the_fast_path(void)
{
	refused_x = region_alloc(64, &refused_x);
	refuse_after = 3;
	region_handler(refused_x, grant_then_refuse);
	for (int i = 0; i < 10; i++) {
		region_protect(refused_x, PROT_NONE);
		fast_load(refused_x + 9);
	}
	_exit(fast_traps() >= 2 ? 0 : 3); /* not reached */
}

TEST(a_refusal_on_the_fast_path_dies_explained)
{
	char err[8192];
	int st = test_run_captured(refused_on_the_fast_path, err, sizeof(err));

	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "not granted by its handler") != NULL);
	CHECK(strstr(err, "read at 0x") != NULL);
	CHECK(strstr(err, "offset 9 of region") != NULL);
#if defined(__aarch64__)
	CHECK(strstr(err, "instruction: ldrb") != NULL);
#else
	CHECK(strstr(err, "instruction: mov") != NULL);
#endif
}

/* Threads trapping on their own regions, which share pages, all on the
 * fast path at once: no handler call lost, no region disturbed. From a
 * cold decode cache, then a warm one, where every trap is fast. (A thread
 * that finds an entry being filled takes the general path rather than
 * wait: a preempted filler sent 269 of 16000 cold traps there, qemu.) */
#define THREADS 4
#define THREAD_ROUNDS 2000

static void *trap_loop(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < THREAD_ROUNDS; i++) {
		region_protect(w->region, PROT_NONE);
		if (fast_load(w->region + 1) != (unsigned char)w->id)
			return (void *)1;
		region_protect(w->region, PROT_NONE);
		fast_store(w->region + 1, (unsigned char)w->id);
	}
	return NULL;
}

static void run_trap_loops(struct worker *w)
{
	pthread_t th[THREADS];

	for (int i = 0; i < THREADS; i++) {
		w[i].calls = 0;
		CHECK_EQ(pthread_create(&th[i], NULL, trap_loop, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		void *ret;

		CHECK_EQ(pthread_join(th[i], &ret), 0);
		CHECK(ret == NULL);
		CHECK_EQ(w[i].calls, 2 * THREAD_ROUNDS);
		CHECK_EQ(w[i].region[1], (char)(i + 1));
	}
}

TEST(threads_on_the_fast_path)
{
	struct worker w[THREADS];
	uint64_t f0;

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .id = i + 1 };
		w[i].region = region_alloc(24, &w[i].region);
		CHECK(w[i].region != NULL);
		w[i].region[1] = (char)(i + 1);
		region_handler(w[i].region, count_and_grant);
		region_set_data(w[i].region, &w[i]);
	}
	run_trap_loops(w); /* cold */
	f0 = fast_traps();
	run_trap_loops(w); /* warm: nothing writes the cache now */
	CHECK_EQ(fast_traps() - f0, (uint64_t)THREADS * 2 * THREAD_ROUNDS);
}

#if defined(__x86_64__)
/* The registers, instruction by instruction: code that adds one through
 * %rdi while %rsi holds a pointer into another region y (addq $1, (%rdi);
 * ret, a plain instruction). How the handler grants decides what must move:
 * the fast path notes the grant of the trapping region, and leaves for the
 * general path when the handler moves anything else. */
#define CALL "sub $128, %%rsp\n call *%[f]\n add $128, %%rsp"

enum { GRANT_ALSO_Y,
       GRANT_TWICE,
       GRANT_LOWER_AGAIN };
static int mode;
static uint64_t *reg_x, *reg_y;

static void grant_by_mode(rtl_trap_t *t)
{
	h_calls++;
	switch (mode) {
	case GRANT_ALSO_Y: /* another region's registers move too */
		region_protect(t->addr, RW);
		region_protect(reg_y, RW);
		break;
	case GRANT_TWICE: /* the last protection is the one that counts */
		region_protect(t->addr, PROT_READ);
		region_protect(t->addr, RW);
		break;
	case GRANT_LOWER_AGAIN: /* granted, lowered, granted again */
		region_protect(t->addr, RW);
		region_protect(t->addr, PROT_NONE);
		region_protect(t->addr, RW);
		break;
	}
}

static void registers_by_mode(int m)
{
	static const uint8_t add_ret[] = { 0x48, 0x83, 0x07, 0x01, 0xc3 };
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t f0, n = 12345;

	CHECK(code != MAP_FAILED);
	memcpy(code, add_ret, sizeof(add_ret));
	mode = m;
	reg_x = region_alloc(64, &reg_x);
	reg_y = region_alloc(64, &reg_y);
	CHECK(reg_x && reg_y);
	region_handler(NULL, grant_by_mode);
	f0 = fast_traps();
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t *p, *q;

		region_protect(reg_y, PROT_NONE);
		region_protect(reg_x, PROT_READ);
		q = *(uint64_t *volatile *)&reg_x + 2; /* read-only view */
		region_protect(reg_x, PROT_NONE);
		p = *(uint64_t *volatile *)&reg_x;
		if (m == GRANT_ALSO_Y)
			q = *(uint64_t *volatile *)&reg_y + 1;
		__asm__ volatile(CALL
		                 : "+D"(p), "+S"(q), "+c"(n)
		                 : [f] "r"(code)
		                 : "rax", "rdx", "r8", "r9", "r10", "r11", "memory");
		CHECK(p == *(uint64_t *volatile *)&reg_x);
		if (m == GRANT_ALSO_Y)
			CHECK(q == *(uint64_t *volatile *)&reg_y + 1);
		else
			CHECK(q == p + 2);
		CHECK_EQ(n, 12345);
	}
	CHECK_EQ(reg_x[0], ROUNDS);
	CHECK_EQ(h_calls, ROUNDS);
	CHECK(fast_traps() - f0 >= ROUNDS - 1);
	munmap(code, 4096);
}

/* Code that reads through %rdi with %rsi and %rcx beside it, its bytes
 * given (each ends in ret), trapping ROUNDS times on a region whose handler
 * grants reads: the fast traps among them, and each result checked. */
static uint64_t run_reads(const uint8_t *bytes, size_t n, int stale_rsi)
{
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t f0;

	CHECK(code != MAP_FAILED);
	memcpy(code, bytes, n);
	reg_x = region_alloc(64, &reg_x);
	CHECK(reg_x != NULL);
	for (int k = 0; k < 8; k++)
		reg_x[k] = (uint64_t)k * 10;
	region_handler(reg_x, grant_handler);
	f0 = fast_traps();
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t *p, *q, c = 2, v;

		region_protect(reg_x, PROT_READ);
		q = *(uint64_t *volatile *)&reg_x + 3; /* read-only view */
		region_protect(reg_x, PROT_NONE);
		p = *(uint64_t *volatile *)&reg_x;
		if (!stale_rsi)
			q = &c; /* ordinary memory */
		__asm__ volatile(CALL
		                 : "+D"(p), "+S"(q), "+c"(c), "=a"(v)
		                 : [f] "r"(code)
		                 : "rdx", "r8", "r9", "r10", "r11", "memory");
		CHECK(p == *(uint64_t *volatile *)&reg_x); /* moved to read-only */
		CHECK_EQ(v, stale_rsi ? 30 + 0 : 20 + 10 + 2);
	}
	CHECK_EQ(h_calls, ROUNDS);
	munmap(code, 4096);
	return fast_traps() - f0;
}

/* An indexed operand, and forms after it through the same pointer and
 * through ordinary memory: the fast plan holds, every trap after the
 * first is fast. mov (%rdi,%rcx,8),%rax; add 8(%rdi),%rax; add (%rsi),%rax;
 * ret. */
TEST(an_indexed_access_with_forms_after_it_is_fast)
{
	static const uint8_t code[] = { 0x48, 0x8b, 0x04, 0xcf, 0x48, 0x03, 0x47, 0x08,
		                        0x48, 0x03, 0x06, 0xc3 };

	CHECK(run_reads(code, sizeof(code), 0) >= ROUNDS - 1);
}

/* A form after the access through a register that points into the same
 * region through another view (a stale read-only pointer): not the plan's
 * to decide, every trap takes the general path, and ends the same.
 * mov (%rdi),%rax; add (%rsi),%rax; ret. */
TEST(a_form_through_another_view_takes_the_general_path)
{
	static const uint8_t code[] = { 0x48, 0x8b, 0x07, 0x48, 0x03, 0x06, 0xc3 };

	CHECK_EQ(run_reads(code, sizeof(code), 1), 0);
}

/* Code rewritten at the same address: the fast path compares the
 * instruction's bytes as the decode cache does, so the new instruction is
 * decoded again (a miss) before its traps are fast. mov (%rdi),%rax; ret,
 * then mov (%rdi),%rdx; mov %rdx,%rax; ret. */
TEST(rewritten_code_is_decoded_again)
{
	static const uint8_t a[] = { 0x48, 0x8b, 0x07, 0xc3 };
	static const uint8_t b[] = { 0x48, 0x8b, 0x17, 0x48, 0x89, 0xd0, 0xc3 };
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct region_stats s0, s1;
	uint64_t f0;

	CHECK(code != MAP_FAILED);
	reg_x = region_alloc(64, &reg_x);
	CHECK(reg_x != NULL);
	reg_x[0] = 77;
	region_handler(reg_x, grant_handler);
	s0 = stats();
	f0 = fast_traps();
	for (int round = 0; round < 6; round++) {
		uint64_t *p, v;

		if (round == 0 || round == 3)
			memcpy(code, round ? b : a, round ? sizeof(b) : sizeof(a));
		region_protect(reg_x, PROT_NONE);
		p = *(uint64_t *volatile *)&reg_x;
		__asm__ volatile(CALL
		                 : "+D"(p), "=a"(v)
		                 : [f] "r"(code)
		                 : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory");
		CHECK_EQ(v, 77);
	}
	s1 = stats();
	CHECK_EQ(s1.decode_misses - s0.decode_misses, 2);
	CHECK_EQ(fast_traps() - f0, 4);
	munmap(code, 4096);
}

TEST(a_handler_moving_another_region_moves_its_registers)
{
	registers_by_mode(GRANT_ALSO_Y);
}

TEST(a_handler_granting_twice_moves_to_the_last_view)
{
	registers_by_mode(GRANT_TWICE);
}

TEST(a_handler_lowering_and_granting_again_moves_once)
{
	registers_by_mode(GRANT_LOWER_AGAIN);
}
#endif
