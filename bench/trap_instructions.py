#!/usr/bin/env python3
"""make bench: the user-space instructions one region trap costs, counted by
callgrind (bench/README.md, "Instructions per trap"). The same figure as the
timed RT-basic trap: rt_basic.trap_raw (protect, then a trap whose handler
unprotects) minus rt_basic.protect (the same two region_protect calls, no
trap), each run twice with a different number of calls so that start-up
cancels out: (dIr(trap_raw) - dIr(protect)) / dtraps, where dtraps is rtl's
own trap count (rtl_stats.traps). The kernel's part (signal delivery,
sigreturn) is not counted: callgrind sees user space only.
Usage: trap_instructions.py BUILD OUT; writes OUT/trap_instructions.json,
or says why not (no valgrind)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CALLS = (1000, 3000)


def measure(prog, only, calls, tmp):
    js = os.path.join(tmp, "%s.%d.json" % (only, calls))
    cg = os.path.join(tmp, "%s.%d.cg" % (only, calls))
    r = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg,
         prog, "--only", only, "--rounds", "1", "--calls", str(calls),
         "--cpu", "none", "--json", js],
        capture_output=True, text=True,
        env=dict(os.environ, RTL_ARENA_SIZE="1G"))
    if r.returncode:
        raise RuntimeError("callgrind on %s: exit %d\n%s" % (
            only, r.returncode, r.stderr[-2000:]))
    m = re.search(r"Collected\s*:\s*(\d+)", r.stderr) or \
        re.search(r"refs:\s*([\d,]+)", r.stderr)
    with open(js) as f:
        traps = json.load(f)["rtl_stats"]["traps"]
    return int(m.group(1).replace(",", "")), traps


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: trap_instructions.py BUILD OUT")
    build, out = sys.argv[1], sys.argv[2]
    dest = os.path.join(out, "trap_instructions.json")
    if not shutil.which("valgrind"):
        print("\ninstructions per trap: skipped, valgrind is not installed")
        return
    prog = os.path.join(build, "bench", "rtl-appel-li")
    with tempfile.TemporaryDirectory() as tmp:
        (t1, n1), (t2, n2) = (measure(prog, "rt_basic.trap_raw", c, tmp)
                              for c in CALLS)
        (p1, _), (p2, _) = (measure(prog, "rt_basic.protect", c, tmp)
                            for c in CALLS)
    traps = n2 - n1
    res = {"calls": CALLS, "traps": traps,
           "trap_raw_per_call": (t2 - t1) / traps,
           "protect_per_call": (p2 - p1) / traps,
           "per_trap": ((t2 - t1) - (p2 - p1)) / traps}
    with open(dest, "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    print("\ninstructions per trap (callgrind, user space): %.0f "
          "(protect + trap %.0f, protect alone %.0f)" % (
              res["per_trap"], res["trap_raw_per_call"],
              res["protect_per_call"]))


if __name__ == "__main__":
    main()
