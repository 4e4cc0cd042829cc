/* The effective policy in the file format (rtlctl show), and names of
 * actions, mechanisms and protections for reports. */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "policy/policy.h"

const char *rtl_policy_mechanism_str(int mechanism)
{
	return mechanism == RTL_MECH_ALIAS  ? "alias"
	       : mechanism == RTL_MECH_AUTO ? "auto"
	       : mechanism == RTL_MECH_PAGE ? "page"
	       : mechanism == RTL_MECH_TAG  ? "tag"
	                                    : "swizzle";
}

const char *rtl_policy_protect_str(int prot)
{
	switch (prot) {
	case PROT_NONE: return "none";
	case PROT_READ: return "read";
	default: return "rw";
	}
}

void rtl_policy_actions_str(unsigned actions, char *buf, size_t len)
{
	static const char *const names[] = { "count", "log", "backtrace",
		                             "grant-read", "grant-rw", "dirty",
		                             "abort" };
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(actions & (1u << i)))
			continue;
		int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", names[i]);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

static void size_str(size_t v, char *buf, size_t len)
{
	static const char *const suffix[] = { "", "K", "M", "G" };
	int i = 0;
	while (i < 3 && v && v % 1024 == 0) {
		v /= 1024;
		i++;
	}
	snprintf(buf, len, "%zu%s", v, suffix[i]);
}

static void duration_str(uint64_t ns, char *buf, size_t len)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	int i = 0;
	while (i < 3 && ns % 1000 == 0) {
		ns /= 1000;
		i++;
	}
	snprintf(buf, len, "%llu%s", (unsigned long long)ns, unit[i]);
}

void rtl_policy_write(const struct rtl_policy *p, FILE *out)
{
	char a[128], b[32];

	fprintf(out, "# rtl policy: effective settings of %s, defaults filled in\n",
	        p->source);
	fprintf(out, "[rtl]\n");
	fprintf(out, "report = %s\n", p->report[0] ? p->report : "\"\"");
	fprintf(out, "mechanism = %s\n", rtl_policy_mechanism_str(p->mechanism));
	fprintf(out, "events = %s\n", p->events ? "traps" : "off");
	fprintf(out, "mprotect = %s\n", p->mprotect_log ? "log" : "pass");
	fprintf(out, "syscalls = %s\n",
	        p->syscalls == RTL_SYSCALLS_WRAPPERS ? "wrappers" : "seccomp");
	fprintf(out, "max_regions = %llu\n", (unsigned long long)p->max_regions);
	for (int i = 0; i < p->nsite_skip; i++)
		fprintf(out, "%s%s", i ? ", " : "site_skip = ", p->site_skip[i]);
	if (p->nsite_skip)
		fputc('\n', out);
	for (int i = 0; i < p->nrules; i++) {
		const struct rtl_rule *r = &p->rules[i];
		fprintf(out, "\n[rule %s]\n", r->name);
		size_str(r->size_min, b, sizeof(b));
		if (r->size_max == SIZE_MAX) {
			fprintf(out, "size = %s..\n", b);
		} else {
			fprintf(out, "size = %s..", b);
			size_str(r->size_max, b, sizeof(b));
			fprintf(out, "%s\n", b);
		}
		fprintf(out, "site = %s\n", r->site[0] ? r->site : "*");
		fprintf(out, "sample = %u\n", r->sample);
		fprintf(out, "mechanism = %s\n", rtl_policy_mechanism_str(r->mechanism));
		fprintf(out, "protect = %s\n", rtl_policy_protect_str(r->protect));
		rtl_policy_actions_str(r->on_read, a, sizeof(a));
		fprintf(out, "on_read = %s\n", a);
		rtl_policy_actions_str(r->on_write, a, sizeof(a));
		fprintf(out, "on_write = %s\n", a);
		if (r->epoch_ns) {
			duration_str(r->epoch_ns, b, sizeof(b));
			fprintf(out, "epoch = %s\n", b);
		} else {
			fprintf(out, "epoch = off\n");
		}
	}
}
