#!/usr/bin/env python3
"""make bench, last step: read the suite's JSON under OUT (appel_li.json,
pieces.json, preload.json if the preload ran), write OUT/summary.json with the
keys bench/README.md lists, print the targets, and draw the plots with gnuplot.
Reads and writes files only; measures nothing."""
import json
import math
import os
import shutil
import subprocess
import sys

KEYS = [
    "rt_basic_trap_over_floor",
    "rt_basic_prot1_over_vm",
    "rt_basic_protN_over_vm",
    "rt_update_over_basic_max",
    "region_protect_ns",
    "lookup_1e6_ns",
    "multiview_prot1_over_vm",
    "preload_none_over_plain",
    "preload_all_over_plain",
    "lookup_1e3_ns",
    "lookup_1e6_over_miss",
    "trap_instructions",
    "preload_malloc_over_glibc",
    "preload_malloc_read_over_budget",
    "heaptrack_over_glibc",
    "threads_scaling_2",
    "threads_scaling_4",
    "real_programs_over_plain",
    "real_programs_traps_per_second",
    "real_programs_overhead_over_trap_floor",
    "real_programs_calls_per_trap",
    "real_programs_mprotects_per_trap",
    "real_programs_overhead_over_kernel",
    "spread_calls_per_trap",
    "kernel_trap",
    "epoch_over_bound",
    "epoch_over_kernel_bound",
    "epoch_calls_per_epoch",
    "epoch_ms_per_epoch",
    "many_blocks_kept",
    "many_blocks_mappings",
    "process_overhead_ms",
    "routed_block_bytes",
    "peak_pss_over_bound",
    "dirty_first_write_ns",
    "dirty_first_write_over_page_trap",
    "dirty_region_dirty_1e5_ns_per_page",
    "dirty_threads_scaling_2",
    "events_raw_bytes_per_trap",
    "events_traps_in_trace_over_traps",
    "events_peak_mib",
    "events_report_and_trace_over_read",
    "tag_traps",
    "tag_false_sharing_traps",
]

# Keys whose value is an object of numbers (by mechanism, program...).
NESTED = ("preload_malloc_over_glibc", "preload_malloc_read_over_budget",
          "threads_scaling_2", "threads_scaling_4", "real_programs_over_plain",
          "real_programs_traps_per_second", "real_programs_overhead_over_trap_floor",
          "real_programs_calls_per_trap", "real_programs_mprotects_per_trap",
          "real_programs_overhead_over_kernel", "spread_calls_per_trap", "kernel_trap",
          "epoch_over_bound", "epoch_over_kernel_bound", "epoch_calls_per_epoch",
          "epoch_ms_per_epoch",
          "many_blocks_kept", "many_blocks_mappings", "tag_traps",
          "tag_false_sharing_traps",
          "process_overhead_ms", "routed_block_bytes", "peak_pss_over_bound",
          "dirty_first_write_ns", "dirty_first_write_over_page_trap",
          "dirty_region_dirty_1e5_ns_per_page", "dirty_threads_scaling_2",
          "events_peak_mib")

# (key, limit, what): the targets (bench/README.md); ratios are of medians,
# same run.
TARGETS = [
    ("rt_basic_trap_over_floor", 1.05, "RT-basic trap / floor"),
    ("rt_basic_prot1_over_vm", 0.40, "RT-basic prot1 / VM prot1"),
    ("rt_basic_protN_over_vm", 0.70, "RT-basic protN / VM protN"),
    ("rt_update_over_basic_max", 1.05, "RT-update / RT-basic, worst size"),
    ("region_protect_ns", 50.0, "region_protect, 1 pointer (ns)"),
    ("lookup_1e6_ns", 100.0, "lookup among 10^6 regions (ns)"),
    ("lookup_1e3_ns", 25.0, "lookup among 10^3 regions (ns)"),
    ("lookup_1e6_over_miss", 1.2, "lookup 10^6 / one DRAM miss"),
    ("trap_instructions", 250, "instructions per trap (callgrind)"),
    ("events_report_and_trace_over_read", 2.0, "events: report+trace / read"),
]

