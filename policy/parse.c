/* Policy file parsing with libinih. Every problem is reported as
 * "FILE:LINE: message" and parsing goes on, so one run lists them all. The
 * reader below feeds inih line by line and tracks the line number and the
 * section headers, which inih's handler is not told about. */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h> /* PROT_* */

#include "policy/policy.h"
#include "policy/values.h"

/* Keys of a rule, for duplicate checks and error lines. */
enum {
	K_SIZE,
	K_SITE,
	K_SAMPLE,
	K_MECHANISM,
	K_PROTECT,
	K_ON_READ,
	K_ON_WRITE,
	K_EPOCH,
	NKEYS
};
static const char *const rule_keys[NKEYS] = {
	"size",
	"site",
	"sample",
	"mechanism",
	"protect",
	"on_read",
	"on_write",
	"epoch",
};

enum {
	R_REPORT,
	R_MECHANISM,
	R_EVENTS,
	R_MPROTECT,
	R_MAX_REGIONS,
	R_SYSCALLS,
	R_SITE_SKIP,
	NRTL,
};
static const char *const rtl_keys[NRTL] = {
	"report",
	"mechanism",
	"events",
	"mprotect",
	"max_regions",
	"syscalls",
	"site_skip",
};

enum section {
	S_NONE,
	S_RTL,
	S_RULE,
	S_BAD,
};

struct parser {
	struct rtl_policy *p;
	struct rtl_policy_errors *errs;
	const char *name;
	const char *text;
	size_t pos;
	int line;     /* line last handed to inih */
	int mid_line; /* the last chunk did not end a line */
	enum section section;
	int rtl_seen;
	int rtl_line[NRTL];
	int key_line[RTL_POLICY_MAX_RULES][NKEYS];
};

static void error_at(struct parser *ps, int line, const char *fmt, ...)
{
	struct rtl_policy_errors *e = ps->errs;
	va_list ap;
	int n;

	e->count++;
	if (e->len >= sizeof(e->text) - 1)
		return;
	n = snprintf(e->text + e->len, sizeof(e->text) - e->len, "%s:%d: ",
	             ps->name, line);
	if (n > 0)
		e->len += (size_t)n;
	if (e->len >= sizeof(e->text) - 1) {
		e->len = sizeof(e->text) - 1;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(e->text + e->len, sizeof(e->text) - e->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		e->len += (size_t)n;
	if (e->len >= sizeof(e->text) - 1)
		e->len = sizeof(e->text) - 2;
	e->text[e->len++] = '\n';
	e->text[e->len] = '\0';
}

/* ---- sections (seen by the reader) ---- */

static struct rtl_rule *current_rule(struct parser *ps)
{
	return &ps->p->rules[ps->p->nrules - 1];
}

static void start_rule(struct parser *ps, const char *name)
{
	struct rtl_policy *p = ps->p;
	struct rtl_rule *r;
	size_t n = strlen(name);

	if (n == 0 || n >= RTL_POLICY_NAME_MAX) {
		error_at(ps, ps->line, "rule needs a name of 1 to %d characters: [rule NAME]",
		         RTL_POLICY_NAME_MAX - 1);
		ps->section = S_BAD;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i])) {
			error_at(ps, ps->line, "rule name '%s': use letters, digits, '-', '_' or '.'",
			         name);
			ps->section = S_BAD;
			return;
		}
	}
	for (int i = 0; i < p->nrules; i++) {
		if (strcmp(p->rules[i].name, name) == 0) {
			error_at(ps, ps->line, "rule '%s' is already defined at line %d",
			         name, p->rules[i].line);
			ps->section = S_BAD;
			return;
		}
	}
	if (p->nrules == RTL_POLICY_MAX_RULES) {
		error_at(ps, ps->line, "too many rules (at most %d)", RTL_POLICY_MAX_RULES);
		ps->section = S_BAD;
		return;
	}
	r = &p->rules[p->nrules++];
	memset(r, 0, sizeof(*r));
	memcpy(r->name, name, n + 1);
	r->line = ps->line;
	r->size_max = SIZE_MAX;
	r->sample = 1;
	r->mechanism = -1; /* the [rtl] default, resolved at the end */
	r->protect = PROT_READ | PROT_WRITE;
	r->on_read = RTL_ACT_COUNT | RTL_ACT_GRANT_READ;
	r->on_write = RTL_ACT_COUNT | RTL_ACT_GRANT_RW;
	memset(ps->key_line[p->nrules - 1], 0, sizeof(ps->key_line[0]));
	ps->section = S_RULE;
}

