/* A run's sites named (raw_run.h): by the symbol at each allocating call,
 * or by the program's function the debug information says was inlined
 * there (sources.c), past the allocators' wrappers of the run's own policy
 * (policy/wrappers.c, the preload's list); and a slot's site and rule by
 * name, for the report's lists and the trace. */
#include "tools/interpret/raw_run.h"

#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "tools/interpret/demangle.h"

/* The run's policy, parsed from the record's effective text: its
 * site_skip and warnings. */
static struct rtl_policy policy;
static int have_policy;

static void parse_policy(struct run *r)
{
	static struct rtl_policy_errors errs;
	const char *text = json_string_value(json_object_get(r->policy, "text"));
	const char *source = json_string_value(json_object_get(r->policy, "source"));

	memset(&errs, 0, sizeof(errs));
	have_policy = text && source && rtl_policy_parse(text, source, &policy, &errs) == 0;
}

/* An allocator's wrapper, for the preload as for this run's policy. */
static int is_wrapper(const char *name, void *arg)
{
	char d[RTL_POLICY_WRAPPER_NAME_MAX];

	(void)arg;
	rtl_demangle(name, d, sizeof(d));
	return rtl_policy_is_wrapper(have_policy ? &policy : NULL, name,
	                             strcmp(d, name) ? d : NULL);
}

/* Each site by its symbol, or by the program's function inlined there
 * (the symbol kept beside it: what a rule's site glob matched). */
static void name_sites(struct run *r)
{
	for (size_t i = 0; i < r->nsites; i++) {
		char buf[RTL_SYMBOL_NAME_MAX], inl[RTL_SYMBOL_NAME_MAX], line[512];
		struct site *s = &r->sites[i];

		if (!s->ip) {
			s->name = strdup("(other sites)");
			continue;
		}
		rtl_symbolise(&r->mods, s->ip, 0, buf, sizeof(buf));
		buf[strcspn(buf, "!")] = '\0';
		switch (rtl_source_site(&r->mods, s->ip, buf, is_wrapper, NULL, inl,
		                        sizeof(inl), line, sizeof(line))) {
		case 1:
			s->name = strdup(inl);
			rtl_symbolise(&r->mods, s->ip, 0, buf, sizeof(buf));
			s->symbol = strdup(buf);
			s->line = strdup(line);
			break;
		case 0:
			s->line = strdup(line);
			/* fall through */
		default:
			rtl_symbolise(&r->mods, s->ip, 0, buf, sizeof(buf));
			s->name = strdup(buf);
		}
	}
}

const struct rtl_policy *rtl_raw_policy(void)
{
	return have_policy ? &policy : NULL;
}

const char *rtl_raw_rule_name(struct run *r, int rule)
{
	json_t *o = json_array_get(r->rules, (size_t)rule);
	const char *s = json_string_value(json_object_get(o, "name"));

	return rule >= 0 && s ? s : "?";
}

const char *rtl_raw_slot_name(struct run *r, uint32_t slot)
{
	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i].slot == slot && r->sites[i].name)
			return r->sites[i].name;
	return "(other sites)";
}

/* The rule of a site slot, or -1. */
static int slot_rule(struct run *r, uint32_t slot)
{
	for (size_t i = 0; i < r->nsites; i++)
		if (r->sites[i].slot == slot)
			return r->sites[i].rule;
	return -1;
}

void rtl_raw_name(struct run *r)
{
	parse_policy(r);
	name_sites(r);
}

const char *rtl_raw_slot_rule(struct run *r, uint32_t slot)
{
	return rtl_raw_rule_name(r, slot_rule(r, slot));
}
