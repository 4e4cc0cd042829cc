/* Unit tests over the checks of rtl's self-test (tools/selftest). */
#ifndef RTL_TEST_SELFTEST_CHECK_H
#define RTL_TEST_SELFTEST_CHECK_H

#include "tests/unit/test.h"
#include "tools/selftest/selftest.h"

/* Run the self-test check called name; fail unless all its cases pass. */
static inline void run_check(const char *name)
{
	const struct st_check *c = st_find(name);
	struct st_report r = { 0 };

	CHECK(c != NULL);
	if (c->available && !c->available()) {
		printf("# %s: this CPU cannot run it\n", name);
		return;
	}
	c->run(&r);
	printf("# %s: %u cases, %llu traps\n", name, r.cases,
	       (unsigned long long)r.traps);
	if (r.failed)
		printf("# %u failed; first: %s\n", r.failed, r.first);
	CHECK_EQ(r.failed, 0);
	CHECK(r.cases > 0);
}

#endif
