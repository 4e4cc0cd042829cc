#!/usr/bin/env bash
# clang-format over the tree's C and C++: `format.sh check` lists the files
# whose formatting differs from .clang-format and fails if any does;
# `format.sh fix` rewrites them. Files held back are being changed on other
# branches right now: they are formatted once those land, so that the
# merges stay easy.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
held=()
command -v clang-format >/dev/null || { echo "clang-format not found: install clang-format" >&2; exit 1; }
is_held() {
  local h
  for h in "${held[@]}"; do
    [[ $1 == "$h"* ]] && return 0
  done
  return 1
}
bad=0
while IFS= read -r f; do
  is_held "$f" && continue
  if [[ $mode == fix ]]; then
    clang-format -i "$f"
  elif ! clang-format "$f" | cmp -s "$f" -; then
    echo "format: $f differs from .clang-format (make format fixes it)"
    bad=1
  fi
done < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
exit $bad
