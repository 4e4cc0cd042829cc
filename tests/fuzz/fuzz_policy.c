/* Fuzz target: the policy parser, through the entry point `rtlctl check`
 * uses. Any input must give a policy or errors, never a crash. */
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rtl_policy p;
	struct rtl_policy_errors errs;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0'; /* rtl_policy_load rejects NUL bytes before this */
	if (rtl_policy_parse(text, "fuzz.ini", &p, &errs) == 0) {
		/* A valid policy can be matched against. */
		rtl_policy_match(&p, size, "fuzz!target");
	}
	free(text);
	return 0;
}
