/* rtlctl's commands and what --help, `rtlctl help CMD` and a usage error
 * say about each: every option and the environment it reads. The man page
 * (docs/man/rtlctl.1) says the same at length. */
#include <stdarg.h>
#include <string.h>

#include "tools/report/report_html.h"
#include "tools/rtlctl/rtlctl.h"

/* What the preload reads, for `run` (and so for `compare`-like commands). */
#define PRELOAD_ENV                                                                      \
	"  RTL_PRELOAD        the preload library (default: found relative to rtlctl)\n" \
	"  RTL_ARENA_SIZE     size of rtl's views, e.g. 16G (default 64G, sparse;\n"     \
	"                     1G under qemu-user)\n"                                     \
	"  RTL_TAG            off: mechanism = tag rules placed as auto (aarch64 MTE)\n" \
	"  RTL_TAG_ARENA_SIZE size of the memory for tag blocks (default 256M)\n"        \
	"  RTL_MAX_MAP_COUNT  lower vm.max_map_count as the alias budget counts it\n"    \
	"  RTL_RAW            keep the run's raw records in this file (FILE.1, ...)\n"   \
	"  RTL_DIRTY          traps: dirty tracking by traps only, not written bits\n"   \
	"  RTL_PROTECT        mprotect: protection changes by mprotect, not in the\n"    \
	"                     page tables (userfaultfd)\n"                               \
	"  TMPDIR             where the run's records wait for its report (default\n"    \
	"                     /dev/shm, else /tmp; with RTL_RAW: beside its file)\n"     \
	"  DEBUGINFOD_URLS    debuginfod servers for source lines (elfutils')\n"         \
	"  RTL_WARNED         the policy file whose warnings were said (the preload\n"   \
	"                     sets it; set it to the policy to keep them unsaid)\n"      \
	"  LD_PRELOAD         kept, after rtl's preload\n"                               \
	"Set by rtlctl run for the program: RTL_CONFIG (the policy), RTL_REPORT (-o),\n" \
	"RTL_REPORT_PID (the program's pid), RTL_RUN_DIR (where each process leaves\n"   \
	"its raw record), RTL_RTLCTL (this rtlctl, for a report to stderr); without\n"   \
	"rtlctl run, each process leaves its raw record beside the report's name,\n"     \
	"and rtlctl report reads it.\n"

