#!/usr/bin/env python3
"""make bench-dsm: the RTL paper's Tables 7 and 8 for this machine.

Runs each DSM application (build/dsm/dsm-*) on 1 and 4 ranks (oversubscribed
where there are fewer cores), with pages (VM) and with regions (RT), keeps
the fastest of DSM_BENCH_REPS runs, prints both tables with the paper's
figures beside them, and writes bench/out/dsm.json and bench/out/dsm.png.
Never edits anything outside bench/out/.
"""
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "build"))
OUT = os.path.join(TOP, "bench", "out")
REPS = int(os.environ.get("DSM_BENCH_REPS", "5"))
NP = int(os.environ.get("DSM_BENCH_PROCS", "4"))

# name, program, arguments, problem size as printed, paper row (or None)
APPS = [
    ("SOR", "sor", ["-r", "1024", "-c", "2048", "-i", "100"],
     "1026x2048 floats x2, 100 it", "SOR"),
    ("MM", "mm", ["-n", "640"], "640x640 doubles", "MM"),
    ("LU", "lu", ["-n", "1024", "-b", "64"], "1024x1024 doubles, 64x64 blocks", "LU"),
    ("FLOYD", "floyd", ["-n", "567"], "567 nodes", "FLOYD"),
    ("IS", "is", ["-k", str(1 << 22), "-b", str(1 << 15), "-i", "10"],
     "2^22 keys, 2^15 buckets, 10 it", "IS"),
    ("IS-2KB", "is", ["-k", str(1 << 22), "-b", str(1 << 9), "-i", "10"],
     "2^22 keys, 2^9 buckets, 10 it", None),
]

# The paper's Table 7 (seconds: 1 processor, VM and RT on 4) and Table 8
# (traps on a typical processor; messages; kilobytes), SGI R4400 cluster.
PAPER7 = {
    "MM": ("640x640", "9 x ~1 MB", 81, 33, 22),
    "SOR": ("200x4096, 100 it", "4097 x 8 KB", 46, 27, 16),
    "LU": ("1024x1024, block 64", "1024 x 32 KB", 59, 34, 21),
    "FLOYD": ("567 nodes", "567 x 2.2 KB", 137, 64, 48),
    "IS": ("2^22 keys, 2^9 bucket, 10 it", "1 x 2 KB", 22, 14, 10),
}
PAPER8 = {  # traps RT, VM; messages RT, VM; KB RT, VM
    "MM": (3, 600, 7, 606, 2458, 2463),
    "SOR": (548, 2545, 490, 1863, 3226, 3256),
    "LU": (201, 1327, 528, 2068, 11475, 6495),
    "FLOYD": (709, 1702, 1721, 2559, 119, 2054),
    "IS": (40, 960, 93, 1013, 4021, 3914),
}


def regions(prog, args, nprocs):
    """How many shared allocations of what size the program makes."""
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
    return 1, a["-b"] * 4


def size_str(b):
    if b >= 1 << 20:
        return "%.1f MB" % (b / (1 << 20))
    if b >= 1 << 10:
        return "%.1f KB" % (b / 1024)
    return "%d B" % b


def run(prog, mode, np, args):
    cmd = ["mpirun", "--oversubscribe", "-np", str(np),
           os.path.join(BUILD, "dsm", "dsm-" + prog), "-m", mode] + args
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["command"] = " ".join(cmd[:4] + [os.path.relpath(cmd[4], TOP)] + cmd[5:])
            if p.returncode != 0 or not r["ok"]:
                sys.exit("bench-dsm: %s gave a wrong result:\n%s" % (" ".join(cmd), p.stdout))
            return r
    sys.exit("bench-dsm: %s failed (status %d):\n%s%s" %
             (" ".join(cmd), p.returncode, p.stdout[-2000:], p.stderr[-2000:]))


def best(prog, mode, np, args):
    runs = [run(prog, mode, np, args) for _ in range(REPS)]
    b = min(runs, key=lambda r: r["time"])
    b["times"] = [r["time"] for r in runs]
    return b


def per_proc(r, key):
    return sum(x[key] for x in r["ranks"]) / r["procs"]


def direction(rt, vm):
    if abs(rt - vm) <= 0.05 * max(rt, vm, 1e-9):
        return "="
    return "<" if rt < vm else ">"


def verdict(here, paper):
    if paper is None:
        return ""
    return "as paper" if here == paper else "UNLIKE paper"


