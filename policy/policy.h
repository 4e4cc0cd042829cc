/* rtl policy files: which allocations become regions and what a trap on
 * them does. The format is specified in docs/policy.md. Parsing and matching
 * only: acting on a policy is the preload's job. */
#ifndef RTL_POLICY_H
#define RTL_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RTL_POLICY_MAX_RULES 64
#define RTL_POLICY_NAME_MAX 64
#define RTL_POLICY_GLOB_MAX 128
#define RTL_POLICY_SKIP_MAX 16 /* site_skip globs */
#define RTL_POLICY_PATH_MAX 512

enum rtl_mechanism {
	RTL_MECH_SWIZZLE,
	RTL_MECH_ALIAS,
	RTL_MECH_AUTO, /* the default: exact (docs/policy.md, "Mechanisms") */
	RTL_MECH_PAGE, /* page protection on the same blocks: the baseline
	                  that rtlctl compare sets regions beside */
	RTL_MECH_TAG,  /* memory tags per 16-byte granule (aarch64 MTE) */
};
#define RTL_MECH_COUNT 5

/* How the kernel's accesses to selected memory are resolved
 * (docs/syscalls.md): every call through a seccomp filter, or the libc
 * wrappers alone. */
enum rtl_syscalls {
	RTL_SYSCALLS_SECCOMP,
	RTL_SYSCALLS_WRAPPERS,
};

/* Trap actions, as a bit set. */
enum rtl_action {
	RTL_ACT_COUNT = 1 << 0,
	RTL_ACT_LOG = 1 << 1,
	RTL_ACT_BACKTRACE = 1 << 2,
	RTL_ACT_GRANT_READ = 1 << 3,
	RTL_ACT_GRANT_RW = 1 << 4,
	RTL_ACT_DIRTY = 1 << 5,
	RTL_ACT_ABORT = 1 << 6,
};

struct rtl_rule {
	char name[RTL_POLICY_NAME_MAX];
	int line;                       /* of its [rule NAME] header */
	size_t size_min, size_max;      /* inclusive */
	char site[RTL_POLICY_GLOB_MAX]; /* glob; "" matches every site */
	unsigned sample;                /* route 1 in sample matches */
	int mechanism;                  /* enum rtl_mechanism */
	int protect;                    /* PROT_NONE, PROT_READ, PROT_READ|PROT_WRITE */
	unsigned on_read, on_write;     /* enum rtl_action bits */
	uint64_t epoch_ns;              /* 0: none */
	unsigned set;                   /* which keys the file gave (RULE_KEY_*) */
};

struct rtl_policy {
	char source[RTL_POLICY_PATH_MAX]; /* file name, or "(built-in)" */
	char report[RTL_POLICY_PATH_MAX]; /* %e program, %p pid; "-" stderr; "" none */
	int mechanism;                    /* default for rules */
	int events;                       /* 1: one JSON record per trap */
	int mprotect_log;                 /* 1: log the program's mprotect calls */
	int syscalls;                     /* enum rtl_syscalls */
	uint64_t max_regions;
	/* Allocator wrappers besides the built-in ones: an allocation whose
	 * caller's name matches one is charged to the caller's caller. */
	char site_skip[RTL_POLICY_SKIP_MAX][RTL_POLICY_GLOB_MAX];
	int nsite_skip;
	int nrules;
	struct rtl_rule rules[RTL_POLICY_MAX_RULES];
};

/* Error reporting: every problem is one line "FILE:LINE: message". */
struct rtl_policy_errors {
	char text[4096];
	size_t len;
	int count;
};

void rtl_policy_defaults(struct rtl_policy *p);

/* Parse a file, or text with a name for messages. 0 if the policy is
 * valid; otherwise -1 and every problem found is in errs. p is complete
 * only on success. */
int rtl_policy_load(const char *path, struct rtl_policy *p,
                    struct rtl_policy_errors *errs);
int rtl_policy_parse(const char *text, const char *name, struct rtl_policy *p,
                     struct rtl_policy_errors *errs);

/* RTL_CONFIG's value for the built-in policy (what `rtlctl run` passes
 * without -c). Without RTL_CONFIG the preload selects nothing. */
#define RTL_CONFIG_BUILTIN "@builtin"

/* The policy used when none is given: the demo's. */
extern const char rtl_policy_builtin[];
int rtl_policy_load_builtin(struct rtl_policy *p);

/* The first rule that selects an allocation of size bytes made from site
 * (a function name or "module!function"; NULL if unknown), or NULL.
 * Sampling is the caller's: rules only say 1 in N. */
const struct rtl_rule *rtl_policy_match(const struct rtl_policy *p, size_t size,
                                        const char *site);

/* Whether glob (a rule's site, a site_skip entry) accepts site,
 * "module!function": a glob without '!' is matched against the function
 * alone. */
int rtl_policy_glob_matches(const char *glob, const char *site);

/* Whether an allocating site is an allocator's wrapper (wrappers.c): its
 * name ("module!symbol") or, for a C++ symbol, demangled ("module!name";
 * NULL if not C++) matches a built-in glob or one of p's site_skip (p may
 * be NULL: the built-in list alone). */
#define RTL_POLICY_WRAPPER_NAME_MAX 1024
int rtl_policy_is_wrapper(const struct rtl_policy *p, const char *name,
                          const char *demangled);

/* Whether rule r's site glob accepts site (NULL: unknown; a rule without a
 * glob accepts every site). */
int rtl_policy_site_matches(const struct rtl_rule *r, const char *site);

/* Whether any rule looks at the allocating site (then the preload must find
 * it, which costs a stack walk per allocation in the size range). */
int rtl_policy_needs_site(const struct rtl_policy *p);

/* What is valid but worth saying of a policy (warn.c): a swizzle rule that
 * can trap (it moves the program's pointers), a rule that selects nothing
 * (an earlier rule takes all it would). rtlctl check prints each as
 * "FILE:LINE: warning: TEXT"; so does the preload, once per run, when
 * rtlctl did not start it; the report has each as a note. */
struct rtl_policy_warning {
	int rule; /* its index */
	int line; /* its [rule NAME] header's */
	char text[448];
};
#define RTL_POLICY_WARNINGS_MAX (2 * RTL_POLICY_MAX_RULES)

/* The warnings of p, in rule order, at most max into w; how many. */
int rtl_policy_warnings(const struct rtl_policy *p, struct rtl_policy_warning *w,
                        int max);

/* The effective policy, every default filled in, in the file format. */
void rtl_policy_write(const struct rtl_policy *p, FILE *out);

/* Whether mechanism = tag can hold r's blocks: tags give none and
 * read-write, and no twin (docs/mechanisms.md, "tag"). */
int rtl_policy_tag_fits(const struct rtl_rule *r);

/* Names for actions and mechanisms, for reports. */
void rtl_policy_actions_str(unsigned actions, char *buf, size_t len);
const char *rtl_policy_mechanism_str(int mechanism);
const char *rtl_policy_protect_str(int prot);

/* Size and duration values: "4K", "1M", "10ms". 0 on success. */
int rtl_policy_parse_size(const char *s, size_t *out);
int rtl_policy_parse_duration(const char *s, uint64_t *ns);

#endif
