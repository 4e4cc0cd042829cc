#!/usr/bin/env bash
# Install the Debian packages rtl needs, only those missing. Used by make and
# by .ci/run; a no-op on a machine that has them all.
set -euo pipefail

packages=(
  gcc g++ make pkg-config meson ninja-build
  libcapstone-dev libunwind-dev libjemalloc-dev uthash-dev libinih-dev
  libjansson-dev libelf-dev
  clang clang-format
  openmpi-bin libopenmpi-dev iproute2
  bats bats-support bats-assert bats-file
  python3 sqlite3 gzip git perl coreutils mawk gawk xz-utils tar
  groff-base man-db bsdextrautils # the man pages' test renders them
)
packages+=(${RTL_EXTRA_PACKAGES:-})

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
