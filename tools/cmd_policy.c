/* rtlctl check, show and init: policy files in, messages or policies out. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "policy.h"
#include "rtlctl.h"

/* The one-argument commands: FILE and --help, nothing else. */
static int file_arg(int argc, char **argv, const char **file, int *rc)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage_of(argv[0], stdout);
		*rc = 0;
		return -1;
	}
	if (argc != 2 || (argv[1][0] == '-' && argv[1][1])) {
		if (argc == 2)
			fprintf(stderr, "rtlctl %s: unknown option '%s'\n", argv[0], argv[1]);
		usage_of(argv[0], stderr);
		*rc = EXIT_USAGE;
		return -1;
	}
	*file = argv[1];
	return 0;
}

static int load(const char *file, struct rtl_policy *p)
{
	struct rtl_policy_errors errs;

	if (rtl_policy_load(file, p, &errs) == 0)
		return 0;
	fputs(errs.text, stderr);
	fprintf(stderr, "rtlctl: %s: %d error%s\n", file, errs.count,
	        errs.count == 1 ? "" : "s");
	return -1;
}

/* A swizzle rule that traps moves the program's pointers between views:
 * code that compares or subtracts them can compute something else. Valid,
 * and said (exit status 0). */
static void warn_swizzle(const char *file, const struct rtl_policy *p)
{
	for (int i = 0; i < p->nrules; i++) {
		const struct rtl_rule *r = &p->rules[i];
		if (r->mechanism != RTL_MECH_SWIZZLE ||
		    r->protect == (PROT_READ | PROT_WRITE))
			continue;
		fprintf(stderr,
		        "%s:%d: warning: rule %s: swizzle with protect = %s moves the "
		        "program's pointers between views; unmodified code that "
		        "compares or subtracts them can compute something else "
		        "(docs/preload.md, \"swizzle, alias and auto\"): "
		        "mechanism = auto is exact\n",
		        file, r->line, r->name, rtl_policy_protect_str(r->protect));
	}
}

int cmd_check(int argc, char **argv)
{
	static struct rtl_policy p;
	const char *file;
	int rc;

	if (file_arg(argc, argv, &file, &rc) < 0)
		return rc;
	if (load(file, &p) < 0)
		return EXIT_INVALID;
	printf("%s: ok, %d rule%s\n", file, p.nrules, p.nrules == 1 ? "" : "s");
	warn_swizzle(file, &p);
	return 0;
}

int cmd_show(int argc, char **argv)
{
	static struct rtl_policy p;
	const char *file;
	int rc;

	if (file_arg(argc, argv, &file, &rc) < 0)
		return rc;
	if (load(file, &p) < 0)
		return EXIT_INVALID;
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

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage_of("init", stdout);
		return 0;
	}
	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		if (argc == 2)
			fprintf(stderr, "rtlctl init: unknown option '%s'\n", argv[1]);
		usage_of("init", stderr);
		return EXIT_USAGE;
	}
	if (argc == 2) {
		/* Never overwrite: the user's policy is worth more than ours. */
		out = fopen(argv[1], "wx");
		if (!out) {
			fprintf(stderr, "rtlctl init: %s: %s\n", argv[1], strerror(errno));
			return EXIT_INVALID;
		}
	}
	fputs(template, out);
	if (out != stdout) {
		fclose(out);
		fprintf(stderr, "rtlctl: wrote %s; next: rtlctl check %s\n", argv[1],
		        argv[1]);
	}
	return 0;
}
