/* What is valid in a policy but worth saying (rtlctl check prints it; the
 * preload says it at start when rtlctl did not start it; rtlctl puts it in
 * the report's notes): a swizzle rule that can trap, which moves the
 * program's pointers between views, and a rule that selects nothing,
 * because an earlier one takes every allocation it would. Pure: no I/O. */
#include "policy/policy.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

/* Whether r's regions can trap under swizzle: a protection below rw at
 * allocation, or dirty, which starts them read-only (docs/policy.md). */
int rtl_policy_tag_fits(const struct rtl_rule *r)
{
	return r->protect != PROT_READ && !(r->on_write & RTL_ACT_DIRTY);
}

static int swizzle_traps(const struct rtl_rule *r)
{
	return r->mechanism == RTL_MECH_SWIZZLE &&
	       (r->protect != (PROT_READ | PROT_WRITE) || (r->on_write & RTL_ACT_DIRTY));
}

/* Whether a takes every allocation b would: the first match wins, sampled
 * out or not, so b never sees one. */
static int covers(const struct rtl_rule *a, const struct rtl_rule *b)
{
	return a->size_min <= b->size_min && a->size_max >= b->size_max &&
	       (!a->site[0] || !strcmp(a->site, b->site));
}

static struct rtl_policy_warning *next(struct rtl_policy_warning *w, int max,
                                       int *n, const struct rtl_rule *r, int i)
{
	if (*n >= max)
		return NULL;
	w[*n].rule = i;
	w[*n].line = r->line;
	return &w[(*n)++];
}

int rtl_policy_warnings(const struct rtl_policy *p, struct rtl_policy_warning *w,
                        int max)
{
	struct rtl_policy_warning *x;
	int n = 0;

	for (int i = 0; i < p->nrules; i++) {
		const struct rtl_rule *r = &p->rules[i];

		if (swizzle_traps(r) && (x = next(w, max, &n, r, i))) {
			if (r->protect != (PROT_READ | PROT_WRITE))
				snprintf(x->text, sizeof(x->text),
				         "rule %s: swizzle with protect = %s moves the "
				         "program's pointers between views; unmodified code "
				         "that compares or subtracts them can compute "
				         "something else (docs/mechanisms.md, \"swizzle, alias "
				         "and auto\"): mechanism = auto is exact",
				         r->name, rtl_policy_protect_str(r->protect));
			else
				snprintf(x->text, sizeof(x->text),
				         "rule %s: swizzle with dirty starts its regions "
				         "read-only and moves the program's pointers between "
				         "views; unmodified code that compares or subtracts "
				         "them can compute something else (docs/mechanisms.md, "
				         "\"swizzle, alias and auto\"): mechanism = auto is "
				         "exact",
				         r->name);
		}
		if (r->mechanism == RTL_MECH_TAG && !rtl_policy_tag_fits(r) &&
		    (x = next(w, max, &n, r, i)))
			snprintf(x->text, sizeof(x->text),
			         "rule %s: mechanism = tag has no %s: its blocks are "
			         "placed as mechanism = auto places them "
			         "(docs/mechanisms.md, \"tag\")",
			         r->name,
			         r->protect == PROT_READ ? "read-only (protect = read)"
			                                 : "dirty tracking");
		else if (r->mechanism == RTL_MECH_TAG && r->protect == PROT_NONE &&
		         (r->on_read & RTL_ACT_GRANT_READ) && (x = next(w, max, &n, r, i)))
			snprintf(x->text, sizeof(x->text),
			         "rule %s: mechanism = tag has no read-only: grant-read "
			         "grants read-write, and a write after it does not trap "
			         "until the block is protected again (docs/mechanisms.md, "
			         "\"tag\")",
			         r->name);
		for (int k = 0; k < i; k++) {
			if (!covers(&p->rules[k], r) || !(x = next(w, max, &n, r, i)))
				continue;
			snprintf(x->text, sizeof(x->text),
			         "rule %s: selects nothing: rule %s (line %d) comes "
			         "first and takes every allocation it would (the first "
			         "match wins)",
			         r->name, p->rules[k].name, p->rules[k].line);
			break;
		}
	}
	return n;
}
