/* Which rule selects an allocation: size range and allocating site, first
 * match in file order. Called by the preload on every allocation, so it
 * does no allocation and no I/O. */
#include <fnmatch.h>
#include <string.h>

#include "policy/policy.h"

int rtl_policy_glob_matches(const char *glob, const char *site)
{
	const char *fn = strchr(site, '!');

	/* A glob with '!' names module!function; otherwise the function. */
	if (!strchr(glob, '!') && fn)
		site = fn + 1;
	return fnmatch(glob, site, 0) == 0;
}

int rtl_policy_site_matches(const struct rtl_rule *r, const char *site)
{
	if (!r->site[0])
		return 1;
	if (!site)
		return 0;
	return rtl_policy_glob_matches(r->site, site);
}

const struct rtl_rule *rtl_policy_match(const struct rtl_policy *p, size_t size,
                                        const char *site)
{
	for (int i = 0; i < p->nrules; i++) {
		const struct rtl_rule *r = &p->rules[i];
		if (size >= r->size_min && size <= r->size_max && rtl_policy_site_matches(r, site))
			return r;
	}
	return NULL;
}

int rtl_policy_needs_site(const struct rtl_policy *p)
{
	for (int i = 0; i < p->nrules; i++)
		if (p->rules[i].site[0])
			return 1;
	return 0;
}