# Targets on each value of a nested key: (key, limit, what).
NESTED_TARGETS = [
    ("preload_malloc_over_glibc", 3.0, "routed malloc+free / glibc"),
    ("preload_malloc_read_over_budget", 1.0, "read pair / budget"),
    ("threads_scaling_2", None, "2 thr / 1 thr"),
    ("real_programs_overhead_over_trap_floor", 1.2, "over trap floor"),
    ("epoch_over_bound", 1.5, "epoch run / (without + traps x floor)"),
    ("peak_pss_over_bound", 1.0, "peak Pss / (1.5 x without + 64 MiB)"),
]

# process_overhead_ms: each case against its own limit (ms a process).
PROCESS_LIMITS = {"no_config": 1.0, "no_report": 1.0, "report": 2.0}


# Targets on one value of a nested key: (key, name, "<=" or ">=", limit,
# what). Write tracking (rtl-dirty): the kernel's written bits against page
# and region traps of the same process.
ENTRY_TARGETS = [
    ("dirty_first_write_over_page_trap", "written_bits", "<=", 0.6,
     "written-bits first write / page trap"),
    ("dirty_region_dirty_1e5_ns_per_page", "written_bits", "<=", 100.0,
     "region_dirty, 10^5 regions 1% (ns/page)"),
    ("dirty_threads_scaling_2", "written_bits", ">=", 1.8,
     "written-bits writers, 2 thr / 1 thr"),
    ("events_peak_mib", "report", "<=", 64.0, "events: rtlctl report peak (MiB)"),
    ("events_peak_mib", "trace", "<=", 64.0, "events: rtlctl --trace peak (MiB)"),
]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def dig(obj, *path):
    for p in path:
        if not isinstance(obj, dict) or p not in obj:
            return None
        obj = obj[p]
    return obj


def number(v):
    return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def ratio(a, b):
    return a / b if number(a) and number(b) and b else None


def programs_summary(pg):
    """The real programs' keys (programs.json)."""
    over, blocks, pss, plain, tps = {}, {}, {}, {}, {}
    calls, mprotects, kernel = {}, {}, {}
    for prog, row in (dig(pg, "programs") or {}).items():
        for pol, fig in row.items():
            if isinstance(fig, dict):
                key = "%s/%s" % (prog, pol)
                over[key] = fig.get("overhead_over_trap_floor")
                plain[key] = fig.get("over_plain")
                tps[key] = ratio(fig.get("traps"), fig.get("seconds"))
                if pol != "builtin":
                    calls[key] = fig.get("calls_per_trap")
                    mprotects[key] = fig.get("mprotects_per_trap")
                    kernel[key] = fig.get("overhead_over_kernel")
    fl = dig(pg, "floor") or {}
    trap_ns = None
    if number(fl.get("signal_ns")) and number(fl.get("mprotect_ns")):
        pt = None
        if number(fl.get("uffd_trap_ns")) and number(fl.get("uffd_wp_ns")):
            pt = fl["uffd_trap_ns"] - fl["uffd_wp_ns"]
        trap_ns = {"floor_ns": fl["signal_ns"] + fl["mprotect_ns"], "page_tables_ns": pt,
                   "page_tables_over_floor": ratio(pt, fl["signal_ns"] + fl["mprotect_ns"]),
                   "refault_ns": fl.get("uffd_refault_ns"),
                   "refaults_per_trap": fl.get("uffd_refaults_per_trap")}
    ep = dig(pg, "epochs") or {}
    runs = {k: v for k, v in ep.items() if isinstance(v, dict)}
    mb = {k: v for k, v in (dig(pg, "many_blocks") or {}).items() if isinstance(v, dict)}
    for prog, row in (dig(pg, "memory") or {}).items():
        for m, fig in row.items():
            if isinstance(fig, dict):
                pss["%s/%s" % (prog, m)] = fig.get("over_bound")
                if prog == "lua":
                    blocks[m] = fig.get("bytes_per_block")
    return {"real_programs_over_plain": plain or None,
            "real_programs_traps_per_second": tps or None,
            "real_programs_overhead_over_trap_floor": over or None,
            "real_programs_calls_per_trap": calls or None,
            "real_programs_mprotects_per_trap": mprotects or None,
            "real_programs_overhead_over_kernel": kernel or None,
            "spread_calls_per_trap": dig(pg, "spread_calls_per_trap"),
            "kernel_trap": trap_ns,
            "epoch_over_bound": {k: v.get("over_bound") for k, v in runs.items()} or None,
            "epoch_over_kernel_bound": {k: v.get("over_kernel_bound")
                                        for k, v in runs.items()} or None,
            "epoch_calls_per_epoch": {k: v.get("calls_per_epoch")
                                      for k, v in runs.items()} or None,
            "epoch_ms_per_epoch": {k: v.get("ms_per_epoch") for k, v in runs.items()} or None,
            "many_blocks_kept": {k: v.get("kept") for k, v in mb.items()} or None,
            "many_blocks_mappings": {k: v.get("mappings") for k, v in mb.items()} or None,
            "process_overhead_ms": dig(pg, "process_overhead_ms"),
            "routed_block_bytes": blocks or None,
            "peak_pss_over_bound": pss or None}
