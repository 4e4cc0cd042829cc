#!/usr/bin/env python3
"""make bench, memory tags part: what the tag mechanism (aarch64 MTE) changes
in the traps of a program, against page protection and alias (a copy of
each block's page: auto, where the machine has tags, takes them for these
rules), by `rtlctl compare --with alias,tag` on the aarch64 build run
under qemu-user. Counts only: under qemu-user every time is the
emulator's (docs/aarch64.md).
Writes OUT/tags.json: per program, per run (page, alias, tag), the traps
and the false-sharing traps, and where the tag run's blocks went.

Needs the aarch64 build (make test-aarch64 makes it in build-aarch64;
RTL_BENCH_AARCH64 names another) and qemu-aarch64-static; without them
the part is skipped and says why.

The programs (tests/progs):
  granularity shared 1000 16   1000 pairs of 16-byte blocks, one of each
                               written: the false sharing of a page tracker
  access 1000 1000 rw          2000 blocks of 100 and 200 bytes, each read
                               and written through the pointer malloc gave"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

RUNS = ("page", "alias", "tag")
RULE = ("protect = none\non_read = count, grant-rw\n"
        "on_write = count, grant-rw\n")
PROGRAMS = (
    ("granularity", ["granularity", "shared", "1000", "16"],
     "[rule blocks]\nsite = *new_block\n" + RULE),
    ("access", ["access", "1000", "1000", "rw"],
     "[rule a]\nsite = *alloc_a\n" + RULE + "[rule b]\nsite = *alloc_b\n" + RULE),
)


def compare(rtlctl, preload, qemu, progs, args, policy, tmp):
    pol = os.path.join(tmp, "policy.ini")
    with open(pol, "w") as f:
        f.write(policy)
    out = os.path.join(tmp, "cmp")
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, RTL_PRELOAD=preload)
    cmd = [rtlctl, "compare", "--with", "alias,tag", "-o", out, "-c", pol, "--",
           qemu, "-L", "/", os.path.join(progs, args[0])] + args[1:]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(cmd), r.returncode, r.stderr))
    res = {}
    for run in RUNS:
        with open(os.path.join(out, run + ".json")) as f:
            rep = json.load(f)
        t = rep["totals"]
        res[run] = {"traps": t["traps"], "false_sharing_traps": t["false_sharing_traps"]}
        if run == "tag":
            res[run]["placed"] = rep.get("tag", {}).get("placed")
    res["identical"] = "outputs: identical in every run" in r.stdout
    return res


def main():
    build, out = sys.argv[1], sys.argv[2]
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cross = os.environ.get("RTL_BENCH_AARCH64", os.path.join(top, "build-aarch64"))
    preload = os.path.join(cross, "preload", "librtlpreload.so")
    qemu = shutil.which("qemu-aarch64-static")
    res = {}
    if not os.path.exists(preload) or not qemu:
        res["skipped"] = ("no aarch64 build in %s (make test-aarch64 makes it)" % cross
                          if qemu else "qemu-aarch64-static is not installed")
        print("tags: skipped: " + res["skipped"])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            for name, args, policy in PROGRAMS:
                res[name] = compare(os.path.join(build, "tools", "rtlctl"), preload, qemu,
                                    os.path.join(cross, "tests", "progs"), args, policy, tmp)
                row = "  ".join("%s %d traps, %d false sharing" % (
                    run, res[name][run]["traps"], res[name][run]["false_sharing_traps"])
                    for run in RUNS)
                print("tags: %-12s %s; tag run on %s" % (name, row, res[name]["tag"]["placed"]))
    with open(os.path.join(out, "tags.json"), "w") as f:
        json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