static const struct rtlctl_command commands[] = {
	{ "run", cmd_run, "[-c FILE] [-o REPORT] [--no-children] -- PROG ARGS...",
	  "run PROG under rtl with a policy (the built-in one without -c)",
	  "  -c, --config FILE    the policy file (rtlctl init writes one)\n"
	  "  -o, --output REPORT  the run's report, every process of it in one\n"
	  "                       (default: the policy's report =)\n"
	  "      --no-children    programs PROG execs run without rtl (a process it\n"
	  "                       forks without exec is PROG still, and keeps it)\n"
	  "  -h, --help           this help\n",
	  PRELOAD_ENV },
	{ "compare", cmd_compare,
	  "[-c FILE] [-o DIR] [--with MECH,...] [--outputs FILE,...] [--html OUT] -- PROG ARGS...",
	  "run PROG without rtl, with page protection and with regions; compare",
	  "  -c, --config FILE      the policy (the built-in one without -c); every run\n"
	  "                         uses it with its rules' mechanism replaced\n"
	  "  -o, --output DIR       where the runs and the comparison go (a new or empty\n"
	  "                         folder; default rtl-compare.PROG.PID)\n"
	  "  -w, --with MECH,...    the region runs beside page: auto, alias, swizzle,\n"
	  "                         policy (default: the mechanism of the policy's rules),\n"
	  "                         written (dirty rules on the kernel's written bits;\n"
	  "                         by default too when a rule has dirty)\n"
	  "      --outputs FILE,... files PROG writes: compared too; each run starts\n"
	  "                         with them as they were, and they are left as the\n"
	  "                         run without rtl left them\n"
	  "      --html OUT         one page, into OUT: the runs side by side, their\n"
	  "                         timelines, traps per site and rule (d3 inlined)\n"
	  "  -h, --help             this help\n"
	  "Standard input, if not a terminal, is read once and given to every run.\n"
	  "Exit status: 0 outputs identical, 3 they differ (the first difference is\n"
	  "printed), 1 a bad policy or folder or a page not written, 126/127 PROG\n"
	  "could not be run.\n",
	  PRELOAD_ENV },
	{ "check", cmd_check, "FILE", "validate a policy file",
	  "  -h, --help  this help\n", NULL },
	{ "show", cmd_show, "FILE", "print the effective policy, defaults filled in",
	  "  -h, --help  this help\n", NULL },
	{ "report", cmd_report,
	  "[--json [-o OUT] | --csv TABLE | --folded | --plot OUT | --html OUT | --trace OUT]\n"
	  "[--full-names] FILE...\n"
	  "--diff [--json | --html OUT] [--full-names] A B",
	  "tables from a run's report or raw records (several: one report); -o writes the JSON",
	  "  --json               the report as indented JSON\n"
	  "  --csv TABLE          one table as CSV: sites or rules\n"
	  "  --folded             trap backtraces as collapsed stacks, weighted by\n"
	  "                       traps (flamegraph.pl, speedscope, inferno)\n"
	  "  --plot OUT           draw OUT.png or OUT.svg with gnuplot: traps over\n"
	  "                       time by rule (with events = traps), by site\n"
	  "  --html OUT           one page, into OUT: summary, timeline, flame graph,\n"
	  "                       sortable rule and site tables (d3 inlined)\n"
	  "  --trace OUT          traps, epochs and timeline as Chrome trace-event\n"
	  "                       JSON into OUT (\"-\": stdout): Perfetto, chrome://tracing\n"
	  "  --diff A B           per rule and site: traps, regions, bytes and time in\n"
	  "                       traps in A, in B and the change, largest first\n"
	  "  --full-names         C++ names whole in the tables and the page (else\n"
	  "                       template arguments elided, std::string)\n"
	  "  -o, --output OUT     write the JSON report to OUT (\"-\": stdout)\n"
	  "  -h, --help           this help\n",
	  "  RTL_D3  d3.min.js for --html (default " RTL_D3_DEFAULT ")\n" },
	{ "init", cmd_init, "[FILE]",
	  "write a commented default policy (stdout without FILE)",
	  "  -h, --help  this help\n", NULL },
	{ "selftest", cmd_selftest, "[--variant NAME] [CHECK...]",
	  "check rtl's trap path on this CPU, per glibc string variant",
	  "  -v, --variant NAME  only this glibc string variant (sse2, avx2, evex ...)\n"
	  "  -h, --help          this help\n"
	  "\nCHECK names a check or a group (sweep, shape); rtl-selftest --list lists them.\n",
	  "  RTL_SELFTEST  the rtl-selftest program (default: found relative to rtlctl)\n" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct rtlctl_command *command_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* A command's args may hold several forms, one a line: each is printed
 * with the command's name. */
void usage_of(const char *cmd, FILE *out)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const char *a = commands[i].args, *prefix = "usage:";

		if (cmd && strcmp(cmd, commands[i].name) != 0)
			continue;
		for (;;) {
			int n = (int)strcspn(a, "\n");

			fprintf(out, "%s rtlctl %s %.*s\n", prefix, commands[i].name, n, a);
			if (!a[n])
				break;
			a += n + 1;
			prefix = "      ";
		}
	}
}

int help_of(const char *cmd, FILE *out)
{
	const struct rtlctl_command *c = command_find(cmd);

	if (!c)
		return -1;
	usage_of(cmd, out);
	fprintf(out, "%c%s.\n\nOptions:\n%s", c->what[0] - 'a' + 'A', c->what + 1,
	        c->options);
	if (c->env)
		fprintf(out, "\nEnvironment:\n%s", c->env);
	fprintf(out, "\nSee rtlctl(1) and docs/policy.md.\n");
	return 0;
}

void help_all(FILE *out)
{
	fprintf(out, "rtlctl %s: region trapping for unmodified programs\n\n", RTL_VERSION);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  rtlctl %-8s %-40.*s %s\n", commands[i].name,
		        (int)strcspn(commands[i].args, "\n"), commands[i].args,
		        commands[i].what);
	fprintf(out, "\n  rtlctl help CMD     every option of CMD and the environment it reads\n"
	             "  rtlctl --version    rtlctl's version\n"
	             "\nSee rtlctl(1), docs/policy.md.\n");
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rtlctl %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage_of(cmd, stderr);
	return EXIT_USAGE;
}

int option_error(const char *cmd, int opt, char **argv)
{
	const char *arg = argv[optind - 1];

	if (opt == ':')
		return usage_error(cmd, "option '%s' needs an argument", arg);
	if (optopt && arg[0] == '-' && arg[1] != '-')
		return usage_error(cmd, "unknown option '-%c'", optopt);
	return usage_error(cmd, "unknown option '%s'", arg);
}
