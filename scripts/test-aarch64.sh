#!/usr/bin/env bash
# make test-aarch64: install what the cross build needs, cross-build rtl for
# aarch64 into its own build folder, and run under qemu-user the unit tests
# and the bats suites that run one aarch64 program at a time (docs/aarch64.md
# says which and why). Ends with "N passed, N failed" like make test.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-aarch64}
shift || true

# Not named after the build folder: meson takes a file under a path that
# starts with the build folder's for one it generated, and warns.
sysroot=$(pwd)/build-sysroot-aarch64
scripts/deps.sh
scripts/deps-aarch64.sh "$sysroot"
if [[ ! -f $build/build.ninja ]]; then
  # meson says why it stops on stdout: shown when it does. A setup that
  # stopped before leaves a folder meson will not configure again.
  log=$(mktemp)
  rm -rf "$build"
  meson setup "$build" --cross-file cross/aarch64-linux-gnu.ini \
    -Djemalloc_sysroot="$sysroot" "$@" >"$log" 2>&1 || {
    tail -n 20 "$log" >&2
    rm -f "$log"
    exit 1
  }
  rm -f "$log"
fi
ninja -C "$build" >/dev/null

# The cross file's exe_wrapper, which meson test uses too.
wrapper=$(sed -n "s/^exe_wrapper = \[\(.*\)\]$/\1/p" cross/aarch64-linux-gnu.ini | tr -d "',")
# The preload's records of aarch64 runs are read by this machine's
# rtlctl (tests/bats/tag.bats): the native build, made if missing.
make --no-print-directory build >/dev/null

# qemu checks memory tags in software: once a thread checks them (librtl
# turns the checks on where the CPU has MTE, as qemu's has), every access
# costs about 3 times as much, and unit/sweep ran past its 120 s. The
# views' tests run without them; unit/tag and tag.bats with (run.sh).
export RTL_TAG=off

echo "machine: aarch64 under $($wrapper --version | head -n 1)"
RTL_RUN="$wrapper" RTL_HOST_BUILD="$(pwd)/build" RTL_AARCH64_PROGRAMS="$sysroot/programs" \
  RTL_BATS_ONLY="examples tag" \
  RTL_MACHINE_SHOWN=1 tests/run.sh "$build"
