#!/usr/bin/env python3
"""make bench-dsm: the RTL paper's Tables 7 and 8 for this machine, and the
DSM's own figures (miss latency, barriers, garbage collection).

Runs each DSM application (build/dsm/dsm-*) on 1 and 4 ranks (oversubscribed
where there are fewer cores) with pages (VM) and regions (RT), once on 2 and 8
for the counts per rank as ranks are added, and on 4 with
annotated regions (AN) and with regions on the kernel's written bits (WB: no
write trap where a region is a page or more), DSM_BENCH_REPS times each, all
in one run; prints
medians with the paper's figures beside them, the spreads, each run's whole
time and the time outside its timed section, Table 8's RT
overhead (trap counts times the cost of each kind of trap, measured here by
dsm-trapcost in the same run, as the paper did with its Table 4), the miss
latency distribution with and without doorbells, messages and bytes per
barrier at 2, 4 and 8 ranks, and 10^4 barriers with and without garbage
collection. Writes bench/out/dsm.json and bench/out/dsm.png; never edits
anything outside bench/out/.
"""
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "build"))
OUT = os.path.join(TOP, "bench", "out")
REPS = int(os.environ.get("DSM_BENCH_REPS", "5"))
NP = int(os.environ.get("DSM_BENCH_PROCS", "4"))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

# name, program, arguments, problem size as printed, paper row (or None)
APPS = [
    ("SOR", "sor", ["-r", "1024", "-c", "2048", "-i", "100"],
     "1026x2048 floats x2, 100 it", "SOR"),
    ("MM", "mm", ["-n", "640"], "640x640 doubles", "MM"),
    ("LU", "lu", ["-n", "1024", "-b", "64"], "1024x1024 doubles, 64x64 blocks", "LU"),
    ("FLOYD", "floyd", ["-n", "567"], "567 nodes", "FLOYD"),
    ("TSP", "tsp", ["-n", "19", "-s", "4"], "19 cities (seed 4)", "TSP"),
    ("TSP-17", "tsp", ["-n", "17", "-s", "4"], "17 cities (seed 4)", None),
    ("IS", "is", ["-k", str(1 << 22), "-b", str(1 << 15), "-i", "10"],
     "2^22 keys, 2^15 buckets, 10 it", "IS"),
    ("IS-2KB", "is", ["-k", str(1 << 22), "-b", str(1 << 9), "-i", "10"],
     "2^22 keys, 2^9 buckets, 10 it", None),
]

# DSM_BENCH_APPS: a comma-separated subset of the names above (a quick look).
if os.environ.get("DSM_BENCH_APPS"):
    APPS = [a for a in APPS if a[0] in os.environ["DSM_BENCH_APPS"].split(",")]

# The paper's Table 7 (seconds: 1 processor; VM, RT and AN on 4) and Table 8
# (traps on a typical processor; RT overhead % of the run; messages;
# kilobytes), SGI R4400 cluster over ATM.
PAPER7 = {
    "MM": ("640x640", "9 x ~1 MB", 81, 33, 22, 22),
    "SOR": ("200x4096, 100 it", "4097 x 8 KB", 46, 27, 16, 15),
    "LU": ("1024x1024, block 64", "1024 x 32 KB", 59, 34, 21, 22),
    "FLOYD": ("567 nodes", "567 x 2.2 KB", 137, 64, 48, 48),
    "TSP": ("19 city tour", "1 x 1 MB", 87, 73, 60, 51),
    "IS": ("2^22 keys, 2^9 bucket, 10 it", "1 x 2 KB", 22, 14, 10, 10),
}
PAPER8 = {  # traps RT, VM; messages RT, VM; KB RT, VM
    "MM": (3, 600, 7, 606, 2458, 2463),
    "SOR": (548, 2545, 490, 1863, 3226, 3256),
    "LU": (201, 1327, 528, 2068, 11475, 6495),
    "FLOYD": (709, 1702, 1721, 2559, 119, 2054),
    "TSP": (309, 2045, 940, 3320, 1077, 711),
    "IS": (40, 960, 93, 1013, 4021, 3914),
}
PAPER_OVERHEAD = {"MM": "<0.1%", "SOR": "1%", "LU": "0.5%", "FLOYD": "<0.1%",
                  "TSP": "0.3%", "IS": "6%"}


def log(msg):
    print("bench-dsm: " + msg, file=sys.stderr, flush=True)


