#!/usr/bin/env python3
"""Check a file of rtlctl report --trace against Chrome's Trace Event Format
(the JSON Object Format that Perfetto's UI and chrome://tracing import) and
against the report it was made from.

  validate_trace.py TRACE.json REPORT.json

The format: an object whose traceEvents is an array of events, each with a
phase (ph), a name, integer pid and tid; every phase but metadata (M) a
number ts in microseconds; instant events (i) a scope s of g, p or t;
counters (C) an args object of numbers; metadata process_name an args
name. Against the report: one trap event per event of the report, of its
kind, site, rule, offset and size; each process a named track; a
process's traps inside its lifetime when the report gives it.
Prints nothing and exits 0 when all holds; else one line per failure."""
import json
import sys

PHASES = {"M", "i", "C", "X", "B", "E"}


def main():
    trace, report = (json.load(open(p)) for p in sys.argv[1:3])
    bad = []

    def want(ok, why):
        if not ok:
            bad.append(why)

    want(isinstance(trace, dict) and isinstance(trace.get("traceEvents"), list),
         "traceEvents is not an array in an object")
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else []
    for k, e in enumerate(events):
        if not isinstance(e, dict):
            want(False, f"event {k} is not an object")
            continue
        want(e.get("ph") in PHASES, f"event {k}: ph {e.get('ph')!r}")
        want(isinstance(e.get("name"), str), f"event {k}: no name")
        want(all(isinstance(e.get(f), int) for f in ("pid", "tid")), f"event {k}: pid/tid")
        if e.get("ph") != "M":
            want(isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0, f"event {k}: ts")
        if e.get("ph") == "i":
            want(e.get("s") in ("g", "p", "t"), f"event {k}: instant scope {e.get('s')!r}")
        if e.get("ph") == "C":
            a = e.get("args")
            want(isinstance(a, dict) and a and
                 all(isinstance(v, (int, float)) for v in a.values()), f"event {k}: counter args")
        if e.get("ph") == "M" and e.get("name") == "process_name":
            want(isinstance(e.get("args", {}).get("name"), str), f"event {k}: process name")

    procs = {p["pid"]: p for p in report.get("processes", [])}
    named = {e["pid"] for e in events if isinstance(e, dict) and e.get("ph") == "M"
             and e.get("name") == "process_name"}
    want(named == set(procs), f"named tracks {sorted(named)}, processes {sorted(procs)}")
    traps = [e for e in events if isinstance(e, dict) and e.get("cat") == "trap"]
    rev = report.get("events", [])
    # From raw records the trace holds every trap, the report the first
    # of each process (a note says so): its list is, per process, the
    # start of the trace's. From the report, the same list.
    partial = any("traps recorded, the first" in n for n in report.get("notes", []))
    want(len(traps) == len(rev) or (partial and len(traps) > len(rev)),
         f"{len(traps)} trap events, the report has {len(rev)}")
    root = report["run"]["pid"]
    by_pid = {}
    for t in traps:
        by_pid.setdefault(t.get("pid"), []).append(t)
    seen = {}
    t0 = min((p.get("start_ns", 0) for p in procs.values()), default=0)
    for k, r in enumerate(rev):
        pid = r.get("pid", root)
        i = seen[pid] = seen.get(pid, -1) + 1
        lst = by_pid.get(pid, [])
        t = lst[i] if i < len(lst) else {}
        a = t.get("args", {})
        want(t.get("name") == r["kind"] + " trap" and
             [a.get(f) for f in ("site", "rule", "offset", "size")] ==
             [r[f] for f in ("site", "rule", "offset", "size")] and
             t.get("tid") == r.get("tid", pid),
             f"the report's event {k} is not its process's trap event {i}")
    for k, t in enumerate(traps):
        p = procs.get(t.get("pid"), {})
        if "start_ns" in p:
            lo = (p["start_ns"] - t0) / 1000
            want(lo <= t["ts"] <= lo + p["duration_ns"] / 1000,
                 f"trap event {k} at {t['ts']} us, outside its process's life")
    for b in bad[:20]:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