def main():
    if not os.path.exists(os.path.join(BUILD, "dsm", "dsm-sor")):
        sys.exit("bench-dsm: %s/dsm/dsm-sor not built (is MPI installed? run make)" % BUILD)
    os.makedirs(OUT, exist_ok=True)
    cores = os.cpu_count()
    results = []
    for name, prog, args, desc, paper in APPS:
        row = {"app": name, "program": prog, "args": args, "problem": desc, "paper": paper}
        for mode in ("vm", "rt"):
            for np in (1, NP):
                print("bench-dsm: %-6s %s on %d rank(s) x%d ..." % (name, mode, np, REPS),
                      file=sys.stderr, flush=True)
                row["%s%d" % (mode, np)] = best(prog, mode, np, args)
        row["regions"] = regions(prog, args, NP)
        results.append(row)

    print()
    print("Table 7, this machine (%d cores, %s; %d ranks oversubscribed): execution "
          "time in seconds, fastest of %d" % (cores, platform.machine(), NP, REPS))
    print("%-7s %-32s %-16s %6s %6s %6s %6s %6s %-4s | %-6s %5s %5s %5s %-3s" %
          ("app", "problem", "regions", "seq", "1 VM", "1 RT", "%d VM" % NP, "%d RT" % NP,
           "RT?", "paper:", "1", "VM", "RT", "RT?"))
    for r in results:
        n, sz = r["regions"]
        vm, rt = r["vm%d" % NP]["time"], r["rt%d" % NP]["time"]
        d = direction(rt, vm)
        p = PAPER7.get(r["paper"] or "")
        pd = direction(p[4], p[3]) if p else None
        print("%-7s %-32s %-16s %6.2f %6.2f %6.2f %6.2f %6.2f %-4s | %-6s %5s %5s %5s %-3s %s" %
              (r["app"], r["problem"], "%d x %s" % (n, size_str(sz)),
               r["vm1"]["seq_time"], r["vm1"]["time"], r["rt1"]["time"], vm, rt, d, "",
               p[2] if p else "-", p[3] if p else "-", p[4] if p else "-",
               pd or "", verdict(d, pd)))

    print()
    print("Table 8, this machine: per processor on %d ranks (mean over ranks), with the "
          "paper's RT and VM figures (traps: a typical processor)" % NP)
    print("%-7s|%s|%s|%s" % ("", "traps".center(42), "messages".center(42),
                             "KBytes".center(42)))
    print("%-7s|%s|%s|%s" % (("app",) + (" %8s %8s %-2s %6s %6s %-6s" %
                                           ("RT", "VM", "", "paper:", "VM", ""),) * 3))
    for r in results:
        a, b = r["rt%d" % NP], r["vm%d" % NP]
        p = PAPER8.get(r["paper"] or "")
        cells = []
        for k, (key, scale) in enumerate((("traps", 1), ("messages", 1), ("bytes", 1024))):
            x, y = per_proc(a, key) / scale, per_proc(b, key) / scale
            d = direction(x, y)
            pd = direction(p[2 * k], p[2 * k + 1]) if p else None
            cells.append(" %8.0f %8.0f %-2s %6s %6s %-6s" %
                         (x, y, d, p[2 * k] if p else "", p[2 * k + 1] if p else "",
                          {"as paper": "same", "UNLIKE paper": "UNLIKE"}.get(verdict(d, pd), "")))
        print("%-7s|%s|%s|%s" % (r["app"], cells[0], cells[1], cells[2]))
    print()
    print("RT?, and the column after each pair: < RT smaller (faster, fewer) than VM; "
          "> larger; = within 5%; then whether the paper's pair points the same way. "
          "Stale rtl traps (RT, resolved without a handler) are not in 'traps':")
    for r in results:
        print("  %-7s stale traps per processor: %.0f" % (r["app"], per_proc(r["rt%d" % NP], "stale_traps")))

    data = {
        "machine": {"cores": cores, "kernel": platform.release(), "processor": platform.processor()},
        "command": "make bench-dsm", "reps": REPS, "procs": NP,
        "paper": {"table7": PAPER7, "table8": PAPER8},
        "results": results,
    }
    with open(os.path.join(OUT, "dsm.json"), "w") as f:
        json.dump(data, f, indent=1)
    plot(results)
    print("\nwrote bench/out/dsm.json%s" %
          (" and bench/out/dsm.png" if os.path.exists(os.path.join(OUT, "dsm.png")) else ""))


def plot(results):
    if not shutil.which("gnuplot"):
        print("bench-dsm: gnuplot not found, no PNG", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "dsm.dat")
        with open(dat, "w") as f:
            f.write("# app vm_time rt_time vm_traps rt_traps vm_msgs rt_msgs\n")
            for r in results:
                a, b = r["rt%d" % NP], r["vm%d" % NP]
                f.write("%s %f %f %f %f %f %f\n" % (
                    r["app"], b["time"], a["time"], per_proc(b, "traps"), per_proc(a, "traps"),
                    per_proc(b, "messages"), per_proc(a, "messages")))
        gp = """
set terminal pngcairo size 1200,420 font ',10'
set output '{out}'
set multiplot layout 1,3 title 'DSM on {np} ranks: pages (VM) against regions (RT), this machine (make bench-dsm)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set xtics nomirror
set grid ytics
set yrange [0:*]
set title 'execution time (s)'
plot '{dat}' using 2:xtic(1) title 'VM' lc rgb '#d95f02', '' using 3 title 'RT' lc rgb '#1b9e77'
set logscale y
set yrange [1:*]
set title 'traps per processor (log)'
plot '{dat}' using 4:xtic(1) title 'VM' lc rgb '#d95f02', '' using 5 title 'RT' lc rgb '#1b9e77'
set title 'messages per processor (log)'
plot '{dat}' using 6:xtic(1) title 'VM' lc rgb '#d95f02', '' using 7 title 'RT' lc rgb '#1b9e77'
unset multiplot
""".format(out=os.path.join(OUT, "dsm.png"), dat=dat, np=NP)
        subprocess.run(["gnuplot"], input=gp, text=True, check=True)


if __name__ == "__main__":
    main()