static void start_section(struct parser *ps, char *name)
{
	char *end = name + strlen(name);

	while (end > name && isspace((unsigned char)end[-1]))
		*--end = '\0';
	while (isspace((unsigned char)*name))
		name++;
	if (strcmp(name, "rtl") == 0) {
		if (ps->rtl_seen)
			error_at(ps, ps->line, "section [rtl] appears twice (first at line %d)",
			         ps->rtl_seen);
		else
			ps->rtl_seen = ps->line;
		ps->section = ps->rtl_seen == ps->line ? S_RTL : S_BAD;
	} else if (strncmp(name, "rule", 4) == 0 &&
	           (name[4] == '\0' || isspace((unsigned char)name[4]))) {
		name += 4;
		while (isspace((unsigned char)*name))
			name++;
		start_rule(ps, name);
	} else {
		error_at(ps, ps->line, "unknown section [%s] (expected [rtl] or [rule NAME])",
		         name);
		ps->section = S_BAD;
	}
}

/* Look at a line before inih does: count it, and catch section headers. */
static void inspect_line(struct parser *ps, const char *line)
{
	char buf[256];
	const char *s = line, *close;
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s != '[')
		return;
	close = strchr(s, ']');
	if (!close)
		return; /* inih reports the syntax error */
	n = (size_t)(close - s - 1);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s + 1, n);
	buf[n] = '\0';
	start_section(ps, buf);
}

static char *reader(char *str, int num, void *stream)
{
	struct parser *ps = stream;
	size_t i = 0;

	if (!ps->text[ps->pos])
		return NULL;
	while (i + 1 < (size_t)num && ps->text[ps->pos]) {
		char c = ps->text[ps->pos++];
		str[i++] = c;
		if (c == '\n')
			break;
	}
	str[i] = '\0';
	if (!ps->mid_line) {
		ps->line++;
		inspect_line(ps, str);
	}
	ps->mid_line = str[i - 1] != '\n'; /* a line longer than inih reads */
	return str;
}

/* ---- keys (seen by inih's handler) ---- */

static int key_index(const char *const *keys, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(keys[i], name) == 0)
			return i;
	return -1;
}

static void strip_quotes(const char *v, char *out, size_t len)
{
	size_t n = strlen(v);
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		v++;
		n -= 2;
	}
	if (n >= len)
		n = len - 1;
	memcpy(out, v, n);
	out[n] = '\0';
}

/* site_skip = GLOB, GLOB...: globs as a rule's site takes them
 * ("module!function", or a function alone), spaces around each dropped. */
static void site_skip(struct parser *ps, const char *v)
{
	struct rtl_policy *p = ps->p;

	while (*v) {
		const char *end = strchr(v, ',');
		size_t n = end ? (size_t)(end - v) : strlen(v);

		while (n && isspace((unsigned char)*v))
			v++, n--;
		while (n && isspace((unsigned char)v[n - 1]))
			n--;
		if (!n || n >= RTL_POLICY_GLOB_MAX) {
			error_at(ps, ps->line,
			         "site_skip: give globs of 1 to %d characters, separated by commas",
			         RTL_POLICY_GLOB_MAX - 1);
			return;
		}
		if (p->nsite_skip == RTL_POLICY_SKIP_MAX) {
			error_at(ps, ps->line, "site_skip: at most %d globs", RTL_POLICY_SKIP_MAX);
			return;
		}
		memcpy(p->site_skip[p->nsite_skip], v, n);
		p->site_skip[p->nsite_skip++][n] = '\0';
		v += n;
		while (*v && *v != ',')
			v++;
		if (*v == ',')
			v++;
	}
}