def dirty_summary(dj):
    """rtl-dirty's figures (bench/dirty.c); written_bits null where the
    process had no written bits (it fell back to traps)."""
    wb = dig(dj, "backend", "way") == "written_bits"
    ways = ("page_trap", "region_trap", "written_bits")

    def pick(d):
        return {k: v for k, v in d.items() if wb or k != "written_bits"}
    if not dj:
        return {k: None for k in ("dirty_first_write_ns",
                                  "dirty_first_write_over_page_trap",
                                  "dirty_region_dirty_1e5_ns_per_page",
                                  "dirty_threads_scaling_2")}
    return {
        "dirty_first_write_ns": pick({w: dig(dj, "first_write_ns", w, "median")
                                      for w in ways}),
        "dirty_first_write_over_page_trap": pick(
            {w: dig(dj, "first_write_over_page_trap", w) for w in ways[1:]}),
        "dirty_region_dirty_1e5_ns_per_page": pick(
            {w: dig(dj, "region_dirty_ns_per_page", w, "median")
             for w in ("written_bits", "traps")}),
        "dirty_threads_scaling_2": pick(
            {w: dig(dj, "threads", w, "scaling_2", "median")
             for w in ways + ("control",)}),
    }


def events_summary(ev):
    """The event stream's keys (events.json)."""
    if not ev:
        return {k: None for k in ("events_raw_bytes_per_trap",
                                  "events_traps_in_trace_over_traps", "events_peak_mib",
                                  "events_report_and_trace_over_read")}
    return {"events_raw_bytes_per_trap": ev.get("raw_bytes_per_trap"),
            "events_traps_in_trace_over_traps": ratio(ev.get("traps_in_trace"), ev.get("traps")),
            "events_peak_mib": {"run": ev.get("run_peak_mib"),
                                "run_without_events": ev.get("run_without_events_peak_mib"),
                                "report": ev.get("report_peak_mib"),
                                "trace": ev.get("trace_peak_mib")},
            "events_report_and_trace_over_read": ev.get("report_and_trace_over_read")}


def tags_summary(tg):
    """Traps and false-sharing traps by program and run (tags.json): counts
    under qemu-user, keyed "PROGRAM/RUN"; None where the part was skipped."""
    progs = {k: v for k, v in (tg or {}).items() if isinstance(v, dict)}
    if not progs:
        return {"tag_traps": None, "tag_false_sharing_traps": None}
    return {key: {"%s/%s" % (p, run): dig(progs[p], run, field)
                  for p in progs for run in ("page", "alias", "tag")}
            for key, field in (("tag_traps", "traps"),
                               ("tag_false_sharing_traps", "false_sharing_traps"))}


