#!/usr/bin/env bash
# make test-programs: install the real programs of tests/programs (deps.txt),
# run the matrix (every program under every kind of policy, compared with
# its run without rtl, docs/programs.md, "Real programs") and CPython's own
# tests, and end with "N passed, N failed" like make test. The matrix runs
# twice: with protection as the kernel allows (in the page tables where it
# has userfaultfd write-protection) and with RTL_PROTECT=mprotect, the
# fallback (docs/mechanisms.md, "Protection in the page tables").
# scripts/test-programs.sh BUILD
set -uo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
RTL_EXTRA_PACKAGES="$(cat tests/programs/deps.txt)" scripts/deps.sh test || exit 1
tap=$(mktemp)
trap 'rm -f "$tap"' EXIT
passed=0
failed=0
for protect in "" mprotect; do
  echo "# protection: ${protect:-as the kernel allows}"
  RTL_PROTECT=$protect RTL_BUILD=$build bats --tap tests/programs | tee "$tap"
  passed=$((passed + $(grep -c '^ok ' "$tap")))
  failed=$((failed + $(grep -c '^not ok ' "$tap")))
  # bats prints nothing countable when it cannot start: that is a failure.
  grep -q '^1\.\.' "$tap" || failed=$((failed + 1))
done
echo "$passed passed, $failed failed"
((failed == 0))
