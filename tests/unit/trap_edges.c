/* The trap path at its edges: a difference register kept right when the
 * pointer beside it moves, forms no register explains, gathers, reads past
 * a region's end (over-reads) and accesses straddling two regions or a
 * region and free space, code that changes under the decode cache, and
 * the grant moving the registers of every view at once. */
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

/* A call from inline asm must step over the red zone. */
#define CALL "sub $128, %%rsp\n call *%[f]\n add $128, %%rsp"

static _Atomic int n_calls; /* the neighbour's handler */
static void neighbour_handler(rtl_trap_t *t)
{
	n_calls++;
	region_protect(t->addr, t->write ? RW : PROT_READ);
}

/* Two adjacent 40-byte regions (64-byte spans): a then b. */
static void adjacent(char **a, char **b)
{
	for (int tries = 0; tries < 64; tries++) {
		*a = region_alloc(40, a);
		*b = region_alloc(40, b);
		CHECK(*a && *b);
		if (*b == *a + 64)
			return;
	}
	CHECK(!"no two adjacent regions");
}

/* The pointer traps and moves; the code after adds a difference to it to
 * reach ordinary memory: the difference is moved back, the load is right. */
TEST(difference_kept_when_pointer_moves)
{
	static char other[64] = "ordinary";
	char *x = region_alloc(64, &x), *p;
	uint64_t v, w;
	long d;

	CHECK(x != NULL);
	strcpy(x, "region!");
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	p = *(char *volatile *)&x;
	d = other - p;
	__asm__ volatile("mov (%[p]), %[v]\n mov (%[p],%[d],1), %[w]"
	                 : [v] "=&r"(v), [w] "=&r"(w), [p] "+r"(p), [d] "+r"(d)
	                 :
	                 : "memory");
	CHECK_EQ(h_calls, 1);
	CHECK(memcmp(&v, "region!", 8) == 0);
	CHECK(memcmp(&w, "ordinary", 8) == 0);
	CHECK(p + d == other);
}

/* base + difference beside a pointer into plain memory, with nothing
 * after it to tell: the pointer stays on its object, the difference (no
 * address) moves, and the read gets the region's bytes. */
TEST(difference_beside_plain_pointer_is_moved)
{
	static char other[64];
	char *x = region_alloc(64, &x);
	uint64_t v;
	char *q = other;
	long d;

	CHECK(x != NULL);
	strcpy(x, "region!");
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	d = *(char *volatile *)&x - q;
	__asm__ volatile("mov (%[q],%[d],1), %[v]"
	                 : [v] "=r"(v), [q] "+r"(q), [d] "+r"(d)
	                 :
	                 : "memory");
	CHECK_EQ(h_calls, 1);
	CHECK(memcmp(&v, "region!", 8) == 0);
	CHECK(q == other);
}

/* base + index where both are numbers no mapping holds, and nothing tells
 * which carries the address: the process dies with a diagnostic naming
 * the instruction, never a guess. */
static void ambiguous_sum(void)
{
	char *x = region_alloc(64, &x);
	uint64_t v;
	/* 96 TiB: nothing is mapped there, and x - b is negative. */
	uint64_t a, b = (uint64_t)3 << 45;

	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	a = (uint64_t) * (char *volatile *)&x - b;
	__asm__ volatile("mov (%[a],%[b],1), %[v]\n xor %k[a], %k[a]"
	                 : [v] "=r"(v), [a] "+r"(a), [b] "+r"(b)
	                 :
	                 : "memory");
	_exit(0);
}

TEST(ambiguous_sum_dies)
{
	char err[8192];
	int st = test_run_captured(ambiguous_sum, err, sizeof(err));

	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "rtl cannot tell which register") != NULL);
	CHECK(strstr(err, "instruction: mov") != NULL);
}

/* Gathers take one address per element: rtl refuses them by name. */
static void gather(void)
{
	int *x = region_alloc(256, &x);
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	int *p = *(int *volatile *)&x;
	__asm__ volatile("vpcmpeqd %%ymm2, %%ymm2, %%ymm2\n"
	                 "vpxor %%ymm1, %%ymm1, %%ymm1\n"
	                 "vpgatherdd %%ymm2, (%[p],%%ymm1,4), %%ymm0"
	                 :
	                 : [p] "r"(p)
	                 : "memory", "xmm0", "xmm1", "xmm2");
	_exit(0);
}

