#!/usr/bin/env python3
"""make bench: the user-space instructions one region trap costs, counted by
callgrind (bench/README.md, "Instructions per trap"). The timed RT-basic
trap's own definition, (protect + trap) - protect, in instructions: what
rtl's SIGSEGV handler runs per trap (the handler's region_protect that
grants the access included), minus what that region_protect costs outside
a trap. Each is collected only inside the function that does it
(--toggle-collect), so the benchmark's harness, whose loops run for a wall
time and so for a different number of iterations under valgrind each run,
counts nothing: the figure is the same run after run.
  handler:  rt_basic.trap_raw, collected in on_sigsegv, / rtl's trap count
  protect:  rt_basic.protect, collected in region_protect, / its calls
The kernel's part (fault, signal delivery, sigreturn) is not counted:
callgrind sees user space only.
Usage: trap_instructions.py BUILD OUT; writes OUT/trap_instructions.json,
or says why not (no valgrind)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

CALLS = 3000


def inclusive(cg, function):
    """The instructions run inside function and what it calls, read from
    callgrind's output file itself: the cost lines under fn=function, from
    whichever file (code inlined from a header or, under link-time
    optimisation, from another file is listed under that file; an
    annotation by file and function splits it), plus the inclusive cost of
    each call made from there. None if the function never ran."""
    names, fn, total, seen = {}, None, 0, False
    with open(cg) as f:
        for line in f:
            m = re.match(r"c?fn=(?:\((\d+)\))? ?(.*)", line.rstrip("\n"))
            if m and m.group(2):  # fn= and cfn= share one table of names
                names[m.group(1)] = m.group(2)
            if line.startswith("fn="):
                fn = names.get(m.group(1)) or m.group(2)
                fn = re.sub(r"\.lto_priv\.\d+$", "", fn or "")
                continue
            if fn != function or not line[:1] or not (
                    line[0].isdigit() or line[0] in "+-*"):
                continue
            # "position cost": this function's own instruction, or (after
            # calls=) the inclusive cost of the call it made.
            parts = line.split()
            if len(parts) >= 2:
                total += int(parts[1])
                seen = True
    return total if seen else None


def collected(prog, only, function, tmp):
    """Instructions run inside function (and what it calls), and rtl's
    counters, over one run of rtl-appel-li --only ONLY. (callgrind's
    --toggle-collect does not follow a signal handler's entry.)"""
    js = os.path.join(tmp, "%s.json" % only)
    cg = os.path.join(tmp, "%s.cg" % only)
    r = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + cg,
         prog, "--only", only, "--rounds", "1", "--calls", str(CALLS),
         "--cpu", "none", "--json", js],
        capture_output=True, text=True,
        env=dict(os.environ, RTL_ARENA_SIZE="1G"))
    if r.returncode:
        raise RuntimeError("callgrind on %s: exit %d\n%s" % (
            only, r.returncode, r.stderr[-2000:]))
    total = inclusive(cg, function)
    if total is None:
        raise RuntimeError("callgrind on %s: no %s in its profile" % (
            only, function))
    with open(js) as f:
        stats = json.load(f)["rtl_stats"]
    return total, stats


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
        handler_ir, st = collected(prog, "rt_basic.trap_raw", "on_sigsegv", tmp)
        protect_ir, sp = collected(prog, "rt_basic.protect", "region_protect",
                                   tmp)
    handler = handler_ir / st["traps"]
    protect = protect_ir / sp["protects"]
    res = {"calls": CALLS, "traps": st["traps"], "protects": sp["protects"],
           "handler_per_trap": handler, "protect_per_call": protect,
           "per_trap": handler - protect}
    os.makedirs(out, exist_ok=True)
    with open(dest, "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    print("\ninstructions per trap (callgrind, user space): %.0f "
          "(rtl's handler %.0f, its region_protect outside a trap %.0f)" % (
              res["per_trap"], handler, protect))


if __name__ == "__main__":
    main()
