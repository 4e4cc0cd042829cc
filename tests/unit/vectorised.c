/* Compiler-vectorised loops (vec_kernels.h, built -O3 -mavx2 and -O3
 * -mavx512f) summing and writing region arrays that trap, against the same
 * loops on ordinary arrays; alone and in four threads. AVX-512 code runs
 * only where the CPU has it; everywhere its instructions are decoded and
 * their vector memory operands checked. */
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/decoder.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

#define DECLARE(isa)                                                          \
	long isa##_sum_i32(const int *a, size_t n);                           \
	void isa##_saxpy(float *restrict y, const float *restrict x, float a, \
	                 size_t n);                                           \
	void isa##_add3(int *restrict d, const int *restrict a,               \
	                const int *restrict b, size_t n);                     \
	void isa##_xor_bytes(uint8_t *restrict d, const uint8_t *restrict s,  \
	                     size_t n);                                       \
	void isa##_inplace(int *a, size_t n);
DECLARE(avx2)
DECLARE(avx512)

#define MAXE 65541 /* elements */
#define BYTES (MAXE * 4 + 256)
#define NKERNELS 5

struct kernels {
	long (*sum)(const int *, size_t);
	void (*saxpy)(float *restrict, const float *restrict, float, size_t);
	void (*add3)(int *restrict, const int *restrict, const int *restrict,
	             size_t);
	void (*xor_bytes)(uint8_t *restrict, const uint8_t *restrict, size_t);
	void (*inplace)(int *, size_t);
};

static const struct kernels avx2 = { avx2_sum_i32, avx2_saxpy, avx2_add3,
	                             avx2_xor_bytes, avx2_inplace };
static const struct kernels avx512 = { avx512_sum_i32, avx512_saxpy,
	                               avx512_add3, avx512_xor_bytes,
	                               avx512_inplace };

/* Kernel k on d (written), a and b (read); returns the sum for k == 0. */
static long run(const struct kernels *ks, int k, char *d, char *a, char *b,
                size_t n)
{
	switch (k) {
	case 0: return ks->sum((const int *)a, n);
	case 1: ks->saxpy((float *)d, (const float *)a, 2.5f, n); break;
	case 2: ks->add3((int *)d, (const int *)a, (const int *)b, n); break;
	case 3: ks->xor_bytes((uint8_t *)d, (const uint8_t *)a, n * 4); break;
	case 4: ks->inplace((int *)d, n); break;
	}
	return 0;
}

static char *now(char **bp) { return *(char *volatile *)bp; }

struct arrays {
	char *r[3]; /* d, a, b as regions (bound pointers) */
	char *o[3]; /* the same on ordinary memory */
};

static void arrays_init(struct arrays *v)
{
	for (int i = 0; i < 3; i++) {
		v->r[i] = region_alloc(BYTES, &v->r[i]);
		v->o[i] = aligned_alloc(4096, (BYTES + 4095) & ~(size_t)4095);
		CHECK(v->r[i] && v->o[i]);
	}
	region_handler(NULL, grant_handler);
}

/* One kernel, one size, one misalignment: regions d RO or NONE, a and b
 * NONE, against ordinary arrays. */
static void one(const struct kernels *ks, struct arrays *v, int k, size_t n,
                size_t mis)
{
	size_t off = mis * 4, len = n * 4 + 64;
	long ref, got;
	char *arg[3];

	for (int i = 0; i < 3; i++) {
		int *o = (int *)(void *)v->o[i];
		for (size_t e = 0; e < len / 4 + mis; e++)
			o[e] = (int)((e * 2654435761u + (unsigned)i * 77 + n) % 1000);
		region_protect(v->r[i], RW);
		memcpy(now(&v->r[i]), v->o[i], len + off);
	}
	ref = run(ks, k, v->o[0] + off, v->o[1] + off, v->o[2] + off, n);
	region_protect(v->r[0], (n + mis) % 2 ? PROT_NONE : PROT_READ);
	region_protect(v->r[1], PROT_NONE);
	region_protect(v->r[2], PROT_NONE);
	for (int i = 0; i < 3; i++)
		arg[i] = now(&v->r[i]) + off;
	got = run(ks, k, arg[0], arg[1], arg[2], n);
	CHECK_EQ(got, ref);
	for (int i = 0; i < 3; i++) {
		region_protect(v->r[i], PROT_READ);
		CHECK(memcmp(now(&v->r[i]), v->o[i], len + off) == 0);
	}
}