def summary(al, pc, pre, th, ti):
    t4 = (al or {}).get("table4", {})
    routed = dig(pre, "routed_malloc") or {}
    scaling = {}
    # signal: the bare signal round trip, what the kernel lets traps do
    scaling4 = {}
    for w in ("trap", "protect", "signal"):
        scaling[w] = dig(th, w, "2", "total_over_1")
        scaling4[w] = dig(th, w, "4", "total_over_1")
    mal = dig(pre, "malloc_free") or {}
    if mal:
        # total throughput is 1 / ns_per_op (wall time per pair, all
        # threads): 2 and 4 threads over 1
        for into, row in ((scaling, "2_threads"), (scaling4, "4_threads")):
            for key, run in (("preload_malloc", "preload_all"),
                             ("glibc_malloc", "plain")):
                into[key] = ratio(dig(mal, "1_thread", run, "ns_per_op"),
                                  dig(mal, row, run, "ns_per_op"))
    return {
        "lookup_1e3_ns": dig(pc, "lookup", "1000", "independent",
                             "median_ns"),
        "lookup_1e6_over_miss": ratio(
            dig(pc, "lookup", "1000000", "independent", "median_ns"),
            dig(pc, "memory_chase_mib", "128", "median_ns")),
        "trap_instructions": dig(ti, "per_trap"),
        "preload_malloc_over_glibc": routed.get("over_glibc"),
        "preload_malloc_read_over_budget": routed.get("read_over_budget"),
        "heaptrack_over_glibc": routed.get("heaptrack_over_glibc"),
        "threads_scaling_2": scaling if any(number(v) for v in
                                            scaling.values()) else None,
        "threads_scaling_4": scaling4 if any(number(v) for v in
                                             scaling4.values()) else None,
        "rt_basic_trap_over_floor": dig(t4, "RT-basic", "trap",
                                        "ratio_median"),
        "rt_basic_prot1_over_vm": dig(t4, "RT-basic", "prot1",
                                      "ratio_median"),
        "rt_basic_protN_over_vm": dig(t4, "RT-basic", "protN",
                                      "ratio_median"),
        "rt_update_over_basic_max": dig(al, "rt_update_over_basic_max",
                                        "median"),
        "region_protect_ns": dig(pc, "region_protect", "1", "median_ns"),
        "lookup_1e6_ns": dig(pc, "lookup", "1000000", "independent",
                             "median_ns"),
        "multiview_prot1_over_vm": dig(t4, "MultiView", "prot1",
                                       "ratio_median"),
        "preload_none_over_plain": dig(pre, "summary", "none_over_plain"),
        "preload_all_over_plain": dig(pre, "summary", "all_over_plain"),
    }


def write_dat(out, al, pc):
    """Data files for plots.gp: ratio to VM by object size, lookup by count."""
    for seq in ("prot1", "protN"):
        t5 = dig(al, "table5_" + seq)
        if not t5:
            continue
        with open(os.path.join(out, "ratio_%s.dat" % seq), "w") as f:
            f.write("# bytes RT-basic RT-update MultiView (median / VM "
                    "median, VM = K page sequences; 64 B: VM's 1 page)\n")
            for i, s in enumerate(t5["sizes"]):
                row = [dig(t5[m][i], "ratio_median") for m in
                       ("RT-basic", "RT-update", "MultiView")]
                f.write("%d %s\n" % (s["bytes"], " ".join(
                    "%.5g" % v if number(v) else "NaN" for v in row)))
    lk = dig(pc, "lookup") or {}
    with open(os.path.join(out, "lookup.dat"), "w") as f:
        f.write("# regions independent_median independent_min "
                "dependent_median dependent_min (ns)\n")
        for n in sorted(lk, key=int):
            v = [dig(lk[n], a, b) for a in ("independent", "dependent")
                 for b in ("median_ns", "min_ns")]
            f.write("%s %s\n" % (n, " ".join(
                "%.5g" % x if number(x) else "NaN" for x in v)))
    chase = dig(pc, "memory_chase_mib", "128", "median_ns")
    with open(os.path.join(out, "chase.dat"), "w") as f:
        f.write("%s\n" % ("%.5g" % chase if number(chase) else "NaN"))