static void rtl_key(struct parser *ps, const char *name, const char *v)
{
	struct rtl_policy *p = ps->p;
	int k = key_index(rtl_keys, NRTL, name), w;

	if (k < 0) {
		error_at(ps, ps->line, "unknown key '%s' in [rtl]", name);
		return;
	}
	if (ps->rtl_line[k]) {
		error_at(ps, ps->line, "'%s' is already set at line %d", name,
		         ps->rtl_line[k]);
		return;
	}
	ps->rtl_line[k] = ps->line;
	switch (k) {
	case R_REPORT:
		if (strlen(v) >= sizeof(p->report))
			error_at(ps, ps->line, "report: path too long");
		else
			strip_quotes(v, p->report, sizeof(p->report));
		break;
	case R_MECHANISM:
		if ((w = rtl_policy_parse_word(v, rtl_policy_mechanisms, RTL_MECH_COUNT)) < 0)
			error_at(ps, ps->line, "mechanism: '%s' is not auto, swizzle, alias, page or tag", v);
		else
			p->mechanism = w;
		break;
	case R_EVENTS:
		if (strcmp(v, "off") && strcmp(v, "traps"))
			error_at(ps, ps->line, "events: '%s' is not off or traps", v);
		else
			p->events = strcmp(v, "traps") == 0;
		break;
	case R_MPROTECT:
		if (strcmp(v, "pass") && strcmp(v, "log"))
			error_at(ps, ps->line, "mprotect: '%s' is not pass or log", v);
		else
			p->mprotect_log = strcmp(v, "log") == 0;
		break;
	case R_SYSCALLS:
		if (strcmp(v, "seccomp") && strcmp(v, "wrappers"))
			error_at(ps, ps->line, "syscalls: '%s' is not seccomp or wrappers", v);
		else
			p->syscalls = strcmp(v, "wrappers") == 0 ? RTL_SYSCALLS_WRAPPERS
			                                         : RTL_SYSCALLS_SECCOMP;
		break;
	case R_SITE_SKIP:
		site_skip(ps, v);
		break;
	case R_MAX_REGIONS: {
		char *end;
		unsigned long long n;
		errno = 0;
		n = strtoull(v, &end, 10);
		if (!isdigit((unsigned char)*v) || *end || errno || n == 0)
			error_at(ps, ps->line, "max_regions: '%s' is not a positive number", v);
		else
			p->max_regions = n;
		break;
	}
	}
}

static void rule_key(struct parser *ps, const char *name, const char *v)
{
	struct rtl_rule *r = current_rule(ps);
	int *lines = ps->key_line[ps->p->nrules - 1];
	int k = key_index(rule_keys, NKEYS, name), w;
	char bad[64];

	if (k < 0) {
		error_at(ps, ps->line, "unknown key '%s' in [rule %s]", name, r->name);
		return;
	}
	if (lines[k]) {
		error_at(ps, ps->line, "'%s' is already set at line %d", name, lines[k]);
		return;
	}
	lines[k] = ps->line;
	r->set |= 1u << k;
	switch (k) {
	case K_SIZE:
		if (rtl_policy_parse_range(v, &r->size_min, &r->size_max) < 0)
			error_at(ps, ps->line, "size: '%s' is not a size or range (like 4K..1M, 64.., ..2K)", v);
		else if (r->size_min > r->size_max)
			error_at(ps, ps->line, "size: range '%s' is empty (lower end above upper)", v);
		break;
	case K_SITE:
		if (!*v || strlen(v) >= sizeof(r->site))
			error_at(ps, ps->line, "site: give a glob of at most %d characters",
			         (int)sizeof(r->site) - 1);
		else
			strip_quotes(v, r->site, sizeof(r->site));
		break;
	case K_SAMPLE: {
		char *end;
		unsigned long n;
		errno = 0;
		n = strtoul(v, &end, 10);
		if (!isdigit((unsigned char)*v) || *end || errno || n == 0 || n > 1000000000)
			error_at(ps, ps->line, "sample: '%s' is not a number from 1 to 10^9", v);
		else
			r->sample = (unsigned)n;
		break;
	}
	case K_MECHANISM:
		if ((w = rtl_policy_parse_word(v, rtl_policy_mechanisms, RTL_MECH_COUNT)) < 0)
			error_at(ps, ps->line, "mechanism: '%s' is not auto, swizzle, alias, page or tag", v);
		else
			r->mechanism = w;
		break;
	case K_PROTECT:
		if ((w = rtl_policy_parse_word(v, rtl_policy_protects, 3)) < 0)
			error_at(ps, ps->line, "protect: '%s' is not none, read or rw", v);
		else
			r->protect = rtl_policy_protect_values[w];
		break;
	case K_ON_READ:
	case K_ON_WRITE:
		if (rtl_policy_parse_actions(v, k == K_ON_READ ? &r->on_read : &r->on_write, bad,
		                             sizeof(bad)) < 0) {
			if (bad[0])
				error_at(ps, ps->line, "%s: unknown action '%s' (count, log, backtrace, grant-read, grant-rw, dirty, abort)",
				         name, bad);
			else
				error_at(ps, ps->line, "%s: give at least one action", name);
		}
		break;
	case K_EPOCH:
		if (strcmp(v, "off") == 0)
			r->epoch_ns = 0;
		else if (rtl_policy_parse_duration(v, &r->epoch_ns) < 0 || !r->epoch_ns)
			error_at(ps, ps->line, "epoch: '%s' is not a duration (like 10ms, 500us, 1s) or off", v);
		break;
	}
}

