#!/usr/bin/env python3
"""make bench, real programs: what a trial of rtl costs on programs people
trial it on, against what their traps alone must cost. Each program (a bash
script, python3, sqlite3, make -j2 of a small C project) runs without rtl,
under the built-in policy and under every block read-only with a grant on
write, with each exact mechanism (auto, alias, page); the outputs must be
the run without rtl's. The floor of a trap (the bare signal round trip and
one mprotect of one page of a small process) is measured in the same run:

  overhead over the floor = (time under rtl - time without)
                            / (traps x (signal round trip + mprotect))

Each mechanism runs twice: with protection in the page tables where the
kernel has it (userfaultfd write-protection) and with RTL_PROTECT=mprotect,
the fallback ("MECH/mprotect"); each row also gives the protection calls
per trap and the mprotects among them, and the overhead over what the
kernel charges for those traps and calls, each at its cost measured here
(the backend's own trap, whose kernel part differs from the floor's, and
its call):

  overhead over the kernel = (time under rtl - time without)
                             / (traps x kernel's trap + (calls - traps) x call)

so that what rtl adds of its own is told from what the kernel charges. An epoch workload (lua sorting
200,000 strings, every block read-only again each millisecond) runs under
both, against its time without rtl plus its traps times the floor, with
the epochs' calls and time; 10^6 live protected blocks written at random
run under both, against vm.max_map_count.

Also: what a fork costs a process of 10^4 live blocks per mechanism, the
per-process cost of the preload (a shell starting 50 programs:
preloaded selecting nothing, under the built-in policy without a report,
and under rtlctl run, whose report holds every process), and memory: the
peak Pss of lua and jq building many small blocks, every block routed, per
mechanism, against 1.5 x + 64 MiB of the run without rtl, and the bytes
rtl adds per routed block. Writes OUT/programs.json.

Usage: programs.py BUILD OUT [--quick]"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MECHANISMS = ("auto", "alias", "page")
REPS = 3


def env_without_rtl():
    return {k: v for k, v in os.environ.items()
            if not k.startswith("RTL_") and k != "LD_PRELOAD"}


def run(cmd, extra, cwd, stdin=None, timeout=900):
    env = env_without_rtl()
    env.update(extra)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, cwd=cwd, input=stdin, capture_output=True,
                       timeout=timeout)
    t = time.perf_counter() - t0
    if r.returncode:
        raise RuntimeError("%s under %s: exit %d\n%s" % (
            cmd[0], extra, r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    return t, r.stdout


def floor(build):
    """The floor's parts (signal_ns, mprotect_ns) and, beside them, what the
    page-table backend's calls cost here (uffd_wp_ns, uffd_trap_ns; None
    without userfaultfd write-protection)."""
    out = subprocess.run([os.path.join(build, "bench", "rtl-malloc-bench"),
                          "floor", "20000"], capture_output=True, text=True,
                         check=True).stdout.split()
    fl = {out[i]: float(out[i + 1]) for i in range(0, len(out) - 1, 2)}
    for k in ("uffd_wp_ns", "uffd_trap_ns", "uffd_refault_ns", "uffd_refaults_per_trap"):
        if fl.get(k, -1) < 0:
            fl[k] = None
    return fl


def kernel_seconds(fl, backend, traps, calls):
    """What the kernel charges for traps taking calls protection calls in
    all (a grant each, and the rest), on the backend that ran: under page
    tables its whole trap (the fault, SIGBUS, the call that clears the bit
    and the write fault after it: uffd_trap_ns less the write-protect call
    it starts with) and a write-protect call; under mprotect the floor's
    signal and mprotect, and an mprotect. None where it is unknown."""
    if not traps:
        return None
    if backend == "page tables":
        if not fl.get("uffd_trap_ns") or not fl.get("uffd_wp_ns"):
            return None
        trap, call = fl["uffd_trap_ns"] - fl["uffd_wp_ns"], fl["uffd_wp_ns"]
    else:
        trap, call = fl["signal_ns"] + fl["mprotect_ns"], fl["mprotect_ns"]
    return (traps * trap + max(calls - traps, 0) * call) * 1e-9


# ---- the programs: a command and how to prepare its folder ----

def sqlite_input(rows=100000):
    lines = ["CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);", "BEGIN;"]
    lines += ["INSERT INTO t(b, c) VALUES('row %d', %d.5);" % (i, i) for i in range(rows)]
    lines += ["COMMIT;", "CREATE INDEX tb ON t(b);",
              "SELECT count(*), sum(c) FROM t WHERE b LIKE 'row 1%';"]
    return ("\n".join(lines) + "\n").encode()


C_FILE = """#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct item%(i)d { int k; char name[24]; struct item%(i)d *next; };
static int cmp%(i)d(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int f%(i)d(int n)
{
	int *v = malloc(sizeof(int) * (size_t)n), s = 0;
	for (int j = 0; j < n; j++) v[j] = (j * %(m)d) %% 1009;
	qsort(v, (size_t)n, sizeof(int), cmp%(i)d);
	for (int j = 0; j < n; j++) s += v[j] & 7;
	free(v);
	return s;
}
"""


def make_project(cwd, files=12):
    src = os.path.join(cwd, "proj")
    os.makedirs(src, exist_ok=True)
    for i in range(files):
        with open(os.path.join(src, "f%d.c" % i), "w") as f:
            f.write(C_FILE % {"i": i, "m": 7 + 2 * i})
    with open(os.path.join(src, "main.c"), "w") as f:
        f.write("#include <stdio.h>\n")
        for i in range(files):
            f.write("int f%d(int n);\n" % i)
        f.write("int main(void)\n{\n\tlong s = 0;\n")
        for i in range(files):
            f.write("\ts += f%d(1000);\n" % i)
        f.write("\tprintf(\"%ld\\n\", s);\n\treturn 0;\n}\n")
    objs = " ".join("f%d.o" % i for i in range(files))
    with open(os.path.join(src, "Makefile"), "w") as f:
        f.write("prog: main.o %s\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O1 -c $<\n"
                "clean:\n\trm -f *.o prog\n" % objs)
    return src


def programs(cwd, quick):
    n = "12" if quick else "30"
    proj = make_project(cwd)
    return {
        "bash": {"cmd": ["bash", os.path.join(HERE, "programs", "script.sh"), cwd, n]},
        # Debian's, not a wrapper's (pyenv's shim is a bash script).
        "python3": {"cmd": [shutil.which("python3", path="/usr/bin") or "python3",
                            os.path.join(HERE, "programs", "work.py"),
                            "15000" if quick else "40000"]},
        "sqlite3": {"cmd": ["sqlite3", ":memory:"],
                    "stdin": sqlite_input(20000 if quick else 100000)},
        "make": {"cmd": ["sh", "-c", "make -s clean && make -s -j2 CC=gcc && ./prog"],
                 "cwd": proj},
    }


# The fallback's runs: the same policy, RTL_PROTECT=mprotect.
MPROTECT = {"RTL_PROTECT": "mprotect"}


def policies(cwd):
    """read + grant by mechanism, each with the default backend (page tables
    where the kernel has them) and with the mprotect fallback: name ->
    (policy file, environment)."""
    pol = {}
    for m in MECHANISMS:
        path = os.path.join(cwd, "read-grant-%s.ini" % m)
        with open(path, "w") as f:
            f.write("[rtl]\nmechanism = %s\n[rule all]\nprotect = read\n"
                    "on_write = count, grant-rw\n" % m)
        pol[m] = (path, {})
        pol[m + "/mprotect"] = (path, MPROTECT)
    return pol


def report_of(build, records):
    """One report of every process's raw records (None if none left one)."""
    raws = [os.path.join(records, f) for f in os.listdir(records) if ".raw" in f]
    if not raws:
        return None
    r = subprocess.run([os.path.join(build, "tools", "rtlctl"), "report", "--json"] + raws,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def traps_of(build, records):
    """Every process's traps, and how many processes, from their raw records."""
    rep = report_of(build, records)
    if not rep:
        return 0, 0
    return rep["totals"]["traps"], len(rep.get("processes", []))


def measure(build, lib, prog, name, extra_cfg, cwd, fl):
    floor_ns = fl["signal_ns"] + fl["mprotect_ns"]
    cmd, stdin = prog["cmd"], prog.get("stdin")
    where = prog.get("cwd", cwd)
    plain, ref = [], None
    for _ in range(REPS):
        t, so = run(cmd, {}, where, stdin)
        ref = so if ref is None else ref
        if so != ref:
            raise RuntimeError("%s: its output differs between runs without rtl" % name)
        plain.append(t)
    row = {"seconds_without": statistics.median(plain)}
    for pol, cfg in extra_cfg.items():
        cfg, cfg_env = cfg if isinstance(cfg, tuple) else (cfg, {})
        times, totals, procs, backend = [], {}, 0, None
        for rep in range(REPS):
            records = tempfile.mkdtemp(prefix="rec.", dir=cwd)
            env = {"LD_PRELOAD": lib, "RTL_CONFIG": cfg, "RTL_RUN_DIR": records,
                   "RTL_REPORT": os.path.join(records, "r.json")}
            env.update(cfg_env)
            t, so = run(cmd, env, where, stdin)
            if so != ref:
                raise RuntimeError("%s under %s: output differs from the run "
                                   "without rtl" % (name, pol))
            times.append(t)
            if rep == 0:
                r = report_of(build, records) or {}
                totals = r.get("totals", {})
                procs = len(r.get("processes", []))
                backend = (r.get("protection") or {}).get("backend")
            shutil.rmtree(records)
        sec = statistics.median(times)
        over = sec - row["seconds_without"]
        traps = totals.get("traps", 0)
        kernel = kernel_seconds(fl, backend, traps, totals.get("protect_calls", 0))
        row[pol] = {"seconds": sec, "traps": traps, "processes": procs,
                    "backend": backend,
                    "over_plain": sec / row["seconds_without"],
                    "trap_floor_seconds": traps * floor_ns * 1e-9,
                    "overhead_over_trap_floor": over / (traps * floor_ns * 1e-9)
                    if traps else None,
                    # the protection calls behind each trap (at allocation,
                    # at the grant), and how many of them were mprotect
                    "calls_per_trap": totals.get("protect_calls", 0) / traps
                    if traps else None,
                    "mprotects_per_trap": totals.get("protect_mprotects", 0) / traps
                    if traps else None,
                    "kernel_seconds": kernel,
                    "overhead_over_kernel": over / kernel if kernel else None}
    return row


SORT_LUA = """local t = {}
for i = 1, 200000 do t[i] = "s" .. ((i * 7919) % 200000) .. "-" .. i end
table.sort(t)
print(#t, t[1], t[#t])
"""


def epoch_costs(build, lib, cwd, fl, quick):
    """lua sorting 200,000 strings (100,000 with --quick), every block
    read-only again each millisecond, under auto and alias and both
    backends: its time against its time without rtl plus its traps times
    the floor (target 1.5), against the same with the kernel's own trap on
    the backend that ran, and what each epoch cost."""
    floor_ns = fl["signal_ns"] + fl["mprotect_ns"]
    n = 100000 if quick else 200000
    script = os.path.join(cwd, "sort.lua")
    with open(script, "w") as f:
        f.write(SORT_LUA.replace("200000", str(n)))
    cmd = ["lua", script]
    plain = statistics.median(run(cmd, {}, cwd)[0] for _ in range(3))
    ref = run(cmd, {}, cwd)[1]
    out = {"seconds_without": plain, "strings": n}
    for m in ("auto", "alias"):
        cfg = os.path.join(cwd, "epoch-%s.ini" % m)
        with open(cfg, "w") as f:
            f.write("[rtl]\nmechanism = %s\n[rule all]\nprotect = read\n"
                    "on_write = count, grant-rw\nepoch = 1ms\n" % m)
        for name, extra in ((m, {}), (m + "/mprotect", MPROTECT)):
            records = tempfile.mkdtemp(prefix="rec.", dir=cwd)
            env = {"LD_PRELOAD": lib, "RTL_CONFIG": cfg, "RTL_RUN_DIR": records,
                   "RTL_REPORT": os.path.join(records, "r.json")}
            env.update(extra)
            t, so = run(cmd, env, cwd)
            if so != ref:
                raise RuntimeError("lua under an epoch (%s): output differs" % name)
            r = report_of(build, records)
            shutil.rmtree(records)
            tt = r["totals"]
            epochs = tt.get("epochs") or 0
            backend = (r.get("protection") or {}).get("backend")
            kernel = kernel_seconds(fl, backend, tt["traps"], tt["traps"])
            out[name] = {
                "seconds": t, "traps": tt["traps"],
                "backend": backend,
                "over_bound": t / (plain + tt["traps"] * floor_ns * 1e-9),
                "over_kernel_bound": t / (plain + kernel) if kernel else None,
                "epochs": epochs, "epoch_calls": tt.get("epoch_calls"),
                "epoch_blocks": tt.get("epoch_blocks"),
                "calls_per_epoch": tt.get("epoch_calls", 0) / epochs if epochs else None,
                "blocks_per_epoch": tt.get("epoch_blocks", 0) / epochs if epochs else None,
                "ms_per_epoch": tt.get("epoch_ns", 0) / epochs / 1e6 if epochs else None,
                "epochs_stretched": tt.get("epochs_stretched"),
                "epoch_stretch_ms": tt.get("epoch_stretch_ns", 0) / 1e6,
            }
    return out


def many_blocks(build, lib, cwd):
    """10^6 live read-only blocks of 64 bytes, half written at random, under
    both backends: the mappings they held, whether every block written
    trapped (its protection kept), and what was left to glibc, against
    vm.max_map_count."""
    prog = [os.path.join(build, "tests", "progs", "live_blocks"), "1000000", "64",
            "random", "0"]
    cfg = os.path.join(cwd, "many.ini")
    with open(cfg, "w") as f:
        f.write("[rule all]\nsize = 64\nprotect = read\non_write = count, grant-rw\n")
    out = {"max_map_count": int(open("/proc/sys/vm/max_map_count").read())}
    for name, extra in (("default", {}), ("mprotect", MPROTECT)):
        records = tempfile.mkdtemp(prefix="rec.", dir=cwd)
        env = {"LD_PRELOAD": lib, "RTL_CONFIG": cfg, "RTL_RUN_DIR": records,
               "RTL_REPORT": os.path.join(records, "r.json")}
        env.update(extra)
        t, so = run(prog, env, cwd)
        words = so.decode().split()
        r = report_of(build, records)
        shutil.rmtree(records)
        written = int(words[words.index("written") + 1])
        out[name] = {
            "seconds": t,
            "backend": (r.get("protection") or {}).get("backend"),
            "mappings": int(words[words.index("maps") + 1]),
            "written": written, "write_traps": r["totals"]["write_traps"],
            "kept": r["totals"]["write_traps"] / written,
            "fallbacks": r["totals"]["fallbacks"],
            "notes": r.get("notes", []),
        }
    return out


def process_costs(build, lib, cwd):
    """ms a process: sh starting 50 /bin/true, over the same without rtl."""
    loop = ["sh", "-c", "for i in $(seq 50); do /bin/true; done"]
    rtlctl = os.path.join(build, "tools", "rtlctl")
    # What the preload's start is made of: its dependencies loaded alone
    # (libunwind with liblzma; librtl, which needs libunwind), no policy,
    # the built-in policy, the report.
    cases = {
        "plain": ({}, loop),
        "load_libunwind": ({"LD_PRELOAD": "libunwind.so.8"}, loop),
        "load_librtl": ({"LD_PRELOAD": os.path.join(build, "core", "librtl.so.0")}, loop),
        "no_config": ({"LD_PRELOAD": lib}, loop),
        "no_report": ({"LD_PRELOAD": lib, "RTL_CONFIG": "@builtin", "RTL_REPORT": ""}, loop),
        "report": ({}, [rtlctl, "run", "-o", os.path.join(cwd, "loop.json"), "--"] + loop),
    }
    best = {}
    for _ in range(9):
        for name, (extra, cmd) in cases.items():
            t, _ = run(cmd, extra, cwd)
            best.setdefault(name, []).append(t)
            for f in os.listdir(cwd):
                if f.startswith("loop.json"):
                    os.unlink(os.path.join(cwd, f))
    med = {k: statistics.median(v) for k, v in best.items()}
    return {k: (med[k] - med["plain"]) * 1000 / 51 for k in med if k != "plain"}


def fork_costs(build, lib, cwd):
    """What a fork costs a process holding 10^4 live blocks of 64 bytes, each
    written (read + grant), per mechanism: fork, a child that reads and
    writes every block, the wait (median of 9, us); and its mappings."""
    prog = [os.path.join(build, "tests", "progs", "live_blocks"), "10000", "64", "made", "9"]
    out = {}
    for m in ("none",) + MECHANISMS:
        extra = {}
        if m != "none":
            cfg = os.path.join(cwd, "fork-%s.ini" % m)
            with open(cfg, "w") as f:
                f.write("[rtl]\nmechanism = %s\n[rule all]\nprotect = read\n"
                        "on_write = count, grant-rw\n" % m)
            extra = {"LD_PRELOAD": lib, "RTL_CONFIG": cfg, "RTL_REPORT": ""}
        _, so = run(prog, extra, cwd)
        words = so.decode().split()
        out[m] = {"fork_us": float(words[words.index("fork") + 1]),
                  "mappings": int(words[words.index("maps") + 1])}
    return out


LUA = """local t = {}
for i = 1, 200000 do t[i] = "s" .. i .. "-" .. (i * 7) end
local n = 0
for i = 1, #t do n = n + #t[i] end
print(#t, n)
"""


def memory(build, lib, cwd):
    """Peak Pss of lua and jq with every block routed, per mechanism."""
    peak = os.path.join(build, "tests", "progs", "peakmem")
    with open(os.path.join(cwd, "strings.lua"), "w") as f:
        f.write(LUA)
    with open(os.path.join(cwd, "big.json"), "w") as f:
        json.dump([{"k": i % 13, "v": i, "s": "x%d" % i} for i in range(150000)], f)
    progs = {"lua": ["lua", "strings.lua"],
             "jq": ["jq", "-c", "group_by(.k) | map({k: .[0].k, n: length})", "big.json"]}
    out = {}
    for prog, cmd in progs.items():
        if not shutil.which(cmd[0]):
            continue
        mem = os.path.join(cwd, "mem")
        run([peak, mem, "--"] + cmd, {}, cwd)
        plain = int(open(mem).read().split()[0])
        row = {"pss_kib_without": plain}
        for m in ("auto", "alias", "swizzle", "page"):
            cfg = os.path.join(cwd, "all-%s.ini" % m)
            with open(cfg, "w") as f:
                f.write("[rtl]\nmechanism = %s\n[rule all]\n" % m)
            records = tempfile.mkdtemp(prefix="rec.", dir=cwd)
            run([peak, mem, "--"] + cmd, {"LD_PRELOAD": lib, "RTL_CONFIG": cfg,
                                          "RTL_RUN_DIR": records,
                                          "RTL_REPORT": os.path.join(records, "r.json")}, cwd)
            pss = int(open(mem).read().split()[0])
            r = subprocess.run([os.path.join(build, "tools", "rtlctl"), "report", "--json"] +
                               [os.path.join(records, f) for f in os.listdir(records)],
                               capture_output=True, text=True, check=True)
            blocks = json.loads(r.stdout)["totals"]["regions_peak"]
            shutil.rmtree(records)
            row[m] = {"pss_kib": pss,
                      "over_bound": pss / (1.5 * plain + 64 * 1024),
                      "bytes_per_block": (pss - plain) * 1024 / blocks if blocks else None}
        out[prog] = row
    return out


def spread_reuse(build, lib, cwd, pol):
    """Protection calls per trap where a program's reuse spreads over many
    pages (tests/progs/slot_runs ring: 512 live blocks of 16 B to 4 KiB,
    each written as made and freed in its turn), under read + grant by
    mechanism and backend: beside the real programs' figure, what a run of
    pages saves when the blocks made next fall on the pages it set."""
    prog = [os.path.join(build, "tests", "progs", "slot_runs"), "ring", "200000"]
    out = {}
    for name, (cfg, extra) in pol.items():
        records = tempfile.mkdtemp(prefix="rec.", dir=cwd)
        env = {"LD_PRELOAD": lib, "RTL_CONFIG": cfg, "RTL_RUN_DIR": records}
        env.update(extra)
        run(prog, env, cwd)
        t = (report_of(build, records) or {}).get("totals", {})
        shutil.rmtree(records)
        out[name] = t.get("protect_calls", 0) / t["traps"] if t.get("traps") else None
    return out


def main():
    build, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    quick = "--quick" in sys.argv[3:]
    lib = os.path.abspath(os.environ.get("RTL_BENCH_PRELOAD") or
                          os.path.join(build, "preload", "librtlpreload.so"))
    dest = os.path.join(outdir, "programs.json")
    if not os.path.exists(lib):
        print("real programs: skipped, %s does not exist; their keys in "
              "summary.json are null" % lib)
        if os.path.exists(dest):
            os.remove(dest)
        return 0
    cwd = tempfile.mkdtemp(prefix="rtl-programs.")
    try:
        fl = floor(build)
        floor_ns = fl["signal_ns"] + fl["mprotect_ns"]
        print("real programs: a trap's floor %.0f ns (signal round trip %.0f + "
              "one-page mprotect %.0f); in the page tables a write-protect call "
              "%s ns, a whole trap %s ns, of which %s ns the fault after the "
              "clear (%s a trap)" % (
                  floor_ns, fl["signal_ns"], fl["mprotect_ns"],
                  "%.0f" % fl["uffd_wp_ns"] if fl["uffd_wp_ns"] else "-",
                  "%.0f" % fl["uffd_trap_ns"] if fl["uffd_trap_ns"] else "-",
                  "%.0f" % fl["uffd_refault_ns"] if fl["uffd_refault_ns"] else "-",
                  "%.2f" % fl["uffd_refaults_per_trap"]
                  if fl["uffd_refaults_per_trap"] is not None else "-"))
        cfgs = {"builtin": ("@builtin", {})}
        cfgs.update(policies(cwd))
        res = {"floor": fl, "programs": {}}
        for name, prog in programs(cwd, quick).items():
            if not shutil.which(prog["cmd"][0]) or (name == "make" and not shutil.which("gcc")):
                continue
            row = measure(build, lib, prog, name, cfgs, cwd, fl)
            res["programs"][name] = row
            print("  %-8s %6.3f s without;" % (name, row["seconds_without"]) + "".join(
                " %s %.2fx (%d traps, %s, %s)" % (
                    p, row[p]["over_plain"], row[p]["traps"],
                    "%.2f x floor" % row[p]["overhead_over_trap_floor"]
                    if row[p]["overhead_over_trap_floor"] is not None else "-",
                    "%.2f x kernel" % row[p]["overhead_over_kernel"]
                    if row[p]["overhead_over_kernel"] is not None else "-")
                for p in cfgs))
        res["spread_calls_per_trap"] = spread_reuse(build, lib, cwd, policies(cwd))
        print("  reuse spread over many pages (slot_runs ring): calls a trap " + ", ".join(
            "%s %.2f" % (k, v) for k, v in res["spread_calls_per_trap"].items()
            if v is not None))
        if shutil.which("lua"):
            res["epochs"] = epoch_costs(build, lib, cwd, fl, quick)
            ep = res["epochs"]
            print("  epochs: lua sorting %d strings, %.3f s without;" % (
                ep["strings"], ep["seconds_without"]) + "".join(
                " %s %.2f s (%.2f of the bound, %s of the kernel's, %d traps, "
                "%d epochs: %.1f calls, %.2f ms each)" % (
                    k, v["seconds"], v["over_bound"],
                    "%.2f" % v["over_kernel_bound"] if v["over_kernel_bound"] else "-",
                    v["traps"], v["epochs"], v["calls_per_epoch"] or 0,
                    v["ms_per_epoch"] or 0)
                for k, v in ep.items() if isinstance(v, dict)))
        if not quick:
            res["many_blocks"] = many_blocks(build, lib, cwd)
            mb = res["many_blocks"]
            print("  10^6 live protected blocks (vm.max_map_count %d):" % mb["max_map_count"] +
                  "".join(" %s (%s) %d mappings, %.3f of the written blocks trapped, "
                          "%d fallbacks;" % (k, v["backend"], v["mappings"], v["kept"],
                                             v["fallbacks"])
                          for k, v in mb.items() if isinstance(v, dict)))
        res["process_overhead_ms"] = process_costs(build, lib, cwd)
        res["fork"] = fork_costs(build, lib, cwd)
        print("  fork with 10^4 live blocks: " + ", ".join(
            "%s %.2f ms (%d mappings)" % (m, v["fork_us"] / 1000, v["mappings"])
            for m, v in res["fork"].items()))
        print("  a process: +%s ms" % ", +".join(
            "%.2f %s" % (v, k) for k, v in res["process_overhead_ms"].items()))
        if not quick:
            res["memory"] = memory(build, lib, cwd)
            for prog, row in res["memory"].items():
                print("  %-5s %d KiB without;" % (prog, row["pss_kib_without"]) + "".join(
                    " %s %d KiB (%.2f of the bound, %d B a block)" % (
                        m, row[m]["pss_kib"], row[m]["over_bound"],
                        row[m]["bytes_per_block"] or 0)
                    for m in ("auto", "alias", "swizzle", "page")))
        with open(dest, "w") as f:
            json.dump(res, f, indent=2)
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
