/* The revoking sweep of rtl's self-test (tools/selftest/sweep.c) as unit
 * tests: glibc's strcpy, memcpy, strcmp and memcmp between two regions
 * that revoke each other, live neighbours on either side, every source
 * alignment, sizes to 64 KiB, against ordinary memory. tests/run.sh runs
 * this once per glibc string variant the CPU has. */
#include "tests/unit/selftest_check.h"

TEST(strcpy_between_revoking_regions)
{
	run_check("sweep/strcpy");
}

TEST(memcpy_between_revoking_regions)
{
	run_check("sweep/memcpy");
}

TEST(strcmp_between_revoking_regions)
{
	run_check("sweep/strcmp");
}

TEST(memcmp_between_revoking_regions)
{
	run_check("sweep/memcmp");
}

TEST(names_the_variant_glibc_picked)
{
	char buf[128];

	for (int i = 0; st_functions[i]; i++) {
		st_describe(st_functions[i], buf, sizeof(buf));
		printf("# %s\n", buf);
		if (!strstr(buf, "not glibc's"))
			CHECK(strstr(buf, "=?") == NULL);
	}
}