def mpirun(np, prog, args, env=None, timeout=1800):
    cmd = ["mpirun", "--oversubscribe", "-np", str(np),
           os.path.join(BUILD, "dsm", prog)] + args
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=dict(ENV, **(env or {})), capture_output=True,
                       text=True, timeout=timeout)
    p.whole = time.monotonic() - t0
    shown = " ".join(cmd[:4] + [os.path.relpath(cmd[4], TOP)] + cmd[5:])
    if env:
        shown = " ".join("%s=%s" % kv for kv in env.items()) + " " + shown
    return p, shown


def result(p, shown):
    finish = {}
    for line in p.stdout.splitlines():
        if line.startswith("FINISH "):
            finish = json.loads(line[7:])
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["command"] = shown
            # The whole mpirun, and rank 0's time after the timed section:
            # its sequential run and check, then up to the DSM's end.
            r["whole"] = p.whole
            r["after"] = finish.get("after")
            r["check"] = finish.get("check")
            if p.returncode != 0 or ("ok" in r and not r["ok"]):
                sys.exit("bench-dsm: %s gave a wrong result:\n%s" % (shown, p.stdout))
            return r
    sys.exit("bench-dsm: %s failed (status %d):\n%s%s" %
             (shown, p.returncode, p.stdout[-2000:], p.stderr[-2000:]))


def app_run(prog, mode, np, args):
    p, shown = mpirun(np, "dsm-" + prog, ["-m", mode] + args)
    return result(p, shown)


