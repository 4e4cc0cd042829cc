#!/usr/bin/env python3
"""Check a report against every field docs/policy.md ("Report") documents:
names, types, and the sums that must hold. Usage: validate.py REPORT...
Prints nothing and exits 0 if all are valid; else one line per problem."""
import json
import sys

INT = int
TOP = ["rtl_report", "rtl_version", "run", "policy", "totals", "rules", "sites", "top_regions",
       "epochs", "events", "backtraces", "notes"]
TOTALS = ["allocations", "selected", "regions_peak", "traps", "read_traps",
          "write_traps", "stale_traps", "trap_ns", "mprotect_calls",
          "syscall_buffers", "syscalls_trapped", "syscalls_refused", "in_place_protects", "live", "bytes", "fallbacks", "libc_skipped",
          "extents", "foreign", "false_sharing_traps", "grants", "granted_bytes",
          "touched_bytes", "prot_changes", "epoch_ns"]
LISTS = {
    "rules": {"name": str, "mechanism": str, "selected": INT, "bytes": INT,
              "read_traps": INT, "write_traps": INT, "false_sharing_traps": INT,
              "grants": INT, "granted_bytes": INT, "touched_bytes": INT,
              "prot_changes": INT},
    "sites": {"site": str, "source": str, "rule": str, "regions": INT, "bytes": INT,
              "read_traps": INT, "write_traps": INT, "false_sharing_traps": INT,
              "grants": INT, "granted_bytes": INT, "touched_bytes": INT},
    "top_regions": {"site": str, "rule": str, "address": str, "size": INT,
                    "read_traps": INT, "write_traps": INT},
    "epochs": {"t_ns": INT, "dirty_regions": INT, "diff_bytes": INT,
               "page_bytes": INT, "object_bytes": INT, "card128_bytes": INT,
               "card512_bytes": INT, "card4096_bytes": INT, "written_bytes": INT},
    "events": {"t_ns": INT, "kind": str, "site": str, "rule": str, "offset": INT,
               "size": INT},
    "backtraces": {"rule": str, "kind": str, "count": INT, "frames": list,
                   "sources": list},
}


# A site whose blocks were written in dirty epochs has these too.
SITE_DIRTY = {"dirty_regions": INT, "object_bytes": INT, "diff_bytes": INT,
              "card128_bytes": INT, "card512_bytes": INT, "card4096_bytes": INT}


def check(path):
    bad = []
    r = json.load(open(path))

    def want(cond, what):
        if not cond:
            bad.append(f"{path}: {what}")

    def fields(obj, spec, where):
        want(isinstance(obj, dict), f"{where} is not an object")
        if not isinstance(obj, dict):
            return
        want(sorted(obj) == sorted(spec), f"{where} has {sorted(obj)}, want {sorted(spec)}")
        for k, t in spec.items():
            v = obj.get(k)
            want(isinstance(v, t) and not isinstance(v, bool), f"{where}.{k} is not {t.__name__}")
            if t is INT and isinstance(v, int):
                want(v >= 0, f"{where}.{k} is negative")

    # "dirty" (how dirty rules saw writes) after the epochs, when a rule
    # tracks them.
    top = TOP[:9] + ["dirty"] + TOP[9:] if "dirty" in r else TOP
    want(list(r) == top, f"top-level keys {list(r)}, want {top}")
    if "dirty" in r:
        fields(r["dirty"], {"way": str, "why": str}, "dirty")
        want(r["dirty"].get("way") in ("traps", "written bits"), "dirty.way")
    want(r.get("rtl_report") == 1, "rtl_report is not 1")
    want(isinstance(r.get("rtl_version"), str) and r.get("rtl_version", "")[:1].isdigit(),
         "rtl_version is not a version string")
    run = r.get("run", {})
    ends = [k for k in ("exit_status", "signal") if k in run]
    # ppid: 0 (none) is left out; root_pid only under rtlctl run.
    optional = [k for k in ("ppid", "root_pid") if k in run]
    fields(run, {"program": str, "argv": list, "pid": INT, "duration_ns": INT,
                 **{k: INT for k in ends + optional}}, "run")
    want(len(ends) == 1 or any("exit status unknown" in n for n in r.get("notes", [])),
         "run has neither exit_status nor signal")
    want(all(isinstance(a, str) for a in run.get("argv", [])), "run.argv holds a non-string")
    fields(r.get("policy"), {"source": str, "text": str}, "policy")
    t = r.get("totals", {})
    fields(t, {k: INT for k in TOTALS}, "totals")
    if all(isinstance(t.get(k), int) for k in TOTALS):
        want(t["traps"] == t["read_traps"] + t["write_traps"] + t["stale_traps"],
             "totals.traps is not read + write + stale")
        want(t["selected"] <= t["allocations"], "totals.selected exceeds the allocations")
        want(t["regions_peak"] >= t["live"], "totals.regions_peak < live")
        want(t["false_sharing_traps"] <= t["read_traps"] + t["write_traps"],
             "totals.false_sharing_traps exceed the read and write traps")
        want(t["touched_bytes"] <= t["bytes"],
             "totals.touched_bytes exceed the bytes selected")
    for name, spec in LISTS.items():
        items = r.get(name)
        want(isinstance(items, list), f"{name} is not an array")
        for i, e in enumerate(items or []):
            extra = SITE_DIRTY if name == "sites" and isinstance(e, dict) and "dirty_regions" in e else {}
            fields(e, {**spec, **extra}, f"{name}[{i}]")
            if isinstance(e, dict) and "kind" in e:
                want(e["kind"] in ("read", "write"), f"{name}[{i}].kind is {e['kind']}")
            if isinstance(e, dict) and "mechanism" in e:
                want(e["mechanism"] in ("auto", "swizzle", "alias", "page"), f"{name}[{i}].mechanism")
            if isinstance(e, dict) and isinstance(e.get("frames"), list):
                want(all(isinstance(f, str) for f in e["frames"]), f"{name}[{i}].frames")
                want(isinstance(e.get("sources"), list) and
                     len(e["sources"]) == len(e["frames"]) and
                     all(isinstance(f, str) for f in e["sources"]),
                     f"{name}[{i}].sources is not a string per frame")
    want(all(isinstance(n, str) for n in r.get("notes", [])), "notes holds a non-string")
    rules = [x.get("name") for x in r.get("rules", []) if isinstance(x, dict)]
    for s in r.get("sites", []):
        want(s.get("rule") in rules, f"sites: rule {s.get('rule')} not in rules")
    return bad


problems = [p for f in sys.argv[1:] for p in check(f)]
print("\n".join(problems), end="\n" if problems else "")
sys.exit(1 if problems else 0)
