#!/usr/bin/env python3
"""The README's one table of current results, from a make bench run: reads
OUT/summary.json (and the machine line the run wrote, OUT/machine.txt), and
rewrites the part of README.md between the two markers

    <!-- results: begin -->  ...  <!-- results: end -->

with the machine and date in one line and each figure beside its target.
Usage: results_table.py OUT README.md"""
import datetime
import json
import os
import sys

BEGIN = "<!-- results: begin -->"
END = "<!-- results: end -->"

# (summary.json key, sub-key or None, what, target, "<=" or ">="); a row
# with no target says what bounds the one above it.
ROWS = [
    ("rt_basic_trap_over_floor", None, "a region trap / the bare signal round trip", 1.05, "<="),
    ("rt_basic_prot1_over_vm", None, "protect one region / mprotect one page (prot1)", 0.40, "<="),
    ("rt_basic_protN_over_vm", None, "protect N regions / N pages (protN)", 0.70, "<="),
    ("region_protect_ns", None, "region_protect, one bound pointer (ns)", 50, "<="),
    ("lookup_1e6_over_miss", None, "lookup among 10^6 regions / one DRAM miss", 1.2, "<="),
    ("lookup_1e3_ns", None, "lookup among 10^3 regions (ns)", 25, "<="),
    ("preload_malloc_over_glibc", "auto_1", "routed malloc+free / glibc's, auto", 3.0, "<="),
    ("threads_scaling_2", "trap", "2 threads / 1, region traps", 1.8, ">="),
    ("process_overhead_ms", "no_config", "a process under the preload, nothing selected (ms more)", 1.0, "<="),
    ("process_overhead_ms", "no_report", "... built-in policy, no report (ms more)", 1.0, "<="),
    ("process_overhead_ms", "report", "... under rtlctl run, with the report (ms more)", 2.0, "<="),
    ("real_programs_overhead_over_trap_floor", "bash/auto", "bash script, read + grant, auto: overhead / traps' floor", 1.2, "<="),
    ("real_programs_overhead_over_trap_floor", "python3/auto", "python3, read + grant, auto: overhead / traps' floor", 1.2, "<="),
    ("real_programs_overhead_over_trap_floor", "sqlite3/auto", "sqlite3, read + grant, auto: overhead / traps' floor", 1.2, "<="),
    ("real_programs_overhead_over_trap_floor", "make/auto", "make -j2, read + grant, auto: overhead / traps' floor", 1.2, "<="),
    ("real_programs_overhead_over_trap_floor", "sqlite3/auto/mprotect", "... sqlite3 with RTL_PROTECT=mprotect (the fallback)", 1.2, "<="),
    ("kernel_trap", "page_tables_over_floor", "the kernel's own trap in the page tables, no rtl code / the traps' floor", None, None),
    ("real_programs_overhead_over_kernel", "sqlite3/auto", "sqlite3, read + grant, auto: overhead / what the kernel charges for its traps and calls", None, None),
    ("real_programs_mprotects_per_trap", "sqlite3/auto", "sqlite3, read + grant, auto: mprotect calls a trap", 0.01, "<="),
    ("epoch_over_bound", "alias", "lua, read + grant, epoch = 1ms, alias: time / (without + traps x floor)", 1.5, "<="),
    ("epoch_over_kernel_bound", "alias", "... the same / (without + traps x the kernel's own trap)", None, None),
    ("many_blocks_kept", "default", "10^6 live protected blocks: traps / blocks written (vm.max_map_count 65530)", 1.0, ">="),
    ("peak_pss_over_bound", "lua/swizzle", "lua, every block routed, swizzle: peak Pss / (1.5 x + 64 MiB)", 1.0, "<="),
    ("peak_pss_over_bound", "jq/auto", "jq, every block routed, auto: peak Pss / (1.5 x + 64 MiB)", 1.0, "<="),
]


def value(s, key, sub):
    v = s.get(key)
    if sub is not None:
        v = v.get(sub) if isinstance(v, dict) else None
    return v if isinstance(v, (int, float)) else None


def table(s, machine, day):
    lines = ["%s, `make bench` of %s (every figure a ratio within that run, "
             "or a time; `bench/README.md` says how each is measured):" % (
                 machine, day),
             "",
             "| figure | value | target | |",
             "|---|---:|---:|---|"]
    for key, sub, what, target, way in ROWS:
        v = value(s, key, sub)
        shown = "-" if v is None else "%.3g" % v
        if target is None:
            lines.append("| %s | %s | — | |" % (what, shown))
            continue
        if v is None:
            verdict = "not measured"
        else:
            ok = v <= target if way == "<=" else v >= target
            verdict = "met" if ok else "**missed**"
        lines.append("| %s | %s | %s %g | %s |" % (what, shown, way.replace("<=", "≤").replace(">=", "≥"),
                                                   target, verdict))
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print("usage: results_table.py OUT README.md  (OUT: make bench's folder, "
              "bench/out)", file=sys.stderr)
        sys.exit(2)
    out, readme = sys.argv[1], sys.argv[2]
    summary = os.path.join(out, "summary.json")
    with open(summary) as f:
        s = json.load(f)
    # The day of the run, not of this rewrite.
    day = datetime.date.fromtimestamp(os.path.getmtime(summary)).isoformat()
    try:
        with open(os.path.join(out, "machine.txt")) as f:
            machine = f.read().strip()
    except FileNotFoundError:
        machine = "this machine"
    with open(readme) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        sys.exit("results_table.py: %s has no %s ... %s" % (readme, BEGIN, END))
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as f:
        f.write(head + BEGIN + "\n" + table(s, machine, day) + END + tail)
    print("results: the table in %s" % readme)


if __name__ == "__main__":
    main()
