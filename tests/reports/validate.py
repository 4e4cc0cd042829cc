#!/usr/bin/env python3
"""Check a report against every field docs/report-fields.md documents:
names, types, and the sums that must hold. Usage: validate.py REPORT...
Prints nothing and exits 0 if all are valid; else one line per problem."""
import json
import sys

INT = int
TOP = ["rtl_report", "rtl_version", "run", "policy", "totals", "rules", "sites", "top_regions",
       "epochs", "events", "backtraces", "timeline", "notes", "processes"]
TOTALS = ["allocations", "selected", "regions_peak", "traps", "read_traps",
          "write_traps", "stale_traps", "trap_ns", "mprotect_calls",
          "syscall_buffers", "syscalls_trapped", "syscalls_refused", "in_place_protects", "live", "bytes", "fallbacks", "libc_skipped",
          "extents", "foreign", "false_sharing_traps", "grants", "granted_bytes",
          "touched_bytes", "prot_changes", "epoch_ns", "epochs", "epoch_calls",
          "epoch_blocks", "epochs_stretched", "epoch_stretch_ns", "protect_calls",
          "protect_mprotects"]
LISTS = {
    "rules": {"name": str, "mechanism": str, "selected": INT, "bytes": INT,
              "read_traps": INT, "write_traps": INT, "false_sharing_traps": INT,
              "grants": INT, "granted_bytes": INT, "touched_bytes": INT,
              "prot_changes": INT},
    "sites": {"site": str, "demangled": str, "source": str, "rule": str, "regions": INT, "bytes": INT,
              "read_traps": INT, "write_traps": INT, "false_sharing_traps": INT,
              "grants": INT, "granted_bytes": INT, "touched_bytes": INT},
    "top_regions": {"site": str, "demangled": str, "rule": str, "address": str, "size": INT,
                    "read_traps": INT, "write_traps": INT},
    "epochs": {"t_ns": INT, "dirty_regions": INT, "diff_bytes": INT,
               "page_bytes": INT, "object_bytes": INT, "card128_bytes": INT,
               "card512_bytes": INT, "card4096_bytes": INT, "written_bytes": INT},
    "events": {"t_ns": INT, "kind": str, "site": str, "rule": str, "offset": INT,
               "size": INT},
    "backtraces": {"rule": str, "kind": str, "count": INT, "frames": list,
                   "demangled": list, "sources": list},
}


TIMELINE = ["traps", "grants", "made", "freed", "live"]


