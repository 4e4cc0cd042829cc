#!/usr/bin/env python3
"""make bench, preload part: malloc+free throughput routed through rtl's
preload against glibc and plain jemalloc (1 and 2 threads), and a real
program (sqlite3 inserting 10^5 rows) with nothing routed and with
everything routed, as ratios to no preload. Writes OUT/preload.json.

Skipped, with a message, when BUILD/preload/librtlpreload.so does not exist
(RTL_BENCH_PRELOAD may name another library to try the driver). Uses the
preload only through LD_PRELOAD and RTL_CONFIG, the policies in
bench/preload/."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
ROWS = 100000


def configs(lib):
    pol = os.path.join(HERE, "preload")
    return {
        "plain": {},
        "jemalloc": {"LD_PRELOAD": JEMALLOC},
        "preload_none": {"LD_PRELOAD": lib,
                         "RTL_CONFIG": os.path.join(pol, "none.ini")},
        "preload_all": {"LD_PRELOAD": lib,
                        "RTL_CONFIG": os.path.join(pol, "all.ini")},
    }


def run(cmd, extra, cwd, stdin=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "RTL_CONFIG")}
    env.update(extra)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, cwd=cwd, input=stdin,
                       capture_output=True)
    t = time.perf_counter() - t0
    if r.returncode:
        raise RuntimeError("%s under %s: exit %d\n%s" % (
            cmd[0], extra, r.returncode, r.stderr.decode(errors="replace")))
    return t, r.stdout


def malloc_figures(build, cfgs, reps, ops, cwd):
    prog = os.path.join(build, "bench", "rtl-malloc-bench")
    out = {}
    for threads in (1, 2, 4):
        row = {}
        for name, extra in cfgs.items():
            best = None
            for _ in range(reps):
                _, so = run([prog, str(threads), str(ops)], extra, cwd)
                ns = float(so.split()[1])
                best = ns if best is None else min(best, ns)
            row[name] = {"ns_per_op": best}
        for name in row:
            row[name]["over_glibc"] = row[name]["ns_per_op"] / \
                row["plain"]["ns_per_op"]
            row[name]["over_jemalloc"] = row[name]["ns_per_op"] / \
                row["jemalloc"]["ns_per_op"]
        out["%d_thread%s" % (threads, "s" if threads > 1 else "")] = row
    return out


def sqlite_script(rows):
    lines = ["CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);",
             "BEGIN;"]
    lines += ["INSERT INTO t(b, c) VALUES('row %d', %d.5);" % (i, i)
              for i in range(rows)]
    lines += ["COMMIT;", "SELECT count(*), sum(c) FROM t;"]
    return ("\n".join(lines) + "\n").encode()


def program_figures(cfgs, reps, rows, cwd):
    script = sqlite_script(rows)
    out, answer = {}, None
    for name, extra in cfgs.items():
        best = None
        for _ in range(reps):
            t, so = run(["sqlite3", ":memory:"], extra, cwd, stdin=script)
            if answer is None:
                answer = so
            elif so != answer:
                raise RuntimeError("sqlite3 output differs under " + name)
            best = t if best is None else min(best, t)
        out[name] = {"seconds": best,
                     "over_plain": None}
    for name in out:
        out[name]["over_plain"] = out[name]["seconds"] / \
            out["plain"]["seconds"]
    return out


# Time per write trap, each block written once under protect = read, by
# mechanism: small blocks (auto: a slot of their own, one protection call
# on one page; swizzle: registers moved; alias: an mmap'd alias each) and
# blocks of whole pages (swizzle protects them in place; auto in place
# under mprotect, in the copy of such blocks under page tables; alias).
# The /mprotect rows: the same with RTL_PROTECT=mprotect.
GRANTS = {
    "auto_small": (64, "size = 48..64\nmechanism = auto\n", {}),
    "swizzle_small": (64, "size = 48..64\nmechanism = swizzle\n", {}),
    "alias_small": (64, "size = 48..64\nmechanism = alias\n", {}),
    "auto_in_place": (65536, "size = 32K..128K\nmechanism = auto\n", {}),
    "swizzle_in_place": (65536, "size = 32K..128K\nmechanism = swizzle\n", {}),
    "alias": (65536, "size = 32K..128K\nmechanism = alias\n", {}),
    "auto_small/mprotect": (64, "size = 48..64\nmechanism = auto\n",
                            {"RTL_PROTECT": "mprotect"}),
    "auto_in_place/mprotect": (65536, "size = 32K..128K\nmechanism = auto\n",
                               {"RTL_PROTECT": "mprotect"}),
}
# In place whatever the backend; auto's in place only under mprotect.
IN_PLACE = ("swizzle_in_place", "auto_in_place/mprotect")


def grant_figures(build, lib, reps, blocks, cwd):
    prog = os.path.join(build, "tests", "progs", "malloc_loop")
    out = {}
    for name, (size, rule, env) in GRANTS.items():
        file = name.replace("/", "-")
        pol = os.path.join(cwd, "grant-%s.ini" % file)
        rep = os.path.join(cwd, "grant-%s.json" % file)
        raw = os.path.join(cwd, "grant-%s.raw" % file)
        with open(pol, "w") as f:
            f.write("[rtl]\nreport = %s\n[rule r]\n%sprotect = read\n"
                    % (rep, rule))
        best = None
        for _ in range(reps):
            run([prog, str(blocks), str(size)],
                dict({"LD_PRELOAD": lib, "RTL_CONFIG": pol}, **env), cwd)
            t = totals(build, raw)
            if t["write_traps"] != 2 * blocks:
                raise RuntimeError("%s: %d write traps, want %d" % (
                    name, t["write_traps"], 2 * blocks))
            if name in IN_PLACE and t["in_place_protects"] == 0:
                raise RuntimeError("%s: no in-place protection change" % name)
            ns = t["trap_ns"] / t["traps"]
            best = ns if best is None else min(best, ns)
        out[name] = {"block_bytes": size, "ns_per_trap": best}
    out["in_place_over_alias"] = out["swizzle_in_place"]["ns_per_trap"] / \
        out["alias"]["ns_per_trap"]
    out["in_place_over_small"] = out["swizzle_in_place"]["ns_per_trap"] / \
        out["swizzle_small"]["ns_per_trap"]
    out["auto_small_over_swizzle"] = out["auto_small"]["ns_per_trap"] / \
        out["swizzle_small"]["ns_per_trap"]
    out["auto_small_over_alias"] = out["auto_small"]["ns_per_trap"] / \
        out["alias_small"]["ns_per_trap"]
    return out


def totals(build, raw):
    """The totals of the raw record a process left (then removed)."""
    r = subprocess.run([os.path.join(build, "tools", "rtlctl"), "report",
                        "--json", raw], capture_output=True, text=True, check=True)
    os.unlink(raw)
    return json.loads(r.stdout)["totals"]


def policy_file(cwd, name, text):
    path = os.path.join(cwd, name + ".ini")
    with open(path, "w") as f:
        f.write(text)
    return path


MECHANISMS = ("auto", "swizzle", "alias", "page")


def spread(values):
    """Median and the lowest and highest of a few runs."""
    v = sorted(values)
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return {"median": med, "min": v[0], "max": v[-1]}


def ns_of(so, word):
    for line in so.decode().splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == word:
            return float(parts[1])
    raise RuntimeError("no %s in: %s" % (word, so.decode()[-300:]))


# malloc+free with every block routed (rtl-malloc-bench, 16 B to 4 KiB,
# each block written once), by mechanism, 1 and 2 threads: under protect
# = rw nothing traps, so this is routing alone (site attribution on, as
# the preload always has it); under protect = read each block takes one
# write trap and its grant. glibc and heaptrack (a backtrace per
# allocation too) on the same program, and the page-protection trap
# (fault + mprotect, rtl-malloc-bench page-trap) that protect = read is
# held against, taken by as many threads as the pairs, in the same rounds: each round runs every configuration
# once, so all of them see the same machine.
def routed_malloc(build, lib, reps, ops, cwd):
    prog = os.path.join(build, "bench", "rtl-malloc-bench")
    runs = {}
    for threads in (1, 2):
        runs["glibc_%d" % threads] = ([prog, str(threads), str(ops)], {})
        for prot in ("rw", "read"):
            for mech in MECHANISMS:
                pol = policy_file(cwd, "malloc-%s-%s" % (prot, mech),
                                  "[rtl]\nreport = \"\"\n[rule r]\nsize = 0..\n"
                                  "protect = %s\nmechanism = %s\n" % (prot, mech))
                runs["%s_%s_%d" % (prot, mech, threads)] = (
                    [prog, str(threads), str(ops)],
                    {"LD_PRELOAD": lib, "RTL_CONFIG": pol})
    # protect = read with the mprotect fallback, one thread, beside.
    for mech in MECHANISMS:
        runs["read_%s_1_mprotect" % mech] = (
            [prog, "1", str(ops)],
            {"LD_PRELOAD": lib, "RTL_CONFIG": os.path.join(cwd, "malloc-read-%s.ini" % mech),
             "RTL_PROTECT": "mprotect"})
    runs["page_trap"] = ([prog, "page-trap", str(ops)], {})
    runs["page_trap_2"] = ([prog, "page-trap", str(ops), "2"], {})
    heaptrack = shutil.which("heaptrack")
    if heaptrack:
        runs["heaptrack_1"] = ([heaptrack, "-o", os.path.join(cwd, "ht"),
                                prog, "1", str(ops)], {})
    got = {k: [] for k in runs}
    for _ in range(reps):
        for name, (cmd, extra) in runs.items():
            _, so = run(cmd, extra, cwd)
            got[name].append(ns_of(so, "ns_per_trap" if name.startswith("page_trap")
                                   else "ns_per_op"))
    fig = {k: spread(v) for k, v in got.items()}
    out = {"ns": fig, "over_glibc": {}, "read_over_budget": {}}
    for threads in (1, 2):
        glibc = fig["glibc_%d" % threads]["median"]
        trap = fig["page_trap" if threads == 1 else "page_trap_2"]["median"]
        for mech in MECHANISMS:
            key = "%s_%d" % (mech, threads)
            out["over_glibc"][key] = \
                fig["rw_%s_%d" % (mech, threads)]["median"] / glibc
            # protect = read: glibc's pair plus 1.3 page traps at most
            out["read_over_budget"][key] = \
                fig["read_%s_%d" % (mech, threads)]["median"] / \
                (glibc + 1.3 * trap)
            if threads == 1:
                out["read_over_budget"][key + "/mprotect"] = \
                    fig["read_%s_1_mprotect" % mech]["median"] / (glibc + 1.3 * trap)
    if heaptrack:
        out["heaptrack_over_glibc"] = fig["heaptrack_1"]["median"] / \
            fig["glibc_1"]["median"]
    return out



def parse_wrap(text):
    """rtl-syscall-wrap's second line: wrapped X libc Y syscall Z ..."""
    words = text.decode().split("\n")[1].split()
    return {words[i]: float(words[i + 1]) for i in (0, 2, 4)}


