/* A minimal reader of the policy file named by RTL_CONFIG (libinih): the
 * [rtl] section and [rule NAME] sections with size, protect, sample,
 * on_read and on_write, in the policy issue's format; keys that need the
 * policy engine are refused, never ignored. Runs once in the constructor
 * (its allocations go to the next allocator); rtl_select runs on every
 * allocation: no malloc, no locks. */
#include "policy.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "preload.h"

struct rtl_policy rtl_policy = { .max_regions = 1000000 };

struct parse {
	FILE *f;
	int line;              /* lines read so far */
	char section[80];
	struct rtl_rule *rule; /* of the current section, or NULL for [rtl] */
	int error_line;        /* of the first error the handler found */
	char error[160];
};

static int fail(struct parse *p, const char *fmt, const char *arg)
{
	if (!p->error_line) {
		p->error_line = p->line;
		snprintf(p->error, sizeof(p->error), fmt, arg);
	}
	return 0;
}

static void start_section(struct parse *p, const char *name, size_t len);

/* inih's reader: fgets, counting lines so that errors found in the handler
 * name theirs. */
static char *read_line(char *buf, int size, void *stream)
{
	struct parse *p = stream;
	char *s = fgets(buf, size, p->f), *t, *end;

	if (!s)
		return NULL;
	p->line++;
	/* Sections start here, so that a rule with no keys exists too (inih
	 * calls the handler for keys only). */
	for (t = s; *t == ' ' || *t == '\t'; t++)
		;
	if (*t == '[' && (end = strchr(t, ']')))
		start_section(p, t + 1, (size_t)(end - t - 1));
	return s;
}

/* "64", "4K", "1M", "2G": bytes. */
static int parse_size(const char *s, const char *end, size_t *out)
{
	unsigned long long v = 0;
	int shift = 0;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (~0ull - 9) / 10)
			return -1;
		v = v * 10 + (unsigned)(*s - '0');
	}
	if (s < end) {
		switch (*s++) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -1;
		}
	}
	if (s != end || v > (~0ull >> shift))
		return -1;
	*out = (size_t)(v << shift);
	return 0;
}

/* "A..B", "A..", "..B" (both ends included) or "N" (exactly N). */
static int parse_range(const char *s, size_t *min, size_t *max)
{
	const char *dots = strstr(s, ".."), *end = s + strlen(s);

	if (!dots) {
		if (parse_size(s, end, min) < 0)
			return -1;
		*max = *min;
		return 0;
	}
	*min = 0;
	*max = (size_t)-1;
	if (dots > s && parse_size(s, dots, min) < 0)
		return -1;
	if (dots + 2 < end && parse_size(dots + 2, end, max) < 0)
		return -1;
	return *min <= *max ? 0 : -1;
}