static const size_t sizes[] = { 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100,
	                        255, 1000, 4099, MAXE };

static void all(const struct kernels *ks, struct arrays *v, int step, int first)
{
	int c = 0;
	for (int k = 0; k < NKERNELS; k++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			for (size_t mis = 0; mis < 4; mis++)
				if (c++ % step == first)
					one(ks, v, k, sizes[s], mis);
}

/* The AVX2 build really has vector memory accesses, decoded right. */
static int vector_accesses(const void *fn, const char *reg, int *stores)
{
	const uint8_t *p = fn;
	int found = 0;

	*stores = 0;
	for (int n = 0; n < 400; n++) {
		struct rtl_insn in;
		if (rtl_decode_buf(p, 15, (uint64_t)p, &in) < 0)
			break;
		/* A constant loaded pc-relative (clang's broadcasts) is no
		 * access to the arrays. */
		if (in.nmem == 1 && strstr(in.text, reg) && in.mem[0].base != RTL_REG_PC) {
			CHECK(in.mem[0].base >= 0 && in.mem[0].base < RTL_NGPR);
			CHECK(in.mem[0].access != 0);
			found++;
			*stores += !!(in.mem[0].access & RTL_ACC_WRITE);
		}
		p += in.len;
	}
	return found;
}

TEST(avx2_loops_over_regions)
{
	struct arrays v;
	uint64_t t0;
	int stores;

	CHECK_EQ(rtl_decoder_init(), 0);
	CHECK(vector_accesses((const void *)(uintptr_t)avx2_add3, "ymm", &stores) > 0);
	CHECK(stores > 0);
	if (!__builtin_cpu_supports("avx2")) {
		printf("# skipped running: this CPU has no AVX2\n");
		return;
	}
	arrays_init(&v);
	t0 = stats().traps;
	all(&avx2, &v, 1, 0);
	CHECK(stats().traps - t0 >= NKERNELS * 16 * 4);
}

/* Each array's trap revokes the other two: the loop traps at every
 * access in turn, in the middle of its vector body and with its index
 * register live. */
static struct arrays *revoking;

static void revoke_others(rtl_trap_t *t)
{
	region_protect(t->addr, t->write ? RW : PROT_READ);
	for (int i = 0; i < 3; i++)
		if (i != (int)(intptr_t)t->data)
			region_protect(now(&revoking->r[i]), PROT_NONE);
}

TEST(avx2_loops_trapping_every_access)
{
	static struct arrays v;
	uint64_t t0;

	arrays_init(&v);
	revoking = &v;
	for (int i = 0; i < 3; i++) {
		region_handler(v.r[i], revoke_others);
		region_set_data(v.r[i], (void *)(intptr_t)i);
	}
	t0 = stats().traps;
	for (int k = 1; k < NKERNELS; k++)
		one(&avx2, &v, k, 1000, 1);
	printf("# %llu traps\n", (unsigned long long)(stats().traps - t0));
	CHECK(stats().traps - t0 > 300);
}

TEST(avx512_loops_over_regions)
{
	struct arrays v;
	int stores, loads;

	CHECK_EQ(rtl_decoder_init(), 0);
	loads = vector_accesses((const void *)(uintptr_t)avx512_add3, "zmm", &stores);
	CHECK(loads > 0 && stores > 0);
	CHECK(vector_accesses((const void *)(uintptr_t)avx512_saxpy, "zmm", &stores) > 0);
	CHECK(stores > 0);
	CHECK(vector_accesses((const void *)(uintptr_t)avx512_sum_i32, "zmm", &stores) > 0);
	if (!__builtin_cpu_supports("avx512f")) {
		printf("# skipped running: this CPU has no AVX-512F (its code was "
		       "decoded only)\n");
		return;
	}
	arrays_init(&v);
	all(&avx512, &v, 1, 0);
}

static void *thread_main(void *arg)
{
	struct arrays v;
	arrays_init(&v);
	all(&avx2, &v, 4, (int)(intptr_t)arg);
	return NULL;
}

TEST(avx2_loops_four_threads)
{
	pthread_t tid[4];
	uint64_t t0 = stats().traps;

	if (!__builtin_cpu_supports("avx2")) {
		printf("# skipped: this CPU has no AVX2\n");
		return;
	}
	for (int i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&tid[i], NULL, thread_main, (void *)(intptr_t)i), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(tid[i], NULL);
	CHECK(stats().traps - t0 >= NKERNELS * 16 * 4);
}