def check_timeline(tl, rules, want, fields):
    """The timeline: one entry per rule, in the rules' order, every array
    one count per interval; its sums are the rule's own counts."""
    want(isinstance(tl, dict), "timeline is not an object")
    if not isinstance(tl, dict):
        return
    fields(tl, {"interval_ns": INT, "intervals": INT, "rules": list}, "timeline")
    entries = tl.get("rules") or []
    want([e.get("rule") for e in entries if isinstance(e, dict)] ==
         [x.get("name") for x in rules if isinstance(x, dict)],
         "timeline.rules are not the rules, in their order")
    for i, e in enumerate(entries):
        fields(e, {"rule": str, **{k: list for k in TIMELINE}}, f"timeline.rules[{i}]")
        if not isinstance(e, dict):
            continue
        for k in TIMELINE:
            v = e.get(k)
            want(isinstance(v, list) and len(v) == tl.get("intervals") and
                 all(isinstance(x, int) and x >= 0 for x in v),
                 f"timeline.rules[{i}].{k} is not a count per interval")
        rule = rules[i] if i < len(rules) and isinstance(rules[i], dict) else {}
        if all(isinstance(e.get(k), list) for k in TIMELINE) and rule:
            want(sum(e["traps"]) == rule.get("read_traps", 0) + rule.get("write_traps", 0),
                 f"timeline.rules[{i}].traps do not sum to the rule's traps")
            want(sum(e["grants"]) == rule.get("grants"),
                 f"timeline.rules[{i}].grants do not sum to the rule's grants")
            want(sum(e["made"]) == rule.get("selected"),
                 f"timeline.rules[{i}].made do not sum to the rule's regions")

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
    # tracks them; then "protection" (how protection changed outside rtl's
    # views), when a rule of auto, alias or page can trap; then "tag" (where
    # tag rules' blocks went), when a rule asks for tags.
    top = (TOP[:9] + [k for k in ("dirty", "protection", "tag") if k in r] + TOP[9:])
    want(list(r) == top, f"top-level keys {list(r)}, want {top}")
    if "dirty" in r:
        fields(r["dirty"], {"way": str, "why": str}, "dirty")
        want(r["dirty"].get("way") in ("traps", "written bits"), "dirty.way")
    if "protection" in r:
        fields(r["protection"], {"backend": str, "why": str}, "protection")
        want(r["protection"].get("backend") in ("page tables", "mprotect"),
             "protection.backend")
        want(r["protection"].get("why", "").startswith(r["protection"].get("backend", "?") + ": "),
             "protection.why opens with its backend")
    if "tag" in r:
        fields(r["tag"], {"placed": str, "why": str}, "tag")
        want(r["tag"].get("placed") in ("tags", "auto"), "tag.placed")
    want(r.get("rtl_report") == 1, "rtl_report is not 1")
    want(isinstance(r.get("rtl_version"), str) and r.get("rtl_version", "")[:1].isdigit(),
         "rtl_version is not a version string")
    run = r.get("run", {})
    ends = [k for k in ("exit_status", "signal") if k in run]
    # ppid: 0 (none) is left out; root_pid only under rtlctl run;
    # start_ns since 0.4.0.
    optional = [k for k in ("ppid", "root_pid", "start_ns") if k in run]
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
            if name == "sites" and isinstance(e, dict) and "line" in e:
                extra = {**extra, "line": str}  # since 0.4.0
                if "symbol" in e:
                    extra["symbol"] = str  # a site named after an inlined function
            if name == "backtraces" and isinstance(e, dict) and "inlined" in e:
                extra = {"inlined": list}  # since 0.4.0
                want(len(e["inlined"]) == len(e.get("frames", [])) and
                     all(isinstance(x, list) and all(isinstance(f, str) for f in x)
                         for x in e["inlined"]),
                     f"{name}[{i}].inlined is not a list of names per frame")
            if name == "events" and isinstance(e, dict) and "pid" in e:
                extra = {"pid": INT}  # since 0.4.0
                if "tid" in e:
                    extra["tid"] = INT
            fields(e, {**spec, **extra}, f"{name}[{i}]")
            if isinstance(e, dict) and "kind" in e:
                want(e["kind"] in ("read", "write"), f"{name}[{i}].kind is {e['kind']}")
            if isinstance(e, dict) and "mechanism" in e:
                want(e["mechanism"] in ("auto", "swizzle", "alias", "page", "tag"), f"{name}[{i}].mechanism")
            if isinstance(e, dict) and isinstance(e.get("frames"), list):
                want(all(isinstance(f, str) for f in e["frames"]), f"{name}[{i}].frames")
                want(isinstance(e.get("sources"), list) and
                     len(e["sources"]) == len(e["frames"]) and
                     all(isinstance(f, str) for f in e["sources"]),
                     f"{name}[{i}].sources is not a string per frame")
                want(isinstance(e.get("demangled"), list) and
                     len(e["demangled"]) == len(e["frames"]) and
                     all(isinstance(f, str) for f in e["demangled"]),
                     f"{name}[{i}].demangled is not a string per frame")
    want(all(isinstance(n, str) for n in r.get("notes", [])), "notes holds a non-string")
    procs = r.get("processes")
    want(isinstance(procs, list) and len(procs) >= 1, "processes is not a non-empty array")
    for i, p in enumerate(procs if isinstance(procs, list) else []):
        ends = [k for k in ("exit_status", "signal") if isinstance(p, dict) and k in p]
        optional = [k for k in ("ppid", "start_ns") if isinstance(p, dict) and k in p]
        fields(p, {"pid": INT, "program": str, "duration_ns": INT, "allocations": INT,
                   "selected": INT, "traps": INT, "trap_ns": INT,
                   **{k: INT for k in ends + optional}}, f"processes[{i}]")
    if isinstance(procs, list) and all(isinstance(p, dict) for p in procs):
        want(any(p.get("pid") == run.get("pid") for p in procs),
             "processes has no row for run.pid")
    rules = [x.get("name") for x in r.get("rules", []) if isinstance(x, dict)]
    check_timeline(r.get("timeline"), r.get("rules", []), want, fields)
    for s in r.get("sites", []):
        want(s.get("rule") in rules, f"sites: rule {s.get('rule')} not in rules")
    return bad


problems = [p for f in sys.argv[1:] for p in check(f)]
print("\n".join(problems), end="\n" if problems else "")
sys.exit(1 if problems else 0)