static int parse_actions(struct parse *p, const char *v, int *out)
{
	char buf[128], *tok, *save;

	if (strlen(v) >= sizeof(buf))
		return fail(p, "action list too long: %s", v);
	strcpy(buf, v);
	*out = 0;
	for (tok = strtok_r(buf, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		if (!strcmp(tok, "count"))
			*out |= RTL_ACT_COUNT;
		else if (!strcmp(tok, "grant-read"))
			*out |= RTL_ACT_GRANT_READ;
		else if (!strcmp(tok, "grant-rw"))
			*out |= RTL_ACT_GRANT_RW;
		else if (!strcmp(tok, "log") || !strcmp(tok, "backtrace") ||
		         !strcmp(tok, "dirty") || !strcmp(tok, "abort"))
			return fail(p, "action '%s' needs the policy engine "
			               "(not in this preload)", tok);
		else
			return fail(p, "unknown action '%s'", tok);
	}
	return *out ? 1 : fail(p, "empty action list%s", "");
}

static int rtl_key(struct parse *p, const char *k, const char *v)
{
	struct rtl_policy *pol = &rtl_policy;

	if (!strcmp(k, "report")) {
		if (strlen(v) >= sizeof(pol->report))
			return fail(p, "report path too long: %s", v);
		strcpy(pol->report, v);
	} else if (!strcmp(k, "mechanism")) {
		if (strcmp(v, "swizzle"))
			return fail(p, "mechanism '%s' needs the policy engine "
			               "(this preload has swizzle only)", v);
	} else if (!strcmp(k, "events")) {
		if (strcmp(v, "off"))
			return fail(p, "events = %s needs the policy engine", v);
	} else if (!strcmp(k, "mprotect")) {
		if (strcmp(v, "pass"))
			return fail(p, "mprotect = %s needs the policy engine", v);
	} else if (!strcmp(k, "max_regions")) {
		char *end;
		errno = 0;
		pol->max_regions = strtoull(v, &end, 10);
		if (errno || end == v || *end || *v == '-')
			return fail(p, "max_regions: not a count: %s", v);
	} else {
		return fail(p, "unknown key '%s' in [rtl]", k);
	}
	return 1;
}

static int rule_key(struct parse *p, const char *k, const char *v)
{
	struct rtl_rule *r = p->rule;

	if (!strcmp(k, "size")) {
		if (parse_range(v, &r->min, &r->max) < 0)
			return fail(p, "size: not a size or range: %s", v);
	} else if (!strcmp(k, "protect")) {
		if (!strcmp(v, "none"))
			r->choice.prot = PROT_NONE;
		else if (!strcmp(v, "read"))
			r->choice.prot = PROT_READ;
		else if (!strcmp(v, "rw"))
			r->choice.prot = PROT_READ | PROT_WRITE;
		else
			return fail(p, "protect: none, read or rw, not %s", v);
	} else if (!strcmp(k, "sample")) {
		char *end;
		errno = 0;
		r->sample = strtoull(v, &end, 10);
		if (errno || end == v || *end || *v == '-' || !r->sample)
			return fail(p, "sample: not a count >= 1: %s", v);
	} else if (!strcmp(k, "mechanism")) {
		if (strcmp(v, "swizzle"))
			return fail(p, "mechanism '%s' needs the policy engine "
			               "(this preload has swizzle only)", v);
	} else if (!strcmp(k, "on_read")) {
		return parse_actions(p, v, &r->on_read);
	} else if (!strcmp(k, "on_write")) {
		return parse_actions(p, v, &r->on_write);
	} else if (!strcmp(k, "site") || !strcmp(k, "epoch")) {
		return fail(p, "'%s' needs the policy engine (not in this "
		               "preload)", k);
	} else {
		return fail(p, "unknown key '%s' in a rule", k);
	}
	return 1;
}

/* A new [rule NAME] section: its record, with the defaults. */
static struct rtl_rule *new_rule(struct parse *p, const char *name)
{
	struct rtl_policy *pol = &rtl_policy;
	struct rtl_rule *r;

	if (!*name || strlen(name) >= sizeof(r->name))
		return fail(p, "bad rule name '%s'", name), NULL;
	for (int i = 0; i < pol->nrules; i++)
		if (!strcmp(pol->rules[i].name, name))
			return fail(p, "duplicate rule '%s'", name), NULL;
	if (pol->nrules == RTL_MAX_RULES)
		return fail(p, "more than 64 rules at '%s'", name), NULL;
	r = &pol->rules[pol->nrules++];
	strcpy(r->name, name);
	r->min = 0;
	r->max = (size_t)-1;
	r->sample = 1;
	r->on_read = r->on_write = RTL_ACT_COUNT | RTL_ACT_GRANT_RW;
	r->choice.prot = PROT_READ | PROT_WRITE;
	return r;
}

/* A section starts: [rtl] or [rule NAME]. Keys of a bad section are
 * refused with it (section[0] is then empty). */
static void start_section(struct parse *p, const char *name, size_t len)
{
	char sec[sizeof(p->section)];

	while (len && (name[len - 1] == ' ' || name[len - 1] == '\t'))
		len--;
	while (len && (*name == ' ' || *name == '\t'))
		name++, len--;
	if (len >= sizeof(sec)) {
		p->section[0] = '\0';
		fail(p, "section name too long%s", "");
		return;
	}
	memcpy(sec, name, len);
	sec[len] = '\0';
	strcpy(p->section, sec);
	p->rule = NULL;
	if (!strncmp(sec, "rule", 4) && (sec[4] == ' ' || sec[4] == '\t')) {
		const char *rn = sec + 5;
		while (*rn == ' ' || *rn == '\t')
			rn++;
		if (!(p->rule = new_rule(p, rn)))
			p->section[0] = '\0';
	} else if (strcmp(sec, "rtl")) {
		p->section[0] = '\0';
		fail(p, "unknown section [%s]", sec);
	}
}

static int on_key(void *user, const char *section, const char *k,
                  const char *v)
{
	struct parse *p = user;

	(void)section; /* read_line saw it first, with its line number */
	if (!p->section[0])
		return p->error_line ? 0 : fail(p, "key '%s' outside a section", k);
	return p->rule ? rule_key(p, k, v) : rtl_key(p, k, v);
}

/* Every region a rule makes gets its trap handler, unless nothing can trap
 * (rw) and no other part of the program changes that. */
static void finish_rules(void)
{
	for (int i = 0; i < rtl_policy.nrules; i++) {
		struct rtl_rule *r = &rtl_policy.rules[i];
		r->choice.data = r;
		if (r->choice.prot != (PROT_READ | PROT_WRITE))
			r->choice.handler = rtl_rule_trap;
	}
}

int rtl_select_init(void)
{
	const char *file = getenv("RTL_CONFIG");
	struct parse p;
	int line;

	if (!file || !*file)
		return 0;
	rtl_policy.file = file;
	memset(&p, 0, sizeof(p));
	p.f = fopen(file, "re");
	if (!p.f) {
		fprintf(stderr, "rtl: %s: %s; nothing selected\n", file,
		        strerror(errno));
		return -1;
	}
	line = ini_parse_stream(read_line, &p, on_key, &p);
	fclose(p.f);
	if (line > 0 && (!p.error_line || line < p.error_line))
		fprintf(stderr, "%s:%d: syntax error\n", file, line);
	else if (line)
		fprintf(stderr, "%s:%d: %s\n", file, p.error_line, p.error);
	if (line) {
		fputs("rtl: bad policy; nothing selected\n", stderr);
		rtl_policy.nrules = 0;
		return -1;
	}
	finish_rules();
	return rtl_policy.nrules > 0 && rtl_policy.max_regions > 0;
}

uint64_t rtl_select_max_regions(void)
{
	return rtl_policy.max_regions;
}

const struct rtl_choice *rtl_select(size_t size, const void *caller)
{
	(void)caller; /* for site rules, in the policy engine */
	for (int i = 0; i < rtl_policy.nrules; i++) {
		struct rtl_rule *r = &rtl_policy.rules[i];
		if (size < r->min || size > r->max)
			continue;
		if (r->sample > 1 &&
		    atomic_fetch_add_explicit(&r->matched, 1,
		                              memory_order_relaxed) % r->sample)
			return NULL; /* first match wins, sampled out or not */
		return &r->choice;
	}
	return NULL;
}
