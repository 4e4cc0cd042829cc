/* rtlctl check, show and init: policy files in, messages or policies out. */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <sys/mman.h>

#include "core/prot/pagetable.h"
#include "core/tag/mte.h"

#include "policy/policy.h"
#include "tools/rtlctl/rtlctl.h"

/* The policy commands' options: --help alone. Returns -1 to go on, the
 * operands from argv[optind]; else the exit status. */
static int parse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		if (c != 'h')
			return option_error(argv[0], c, argv);
		help_of(argv[0], stdout);
		return 0;
	}
	return -1;
}

/* check and show: one FILE. */
static int file_arg(int argc, char **argv, const char **file, int *rc)
{
	*rc = parse(argc, argv);
	if (*rc >= 0)
		return -1;
	if (optind == argc) {
		*rc = usage_error(argv[0], "no policy file given");
		return -1;
	}
	if (argc - optind > 1) {
		*rc = usage_error(argv[0], "one policy file at a time ('%s' is one too many)",
		                  argv[optind + 1]);
		return -1;
	}
	*file = argv[optind];
	return 0;
}

static int load(const char *cmd, const char *file, struct rtl_policy *p)
{
	struct rtl_policy_errors errs;

	if (rtl_policy_load(file, p, &errs) == 0)
		return 0;
	fputs(errs.text, stderr);
	fprintf(stderr, "rtlctl %s: %s: %d error%s\n", cmd, file, errs.count,
	        errs.count == 1 ? "" : "s");
	return -1;
}

/* What is valid and worth saying (policy/warn.c: a swizzle rule that
 * traps, a rule that selects nothing): said, exit status 0. */
static void warn(const char *file, const struct rtl_policy *p)
{
	static struct rtl_policy_warning w[RTL_POLICY_WARNINGS_MAX];
	int n = rtl_policy_warnings(p, w, RTL_POLICY_WARNINGS_MAX);

	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s:%d: warning: %s\n", file, w[i].line, w[i].text);
}

/* The one policy file of check and show, loaded into p: 0, or -1 with the
 * exit status in *rc (--help, a usage error, an invalid policy). */
static int policy_arg(int argc, char **argv, const char **file,
                      struct rtl_policy *p, int *rc)
{
	if (file_arg(argc, argv, file, rc) < 0)
		return -1;
	*rc = EXIT_INVALID;
	return load(argv[0], *file, p);
}

/* For a policy whose rules change protection outside rtl's views (auto,
 * alias, page; swizzle moves pointers): which way the preload would change
 * it here, asked of the kernel as the preload asks (core/prot/pagetable.c,
 * in rtlctl's process: a program's own seccomp filter may say otherwise). */
static void say_protection(const struct rtl_policy *p)
{
	char why[240];
	int any = 0, tags = -1;

	for (int i = 0; i < p->nrules; i++) {
		const struct rtl_rule *r = &p->rules[i];

		/* A tag rule on tags changes no page's protection. */
		if (r->mechanism == RTL_MECH_TAG && rtl_policy_tag_fits(r) &&
		    (tags < 0 ? (tags = rtl_mte_probe(NULL)) : tags))
			continue;
		any |= r->mechanism != RTL_MECH_SWIZZLE &&
		       (r->protect != (PROT_READ | PROT_WRITE) ||
		        (r->on_write & RTL_ACT_DIRTY) || r->epoch_ns);
	}
	if (!any)
		return;
	rtl_pt_choose(why, sizeof(why), 0);
	printf("protection changes here by %s\n", why);
}

/* For a policy with tag rules: whether the preload places them on memory
 * tags here, asked as the preload asks (core/tag/mte.c). */
static void say_tags(const struct rtl_policy *p)
{
	const char *why;
	int any = 0, have;

	for (int i = 0; i < p->nrules; i++)
		any |= p->rules[i].mechanism == RTL_MECH_TAG;
	if (!any)
		return;
	have = rtl_mte_probe(&why);
	printf("tag rules here: %s: %s\n", have ? "on memory tags" : "placed as auto", why);
}

int cmd_check(int argc, char **argv)
{
	static struct rtl_policy p;
	const char *file;
	int rc;

	if (policy_arg(argc, argv, &file, &p, &rc) < 0)
		return rc;
	printf("%s: ok, %d rule%s\n", file, p.nrules, p.nrules == 1 ? "" : "s");
	say_protection(&p);
	say_tags(&p);
	warn(file, &p);
	return 0;
}

int cmd_show(int argc, char **argv)
{
	static struct rtl_policy p;
	const char *file;
	int rc;

	if (policy_arg(argc, argv, &file, &p, &rc) < 0)
		return rc;
	rtl_policy_write(&p, stdout);
	return 0;
}

static const char template[] =
        "# rtl policy (see docs/policy.md). Check it with: rtlctl check FILE\n"
        "[rtl]\n"
        "report = rtl-report.%e.%p.json   ; %e program, %p pid; \"-\" stderr; \"\" none\n"
        "mechanism = auto                 ; default for rules: auto (exact) | alias | swizzle\n"
        "events = off                     ; off | traps: one JSON record per trap\n"
        "mprotect = pass                  ; pass | log the program's own mprotect\n"
        "max_regions = 1000000            ; stop selecting beyond this many\n"
        "\n"
        "; Rules are tried in file order; the first match wins. Allocations that\n"
        "; no rule matches stay with the system allocator.\n"
        "[rule small-objects]\n"
        "size = 48..64                    ; K/M/G suffixes; either end may be empty\n"
        "; site = *parse*                 ; glob on the allocating function, or module!function\n"
        "sample = 1                       ; route 1 in N matching allocations\n"
        "protect = read                   ; none | read | rw, at allocation\n"
        "on_read = count, grant-read      ; count, log, backtrace, grant-read, grant-rw,\n"
        "on_write = count, grant-rw       ;   dirty, abort\n"
        "; epoch = 10ms                   ; re-apply protect every epoch (auto or alias)\n";

int cmd_init(int argc, char **argv)
{
	FILE *out = stdout;
	const char *file;
	int rc = parse(argc, argv);

	if (rc >= 0)
		return rc;
	if (argc - optind > 1)
		return usage_error("init", "one file at a time ('%s' is one too many)",
		                   argv[optind + 1]);
	file = optind < argc ? argv[optind] : NULL;
	if (file) {
		/* Never overwrite: the user's policy is worth more than ours. */
		out = fopen(file, "wx");
		if (!out) {
			fprintf(stderr, "rtlctl init: %s: %s\n", file, strerror(errno));
			return EXIT_INVALID;
		}
	}
	fputs(template, out);
	if (out != stdout) {
		fclose(out);
		fprintf(stderr, "rtlctl init: wrote %s; next: rtlctl check %s\n", file,
		        file);
	}
	return 0;
}
