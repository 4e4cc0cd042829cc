/* Bad input to every call: -1 or NULL with the documented errno, and
 * nothing else changed (a sentinel region keeps its contents, protection and
 * pointers). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/region/views.h"
#include "tests/unit/helpers.h"
#include "tests/unit/test.h"

static char *sentinel;

static void setup_sentinel(void)
{
	sentinel = region_alloc(100, &sentinel);
	CHECK(sentinel != NULL);
	memset(sentinel, 's', 100);
	CHECK_EQ(region_protect(sentinel, PROT_READ), 0);
}

static void check_sentinel(void)
{
	struct region_stats s = stats();
	for (int i = 0; i < 100; i++)
		CHECK_EQ(sentinel[i], 's');
	CHECK_EQ(s.regions, 1);
	CHECK_EQ(s.traps, 0);
	/* Still RO: a write would trap; the protection is what it was. */
	region_handler(sentinel, grant_handler);
	poke(sentinel, 's');
	CHECK_EQ(h_writes, 1);
}

#define EXPECT_ERR(call, err)                                                   \
	do {                                                                    \
		errno = 0;                                                      \
		CHECK((long)(call) == -1 || (void *)(uintptr_t)(call) == NULL); \
		CHECK_EQ(errno, err);                                           \
	} while (0)

TEST(alloc_and_define_errors)
{
	static char ordinary[64];
	setup_sentinel();
	EXPECT_ERR(region_alloc(0, NULL), EINVAL);
	EXPECT_ERR(region_alloc((size_t)1 << 62, NULL), ENOMEM);
	EXPECT_ERR(region_alloc(SIZE_MAX, NULL), ENOMEM);
	EXPECT_ERR(region_define(NULL, 10, NULL), EINVAL);
	EXPECT_ERR(region_define(ordinary, 0, NULL), EINVAL);
	EXPECT_ERR(region_define((void *)(uintptr_t)-16, 100, NULL), EINVAL);
	EXPECT_ERR(region_define((void *)(uintptr_t)4096, 100, NULL), EFAULT);
	/* Over an existing region: refused. */
	EXPECT_ERR(region_define(sentinel + 64, 10, NULL), EEXIST);
	/* Crossing from one view into the next. */
	EXPECT_ERR(region_define((void *)(rtl_view_base(RTL_VIEW_RO) - 64), 128, NULL),
	           EINVAL);
	/* Not 64-byte aligned, in place. */
	EXPECT_ERR(region_define(sentinel + 3000, 10, NULL), EINVAL);
	check_sentinel();
}

TEST(free_errors)
{
	static char ordinary[64];
	char *x;

	setup_sentinel();
	EXPECT_ERR(region_free(NULL), EINVAL);
	EXPECT_ERR(region_free(ordinary), ENOENT);
	x = region_alloc(10, NULL);
	CHECK_EQ(region_free(x), 0);
	EXPECT_ERR(region_free(x), ENOENT); /* double free */
	check_sentinel();
}

static void noop(rtl_trap_t *t) { (void)t; }

TEST(pointer_handler_data_errors)
{
	static char ordinary[64];
	char *not_region = ordinary, *unregistered = NULL;

	setup_sentinel();
	EXPECT_ERR(region_bptr(NULL, &unregistered), EINVAL);
	EXPECT_ERR(region_bptr(&sentinel, NULL), EINVAL);
	EXPECT_ERR(region_bptr(&not_region, &unregistered), ENOENT);
	EXPECT_ERR(region_ptr(NULL), EINVAL);
	EXPECT_ERR(region_ptr_free(NULL), EINVAL);
	EXPECT_ERR(region_ptr_free(&unregistered), ENOENT);
	EXPECT_ERR(region_handler(ordinary, noop), ENOENT);
	EXPECT_ERR(region_set_data(ordinary, NULL), ENOENT);
	EXPECT_ERR(region_set_data(NULL, NULL), EINVAL);
	check_sentinel();
}

