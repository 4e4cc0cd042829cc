#!/usr/bin/env bash
# make bench: run the suite and print its tables; JSON, summary.json and PNG
# plots go to bench/out/ (or $RTL_BENCH_OUT). bench/run.sh BUILD [--quick]
# Extra arguments for the C benchmarks: RTL_BENCH_ARGS (e.g. "--cpu 1").
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
shift || true
top=$(cd "$(dirname "$0")/.." && pwd)
out=${RTL_BENCH_OUT:-$top/bench/out}
mkdir -p "$out"
read -r -a extra <<<"${RTL_BENCH_ARGS:-}"
extra+=("$@")

machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs, Linux $(uname -r)"
echo "$machine" >"$out/machine.txt"
echo "rtl bench: $machine, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rtl bench: Appel-Li sequences (the paper's Tables 4 and 5)"
"$build/bench/rtl-appel-li" --json "$out/appel_li.json" "${extra[@]}"
echo "rtl bench: pieces (region_protect, lookup, decode)"
"$build/bench/rtl-pieces" --json "$out/pieces.json" "${extra[@]}"
# The system-call wrapper's cost on a buffer outside any region (one line).
echo "rtl bench: the system-call wrapper"
"$build/bench/rtl-syscall-wrap"
quick=()
[[ " $* " == *" --quick "* ]] && quick=(--quick)
# 1, 2 and 4 threads trapping and protecting, each on its own regions.
echo "rtl bench: threads"
"$build/bench/rtl-threads" --json "$out/threads.json" "${quick[@]}"
# Write tracking three ways in one process: page traps, region traps, the
# kernel's written bits (first writes, 2 writer threads, region_dirty).
echo "rtl bench: write tracking"
"$build/bench/rtl-dirty" --json "$out/dirty.json" "${quick[@]}"
# The instructions of one trap, counted by callgrind (when installed).
echo "rtl bench: instructions per trap"
python3 "$top/bench/trap_instructions.py" "$build" "$out"
echo "rtl bench: the preload"
python3 "$top/bench/preload.py" "$build" "$out" "${quick[@]}"
# events = traps on a run of 10^7 traps: the raw record's bytes a trap,
# peak memory, the report and the trace of every trap (bench/events.py).
echo "rtl bench: events"
python3 "$top/bench/events.py" "$build" "$out" "${quick[@]}"
# mechanism = tag (aarch64 MTE) under qemu-user beside page and auto:
# traps and false-sharing traps, counts only (bench/tags.py).
echo "rtl bench: memory tags under qemu-user"
python3 "$top/bench/tags.py" "$build" "$out"
# Real programs against their own traps' floor, a process's cost, memory
# per routed block (bench/programs.py).
echo "rtl bench: real programs"
python3 "$top/bench/programs.py" "$build" "$out" "${quick[@]}"
# rtlctl compare on the DSM applications run alone, beside the DSM's own
# page and region traps (docs/compare.md); not with --quick.
if ((${#quick[@]} == 0)); then
  echo "rtl bench: rtlctl compare on the DSM applications"
  python3 "$top/bench/compare_dsm.py" "$build" "$out"
fi
python3 "$top/bench/report.py" "$out"
# The README's table of current results, from this run (not --quick).
if ((${#quick[@]} == 0)) && [[ -z ${RTL_BENCH_OUT:-} ]]; then
  python3 "$top/bench/results_table.py" "$out" "$top/README.md"
fi
