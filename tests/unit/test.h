/* A minimal TAP harness for rtl's unit tests. Each TEST runs in a child
 * process of its own, so that every test starts with rtl uninitialised and
 * a test that dies cannot take the others with it. Usable from C++ too. */
#ifndef RTL_TEST_H
#define RTL_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn);

#define TEST(name)                                                     \
	static void name(void);                                        \
	__attribute__((constructor)) static void register_##name(void) \
	{                                                              \
		test_register(#name, name);                            \
	}                                                              \
	static void name(void)

#define CHECK(cond)                                                     \
	do {                                                            \
		if (!(cond)) {                                          \
			printf("# %s:%d: check failed: %s\n", __FILE__, \
			       __LINE__, #cond);                        \
			fflush(stdout);                                 \
			exit(1);                                        \
		}                                                       \
	} while (0)

#define CHECK_EQ(a, b)                                                     \
	do {                                                               \
		long long va_ = (long long)(a), vb_ = (long long)(b);      \
		if (va_ != vb_) {                                          \
			printf("# %s:%d: %s == %s failed: %lld != %lld\n", \
			       __FILE__, __LINE__, #a, #b, va_, vb_);      \
			fflush(stdout);                                    \
			exit(1);                                           \
		}                                                          \
	} while (0)

/* Marsaglia's xorshift64: the tests' reproducible random numbers. */
static inline unsigned long long test_xorshift(unsigned long long *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Run fn in a child with stderr captured. Returns the wait status; the
 * captured text (NUL-terminated, truncated) goes to err. */
int test_run_captured(test_fn fn, char *err, size_t errsize);

/* Whether a child status is death by signal sig. */
int test_died_of(int status, int sig);

#ifdef __cplusplus
}
#endif

#endif
