#!/usr/bin/env bash
# make demo: the paper's Table 2 through the API.
set -euo pipefail
build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== The paper's Table 2 through the API (tests/contract/table23.c)"
cc -o "$tmp/table23" "$top/tests/contract/table23.c" -I"$top/include" \
  -L"$top/$build/core" -lrtl
LD_LIBRARY_PATH="$top/$build/core" "$tmp/table23"