TEST(protect_errors)
{
	static char ordinary[64];
	char *not_region = ordinary, *before;

	setup_sentinel();
	before = sentinel;
	EXPECT_ERR(region_protect(sentinel, PROT_WRITE), EINVAL);
	EXPECT_ERR(region_protect(sentinel, PROT_EXEC | PROT_READ), EINVAL);
	EXPECT_ERR(region_protect(sentinel, -1), EINVAL);
	EXPECT_ERR(region_protect(NULL, PROT_READ), EINVAL);
	EXPECT_ERR(region_protect(ordinary, PROT_READ), ENOENT);
	EXPECT_ERR(region_protect_ptr(NULL, PROT_READ), EINVAL);
	EXPECT_ERR(region_protect_ptr(&sentinel, 12345), EINVAL);
	EXPECT_ERR(region_protect_ptr(&not_region, PROT_READ), ENOENT);
	CHECK(sentinel == before);
	check_sentinel();
}

/* RTL_ARENA_SIZE that is not a size: every call fails with EINVAL and one
 * line says why. */
static void bad_arena(void)
{
	setenv("RTL_ARENA_SIZE", "lots", 1);
	errno = 0;
	if (region_alloc(10, NULL) != NULL || errno != EINVAL)
		_exit(1);
	if (region_protect((void *)16, PROT_READ) != -1 || errno != EINVAL)
		_exit(2);
	_exit(0);
}

TEST(bad_arena_size)
{
	char err[1024];
	int st = test_run_captured(bad_arena, err, sizeof(err));
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
	CHECK(strstr(err, "RTL_ARENA_SIZE=lots") != NULL);
}

/* A small arena: allocation beyond it is ENOMEM, and what fits works. */
static void small_arena(void)
{
	setenv("RTL_ARENA_SIZE", "4M", 1);
	char *a = region_alloc(1 << 20, NULL);
	errno = 0;
	if (!a || region_alloc(5 << 20, NULL) || errno != ENOMEM)
		_exit(1);
	_exit(0);
}

TEST(arena_size_from_environment)
{
	char err[1024];
	int st = test_run_captured(small_arena, err, sizeof(err));
	CHECK(WIFEXITED(st));
	CHECK_EQ(WEXITSTATUS(st), 0);
}

/* Pointer variables at bad addresses (issue 20): EFAULT, never a crash, and
 * no region is left behind. */
TEST(bad_pointer_variables)
{
	char *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *unregistered = NULL;

	CHECK(page != MAP_FAILED);
	setup_sentinel();
	EXPECT_ERR(region_alloc(10, (void *)0x10), EFAULT);
	EXPECT_ERR(region_alloc(10, page), EFAULT); /* readable, not writable */
	EXPECT_ERR(region_define(page, 64, (void *)0x10), EFAULT);
	EXPECT_ERR(region_bptr((void *)0x10, &unregistered), EFAULT);
	EXPECT_ERR(region_bptr(&sentinel, (void *)0x10), EFAULT);
	EXPECT_ERR(region_bptr(&sentinel, page), EFAULT);
	EXPECT_ERR(region_ptr((void *)0x10), EFAULT);
	check_sentinel();
}

/* Lengths that run past the end of the address space (issue 20): EINVAL
 * before any pointer arithmetic on them. */
TEST(diff_lengths_that_wrap)
{
	char *r = region_alloc(100, NULL), dst[100], buf[64];
	ssize_t n;

	CHECK(r != NULL);
	CHECK_EQ(region_track(r, 1), 0);
	r[3] = 1;
	n = region_diff_encode(r, buf, sizeof(buf));
	CHECK(n > 0);
	EXPECT_ERR(region_diff_apply(r, buf, SIZE_MAX), EINVAL);
	EXPECT_ERR(region_diff_apply(r, buf, SIZE_MAX - (uintptr_t)buf + 2), EINVAL);
	EXPECT_ERR(region_buf_diff_apply(dst, sizeof(dst), buf, SIZE_MAX), EINVAL);
	EXPECT_ERR(region_buf_diff_check(buf, SIZE_MAX, sizeof(dst)), EINVAL);
	EXPECT_ERR(region_buf_diff_apply(dst, SIZE_MAX, buf, (size_t)n), EINVAL);
	EXPECT_ERR(region_buf_diff_encode(dst, dst, SIZE_MAX, buf, sizeof(buf)), EINVAL);
	EXPECT_ERR(region_diff_encode(r, buf, SIZE_MAX), EINVAL);
	CHECK_EQ(region_diff_apply(r, buf, (size_t)n), 0);
}
