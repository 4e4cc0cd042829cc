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

echo "rtl bench: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)," \
  "$(nproc) CPUs, Linux $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench/rtl-appel-li" --json "$out/appel_li.json" "${extra[@]}"
"$build/bench/rtl-pieces" --json "$out/pieces.json" "${extra[@]}"
# The system-call wrapper's cost on a buffer outside any region (one line).
"$build/bench/rtl-syscall-wrap"
quick=()
[[ " $* " == *" --quick "* ]] && quick=(--quick)
python3 "$top/bench/preload.py" "$build" "$out" "${quick[@]}"
# rtlctl compare on the DSM applications run alone, beside the DSM's own
# page and region traps (docs/compare.md); not with --quick.
((${#quick[@]})) || python3 "$top/bench/compare_dsm.py" "$build" "$out"
python3 "$top/bench/report.py" "$out"