TEST(gather_dies_naming_instruction)
{
	char err[8192];
	int st;

	if (!__builtin_cpu_supports("avx2")) {
		printf("# skipped: no AVX2\n");
		return;
	}
	st = test_run_captured(gather, err, sizeof(err));
	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "gather or scatter") != NULL);
	CHECK(strstr(err, "vpgatherdd") != NULL);
}

/* A read through a's pointer that holds some of a's bytes and runs past
 * a's span into b (an aligned vector block, or a straddling load) is a's:
 * b's handler never runs and the bytes come from b through a's new view.
 * A read through a's pointer that holds none of a's bytes (a pointer
 * biased back into a from b, as glibc's memcmp makes) is b's. */
TEST(over_read_into_neighbour_is_the_pointers_region)
{
	char *a, *b, *p;
	uint64_t w, x;

	adjacent(&a, &b);
	memcpy(b, "neighbour", 10);
	region_handler(a, grant_handler);
	region_handler(b, neighbour_handler);
	region_protect(a, PROT_NONE);
	region_protect(b, PROT_NONE);
	/* Starts at a's last byte, runs past a's span into b: a's. */
	if (__builtin_cpu_supports("avx2")) {
		char buf[32];
		p = *(char *volatile *)&a + 39;
		__asm__ volatile("vmovdqu (%[p]), %%ymm0\n vmovdqu %%ymm0, (%[b])"
		                 : [p] "+r"(p)
		                 : [b] "r"(buf)
		                 : "memory", "xmm0");
		CHECK_EQ(h_calls, 1);
		CHECK_EQ(n_calls, 0);
		CHECK(memcmp(buf + 25, "neighbo", 7) == 0);
		region_protect(a, PROT_NONE);
	} else {
		h_calls++; /* the same count either way */
	}
	/* Straddles a's span end: starts in a's span. */
	p = *(char *volatile *)&a;
	__asm__ volatile("mov 60(%[p]), %[w]"
	                 : [w] "=r"(w), [p] "+r"(p)
	                 :
	                 : "memory");
	CHECK_EQ(h_calls, 2);
	CHECK_EQ(n_calls, 0);
	CHECK(memcmp((char *)&w + 4, "neig", 4) == 0);
	/* Wholly in b through a pointer into a's bytes: b's. */
	region_protect(a, PROT_NONE);
	p = *(char *volatile *)&a + 30;
	__asm__ volatile("mov 34(%[p]), %[x]"
	                 : [x] "=r"(x), [p] "+r"(p)
	                 :
	                 : "memory");
	CHECK_EQ(h_calls, 2);
	CHECK_EQ(n_calls, 1);
	CHECK(memcmp(&x, "neighbou", 8) == 0);
	peek(*(char *volatile *)&b); /* b traps for itself */
}

/* A write that leaves the region it is checked against is refused: it
 * would change the neighbour without its handler. */
typedef uint64_t unaligned_u64 __attribute__((aligned(1)));
static char *straddle_target;
static void straddling_write(void)
{
	char *a, *b;
	adjacent(&a, &b);
	region_handler(NULL, grant_handler);
	region_protect(a, PROT_READ);
	straddle_target = *(char *volatile *)&a;
	/* An 8-byte store at offset 60: unaligned on purpose. */
	*(volatile unaligned_u64 *)(straddle_target + 60) = 1;
	_exit(0);
}

TEST(straddling_write_dies)
{
	char err[8192];
	int st = test_run_captured(straddling_write, err, sizeof(err));

	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "write crossing the end of the region") != NULL);
	CHECK(strstr(err, "offset 60 of region") != NULL);
}

/* A region followed by free space: a straddling read works (the free
 * space reads as zero), nothing else is involved. */
TEST(read_straddling_into_free_space)
{
	char *a = region_alloc(40, &a), *spare = region_alloc(40, &spare), *p;
	uint64_t v;

	CHECK(a && spare);
	if (spare == a + 64)
		region_free(spare); /* make a's neighbour free */
	memset(a, 0x11, 40);
	region_handler(a, grant_handler);
	region_protect(a, PROT_NONE);
	p = *(char *volatile *)&a;
	v = 1;
	__asm__ volatile("mov 60(%[p]), %[v]"
	                 : [v] "+r"(v), [p] "+r"(p)
	                 :
	                 : "memory");
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(v, 0);
}

