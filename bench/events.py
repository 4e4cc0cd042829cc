#!/usr/bin/env python3
"""make bench, events part: a run of many traps under events = traps
(10^7; 10^5 with --quick; RTL_BENCH_EVENTS_TRAPS sets it), its raw record
kept: the bytes per trap of the record, the peak memory of the whole
`rtlctl run` (the largest of the program's and rtlctl's resident sizes, by
/usr/bin/time) beside the same run without events, the peaks of
`rtlctl report` making the report and the trace,, and the time to write the report (rtlctl report -o) and the trace
of every trap (rtlctl report --trace) against the time of reading the raw
record once (every byte, from the page cache) and of decoding every event
(the trace written to nowhere but counted). Writes OUT/events.json.

The traps: tests/progs/epoch_blocks, BLOCKS blocks of 64 bytes written in
rounds, an epoch of 1 ms between rounds making each block read-only again
(alias mechanism): BLOCKS x ROUNDS write traps."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BLOCKS = 20000


def timed(cmd, **kw):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, **kw)
    t = time.perf_counter() - t0
    if r.returncode:
        raise RuntimeError("%s: exit %d\n%s" % (" ".join(cmd), r.returncode,
                                               r.stderr.decode(errors="replace")))
    return t, r


def best(n, cmd, **kw):
    return min(timed(cmd, **kw)[0] for _ in range(n))


def peak(cmd, **kw):
    """Wall time and the maximum resident size in MiB (of cmd and what it
    waited for), by /usr/bin/time."""
    t, r = timed(["/usr/bin/time", "-f", "peak %M"] + cmd, **kw)
    kib = int([ln for ln in r.stderr.decode().splitlines() if ln.startswith("peak ")][-1].split()[1])
    return t, kib / 1024


def read_once(path):
    """Every byte of the file, a MiB at a time."""
    buf = bytearray(1 << 20)
    t0 = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buf):
            pass
    return time.perf_counter() - t0


def main():
    build, out = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv[3:]
    rtlctl = os.path.join(build, "tools", "rtlctl")
    prog = os.path.join(build, "tests", "progs", "epoch_blocks")
    lib = os.environ.get("RTL_BENCH_PRELOAD") or os.path.join(build, "preload",
                                                               "librtlpreload.so")
    if not os.path.exists(lib):
        print("events: skipped (no preload %s)" % lib)
        return 0
    want = int(os.environ.get("RTL_BENCH_EVENTS_TRAPS", 10**5 if quick else 10**7))
    rounds = max(1, want // BLOCKS)
    work = tempfile.mkdtemp(prefix="rtl-events-")
    try:
        pol = os.path.join(work, "e.ini")
        body = ("mechanism = alias\n[rule a]\nsize = 64\nprotect = read\n"
                "on_write = count, grant-rw\nepoch = 1ms\n")
        with open(pol, "w") as f:
            f.write("[rtl]\nevents = traps\n" + body)
        off = os.path.join(work, "off.ini")
        with open(off, "w") as f:
            f.write("[rtl]\n" + body)
        raw = os.path.join(work, "e.raw")
        args = ["--", prog, str(BLOCKS), str(rounds), "1000"]
        t_run, run_peak = peak([rtlctl, "run", "-c", pol, "-o", os.path.join(work, "e.json")] +
                               args, env=dict(os.environ, RTL_RAW=raw))
        t_off, off_peak = peak([rtlctl, "run", "-c", off, "-o", os.path.join(work, "o.json")] +
                               args)
        with open(os.path.join(work, "e.json")) as f:
            rep = json.load(f)
        traps = rep["totals"]["read_traps"] + rep["totals"]["write_traps"]
        size = os.path.getsize(raw)
        # Reading the record once: every byte, from the page cache.
        t_read = min(read_once(raw) for _ in range(3))
        t_report = best(3, [rtlctl, "report", "-o", os.path.join(work, "r.json"), raw])
        t_trace = best(3, [rtlctl, "report", "--trace", "/dev/null", raw])
        _, report_peak = peak([rtlctl, "report", "-o", os.path.join(work, "r2.json"), raw])
        _, trace_peak = peak([rtlctl, "report", "--trace", "/dev/null", raw])
        # The trace holds every trap: counted, one event a line.
        p = subprocess.Popen([rtlctl, "report", "--trace", "-", raw], stdout=subprocess.PIPE)
        in_trace = 0
        trace_bytes = 0
        for line in p.stdout:
            trace_bytes += len(line)
            if b'"cat":"trap"' in line:
                in_trace += 1
        if p.wait():
            raise RuntimeError("rtlctl report --trace failed")
        lost = sum(1 for n in rep["notes"] if "not recorded" in n)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res = {
        "traps": traps,
        "traps_in_trace": in_trace,
        "lost_notes": lost,
        "raw_bytes": size,
        "raw_bytes_per_trap": size / traps,
        "trace_bytes_per_trap": trace_bytes / max(1, in_trace),
        "run_s": t_run,
        "run_without_events_s": t_off,
        "run_peak_mib": run_peak,
        "run_without_events_peak_mib": off_peak,
        "report_peak_mib": report_peak,
        "trace_peak_mib": trace_peak,
        "read_s": t_read,
        "report_s": t_report,
        "trace_s": t_trace,
        "report_and_trace_over_read": (t_report + t_trace) / t_read,
        "trace_ns_per_trap": t_trace / max(1, in_trace) * 1e9,
    }
    with open(os.path.join(out, "events.json"), "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    print("events: %d traps, %d in the trace; raw record %.1f bytes a trap" % (
        traps, in_trace, res["raw_bytes_per_trap"]))
    print("events: rtlctl run %.1f s, peak %.1f MiB (without events %.1f s, %.1f MiB); "
          "rtlctl report -o peak %.1f MiB, --trace %.1f MiB" % (
              t_run, run_peak, t_off, off_peak, report_peak, trace_peak))
    print("events: read the record once %.3f s; report %.3f s, trace %.3f s "
          "(%.0f ns, %.0f bytes a trap): %.1f x the read" % (
              t_read, t_report, t_trace, res["trace_ns_per_trap"],
              res["trace_bytes_per_trap"], res["report_and_trace_over_read"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