static int on_key(void *user, const char *section, const char *name,
                  const char *value)
{
	struct parser *ps = user;
	(void)section; /* the reader tracked it, with its line */

	switch (ps->section) {
	case S_NONE:
		error_at(ps, ps->line, "'%s' is outside any section", name);
		break;
	case S_RTL:
		rtl_key(ps, name, value);
		break;
	case S_RULE:
		rule_key(ps, name, value);
		break;
	case S_BAD:
		break; /* the section itself was reported */
	}
	return 1;
}

/* ---- whole-policy checks ---- */

static void check_rule(struct parser *ps, int i)
{
	struct rtl_rule *r = &ps->p->rules[i];
	int *lines = ps->key_line[i];
	int traps_read = r->protect == PROT_NONE;
	int traps_write = r->protect != (PROT_READ | PROT_WRITE) || r->epoch_ns;
	/* dirty lets the write it tracked go on (actions.c grants rw). */
	unsigned grants_write = RTL_ACT_GRANT_RW | RTL_ACT_ABORT | RTL_ACT_DIRTY;

	if (r->mechanism < 0)
		r->mechanism = ps->p->mechanism;
	if (r->epoch_ns && r->mechanism == RTL_MECH_SWIZZLE)
		error_at(ps, lines[K_EPOCH], "epoch needs mechanism = auto, alias, page or tag: swizzle cannot re-protect pointers it does not know (rule %s)",
		         r->name);
	if (r->on_write & RTL_ACT_GRANT_READ)
		error_at(ps, lines[K_ON_WRITE] ? lines[K_ON_WRITE] : r->line,
		         "on_write: grant-read cannot grant a write (use grant-rw)");
	if (r->on_read & RTL_ACT_DIRTY)
		error_at(ps, lines[K_ON_READ], "on_read: dirty tracks writes; it belongs in on_write");
	if ((r->on_read & RTL_ACT_ABORT) &&
	    (r->on_read & (RTL_ACT_GRANT_READ | RTL_ACT_GRANT_RW)))
		error_at(ps, lines[K_ON_READ], "on_read: abort and grant together");
	if ((r->on_write & RTL_ACT_ABORT) && (r->on_write & RTL_ACT_GRANT_RW))
		error_at(ps, lines[K_ON_WRITE], "on_write: abort and grant together");
	if (traps_read && !(r->on_read &
	                    (RTL_ACT_GRANT_READ | RTL_ACT_GRANT_RW | RTL_ACT_ABORT)))
		error_at(ps, lines[K_ON_READ] ? lines[K_ON_READ] : r->line,
		         "on_read: rule %s protects none but grants no read: add grant-read, grant-rw or abort",
		         r->name);
	if (traps_write && !(r->on_write & grants_write))
		error_at(ps, lines[K_ON_WRITE] ? lines[K_ON_WRITE] : r->line,
		         "on_write: rule %s traps writes but grants none: add grant-rw, dirty or abort",
		         r->name);
}

void rtl_policy_defaults(struct rtl_policy *p)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->report, "rtl-report.%e.%p.json");
	p->mechanism = RTL_MECH_AUTO;
	p->max_regions = 1000000;
}

int rtl_policy_parse(const char *text, const char *name, struct rtl_policy *p,
                     struct rtl_policy_errors *errs)
{
	struct parser *ps = calloc(1, sizeof(*ps));
	int rc;

	if (!ps)
		return -1;
	errs->len = 0;
	errs->count = 0;
	errs->text[0] = '\0';
	rtl_policy_defaults(p);
	snprintf(p->source, sizeof(p->source), "%s", name);
	ps->p = p;
	ps->errs = errs;
	ps->name = name;
	ps->text = text;
	ini_allow_multiline = false; /* an indented line is not a continuation */
	rc = ini_parse_stream(reader, ps, on_key, ps);
	if (rc > 0)
		error_at(ps, rc, "syntax error: expected 'key = value', '[section]' or a comment");
	else if (rc < 0)
		error_at(ps, 0, "cannot parse (out of memory)");
	for (int i = 0; i < p->nrules; i++)
		check_rule(ps, i);
	free(ps);
	return errs->count ? -1 : 0;
}
