/* The policy used when none is given: the demo's. It watches the demo
 * program's 48- to 64-byte objects (examples/objects.c allocates its records
 * in that size class) and counts the first write to each. */
#include "policy/policy.h"

const char rtl_policy_builtin[] =
        "# rtl built-in policy: count the first write to each small object\n"
        "[rtl]\n"
        "report = rtl-report.%e.%p.json\n"
        "\n"
        "[rule small-objects]\n"
        "size = 48..64\n"
        "protect = read\n"
        "on_write = count, grant-rw\n";

int rtl_policy_load_builtin(struct rtl_policy *p)
{
	struct rtl_policy_errors errs;
	return rtl_policy_parse(rtl_policy_builtin, "(built-in)", p, &errs);
}
