#!/usr/bin/env python3
"""make bench, compare against the DSM: does `rtlctl compare` on a program
run alone predict what a DSM built on pages or regions measures?

For each DSM application (bench/dsm/: SOR, MM, LU, FLOYD, TSP, IS), the
ratio of page traps to region traps two ways, in one run:
- the DSM itself (build/dsm/dsm-*, 2 ranks, -m vm and -m rt: traps per
  processor), when MPI was there to build it;
- rtlctl compare on the application's sequential build (rtl-seq-*: one
  process, shared objects from malloc), with bench/preload/dsm.ini: every
  shared object unreadable, a read grants read, a write read-write, and an
  epoch re-protects them every 5 ms as the DSM's barriers invalidate.
Prints the two ratios and whether they point the same way; writes
OUT/compare_dsm.json. Usage: compare_dsm.py BUILD OUT; RTL_COMPARE_DSM_APPS
(e.g. "IS,SOR") runs only those."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "dsm"))
import run as dsm  # noqa: E402  (bench/dsm/run.py: its mpirun and counters)

NP = 2
# name, program, arguments: make bench-dsm's problems (SOR with 30
# iterations instead of 100: the same objects, a third of the time).
APPS = [
    ("SOR", "sor", ["-r", "1024", "-c", "2048", "-i", "30"]),
    ("MM", "mm", ["-n", "640"]),
    ("LU", "lu", ["-n", "1024", "-b", "64"]),
    ("FLOYD", "floyd", ["-n", "567"]),
    ("TSP", "tsp", ["-n", "17", "-s", "4"]),
    ("IS", "is", ["-k", str(1 << 22), "-b", str(1 << 9), "-i", "10"]),
]


def dsm_ratio(prog, args):
    """The DSM's page (VM) and region (RT) traps per processor, or None."""
    if not (shutil.which("mpirun") and
            os.path.exists(os.path.join(dsm.BUILD, "dsm", "dsm-" + prog))):
        return None
    vm = dsm.app_run(prog, "vm", NP, args)
    rt = dsm.app_run(prog, "rt", NP, args)
    return {"procs": NP, "vm_traps": dsm.per_proc(vm, "traps"),
            "rt_traps": dsm.per_proc(rt, "traps"),
            "vm_command": vm["command"], "rt_command": rt["command"]}


def compare_ratio(build, prog, args):
    """rtlctl compare on the sequential build: page and auto traps."""
    rtlctl = os.path.join(build, "tools", "rtlctl")
    policy = os.path.join(HERE, "preload", "dsm.ini")
    cmd = [os.path.join(build, "bench", "rtl-seq-" + prog), "-m", "vm"] + args
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cmp")
        # The applications print their times: the outputs differ (exit 3).
        p = subprocess.run([rtlctl, "compare", "-c", policy, "-o", out, "--"] + cmd,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if p.returncode not in (0, 3):
            sys.exit("compare_dsm: rtlctl compare failed on %s:\n%s" % (prog, p.stderr))
        with open(os.path.join(out, "compare.json")) as f:
            runs = json.load(f)["totals"]["runs"]
    return {"page_traps": runs["page"]["traps"], "auto_traps": runs["auto"]["traps"],
            "false_sharing": runs["page"]["false_sharing_traps"],
            "command": "rtlctl compare -c bench/preload/dsm.ini -- rtl-seq-%s -m vm %s" %
            (prog, " ".join(args))}


def ratio(page, region):
    return page / region if region else None


def main():
    build, out = sys.argv[1], sys.argv[2]
    rows = []
    only = os.environ.get("RTL_COMPARE_DSM_APPS")
    for name, prog, args in APPS:
        if only and name not in only.split(","):
            continue
        c = compare_ratio(build, prog, args)
        d = dsm_ratio(prog, args)
        row = {"app": name, "compare": c, "dsm": d,
               "compare_ratio": ratio(c["page_traps"], c["auto_traps"])}
        if d:
            row["dsm_ratio"] = ratio(d["vm_traps"], d["rt_traps"])
            # The same way: both say regions take fewer traps, both more,
            # or both about the same (within 5 %).
            row["same_direction"] = (dsm.direction(c["auto_traps"], c["page_traps"]) ==
                                     dsm.direction(d["rt_traps"], d["vm_traps"]))
        rows.append(row)
    agree = sum(1 for r in rows if r.get("same_direction"))
    measured = sum(1 for r in rows if r["dsm"])
    print("\nCompare against the DSM: page traps / region traps (> 1: regions trap less)")
    print("%-6s %22s %30s  %s" % ("app", "DSM, %d ranks (vm/rt)" % NP,
                                   "compare, sequential (page/auto)", "same way"))
    for r in rows:
        d, c = r["dsm"], r["compare"]
        print("%-6s %22s %30s  %s" % (
            r["app"],
            "%.2f (%.0f/%.0f)" % (r["dsm_ratio"], d["vm_traps"], d["rt_traps"]) if d else "-",
            "%.2f (%d/%d, %d false sh.)" % (r["compare_ratio"], c["page_traps"],
                                            c["auto_traps"], c["false_sharing"]),
            ("yes" if r["same_direction"] else "NO") if d else "-"))
    if measured:
        print("compare points the DSM's way on %d of %d applications" % (agree, measured))
    else:
        print("(no DSM here: MPI was not found when rtl was configured)")
    with open(os.path.join(out, "compare_dsm.json"), "w") as f:
        json.dump({"procs": NP, "apps": rows, "agree": agree, "measured": measured},
                  f, indent=1)


if __name__ == "__main__":
    main()
