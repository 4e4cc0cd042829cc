#!/usr/bin/env bash
# Run every unit test program and every bats file; count TAP results; end with
# the line "N passed, N failed". Exit status 0 only if nothing failed.
set -uo pipefail

build=${1:-build}
# RTL_RUN: what runs the built programs (make test-aarch64: qemu-user);
# RTL_BATS_ONLY: the bats suites to run, by name (default: all).
run_with=(${RTL_RUN:-})
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
passed=0
failed=0

# Count one TAP stream; print the failures with their diagnostics.
count() {
  local name=$1 file=$2 p f s
  # A test a suite skips ("ok N ... # skip why") is neither passed nor failed.
  s=$(grep -c '^ok .*# [Ss][Kk][Ii][Pp]' "$file")
  p=$(($(grep -c '^ok ' "$file") - s))
  f=$(grep -c '^not ok ' "$file")
  if ! grep -q '^1\.\.' "$file"; then
    f=$((f + 1)) # the program died before its plan
    echo "FAIL $name: no TAP plan (crashed?)"
    tail -n 20 "$file" | sed 's/^/    /'
  elif ((f > 0)); then
    echo "FAIL $name:"
    grep -E '^not ok|^#' "$file" | sed 's/^/    /'
  fi
  if ((s > 0)); then
    echo "$(printf '%-28s' "$name") $p passed, $f failed, $s skipped:"
    grep '^ok .*# [Ss][Kk][Ii][Pp]' "$file" | sed 's/^/    /'
  else
    echo "$(printf '%-28s' "$name") $p passed, $f failed"
  fi
  passed=$((passed + p))
  failed=$((failed + f))
}

# RTL_TEST_SKIP: names (unit/NAME, bats/NAME) not to run, with the reason
# given by whoever sets it (make check-sanitize does).
skipped() {
  [[ " ${RTL_TEST_SKIP:-} " == *" $1 "* || " ${RTL_TEST_SKIP:-} " == *" ${1%%\[*} "* ]]
}

# The machine, so that a failure in CI names it (make test has said it).
[[ -n ${RTL_MACHINE_SHOWN:-} ]] || scripts/machine.sh

# The tests whose outcome depends on which string functions glibc picks run
# once per variant this CPU can run (rtl-selftest --list-variants names
# them with the GLIBC_TUNABLES that picks each); the rest once.
per_variant=" strings sweep decoder decoder_forms decoder_forms_simd derive trap_edges "
variants=$("${run_with[@]}" "$build/tools/selftest/rtl-selftest" --list-variants 2>/dev/null)
[[ -n $variants ]] || variants=$(printf 'default\t')
echo "glibc string variants: $(cut -f1 <<<"$variants" | tr '\n' ' ')"

# The DIRTY tests run once per way of seeing writes: as the kernel allows
# (its written bits where it has them: core/dirty/wbits.c), and with
# RTL_DIRTY=traps (write traps only). Same results both ways.
per_backend=" dirty diff wbits "
# The protection backend's own tests run once as the kernel allows and with
# RTL_PROTECT=mprotect (the fallback).
per_protect_unit=" prot "

# The memory-tag tests run with tags wherever the machine has them, even
# where RTL_TAG=off keeps them off for the rest (make test-aarch64: qemu
# checks tags in software, every access about 3 times slower once a
# thread checks them, and the views' tests need none).
tag_tests=" tag "

run_unit() { # name program [tunables [dirty [protect]]]
  local name=$1 t=$2 tag=${RTL_TAG:-}
  skipped "$name" && { echo "$(printf '%-28s' "$name") skipped"; return; }
  [[ $tag_tests != *" ${name#unit/} "* ]] || tag=
  RTL_DIRTY=${4:-${RTL_DIRTY:-}} GLIBC_TUNABLES=${3:-${GLIBC_TUNABLES:-}} RTL_TAG=$tag \
    RTL_PROTECT=${5:-${RTL_PROTECT:-}} timeout 900 "${run_with[@]}" "$t" >"$log/out" 2>&1
  count "$name" "$log/out"
}

export RTL_BUILD="$top/$build"
for t in "$build"/tests/unit/unit-*; do
  [[ -f $t && -x $t ]] || continue
  base=${t##*/unit-}
  if [[ $per_variant == *" $base "* ]]; then
    while IFS=$'\t' read -r v tunables; do
      run_unit "unit/$base[$v]" "$t" "$tunables"
    done <<<"$variants"
  elif [[ $per_backend == *" $base "* ]]; then
    run_unit "unit/$base" "$t"
    run_unit "unit/$base[traps]" "$t" "" traps
  elif [[ $per_protect_unit == *" $base "* ]]; then
    run_unit "unit/$base" "$t"
    run_unit "unit/$base[mprotect]" "$t" "" "" mprotect
  else
    run_unit "unit/$base" "$t"
  fi
done

# The suites where protection changes run once as the kernel allows (in
# the page tables where it has userfaultfd write-protection) and once with
# RTL_PROTECT=mprotect, the fallback (core/prot/prot.c): same programs,
# same outputs, each backend's own figures.
per_protect=" protect exact slots page preload preload_syscalls sigmask policy_engine "

run_bats() { # name file [protect]
  local name=$1 b=$2
  skipped "$name" && { echo "$(printf '%-28s' "$name") skipped"; return; }
  RTL_PROTECT=${3:-${RTL_PROTECT:-}} timeout 1800 bats --tap "$b" >"$log/out" 2>&1
  count "$name" "$log/out"
}

if compgen -G "tests/bats/*.bats" >/dev/null; then
  for b in tests/bats/*.bats; do
    base=$(basename "$b" .bats)
    [[ -z ${RTL_BATS_ONLY:-} || " $RTL_BATS_ONLY " == *" $base "* ]] || continue
    run_bats "bats/$base" "$b"
    [[ $per_protect == *" $base "* ]] && run_bats "bats/$base[mprotect]" "$b" mprotect
  done
fi

echo "$passed passed, $failed failed"
((failed == 0))
