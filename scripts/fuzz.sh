#!/usr/bin/env bash
# make fuzz: build the libFuzzer targets with clang (ASan + UBSan) and run
# each for FUZZ_SECONDS on a copy of its corpus. Crashing inputs land in
# build-fuzz/crashes/; add them to tests/fuzz/corpus/TARGET/ once fixed, and
# `make test` replays them from then on.
set -euo pipefail
seconds=${1:-60}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
RTL_EXTRA_PACKAGES="clang" scripts/deps.sh
# libFuzzer and the sanitizers' runtimes: the package of the clang that is
# installed (Debian names it for clang's major version).
RTL_EXTRA_PACKAGES="$(scripts/clang-rt-package.sh)" scripts/deps.sh
build=build-fuzz
if [[ ! -f $build/build.ninja ]]; then
  CC=clang meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined \
    -Db_lundef=false -Dtests=true >/dev/null
fi
ninja -C "$build" >/dev/null
mkdir -p "$build/crashes"
status=0
printf '%-10s %12s %10s %8s\n' target executions seconds crashes
for fuzzer in "$build"/tests/fuzz/fuzz-*; do
  [[ -f $fuzzer && -x $fuzzer ]] || continue
  target=${fuzzer##*/fuzz-}
  work=$build/corpus/$target
  mkdir -p "$work"
  cp -n tests/fuzz/corpus/"$target"/* "$work"/ 2>/dev/null || true
  log=$build/fuzz-$target.log
  if "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$build/crashes/$target-" -print_final_stats=1 \
      "$work" >"$log" 2>&1; then
    crashes=0
  else
    crashes=$(ls "$build/crashes" | grep -c "^$target-" || true)
    ((crashes > 0)) || crashes=1
    status=1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  printf '%-10s %12s %10s %8s\n' "$target" "${runs:-?}" "$seconds" "$crashes"
done
if ((status)); then
  echo "crashes: see $build/crashes/ and $build/fuzz-*.log" >&2
fi
exit $status
