#!/usr/bin/env bash
# Install the Debian packages rtl needs, only those missing: for the groups
# named (what a make target needs), or every group without an argument
# (CI, make deps). A no-op on a machine that has them all.
# Usage: scripts/deps.sh [--list] [GROUP...]   GROUP: build format test mpi clang deb
#   --list  print the packages of the groups, one a line, and install nothing
set -euo pipefail

declare -A group=(
  # make build, make demo, make install: the compilers and the libraries;
  # node-d3, which rtlctl inlines into the HTML pages it writes (--html).
  [build]="gcc g++ make pkg-config meson ninja-build python3
    libcapstone-dev libunwind-dev libjemalloc-dev uthash-dev libinih-dev
    libjansson-dev libelf-dev libdw-dev node-d3"
  [format]="clang-format"
  # make test: bats and what the tests run or read their output with
  # (chromium: the HTML pages opened headless, report_html.bats;
  # python3-dbg: an interpreter with its symbols, report_names.bats).
  [test]="bats bats-support bats-assert bats-file
    python3 sqlite3 gzip git perl coreutils mawk gawk xz-utils tar
    groff-base man-db bsdextrautils gnuplot-nox chromium python3-dbg"
  # The DSM (dsm/, built only when meson finds MPI) and its tests.
  [mpi]="openmpi-bin libopenmpi-dev iproute2"
  # CI's second compiler.
  [clang]="clang"
  # make deb: debhelper builds the packages, lintian checks them.
  [deb]="debhelper dpkg-dev fakeroot lintian"
)
order=(build format test mpi clang deb)

list=0
if [[ ${1:-} == --list ]]; then
  list=1
  shift
fi
(($#)) || set -- "${order[@]}"
packages=()
for g in "$@"; do
  if [[ -z ${group[$g]+set} ]]; then
    echo "deps.sh: no group '$g' (groups: ${order[*]})" >&2
    exit 2
  fi
  packages+=(${group[$g]})
done
packages+=(${RTL_EXTRA_PACKAGES:-})
if ((list)); then
  printf '%s\n' "${packages[@]}" | awk '!seen[$0]++'
  exit 0
fi

missing=()
# This machine's architecture's package (or an Architecture: all one): with
# arm64 added for make test-aarch64, a name may match both.
native=$(dpkg --print-architecture)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status} ${Architecture}\n' "$p" 2>/dev/null |
    grep -qE "^install ok installed ($native|all)$" || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "rtl: installing ${missing[*]}" >&2
sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
