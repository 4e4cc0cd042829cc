#!/usr/bin/env bash
# The Debian package of the installed clang's runtimes (libFuzzer, ASan,
# UBSan): libclang-rt-MAJOR-dev, MAJOR the major version of `clang` (from
# clang 14 on; earlier ones shipped them in libclang-common-MAJOR-dev).
# Usage: scripts/clang-rt-package.sh [CLANG]
set -euo pipefail
clang=${1:-clang}
major=$("$clang" -dumpversion | cut -d. -f1)
[[ $major =~ ^[0-9]+$ ]] || { echo "clang-rt-package: cannot tell $clang's version" >&2; exit 1; }
if ((major >= 14)); then
  echo "libclang-rt-$major-dev"
else
  echo "libclang-common-$major-dev"
fi