# The seccomp mechanism (docs/syscalls.md, "Every call"): what its filter
# adds to a call on other memory (a stack buffer), and a trapped call's
# round trip (a 64-byte block of rtl's memory: SIGSYS, the buffer
# resolved, the call made from rtl's trampoline), against the wrappers'
# way. The rule that can trap (a size nothing here allocates) is what
# makes the preload install the filter.
def syscall_figures(build, lib, n, cwd):
    prog = os.path.join(build, "bench", "rtl-syscall-wrap")
    trap_rule = "[rule filter-on]\nsize = 77777\nprotect = read\n"
    heap_rule = "[rule buf]\nsize = 64\nprotect = rw\n"
    out = {"plain_stack": parse_wrap(run([prog, str(n)], {}, cwd)[1])}
    for mode in ("seccomp", "wrappers"):
        for where in ("stack", "heap"):
            pol = policy_file(cwd, "sys-%s-%s" % (mode, where),
                              "[rtl]\nreport = \"\"\nsyscalls = %s\n%s%s" %
                              (mode, trap_rule, heap_rule))
            cmd = [prog, str(n)] + (["heap"] if where == "heap" else [])
            out["%s_%s" % (mode, where)] = parse_wrap(
                run(cmd, {"LD_PRELOAD": lib, "RTL_CONFIG": pol}, cwd)[1])
    out["filter_ns"] = out["seccomp_stack"]["syscall"] - \
        out["wrappers_stack"]["syscall"]
    out["sigsys_round_trip_ns"] = out["seccomp_heap"]["syscall"]
    out["sigsys_over_syscall"] = out["seccomp_heap"]["syscall"] / \
        out["wrappers_stack"]["syscall"]
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: preload.py BUILD OUT [--quick]")
    build, outdir = os.path.abspath(sys.argv[1]), sys.argv[2]
    quick = "--quick" in sys.argv[3:]
    dest = os.path.join(outdir, "preload.json")
    lib = os.environ.get("RTL_BENCH_PRELOAD") or os.path.join(
        build, "preload", "librtlpreload.so")
    if not os.path.exists(lib):
        print("\nPreload: skipped, %s does not exist (the preload is not "
              "built);\npreload_none_over_plain and preload_all_over_plain "
              "will be null." % lib)
        if os.path.exists(dest):
            os.remove(dest)
        return
    lib = os.path.abspath(lib)
    cfgs = configs(lib)
    reps = 2 if quick else 5
    try:
        with tempfile.TemporaryDirectory() as cwd:  # reports land here
            mal = malloc_figures(build, cfgs, reps,
                                 2000 if quick else 1000000, cwd)
            prog = program_figures({k: cfgs[k] for k in
                                    ("plain", "preload_none", "preload_all")},
                                   reps, 1000 if quick else ROWS, cwd)
            grants = grant_figures(build, lib, reps if quick else 3,
                                   1000 if quick else 20000, cwd)
            routed = routed_malloc(build, lib, reps if quick else 3,
                                   2000 if quick else 200000, cwd)
            sysc = syscall_figures(build, lib, 30000 if quick else 600000,
                                   cwd)
    except (RuntimeError, OSError) as e:
        print("\nPreload: FAILED, its keys in summary.json are null:\n%s" % e)
        with open(dest, "w") as f:
            json.dump({"library": lib, "error": str(e),
                       "summary": {"none_over_plain": None,
                                   "all_over_plain": None}}, f, indent=2)
        return
    res = {
        "library": lib,
        "malloc_free": mal,
        "sqlite3_insert": dict(prog, rows=1000 if quick else ROWS),
        "write_trap_grants": grants,
        "routed_malloc": routed,
        "syscalls": sysc,
        "summary": {"none_over_plain": prog["preload_none"]["over_plain"],
                    "all_over_plain": prog["preload_all"]["over_plain"]},
    }
    with open(dest, "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    print("\nPreload (%s), min of %d runs" % (lib, reps))
    print("malloc+free, ns per pair:   %10s %10s %13s %12s" %
          ("glibc", "jemalloc", "preload-none", "preload-all"))
    for k, row in mal.items():
        print("  %-26s %10.1f %10.1f %13.1f %12.1f" % (
            k.replace("_", " "), row["plain"]["ns_per_op"],
            row["jemalloc"]["ns_per_op"], row["preload_none"]["ns_per_op"],
            row["preload_all"]["ns_per_op"]))
    print("sqlite3, %d inserts:       %10.3f s   nothing routed %.3f x   "
          "everything routed %.3f x" % (
              res["sqlite3_insert"]["rows"], prog["plain"]["seconds"],
              prog["preload_none"]["over_plain"],
              prog["preload_all"]["over_plain"]))
    print("write trap, granted, ns:    %8s %8s %8s" %
          ("auto", "swizzle", "alias"))
    print("  64 B blocks               %8.0f %8.0f %8.0f" % (
        grants["auto_small"]["ns_per_trap"],
        grants["swizzle_small"]["ns_per_trap"],
        grants["alias_small"]["ns_per_trap"]))
    print("  64 KiB blocks             %8.0f %8.0f %8.0f   (swizzle: in place; "
          "auto: its own pages)" % (grants["auto_in_place"]["ns_per_trap"],
                                    grants["swizzle_in_place"]["ns_per_trap"],
                                    grants["alias"]["ns_per_trap"]))
    print("  under mprotect: auto 64 B %.0f, auto 64 KiB (in place) %.0f" % (
        grants["auto_small/mprotect"]["ns_per_trap"],
        grants["auto_in_place/mprotect"]["ns_per_trap"]))
    ns = routed["ns"]
    print("routed malloc+free, ns per pair (median of %d; glibc %.0f / %.0f "
          "with 1 / 2 threads,\n  page trap %.0f / %.0f):" % (
              reps if quick else 3, ns["glibc_1"]["median"],
              ns["glibc_2"]["median"], ns["page_trap"]["median"],
              ns["page_trap_2"]["median"]))
    print("  %-22s" % "" + "".join("%12s" % m for m in MECHANISMS))
    for prot in ("rw", "read"):
        for threads in (1, 2):
            print("  %-22s" % ("protect = %s, %d thr" % (prot, threads)) +
                  "".join("%12.0f" % ns["%s_%s_%d" % (prot, m, threads)]["median"]
                          for m in MECHANISMS))
    for threads in (1, 2):
        print("  rw / glibc, %d thr      " % threads + "".join(
            "%12.2f" % routed["over_glibc"]["%s_%d" % (m, threads)]
            for m in MECHANISMS) + "   (<= 3)")
    for threads in (1, 2):
        print("  read / budget, %d thr   " % threads + "".join(
            "%12.2f" % routed["read_over_budget"]["%s_%d" % (m, threads)]
            for m in MECHANISMS) + "   (<= 1)")
    print("  read / budget, mprotect" + "".join(
        "%12.2f" % routed["read_over_budget"]["%s_1/mprotect" % m]
        for m in MECHANISMS) + "   (<= 1)")
    if "heaptrack_over_glibc" in routed:
        print("  heaptrack / glibc: %.2f" % routed["heaptrack_over_glibc"])
    print("system calls, read 64 B, ns: raw %.0f without rtl; seccomp filter "
          "+%.0f per call; trapped call (SIGSYS) %.0f = %.1f x a call" % (
              sysc["plain_stack"]["syscall"], sysc["filter_ns"],
              sysc["sigsys_round_trip_ns"], sysc["sigsys_over_syscall"]))


if __name__ == "__main__":
    main()