def plot(out, here):
    if not shutil.which("gnuplot"):
        print("plots: skipped, gnuplot is not installed "
              "(make bench installs bench/deps.txt)")
        return
    r = subprocess.run(["gnuplot", "-e", "out='%s'" % out,
                        os.path.join(here, "plots.gp")],
                       capture_output=True, text=True)
    if r.returncode:
        print("plots: gnuplot failed:\n" + r.stderr)
    else:
        print("plots: %s/ratio_vs_size.png, %s/lookup_vs_regions.png"
              % (out, out))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench/out"
    here = os.path.dirname(os.path.abspath(__file__))
    al = load(os.path.join(out, "appel_li.json"))
    pc = load(os.path.join(out, "pieces.json"))
    pre = load(os.path.join(out, "preload.json"))
    th = load(os.path.join(out, "threads.json"))
    ti = load(os.path.join(out, "trap_instructions.json"))
    dj = load(os.path.join(out, "dirty.json"))
    s = summary(al, pc, pre, th, ti)
    s.update(programs_summary(load(os.path.join(out, "programs.json"))))
    s.update(dirty_summary(dj))
    s.update(events_summary(load(os.path.join(out, "events.json"))))
    s.update(tags_summary(load(os.path.join(out, "tags.json"))))
    s = {k: ({n: number(v) for n, v in s[k].items()} if k in NESTED and
             isinstance(s[k], dict) else number(s[k])) for k in KEYS}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(s, f, indent=2)
        f.write("\n")

    print("\nTargets (medians of every call; ratios within one run; see "
          "bench/README.md)\n")
    for key, limit, what in TARGETS:
        v = s[key]
        verdict = "n/a" if v is None else ("met" if v <= limit else "MISSED")
        shown = "-" if v is None else "%.3f" % v
        print("  %-36s %9s   target <= %-6g %s" % (what, shown, limit,
                                                    verdict))
    for key, limit, what in NESTED_TARGETS:
        for name, v in sorted((s[key] or {}).items()):
            if limit is None:
                verdict = "n/a" if v is None else (
                    "met" if v >= 1.8 else "MISSED")
            else:
                verdict = "n/a" if v is None else (
                    "met" if v <= limit else "MISSED")
            shown = "-" if v is None else "%.3f" % v
            target = "<= %g" % limit if limit else ">= 1.8"
            print("  %-36s %9s   target %-9s %s" % (
                "%s, %s" % (what, name), shown, target, verdict))
    for name, v in sorted((s["process_overhead_ms"] or {}).items()):
        limit = PROCESS_LIMITS.get(name)
        verdict = "n/a" if v is None or limit is None else (
            "met" if v <= limit else "MISSED")
        print("  %-36s %9s   target <= %-6s %s" % (
            "ms a process, %s" % name, "-" if v is None else "%.3f" % v,
            "%g" % limit if limit else "-", verdict))
    # Under page tables (the runs not named /mprotect, where the kernel has
    # them) a trap takes no mprotect: at most 0.01 of one.
    for name, v in sorted((s["real_programs_mprotects_per_trap"] or {}).items()):
        if name.endswith("/mprotect"):
            continue
        verdict = "n/a" if v is None else ("met" if v <= 0.01 else "MISSED")
        print("  %-36s %9s   target <= 0.01   %s" % (
            "mprotects a trap, %s" % name, "-" if v is None else "%.3f" % v, verdict))
    for name, v in sorted((s["many_blocks_kept"] or {}).items()):
        target = "= 1" if name == "default" else "(no target)"
        verdict = "" if name != "default" else (
            "n/a" if v is None else ("met" if v == 1.0 else "MISSED"))
        print("  %-36s %9s   %-15s %s" % (
            "10^6 blocks, traps / written, %s" % name,
            "-" if v is None else "%.3f" % v, target, verdict))
    # 4 threads on 2 cores: shown, no target.
    for key, name, op, limit, what in ENTRY_TARGETS:
        v = (s[key] or {}).get(name)
        met = v is not None and (v <= limit if op == "<=" else v >= limit)
        verdict = "n/a" if v is None else ("met" if met else "MISSED")
        shown = "-" if v is None else "%.3f" % v
        print("  %-36s %9s   target %-9s %s" % (what, shown,
                                                "%s %g" % (op, limit), verdict))
    # 4 threads on 2 cores: shown, with no target.
    for name, v in sorted((s["threads_scaling_4"] or {}).items()):
        print("  %-36s %9s   (no target)" % (
            "4 thr / 1 thr, %s" % name, "-" if v is None else "%.3f" % v))
    print("  %-36s %9s   (no target)" % (
        "MultiView prot1 / VM prot1",
        "-" if s["multiview_prot1_over_vm"] is None
        else "%.3f" % s["multiview_prot1_over_vm"]))
    if pre is None:
        print("\npreload_none_over_plain, preload_all_over_plain: null "
              "(the preload is not built, so its part did not run)")
    load_avg = dig(al, "machine", "loadavg")
    if load_avg:
        print("\nload average when appel-li started: %s" %
              " ".join("%.2f" % x for x in load_avg))
    print("summary: %s/summary.json" % out)
    write_dat(out, al, pc)
    plot(out, here)


if __name__ == "__main__":
    main()