def repeated(prog, mode, np, args):
    """All REPS runs; the counters of the median run, every time kept."""
    runs = sorted((app_run(prog, mode, np, args) for _ in range(REPS)),
                  key=lambda r: r["time"])
    m = dict(runs[len(runs) // 2])
    m["times"] = [r["time"] for r in runs]
    m["spread"] = {"min": runs[0]["time"], "median": m["time"], "max": runs[-1]["time"]}
    # Outside the timed section (start-up and finish), the median over runs.
    m["outside"] = statistics.median(r["whole"] - r["time"] for r in runs)
    m["outside_max"] = max(r["whole"] - r["time"] for r in runs)
    fin = [r["after"] - r["check"] for r in runs if r.get("after") is not None]
    m["finish"] = statistics.median(fin) if fin else float("nan")
    return m


def per_proc(r, key):
    return sum(x.get(key, 0) for x in r["ranks"]) / r["procs"]


def direction(rt, vm):
    if abs(rt - vm) <= 0.05 * max(rt, vm, 1e-9):
        return "="
    return "<" if rt < vm else ">"


def size_str(b):
    if b >= 1 << 20:
        return "%.1f MB" % (b / (1 << 20))
    if b >= 1 << 10:
        return "%.1f KB" % (b / 1024)
    return "%d B" % b


def regions(prog, args, nprocs):
    """How many shared allocations (the main ones) of what size."""
    a = dict(zip(args[::2], (int(v) for v in args[1::2])))
    if prog == "sor":
        return 2 * (a["-r"] + 2), a["-c"] * 4
    if prog == "mm":
        n = a["-n"]
        return 2 * nprocs + 1, n * n * 8 // nprocs
    if prog == "lu":
        return (a["-n"] // a["-b"]) ** 2, a["-b"] * a["-b"] * 8
    if prog == "floyd":
        return a["-n"], a["-n"] * 4
    if prog == "tsp":
        return 4, 5000 * 36 * 4  # the pool of partial tours is the largest
    return 1, a["-b"] * 4


# ---- the paper's tables ----

def trap_costs():
    """dsm-trapcost three times; per kind and size the median (ns)."""
    runs = []
    for _ in range(3):
        p = subprocess.run([os.path.join(BUILD, "dsm", "dsm-trapcost")],
                           capture_output=True, text=True, timeout=600)
        if p.returncode:
            sys.exit("bench-dsm: dsm-trapcost failed:\n" + p.stderr)
        runs.append(json.loads(p.stdout))
    return {k: {s: statistics.median(r[k][s] for r in runs) for s in runs[0][k]}
            for k in runs[0]}


def rt_overhead(r, cost):
    """The paper's estimate: each kind of trap times its cost alone, per
    processor, as a share of the run. A write trap's cost grows with the
    region (rtl copies it into the twin): a fixed part plus twin bytes at
    the per-byte slope measured between 64 KB and 1 MB."""
    slope = (cost["write"]["1048576"] - cost["write"]["65536"]) / (1048576 - 65536)
    reads = per_proc(r, "read_misses") + per_proc(r, "stale_traps")
    writes = per_proc(r, "write_traps")
    wmiss = per_proc(r, "write_misses")
    ns = (reads * cost["read"]["4096"] + writes * cost["write"]["64"] +
          wmiss * cost["none"]["64"] + per_proc(r, "twin_bytes") * slope)
    return 100.0 * ns * 1e-9 / r["time"]


def tables(results, cost):
    cores = os.cpu_count()
    print()
    print("Table 7, this machine (%d cores, %s; %d ranks oversubscribed): execution "
          "time in seconds, median of %d" % (cores, platform.machine(), NP, REPS))
    print("%-7s %-31s %-16s %5s %5s %5s %5s %5s %5s %-3s | %-5s %4s %4s %4s %4s %-3s" %
          ("app", "problem", "regions", "seq", "1 VM", "1 RT", "%d VM" % NP,
           "%d RT" % NP, "%d AN" % NP, "RT?", "paper", "1", "VM", "RT", "AN", "RT?"))
    for r in results:
        n, sz = r["regions"]
        vm, rt = r["vm%d" % NP]["time"], r["rt%d" % NP]["time"]
        p = PAPER7.get(r["paper"] or "")
        print("%-7s %-31s %-16s %5.2f %5.2f %5.2f %5.2f %5.2f %5.2f %-3s | %-5s %4s %4s %4s %4s %-3s" %
              (r["app"], r["problem"], "%d x %s" % (n, size_str(sz)),
               r["vm1"]["seq_time"], r["vm1"]["time"], r["rt1"]["time"], vm, rt,
               r["an%d" % NP]["time"], direction(rt, vm), "",
               p[2] if p else "-", p[3] if p else "-", p[4] if p else "-",
               p[5] if p else "-", direction(p[4], p[3]) if p else ""))
    print()
    print("Spread of the %d-rank times over %d runs (min / median / max, s):" % (NP, REPS))
    for r in results:
        print("  %-7s %s" % (r["app"], "   ".join(
            "%s %.2f/%.2f/%.2f" % ((m.upper(),) + tuple(r["%s%d" % (m, NP)]["spread"][k]
                                                       for k in ("min", "median", "max")))
            for m in ("vm", "rt", "an"))))

    print()
    print("Whole runs on %d ranks (median of %d; s): the timed section, the whole mpirun, "
          "the time outside the timed section (worst run), and of that the time from "
          "the end of rank 0's check to exit (the last barrier and dsm_finish)" % (NP, REPS))
    print("  %-7s %s" % ("", "   ".join("%-34s" % ("%s: timed  whole  outside (max)  finish" % m.upper())
                                        for m in ("vm", "rt"))))
    for r in results:
        print("  %-7s %s" % (r["app"], "   ".join(
            "%-34s" % ("    %5.2f  %5.2f  %5.2f (%5.2f)  %6.3f" %
                       (x["time"], x["time"] + x["outside"], x["outside"], x["outside_max"],
                        x["finish"]))
            for x in (r["vm%d" % NP], r["rt%d" % NP]))))

    print()
    print("Table 8, this machine: per processor on %d ranks (mean over ranks, median run),"
          " the paper's figures beside (its traps: a typical processor)" % NP)
    print("%-7s|%s|%s|%s|%s" % ("", "traps".center(34), "RT overhead".center(17),
                                "messages".center(34), "KBytes".center(34)))
    print("%-7s|%s|%s|%s|%s" % ("app", " %7s %7s %-1s %6s %6s  " % ("RT", "VM", "", "paper:", "VM"),
                                " %7s %8s " % ("here", "paper"),
                                " %7s %7s %-1s %6s %6s  " % ("RT", "VM", "", "paper:", "VM"),
                                " %7s %7s %-1s %6s %6s  " % ("RT", "VM", "", "paper:", "VM")))
    for r in results:
        a, b = r["rt%d" % NP], r["vm%d" % NP]
        p = PAPER8.get(r["paper"] or "")
        cells = []
        for k, (key, scale) in enumerate((("traps", 1), ("messages", 1), ("bytes", 1024))):
            x, y = per_proc(a, key) / scale, per_proc(b, key) / scale
            cells.append(" %7.0f %7.0f %-1s %6s %6s  " %
                         (x, y, direction(x, y), p[2 * k] if p else "", p[2 * k + 1] if p else ""))
        r["rt_overhead_pct"] = rt_overhead(a, cost)
        ov = " %6.2f%% %8s " % (r["rt_overhead_pct"], PAPER_OVERHEAD.get(r["paper"] or "", ""))
        print("%-7s|%s|%s|%s|%s" % (r["app"], cells[0], ov, cells[1], cells[2]))
    print()
    print("< RT smaller (faster, fewer) than VM; > larger; = within 5%%. RT overhead: "
          "traps x their cost alone (dsm-trapcost, this run: read %.1f us, write %.1f us "
          "+ %.1f us per MB twinned) over the run time. Stale rtl traps per processor "
          "(RT; resolved without a handler, counted with reads): %s" %
          (cost["read"]["4096"] / 1e3, cost["write"]["64"] / 1e3,
           (cost["write"]["1048576"] - cost["write"]["65536"]) / (1048576 - 65536) * (1 << 20) / 1e3,
           ", ".join("%s %.0f" % (r["app"], per_proc(r["rt%d" % NP], "stale_traps")) for r in results)))


SCALE = (1, 2, 4, 8)


def scaling(results):
    """Per rank, as the rank count grows: traps, messages and kilobytes (one
    run at 2 and 8 ranks; the median run at 1 and NP). Every run's result
    equals the sequential run's (result() stops the benchmark otherwise)."""
    print()
    print("Per rank as ranks are added (mean over ranks; oversubscribed on %d cores): "
          "traps / messages / KB" % os.cpu_count())
    print("  %-7s %-4s %s" % ("app", "", "".join("%-24s" % ("%d ranks" % n) for n in SCALE)))
    for r in results:
        for mode in ("vm", "rt"):
            cells = []
            for n in SCALE:
                x = r.get("%s%d" % (mode, n))
                cells.append("%-24s" % ("%.0f / %.0f / %.0f" % (
                    per_proc(x, "traps"), per_proc(x, "messages"),
                    per_proc(x, "bytes") / 1024) if x else "-"))
            print("  %-7s %-4s %s" % (r["app"] if mode == "vm" else "", mode.upper(),
                                      "".join(cells)))


def written_bits(results):
    """RT against WB: the same regions, their first writes seen by traps or
    by the kernel's written bits (harvested at each release)."""
    print()
    print("Written bits: regions (RT) against the same regions on the kernel's written "
          "bits (WB), %d ranks, per processor (mean over ranks, median run)" % NP)
    print("%-7s %6s %6s %-1s | %7s %7s %8s %-1s | %7s %7s %-1s | %8s %8s" %
          ("app", "RT s", "WB s", "", "traps", "traps", "written", "", "msgs", "msgs", "",
           "KB", "KB"))
    print("%-7s %6s %6s %-1s | %7s %7s %8s %-1s | %7s %7s %-1s | %8s %8s" %
          ("", "", "", "", "RT", "WB", "units WB", "", "RT", "WB", "", "RT", "WB"))
    for r in results:
        a, w = r["rt%d" % NP], r["wb%d" % NP]
        t1, t2 = per_proc(a, "traps"), per_proc(w, "traps")
        m1, m2 = per_proc(a, "messages"), per_proc(w, "messages")
        print("%-7s %6.2f %6.2f %-1s | %7.0f %7.0f %8.0f %-1s | %7.0f %7.0f %-1s | %8.0f %8.0f" %
              (r["app"], a["time"], w["time"], direction(w["time"], a["time"]), t1, t2,
               per_proc(w, "written_units"), direction(t2, t1), m1, m2, direction(m2, m1),
               per_proc(a, "bytes") / 1024, per_proc(w, "bytes") / 1024))
    print("WB: a region of a page or more takes no write trap (the kernel records its first "
          "write); its write notices come from region_dirty at each release. Smaller "
          "regions trap as in RT (FLOYD's rows, IS-2KB's bucket).")


# ---- the DSM's own figures ----

def pct(s, q):
    return s[min(len(s) - 1, int(q * len(s)))]


def latency():
    """dsm-latency on 2 ranks, pages and regions, with doorbells and polling."""
    out = []
    print()
    print("Miss latency on 2 ranks (us, trap to resume; 1000 misses per row): the rank "
          "holding the diffs spins in MPI_Bcast / computes / waits in dsm_barrier")
    print("%-4s %-9s %-8s %7s %7s %7s %7s %8s" % ("unit", "wait", "holder", "min", "median",
                                                  "p90", "p99", "max"))
    for mode in ("vm", "rt"):
        for doorbell in ("1", "0"):
            p, shown = mpirun(2, "dsm-latency", ["-m", mode, "-n", "200", "-r", "5"],
                              env={"DSM_DOORBELL": doorbell})
            r = result(p, shown)
            row = {"mode": mode, "doorbell": doorbell == "1", "command": shown}
            for busy in ("mpi", "compute", "barrier"):
                s = sorted(r[busy])
                row[busy] = {"min": s[0], "median": pct(s, 0.5), "p90": pct(s, 0.9),
                             "p99": pct(s, 0.99), "max": s[-1], "n": len(s)}
                print("%-4s %-9s %-8s %7.1f %7.1f %7.1f %7.1f %8.1f" %
                      (mode.upper(), "doorbell" if doorbell == "1" else "polling", busy,
                       s[0], pct(s, 0.5), pct(s, 0.9), pct(s, 0.99), s[-1]))
            out.append(row)
    return out


def barriers():
    out = []
    print()
    print("One barrier (arrivals and departures, all ranks; 200 barriers): messages, bytes, us")
    print("%5s %-12s | %8s %7s %7s | %8s %7s %7s" % ("ranks", "barrier", "messages", "bytes",
                                                   "us", "messages", "bytes", "us"))
    print("%5s %-12s | %-24s | %-24s" % ("", "", "nothing written", "an interval per rank"))
    for np in (2, 4, 8):
        for fanout in ([1] if np == 2 else [2, np - 1]):
            p, shown = mpirun(np, "dsm-barrier", ["-m", "rt", "-b", "200"],
                              env={"DSM_BARRIER_FANOUT": str(fanout)})
            r = result(p, shown)
            name = "at rank 0" if fanout == np - 1 else "tree of 2"
            e, w = r["empty"], r["written"]
            print("%5d %-12s | %8.1f %7.0f %7.1f | %8.1f %7.0f %7.1f" %
                  (np, name, e["messages"], e["bytes"], e["seconds"] * 1e6,
                   w["messages"], w["bytes"], w["seconds"] * 1e6))
            out.append(r)
    return out


def garbage():
    out = []
    print()
    print("10^4 barriers on 2 ranks, each rank rewriting 1 KB and reading its "
          "neighbour's: consistency data and peak RSS (rank 0)")
    print("%-4s %-14s %5s %10s %12s %14s %14s" % ("unit", "DSM_GC_BYTES", "runs", "freed KB",
                                                  "peak data KB", "RSS KB @1000",
                                                  "RSS KB @10^4"))
    for mode in ("vm", "rt"):
        for gc in ("1M", "off"):
            p, shown = mpirun(2, "tests/dsm-proto", ["longrun", mode, "10000"],
                              env={"DSM_GC_BYTES": gc})
            if p.returncode:
                sys.exit("bench-dsm: %s failed:\n%s%s" % (shown, p.stdout[-2000:], p.stderr[-2000:]))
            line = next(l for l in p.stdout.splitlines() if l.startswith("longrun rank 0:"))
            val = dict(re.findall(r"(\w+) (\d+)", line))
            rss = [int(x) for x in re.findall(r"at \d+: (\d+)", line)]
            row = {"mode": mode, "gc_bytes": gc, "barriers": 10000,
                   "gc_runs": int(val["gc_runs"]), "gc_freed_kb": int(val["gc_freed_kb"]),
                   "cons_peak_kb": int(val["cons_peak_kb"]),
                   "maxrss_kb_at_1000": rss[0], "maxrss_kb_at_10000": rss[1],
                   "command": shown}
            out.append(row)
            print("%-4s %-14s %5d %10d %12d %14d %14d" %
                  (mode.upper(), gc, row["gc_runs"], row["gc_freed_kb"], row["cons_peak_kb"],
                   rss[0], rss[1]))
    return out


def main():
    if not os.path.exists(os.path.join(BUILD, "dsm", "dsm-sor")):
        sys.exit("bench-dsm: %s/dsm/dsm-sor not built (is MPI installed? run make)" % BUILD)
    os.makedirs(OUT, exist_ok=True)
    with open("/proc/loadavg") as f:
        load_before = f.read().split()[:3]
    log("load average %s; the machine may be shared: every figure below is from this one run"
        % " ".join(load_before))
    cost = trap_costs()
    results = []
    for name, prog, args, desc, paper in APPS:
        row = {"app": name, "program": prog, "args": args, "problem": desc, "paper": paper}
        for mode, np in (("vm", 1), ("rt", 1), ("vm", NP), ("rt", NP), ("an", NP),
                         ("wb", NP)):
            log("%-7s %s on %d rank(s) x%d ..." % (name, mode, np, REPS))
            row["%s%d" % (mode, np)] = repeated(prog, mode, np, args)
        for np in (n for n in SCALE if n not in (1, NP)):
            for mode in ("vm", "rt"):
                log("%-7s %s on %d ranks (counts) ..." % (name, mode, np))
                row["%s%d" % (mode, np)] = app_run(prog, mode, np, args)
        row["regions"] = regions(prog, args, NP)
        results.append(row)
    tables(results, cost)
    scaling(results)
    written_bits(results)
    log("miss latency ...")
    lat = latency()
    log("barriers ...")
    bar = barriers()
    log("10^4 barriers with and without collection ...")
    gc = garbage()
    with open("/proc/loadavg") as f:
        load_after = f.read().split()[:3]

    data = {
        "machine": {"cores": os.cpu_count(), "kernel": platform.release(),
                    "processor": platform.processor(),
                    "load_average_before": load_before, "load_average_after": load_after},
        "command": "make bench-dsm", "reps": REPS, "procs": NP,
        "paper": {"table7": PAPER7, "table8": PAPER8, "rt_overhead": PAPER_OVERHEAD},
        "trap_cost_ns": cost,
        "results": results,
        "miss_latency_us": lat,
        "barrier": bar,
        "gc": gc,
    }
    with open(os.path.join(OUT, "dsm.json"), "w") as f:
        json.dump(data, f, indent=1)
    plot(results)
    print("\nwrote bench/out/dsm.json%s (load average before %s, after %s)" %
          (" and bench/out/dsm.png" if os.path.exists(os.path.join(OUT, "dsm.png")) else "",
           " ".join(load_before), " ".join(load_after)))


def plot(results):
    if not shutil.which("gnuplot"):
        log("gnuplot not found, no PNG")
        return
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "dsm.dat")
        with open(dat, "w") as f:
            f.write("# app vm_time rt_time an_time vm_traps rt_traps vm_msgs rt_msgs "
                    "wb_time wb_traps wb_msgs\n")
            for r in results:
                a, b, c, w = (r["rt%d" % NP], r["vm%d" % NP], r["an%d" % NP],
                              r["wb%d" % NP])
                f.write("%s %f %f %f %f %f %f %f %f %f %f\n" % (
                    r["app"], b["time"], a["time"], c["time"], per_proc(b, "traps"),
                    per_proc(a, "traps"), per_proc(b, "messages"), per_proc(a, "messages"),
                    w["time"], max(per_proc(w, "traps"), 1), per_proc(w, "messages")))
        gp = """
set terminal pngcairo size 1300,420 font ',10'
set output '{out}'
set multiplot layout 1,3 title 'DSM on {np} ranks: pages (VM), regions (RT), annotated regions (AN), regions on written bits (WB); this machine (make bench-dsm)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics nomirror rotate by -30
set grid ytics
set yrange [0:*]
set title 'execution time (s, median)'
plot '{dat}' using 2:xtic(1) title 'VM' lc rgb '#d95f02', '' using 3 title 'RT' lc rgb '#1b9e77', '' using 4 title 'AN' lc rgb '#7570b3', '' using 9 title 'WB' lc rgb '#e7298a'
set logscale y
set yrange [1:*]
set title 'traps per processor (log)'
plot '{dat}' using 5:xtic(1) title 'VM' lc rgb '#d95f02', '' using 6 title 'RT' lc rgb '#1b9e77', '' using 10 title 'WB' lc rgb '#e7298a'
set title 'messages per processor (log)'
plot '{dat}' using 7:xtic(1) title 'VM' lc rgb '#d95f02', '' using 8 title 'RT' lc rgb '#1b9e77', '' using 11 title 'WB' lc rgb '#e7298a'
unset multiplot
""".format(out=os.path.join(OUT, "dsm.png"), dat=dat, np=NP)
        subprocess.run(["gnuplot"], input=gp, text=True, check=True)


if __name__ == "__main__":
    main()