/* The decode cache keys on the instruction bytes: new code at the same
 * address is decoded anew. First [rdi]; then [rsi + rdx] with rdx a
 * difference, which only a fresh decode can fix. */
TEST(decode_cache_follows_code_change)
{
	static const uint8_t first[] = { 0x48, 0x8b, 0x07, 0xc3 };
	static const uint8_t second[] = { 0x48, 0x8b, 0x04, 0x16, /* [rsi+rdx] */
		                          0x48, 0x8b, 0x0e,       /* rcx, [rsi] */
		                          0xc3 };
	static uint64_t other;
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *x = region_alloc(64, &x), v;
	struct region_stats s0, s1;

	CHECK(code != MAP_FAILED && x);
	x[0] = 42;
	region_handler(x, grant_handler);
	memcpy(code, first, sizeof(first));
	region_protect(x, PROT_NONE);
	s0 = stats();
	__asm__ volatile(CALL
	                 : "=a"(v)
	                 : [f] "r"(code), "D"(x)
	                 : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory");
	CHECK_EQ(v, 42);
	memcpy(code, second, sizeof(second));
	region_protect(x, PROT_NONE);
	__asm__ volatile(CALL
	                 : "=a"(v)
	                 : [f] "r"(code), "S"(&other),
	                   "d"((char *)*(uint64_t *volatile *)&x - (char *)&other)
	                 : "rcx", "rdi", "r8", "r9", "r10", "r11", "memory");
	s1 = stats();
	CHECK_EQ(v, 42);
	CHECK_EQ(h_calls, 2);
	CHECK(s1.decode_misses - s0.decode_misses == 2);
}

/* The handler's grant moves every register lying in the region's span,
 * whichever view it points through (the common trap's one-pass move,
 * move.c: an instruction nothing after which forms an address, here
 * addq $1, (%rdi); ret): a stale read-only pointer beside the one that
 * trapped lands in the writable view too; a number and a pointer
 * elsewhere stay. */
TEST(grant_moves_registers_of_every_view)
{
	static const uint8_t add_ret[] = { 0x48, 0x83, 0x07, 0x01, 0xc3 };
	static char elsewhere[16];
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *x = region_alloc(64, &x), *p, *q, n = 12345;
	uint64_t *volatile ro; /* in memory: a register copy would move too */
	char *e = elsewhere;

	CHECK(code != MAP_FAILED && x);
	memcpy(code, add_ret, sizeof(add_ret));
	x[0] = 41;
	region_handler(x, grant_handler);
	region_protect(x, PROT_READ);
	ro = *(uint64_t *volatile *)&x + 1; /* not registered */
	region_protect(x, PROT_NONE);
	p = *(uint64_t *volatile *)&x;
	q = ro;
	__asm__ volatile(CALL
	                 : "+D"(p), "+S"(q), "+d"(e), "+c"(n)
	                 : [f] "r"(code)
	                 : "rax", "r8", "r9", "r10", "r11", "memory");
	CHECK_EQ(h_calls, 1);
	CHECK_EQ(x[0], 42);
	CHECK(p == *(uint64_t *volatile *)&x);
	CHECK(q == p + 1);
	CHECK(q != ro);
	CHECK(e == elsewhere);
	CHECK_EQ(n, 12345);
	munmap(code, 4096);
}

/* A plain load whose base lies outside the region it reads (8 bytes below
 * it, in the padding of the region before), mov 8(%rdi), %rax; ret: the
 * base must move with the region though it is not in its span, which the
 * one-pass move cannot do, so the derived-address solver runs, and the
 * load reads the region's bytes. */
TEST(plain_load_through_a_base_below_the_region)
{
	static const uint8_t load_ret[] = { 0x48, 0x8b, 0x47, 0x08, 0xc3 };
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a, *b, *p;
	uint64_t v;

	CHECK(code != MAP_FAILED);
	memcpy(code, load_ret, sizeof(load_ret));
	adjacent(&a, &b);
	memcpy(b, "region b", 8);
	region_handler(b, grant_handler);
	region_protect(b, PROT_NONE);
	p = *(char *volatile *)&b - 8;
	__asm__ volatile(CALL
	                 : "=a"(v), "+D"(p)
	                 : [f] "r"(code)
	                 : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory");
	CHECK_EQ(h_calls, 1);
	CHECK(memcmp(&v, "region b", 8) == 0);
	CHECK(p + 8 == *(char *volatile *)&b);
	munmap(code, 4096);
}

/* The cache compares every byte of a long instruction with the code: a
 * change in its last byte is a miss, wherever on its page it lies (two
 * words compare it, or a byte loop near the page's end). */
static void store_imm_at(uint8_t *code, uint32_t imm)
{
	/* movq $imm, 0(%rdi) with a 32-bit displacement: 11 bytes; ret. */
	static const uint8_t head[] = { 0x48, 0xc7, 0x87, 0, 0, 0, 0 };

	memcpy(code, head, sizeof(head));
	memcpy(code + sizeof(head), &imm, sizeof(imm));
	code[sizeof(head) + sizeof(imm)] = 0xc3;
}

static uint64_t misses_storing(uint8_t *code, uint64_t **x)
{
	struct region_stats s0 = stats();

	region_protect(*x, PROT_READ); /* moves *x, the bound pointer */
	__asm__ volatile(CALL
	                 :
	                 : [f] "r"(code), "D"(*(uint64_t *volatile *)x)
	                 : "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11",
	                   "memory");
	return stats().decode_misses - s0.decode_misses;
}

TEST(decode_cache_compares_the_last_byte)
{
	static const size_t at[] = { 0, 4096 - 16, 4096 - 12 };
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
	                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t *x = region_alloc(64, &x);

	CHECK(page != MAP_FAILED && x);
	region_handler(x, grant_handler);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		uint8_t *code = page + at[i];

		store_imm_at(code, 0x11223344);
		CHECK_EQ(misses_storing(code, &x), 1);
		CHECK_EQ(x[0], 0x11223344);
		CHECK_EQ(misses_storing(code, &x), 0);
		store_imm_at(code, 0x71223344);
		CHECK_EQ(misses_storing(code, &x), 1);
		CHECK_EQ(x[0], 0x71223344);
	}
	CHECK_EQ(h_calls, 9);
	munmap(page, 4096);
}

/* An fs-relative access: its address needs the segment base, which the
 * decoder does not have; no register lies in the region, nothing can be
 * moved, and rtl says so instead of resuming into the same fault. */
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void fs_relative(void)
{
	char *x = region_alloc(64, &x);
	unsigned long fs;
	uint64_t v, d;

	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	region_handler(x, grant_handler);
	region_protect(x, PROT_NONE);
	d = (uint64_t) * (char *volatile *)&x - fs;
	__asm__ volatile("mov %%fs:(%[d]), %[v]"
	                 : [v] "=r"(v)
	                 : [d] "r"(d)
	                 : "memory");
	_exit(0);
}

TEST(segment_relative_access_dies_explained)
{
	char err[8192];
	int st = test_run_captured(fs_relative, err, sizeof(err));

	CHECK(test_died_of(st, SIGSEGV));
	CHECK(strstr(err, "no register explains") != NULL);
	CHECK(strstr(err, "fs:") != NULL);
}

/* LU's blocked fill as gcc -O2 compiles it: the store goes through
 * (base, index*8) where base is the block pointer biased back by the first
 * index, so it lies in the span of the region before, and the index is the
 * loop counter. The base must move, not the counter (which would run the
 * loop away over memory). */
TEST(biased_base_with_scaled_index)
{
	uint64_t *a = region_alloc(32768, &a), *b = region_alloc(32768, &b);
	uint64_t *biased;
	long i = 64, end = 128;

	CHECK(a && b);
	CHECK((char *)b - (char *)a == 65536); /* spans of 64 KiB, adjacent */
	region_handler(NULL, grant_handler);
	region_protect(b, PROT_READ);
	biased = *(uint64_t *volatile *)&b - 64; /* in a's span, past its end */
	__asm__ volatile("1: movq %[v], (%[base],%[i],8)\n\t"
	                 "incq %[i]\n\t"
	                 "cmpq %[end], %[i]\n\t"
	                 "jne 1b"
	                 : [i] "+r"(i), [base] "+r"(biased)
	                 : [v] "r"((uint64_t)7), [end] "r"(end)
	                 : "memory", "cc");
	CHECK_EQ(i, end);
	CHECK_EQ(h_calls, 1);
	for (int k = 0; k < 64; k++)
		CHECK_EQ(b[k], 7);
	CHECK_EQ(b[64], 0);
	CHECK_EQ(a[4095], 0);
}
